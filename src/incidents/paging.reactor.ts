import { incidentPhase, incidentStatus } from '../../machines/incident/decider.ts';
import type { IncidentEvent } from '../../machines/incident/events.ts';
import { parseIncidentEvent } from '../../machines/incident/events.ts';
import { asError } from '../core/errors.ts';
import type { LifecyclePorts } from '../lifecycles/ports.ts';
import type { IdentityResolver } from '../people/identity.ts';
import type { Dispatch } from '../processors/dispatchCommand.ts';
import { dispatchCommand } from '../processors/dispatchCommand.ts';
import type { Processor, ProcessorContext } from '../processors/runner.ts';
import { cancelTimer, scheduleTimer } from '../processors/scheduler.ts';
import { readIncidentState } from './incidentState.ts';
import { listOnCallsInRange } from './onCall.ts';
import {
  INCIDENT_PAGING_STREAM_PREFIX,
  incidentOfPagingStream,
  incidentPageId,
  pageActivity,
  pageTimerId,
  pageWording,
  type RecordIncidentPageActivity,
} from './paging.ts';
import { DEFAULT_PAGING, type PagingSettings, pagingDelayMs } from './pagingConfig.ts';
import type { ServiceDirectory } from './services.ts';

/** Someone on call at an escalation level, as the incident service lists them. */
export type OnCallResponder = Readonly<{
  upstreamUserId: string;
  name: string | null;
  slackUserId: string | null;
}>;

export type IncidentPagingDeps = Readonly<{
  settings: PagingSettings | undefined;
  dispatch: () => Dispatch;
  /** The verification lifecycle's pager, when it is on. */
  pager: () => LifecyclePorts['pager'] | undefined;
  /** Who is on call at `level` of the service's escalation policy at `at` (incidents' own lookup). */
  onCallAt(serviceId: string, level: number, at: Date): Promise<readonly OnCallResponder[]>;
}>;

/** Rounds of paging so far: how many times the incident went back to triggered. */
const roundOf = (history: readonly Readonly<{ kind: string; type: string }>[]): number =>
  history.filter((m) => m.kind === 'event' && m.type === 'IncidentUnacknowledged').length;

/** Escalation levels paged at most (a timer per level is cancelled on acknowledge). */
const MAX_LEVELS = 20;

/**
 * `incident-paging`: pages the on-call by phone when an incident stays triggered.
 *
 * - `IncidentTriggered` (and `IncidentEscalated` while still triggered), when the verification
 *   lifecycle is on (it offers the `pager`): a durable timer
 *   `incident-page-<id>-<level>` due N minutes later (PAGING_DELAY_MINUTES, per service
 *   PAGING_DELAY_BY_SERVICE) dispatches `PageIncidentResponders`, recorded once per level as
 *   `IncidentPagingDue`.
 * - `IncidentPagingDue`: if the incident is still triggered at that level, everyone on call at the
 *   level is paged through the `pager` port (SMS now, a call M minutes later), one page per
 *   incident, level and person (a redelivery pages nobody twice). Someone with no verified phone,
 *   opted out, or over the hourly limit is not paged and the timeline says so; so does a level with
 *   nobody on call, or phone verification being switched off.
 * - `IncidentAcknowledged` / `IncidentResolved`, from anywhere: the page timers are cancelled and
 *   the pager stops every page about the incident (no call after an acknowledge).
 * - `IncidentUnacknowledged` (the service's acknowledgement timeout put it back to triggered): a
 *   new round, paged again N minutes later with new page ids (round r: `…-r<r>`).
 */
