import { INCIDENT_USER_COMMANDS } from '../../machines/incident/commands.ts';
import type { Assignee, ServiceRef, UpstreamUser } from '../../machines/incident/events.ts';
import { ChatOpsError, isChatOpsError, ValidationError } from '../core/errors.ts';
import type { Command, JsonObject } from '../core/messages.ts';
import type { IdentityResolver } from '../people/identity.ts';
import { shouldRetry } from '../processors/retryPolicy.ts';
import type { ProcessorContext } from '../processors/runner.ts';
import type { IncidentReadModels } from './readModels.projection.ts';
import type { ServiceDirectory } from './services.ts';
import { toServiceRef } from './services.ts';

/**
 * The inbox dispatcher's enrichment step for incident commands: fills in what the Slack edge could
 * not know within 3 s, right before the command reaches the decider.
 *
 * - The acting user: `by` is the command's actor (the Slack user who clicked or typed) and
 *   `asUser` their incident-service user, mapped by email (identity.ts). Whatever the edge
 *   recorded there is overwritten: `From` never comes from a payload (platform-facts T11).
 * - Reassignment targets picked in Slack → their incident-service users.
 * - Services named in `/incident trigger` and `/incident subscribe` → `{ id, name }`.
 * - Note webhooks (no incident key in the payload) → the stream, from the incident index after
 *   catching it up (read-your-writes).
 *
 * Refusals (SB_UNMAPPED_USER, SB_NOT_FOUND, SB_VALIDATION) reach the user as an ephemeral reply.
 * A lookup that fails for a transient reason is thrown, so the runner retries it; from the
 * `giveUpAfter`-th delivery it becomes a refusal that says so, instead of the input being parked
 * and the user hearing nothing.
 *
 * @example
 * createInboxDispatchReactor({ dispatch: bus.dispatch, enrich: createIncidentEnricher({ … }) });
 */
export type IncidentEnricherDeps = Readonly<{
  identity: IdentityResolver;
  services: ServiceDirectory;
  readModels: IncidentReadModels;
  /** Delivery attempt from which transient lookup failures become refusals (default 4). */
  giveUpAfter?: number;
}>;

type Data = Record<string, unknown>;

const str = (v: unknown): string | undefined =>
  typeof v === 'string' && v.trim() !== '' ? v.trim() : undefined;

/**
 * People type titles the way they type them in a shell: `/incident trigger db "Database on fire"`.
 * One pair of wrapping quotes (straight or curly) is not part of the title.
 */
export const unquoteTitle = (title: string): string => {
  const t = title.trim();
  const m = /^["“”](?<d>[^"“”]*)["“”]$|^['‘’](?<s>[^'‘’]*)['‘’]$/.exec(t);
  const inner = (m?.groups?.d ?? m?.groups?.s ?? '').trim();
  return inner !== '' ? inner : t;
};

export const createIncidentEnricher = (
  deps: IncidentEnricherDeps,
): ((command: Command, ctx: ProcessorContext) => Promise<Command>) => {
  const giveUpAfter = deps.giveUpAfter ?? 4;

  const unavailable = (error: unknown, what: string): ChatOpsError => {
    const code = isChatOpsError(error) ? error.code : 'SB_UPSTREAM_UNAVAILABLE';
    const text =
      what === 'identity'
        ? "Switchboard couldn't look you up in the incident service just now"
        : "Switchboard couldn't reach the incident service to look that service up just now";
    return new ChatOpsError(
      what === 'identity' ? 'SB_UNMAPPED_USER' : 'SB_NOT_FOUND',
      `${text} (${code}), so nothing was changed. Please try again in a minute.`,
      { cause: error, details: { reason: 'lookup_unavailable', upstreamCode: code } },
    );
  };

  /** Runs a lookup; transient failures are retried by the runner, then refused with an explanation. */
  const lookup = async <T>(ctx: ProcessorContext, what: string, fn: () => Promise<T>): Promise<T> => {
    try {
      return await fn();
    } catch (error) {
      if (shouldRetry(error) && ctx.attempt >= giveUpAfter) throw unavailable(error, what);
      throw error;
    }
  };

  const service = async (
    ctx: ProcessorContext,
    d: Data,
  ): Promise<{ service: ServiceRef; title?: string }> => {
    const combined = str(d.serviceAndTitle);
    if (combined !== undefined) {
      const { service: s, rest } = await lookup(ctx, 'service', () => deps.services.split(combined));
      return { service: toServiceRef(s), title: rest };
    }
    const given = d.service as { id?: unknown; name?: unknown } | null | undefined;
    const query = str(d.serviceQuery) ?? str(given?.id);
    if (query === undefined) {
      throw new ValidationError('Which service? Name one, e.g. `/incident subscribe Payments API`.', {
        details: { reason: 'no_service' },
      });
    }
    if (typeof given?.id === 'string' && typeof given.name === 'string') {
      return { service: { id: given.id, name: given.name } };
    }
    const s = await lookup(ctx, 'service', () => deps.services.resolve(query));
    return { service: toServiceRef(s) };
  };

  const asUser = (ctx: ProcessorContext, slackUserId: string): Promise<UpstreamUser> =>
    lookup(ctx, 'identity', () => deps.identity.resolve(slackUserId));

  return async (command, ctx) => {
    const d = { ...(command.data as Data) };
    const actor = command.metadata.actor;

    if (INCIDENT_USER_COMMANDS.has(command.type)) {
      d.by = actor;
      d.asUser = await asUser(ctx, actor);
      if (command.type === 'TriggerIncident') {
        const resolved = await service(ctx, d);
        d.service = resolved.service;
        if (resolved.title !== undefined) d.title = resolved.title;
        if (typeof d.title === 'string') d.title = unquoteTitle(d.title);
        if (!str(d.title)) {
          throw new ValidationError('Say what is broken: `/incident trigger <service> <title>`.', {
            details: { reason: 'no_title' },
          });
        }
        delete d.serviceAndTitle;
        delete d.serviceQuery;
      }
      if (command.type === 'ReassignIncident') {
        const picked = Array.isArray(d.assignees) ? (d.assignees as { slackUserId?: unknown }[]) : [];
        const assignees: Assignee[] = [];
        for (const a of picked) {
          const slackUserId = str(a.slackUserId);
          if (!slackUserId) continue;
          const user = await lookup(ctx, 'identity', () =>
            deps.identity.resolve(slackUserId, { kind: 'target', slackUserId }),
          );
          assignees.push({ id: user.id, name: user.name, slackUserId });
        }
        if (assignees.length === 0) {
          throw new ValidationError('Who should take it? Pick someone: `/incident reassign <id> @user`.', {
            details: { reason: 'no_assignee' },
          });
        }
        d.assignees = assignees;
      }
    } else if (
      command.type === 'SubscribeChannelToIncidents' ||
      command.type === 'UnsubscribeChannelFromIncidents'
    ) {
      d.by = actor;
      d.service = (await service(ctx, d)).service;
      delete d.serviceQuery;
    } else if (
      command.type === 'RecordIncidentWebhook' &&
      d.incident === null &&
      str(d.streamId) === undefined
    ) {
      const incidentId = str(d.incidentId);
      if (incidentId) {
        await deps.readModels.catchUp();
        const streamId = deps.readModels.streamForUpstreamId(incidentId);
        if (streamId) d.streamId = streamId;
      }
    } else {
      return command;
    }
    return { ...command, data: d as JsonObject };
  };
};
