import type {
  AcknowledgeIncident,
  AddIncidentNote,
  EscalateIncident,
  ReassignIncident,
  RecordIncidentWebhook,
  ResolveIncident,
  SetIncidentPriority,
  SetIncidentUrgency,
  TriggerIncident,
} from '../../machines/incident/commands.ts';
import type { Assignee, MonitoringAlert, ServiceRef, UpstreamUser } from '../../machines/incident/events.ts';
import type { IncidentRoutingCommand } from '../../machines/incidentRouting/commands.ts';
import { ChatOpsError, isChatOpsError, ValidationError } from '../core/errors.ts';
import { type Command, exhaustive } from '../core/messages.ts';
import type { Enrich } from '../lifecycles/lifecycle.ts';
import type { IdentityResolver } from '../people/identity.ts';
import { shouldRetry } from '../processors/retryPolicy.ts';
import type { ProcessorContext } from '../processors/runner.ts';
import { MAX_TITLE } from './blocks/incidentModals.ts';
import { readIncidentState } from './incidentState.ts';
import type { PriorityDirectory } from './priorities.ts';
import type { IncidentReadModels } from './readModels.projection.ts';
import type { ServiceDirectory } from './services.ts';
import { toServiceRef } from './services.ts';
import type { IncidentSlackCommand, IncidentSlackCommandType } from './slackCommands.ts';

/**
 * The inbox dispatcher's enrichment step for incident commands: fills in what the Slack edge could
 * not know within 3 s, right before the command reaches the decider.
 *
 * The edge records typed commands (slackCommands.ts) with these fields pending; this step turns each
 * into the machine's command:
 * - The acting user: `by` is the command's actor (the Slack user who clicked or typed) and
 *   `asUser` their incident-service user, mapped by email through the people directory
 *   (src/people/identity.ts). Whatever the edge recorded there is overwritten: `From` never comes
 *   from a payload, so nobody can act as someone else by editing a button value or form.
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
  /** The last level of a service's escalation policy (null: unknown; see escalationLevels.ts). */
  lastEscalationLevel?(serviceId: string): Promise<number | null>;
  /**
   * The severity and source of the first alert of an incident (monitoring incidents carry them on
   * their alerts, not on the incident); null when it has none.
   */
  firstAlertOf?(incidentId: string): Promise<MonitoringAlert | null>;
  /** The incident service's priorities (cached), for `/incident priority` and the card's select. */
  priorities?: PriorityDirectory;
  /** Delivery attempt from which transient lookup failures become refusals (default 4). */
  giveUpAfter?: number;
}>;

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

/** An incident command about an existing incident, as the routes take it (see routes.ts). */
type OnIncident<C extends Command> = Command<C['type'], C['data'] & Readonly<{ streamId: string }>>;

/** What the enricher hands the incident and routing deciders. */
export type EnrichedIncidentCommand =
  | TriggerIncident
  | OnIncident<AcknowledgeIncident>
  | OnIncident<ResolveIncident>
  | OnIncident<EscalateIncident>
  | OnIncident<ReassignIncident>
  | OnIncident<AddIncidentNote>
  | OnIncident<SetIncidentPriority>
  | OnIncident<SetIncidentUrgency>
  | IncidentRoutingCommand
  | RecordIncidentWebhook;

const SLACK_COMMAND_TYPES: ReadonlySet<string> = new Set<IncidentSlackCommandType>([
  'TriggerIncident',
  'AcknowledgeIncident',
  'ResolveIncident',
  'EscalateIncident',
  'ReassignIncident',
  'AddIncidentNote',
  'SetIncidentPriority',
  'SetIncidentUrgency',
  'SubscribeChannelToIncidents',
  'UnsubscribeChannelFromIncidents',
]);

/** A recorded command the Slack edge built (its type says so; its data is what the edge recorded). */
const isSlackCommand = (command: Command): command is IncidentSlackCommand & Command =>
  SLACK_COMMAND_TYPES.has(command.type);