export const createIncidentPagingReactor = (deps: IncidentPagingDeps): Processor => {
  const settings = deps.settings ?? DEFAULT_PAGING;

  const record = async (command: RecordIncidentPageActivity, ctx: ProcessorContext) => {
    const outcome = await dispatchCommand(deps.dispatch(), command);
    if (outcome.outcome === 'rejected') {
      ctx.logger.warn({ code: outcome.code, reason: outcome.message }, 'page activity not recorded');
    }
  };

  const schedule = async (
    streamId: string,
    level: number,
    from: string,
    serviceId: string,
    ctx: ProcessorContext,
    round = 0,
  ) => {
    // Phone verification switched off: nobody can be paged by phone, and the card need not say so.
    if (!deps.pager()) return;
    // From when it happened; never from a time ahead of ours (a webhook's time on another clock).
    const start = Math.min(Date.parse(from), ctx.now().getTime());
    const dueAt = new Date(start + pagingDelayMs(settings, serviceId));
    await scheduleTimer(ctx.store, {
      timerId: pageTimerId(streamId, level, round),
      dueAt,
      command: {
        type: 'PageIncidentResponders',
        data: { incident: streamId, level, ...(round ? { round } : {}) },
      },
      now: ctx.now(),
    });
  };

  const stop = async (streamId: string, reason: string, ctx: ProcessorContext) => {
    const rounds = roundOf(await ctx.store.readStream(streamId));
    for (let round = 0; round <= rounds; round++) {
      for (let level = 1; level <= MAX_LEVELS; level++) {
        await cancelTimer(ctx.store, pageTimerId(streamId, level, round), { now: ctx.now(), reason });
      }
    }
    await deps.pager()?.stop({ reportTo: streamId, reason, at: ctx.now() });
  };

  const pageLevel = async (streamId: string, level: number, round: number, ctx: ProcessorContext) => {
    const { state, history } = await readIncidentState(ctx.store, streamId);
    if (roundOf(history) !== round) return; // acknowledged and back since: a newer round pages
    const facts = state.context.incident;
    if (incidentPhase(state) !== 'open' || incidentStatus(state) !== 'triggered' || !facts) return;
    if (facts.escalationLevel !== level) return; // escalated since: that level has its own timer
    const key = (what: string) => `${streamId}:${level}:${round ? `r${round}:` : ''}${what}`;
    const pager = deps.pager();
    const activity = (
      kind: RecordIncidentPageActivity['data']['kind'],
      rest: Partial<RecordIncidentPageActivity['data']>,
      what: string,
    ) =>
      record(
        pageActivity(
          { streamId, kind, slackUserId: null, name: null, level, detail: null, via: null, ...rest },
          key(what),
          ctx.now(),
        ),
        ctx,
      );
    if (!pager) {
      await activity('no_pager', {}, 'no-pager');
      return;
    }
    const responders = await deps.onCallAt(facts.service.id, level, ctx.now());
    if (responders.length === 0) {
      await activity('nobody_on_call', {}, 'nobody');
      return;
    }
    const wording = pageWording({
      number: state.context.link?.number ?? null,
      title: facts.title,
      priority: facts.priority?.name ?? null,
      service: facts.service.name,
      triggeredAt: facts.triggeredAt,
    });
    for (const r of responders) {
      if (!r.slackUserId) {
        await activity('no_slack_user', { name: r.name ?? r.upstreamUserId }, `noslack:${r.upstreamUserId}`);
        continue;
      }
      const outcome = await pager.page({
        person: { slackUserId: r.slackUserId },
        pageId: incidentPageId(streamId, level, r.slackUserId, round),
        reportTo: streamId,
        number: wording.number,
        label: wording.label,
        text: wording.text,
        spokenText: wording.spokenText,
        callAfterMs: settings.callAfterMs,
        maxPerHour: settings.maxPerHour,
      });
      if (outcome === 'no_verified_phone' || outcome === 'opted_out' || outcome === 'held_back') {
        await activity(
          outcome,
          {
            slackUserId: r.slackUserId,
            detail: outcome === 'held_back' ? `limit ${settings.maxPerHour} an hour` : null,
          },
          `${outcome}:${r.slackUserId}`,
        );
      }
    }
  };

  return {
    id: 'incident-paging',
    filter: {
      streamPrefixes: ['incident-', INCIDENT_PAGING_STREAM_PREFIX],
      eventTypes: [
        'IncidentTriggered',
        'IncidentEscalated',
        'IncidentAcknowledged',
        'IncidentUnacknowledged',
        'IncidentResolved',
        'IncidentPagingDue',
      ],
    },
    async handle(recorded, ctx) {
      if (recorded.kind !== 'event') return;
      if (recorded.type === 'IncidentPagingDue') {
        const data = recorded.data as { level?: unknown; round?: unknown };
        if (typeof data.level !== 'number') return;
        const round = typeof data.round === 'number' ? data.round : 0;
        await pageLevel(incidentOfPagingStream(recorded.streamId), data.level, round, ctx);
        return;
      }
      if (!recorded.streamId.startsWith('incident-')) return;
      let event: IncidentEvent;
      try {
        event = parseIncidentEvent(recorded);
      } catch (error) {
        ctx.logger.warn({ err: asError(error) }, 'incident event not understood: no paging change');
        return;
      }
      switch (event.type) {
        case 'IncidentTriggered': {
          const { state } = await readIncidentState(ctx.store, recorded.streamId);
          if (incidentStatus(state) !== 'triggered') return; // acknowledged or resolved since
          await schedule(
            recorded.streamId,
            event.data.escalationLevel,
            event.data.at,
            event.data.service.id,
            ctx,
          );
          return;
        }
        case 'IncidentEscalated': {
          const { state, history } = await readIncidentState(ctx.store, recorded.streamId);
          const service = state.context.incident?.service.id;
          if (incidentStatus(state) !== 'triggered' || !service) return;
          await schedule(recorded.streamId, event.data.level, event.data.at, service, ctx, roundOf(history));
          return;
        }
        case 'IncidentUnacknowledged': {
          // Back to triggered (the service's acknowledgement timeout): page again, from now.
          const { state, history } = await readIncidentState(ctx.store, recorded.streamId);
          const facts = state.context.incident;
          if (incidentStatus(state) !== 'triggered' || !facts) return;
          const round = roundOf(history.filter((m) => m.position <= recorded.position));
          await schedule(
            recorded.streamId,
            facts.escalationLevel,
            event.data.at,
            facts.service.id,
            ctx,
            round,
          );
          return;
        }
        case 'IncidentAcknowledged':
          await stop(recorded.streamId, 'acknowledged', ctx);
          return;
        case 'IncidentResolved':
          await stop(recorded.streamId, 'resolved', ctx);
          return;
        default:
          return;
      }
    },
  };
};