export const createIncidentEnricher = (deps: IncidentEnricherDeps): Enrich => {
  const giveUpAfter = deps.giveUpAfter ?? 4;

  const unavailable = (error: unknown, what: string): ChatOpsError => {
    const code = isChatOpsError(error) ? error.code : 'SB_UPSTREAM_UNAVAILABLE';
    const text =
      what === 'identity'
        ? "Switchboard couldn't look you up in the incident service just now"
        : what === 'priority'
          ? "Switchboard couldn't reach the incident service to read its priorities just now"
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

  type ServiceNamed = Readonly<{
    service?: Readonly<{ id: string; name: string | null }> | null;
    serviceQuery?: string | null;
    serviceAndTitle?: string | null;
  }>;

  const service = async (
    ctx: ProcessorContext,
    d: ServiceNamed,
  ): Promise<{ service: ServiceRef; title?: string }> => {
    const combined = str(d.serviceAndTitle);
    if (combined !== undefined) {
      const { service: s, rest } = await lookup(ctx, 'service', () => deps.services.split(combined));
      return { service: toServiceRef(s), title: rest };
    }
    const given = d.service;
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

  /**
   * Escalating past the last level of the policy would page nobody and the incident service
   * refuses it: say so now, in words, instead of a failure on the shared card.
   */
  const refuseEscalationPastLastLevel = async (
    ctx: ProcessorContext,
    data: Readonly<{ streamId: string; level?: number | null }>,
  ): Promise<void> => {
    if (!deps.lastEscalationLevel) return;
    const { state } = await readIncidentState(ctx.store, data.streamId);
    const incident = state.context.incident;
    if (!incident?.service) return;
    const last = await deps.lastEscalationLevel(incident.service.id);
    if (last === null) return;
    const current = incident.escalationLevel ?? 1;
    const target = data.level ?? current + 1;
    if (target <= last) return;
    const label = state.context.link?.number ? `#${state.context.link.number}` : 'This incident';
    throw new ValidationError(
      data.level == null || target === current + 1
        ? `${label} is already at the last escalation level (${current} of ${last}): there is nobody further to page. Reassign it to someone with \`/incident reassign\` instead.`
        : `${label}'s escalation policy has ${last} level${last === 1 ? '' : 's'}, so it can't go to level ${target}.`,
      { details: { reason: 'no_next_level', level: target, lastLevel: last } },
    );
  };

  const enrichSlackCommand = async (
    command: IncidentSlackCommand,
    ctx: ProcessorContext,
  ): Promise<EnrichedIncidentCommand> => {
    // Who acts is the command's actor (the Slack user who clicked or typed), never the payload.
    const by = command.metadata.actor;
    const { metadata } = command;
    switch (command.type) {
      case 'TriggerIncident': {
        const user = await asUser(ctx, by);
        const { serviceQuery: _q, serviceAndTitle: _st, ...rest } = command.data;
        const resolved = await service(ctx, command.data);
        const title = unquoteTitle(resolved.title ?? command.data.title ?? '');
        if (!str(title)) {
          throw new ValidationError(
            'Say what is broken: `/incident trigger &lt;service&gt; &lt;title&gt;`.',
            {
              details: { reason: 'no_title' },
            },
          );
        }
        if (title.length > MAX_TITLE) {
          throw new ValidationError(
            `That title is ${title.length} characters long; keep it to ${MAX_TITLE} and put the rest in a note.`,
            { details: { reason: 'title_too_long' } },
          );
        }
        return {
          type: command.type,
          data: { ...rest, by, asUser: user, service: resolved.service, title },
          metadata,
        };
      }
      // One case each, so each keeps its own data type.
      case 'AcknowledgeIncident':
        return { ...command, data: { ...command.data, by, asUser: await asUser(ctx, by) } };
      case 'ResolveIncident':
        return { ...command, data: { ...command.data, by, asUser: await asUser(ctx, by) } };
      case 'EscalateIncident': {
        await refuseEscalationPastLastLevel(ctx, command.data);
        return { ...command, data: { ...command.data, by, asUser: await asUser(ctx, by) } };
      }
      case 'AddIncidentNote':
        return { ...command, data: { ...command.data, by, asUser: await asUser(ctx, by) } };
      case 'SetIncidentUrgency': {
        const urgency = command.data.urgency;
        if (urgency !== 'high' && urgency !== 'low') {
          throw new ValidationError('The urgency is `high` or `low`.', {
            details: { reason: 'bad_urgency' },
          });
        }
        return { ...command, data: { ...command.data, urgency, by, asUser: await asUser(ctx, by) } };
      }
      case 'SetIncidentPriority': {
        const directory = deps.priorities;
        const query = str(command.data.priorityQuery);
        if (!directory || query === undefined) {
          throw new ValidationError('Which priority? e.g. `/incident priority 42 P1`.', {
            details: { reason: 'no_priority' },
          });
        }
        const user = await asUser(ctx, by);
        const priority = await lookup(ctx, 'priority', () => directory.resolve(query));
        const { priorityQuery: _q, ...rest } = command.data;
        return {
          type: command.type,
          data: { ...rest, by, asUser: user, priority: { id: priority.id, name: priority.name } },
          metadata,
        };
      }
      case 'ReassignIncident': {
        const user = await asUser(ctx, by);
        const assignees: Assignee[] = [];
        for (const a of Array.isArray(command.data.assignees) ? command.data.assignees : []) {
          const slackUserId = str(a.slackUserId);
          if (!slackUserId) continue;
          const target = await lookup(ctx, 'identity', () =>
            deps.identity.resolve(slackUserId, { kind: 'target', slackUserId }),
          );
          assignees.push({ id: target.id, name: target.name, slackUserId });
        }
        if (assignees.length === 0) {
          throw new ValidationError(
            'Who should take it? Pick someone: `/incident reassign &lt;id&gt; @user`.',
            {
              details: { reason: 'no_assignee' },
            },
          );
        }
        return { type: command.type, data: { ...command.data, by, asUser: user, assignees }, metadata };
      }
      case 'SubscribeChannelToIncidents':
      case 'UnsubscribeChannelFromIncidents': {
        const { serviceQuery: _q, ...rest } = command.data;
        const resolved = (await service(ctx, command.data)).service;
        return { type: command.type, data: { ...rest, by, service: resolved }, metadata };
      }
      default:
        return exhaustive(command, 'incident Slack command');
    }
  };

  /**
   * An incident first seen through `incident.triggered` from the events route (a monitoring alert)
   * gets its alert's severity and source, read once here so the decider records them as facts.
   * Best effort: when the read fails after retries, the card shows the incident without them.
   */
  const withAlert = async (
    command: RecordIncidentWebhook,
    ctx: ProcessorContext,
  ): Promise<RecordIncidentWebhook> => {
    const inc = command.data.incident;
    if (
      !deps.firstAlertOf ||
      command.data.eventType !== 'incident.triggered' ||
      !inc ||
      inc.alert !== undefined
    ) {
      return command;
    }
    let alert: MonitoringAlert | null;
    try {
      alert = await deps.firstAlertOf(inc.id);
    } catch (error) {
      if (shouldRetry(error) && ctx.attempt < giveUpAfter) throw error;
      return command;
    }
    if (!alert) return command;
    return { ...command, data: { ...command.data, incident: { ...inc, alert } } };
  };

  /**
   * Issue 22 item 2: a thread reply added to the timeline ("Add to timeline") is a note of a person
   * the incident service knows, added by one: both are looked up; the command goes on as it came.
   */
  const checkThreadNote = async (command: Command, ctx: ProcessorContext): Promise<void> => {
    await asUser(ctx, command.metadata.actor);
    const author = String((command.data as { by?: unknown }).by ?? '');
    if (author === command.metadata.actor) return;
    try {
      await asUser(ctx, author);
    } catch (error) {
      const reason = isChatOpsError(error) ? error.details.reason : undefined;
      if (!isChatOpsError(error) || error.code !== 'SB_UNMAPPED_USER' || reason === 'lookup_unavailable') {
        throw error;
      }
      throw new ValidationError(
        `Only replies by people Switchboard knows in the incident service can be added to the timeline, and <@${author}> isn't one (no incident-service user has their Slack email), so nothing was added.`,
        { details: { reason: 'author_unmapped' } },
      );
    }
  };

  return async (command, ctx) => {
    if (isSlackCommand(command)) return enrichSlackCommand(command, ctx);
    if (command.type === 'RecordIncidentThreadNote') {
      await checkThreadNote(command, ctx);
      return command;
    }
    if (command.type === 'RecordIncidentWebhook') {
      command = await withAlert(command as RecordIncidentWebhook, ctx);
    }
    // Note webhooks (no incident in the payload) → the stream, from the incident index after
    // catching it up (read-your-writes).
    const d = command.data as Readonly<{ incident?: unknown; streamId?: unknown; incidentId?: unknown }>;
    if (command.type === 'RecordIncidentWebhook' && d.incident === null && str(d.streamId) === undefined) {
      const incidentId = str(d.incidentId);
      if (incidentId) {
        await deps.readModels.catchUp();
        const streamId = deps.readModels.streamForUpstreamId(incidentId);
        if (streamId) return { ...command, data: { ...command.data, streamId } };
      }
    }
    return command;
  };
};