/**
 * Who is on call at `level` of the service's escalation policy at `at`: the incident service's
 * on-call list (`GET /oncalls` for the policy over a minute from `at`), each person once, mapped
 * to their Slack user by email where one exists.
 */
export const createOnCallAtLevel =
  (
    deps: Readonly<{
      pagerduty: Parameters<typeof listOnCallsInRange>[0]['pagerduty'];
      services: Pick<ServiceDirectory, 'all'>;
      identity: Pick<IdentityResolver, 'slackUserFor'>;
    }>,
  ): IncidentPagingDeps['onCallAt'] =>
  async (serviceId, level, at) => {
    const service = (await deps.services.all()).find((s) => s.id === serviceId);
    if (!service?.escalationPolicyId) return [];
    const rows = await listOnCallsInRange(
      { pagerduty: deps.pagerduty },
      { escalationPolicyIds: [service.escalationPolicyId] },
      { since: at, until: new Date(at.getTime() + 60_000) },
    );
    const seen = new Map<string, OnCallResponder>();
    for (const row of rows) {
      if (row.escalation_level !== level || seen.has(row.user.id)) continue;
      const name = (row.user as { summary?: unknown; name?: unknown }).summary ?? null;
      seen.set(row.user.id, {
        upstreamUserId: row.user.id,
        name: typeof name === 'string' ? name : null,
        slackUserId: await deps.identity.slackUserFor(row.user.id),
      });
    }
    return [...seen.values()];
  };
