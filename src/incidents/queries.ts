import type { Priority } from '../../machines/incident/events.ts';
import { isChatOpsError } from '../core/errors.ts';
import type { EventStore } from '../eventStore/eventStore.ts';
import type { CoverAsks } from '../lifecycles/ports.ts';
import type { IdentityResolver } from '../people/identity.ts';
import {
  escapeMrkdwn,
  type KnownBlock,
  type ModalView,
  mention,
  mrkdwn,
  plain,
  SLACK_LIMITS,
  type SlackMessage,
  truncate,
} from '../slack/blocks/format.ts';
import { slackDate } from '../slack/time.ts';
import { type PagerDutyClient, type PagerDutyOnCall, paginate } from '../upstream/pagerduty.ts';
import { type AlertLine, incidentAlertsBlocks } from './blocks/incidentAlerts.ts';
import { incidentCard } from './blocks/incidentCard.ts';
import { incidentList } from './blocks/incidentList.ts';
import type { ServiceOption } from './blocks/incidentModals.ts';
import { incidentTimeline, toTimelineEntries } from './blocks/incidentTimeline.ts';
import { type IncidentView, toIncidentView } from './blocks/incidentView.ts';
import { withSlackUsers } from './cards.reactor.ts';
import { readIncidentState } from './incidentState.ts';
import { listOnCallsInRange, type OnCallFilters } from './onCall.ts';
import { type LeaveNotesDeps, leaveNoteKey, leaveNotes } from './onCallLeave.ts';
import type { IncidentReadModels } from './readModels.projection.ts';
import type { ServiceDirectory } from './services.ts';

/**
 * What the incident handlers may ask (handlers translate; they never touch the store or an
 * upstream; they get these functions). Every answer is a Slack message ready to send.
 *
 * @example
 * const found = await queries.findIncident('42');
 * if (found) await ack({ response_type: 'ephemeral', ...(await queries.card(found.streamId)) });
 */
export type OnCallTarget =
  | Readonly<{ kind: 'everyone' }>
  | Readonly<{ kind: 'user'; slackUserId: string }>
  | Readonly<{ kind: 'text'; text: string }>;

export type IncidentQueries = Readonly<{
  /** `42`, `#42`, an upstream id or a stream id → the incident, or null when Switchboard does not know it. */
  findIncident(ref: string): Promise<{ streamId: string; label: string } | null>;
  /** The incident's card as it is now (null for a stream without an incident). */
  card(streamId: string): Promise<SlackMessage | null>;
  /**
   * `/incident show`: the card, then the incident's alerts (count, first and last, latest
   * summaries), read from the incident service following its pages.
   */
  show(streamId: string): Promise<SlackMessage | null>;
  /** Open incidents, optionally of one service (by name or id). */
  list(input: Readonly<{ service?: string; now: string }>): Promise<SlackMessage>;
  /**
   * `/incident timeline`: page by page, what people did and how the incident changed; with
   * `full`, the whole audit (every event and every recorded input).
   */
  timeline(streamId: string, options?: Readonly<{ full?: boolean }>): Promise<SlackMessage[]>;
  /** `/oncall`: who is on call now and next. */
  onCall(input: Readonly<{ target: OnCallTarget; now: Date }>): Promise<SlackMessage>;
  /** Services for the trigger form, as known right now (never waits). */
  triggerServices(): readonly ServiceOption[] | undefined;
  /** Names of the services whose incidents get a card in this channel. */
  subscriptions(channel: string): Promise<string[]>;
  /** The incident stream whose card is message `ts` in `channel`, or null for another message. */
  cardOwner(channel: string, ts: string): Promise<string | null>;
  /**
   * Where an incident stands, for the bulk moves' answers: its label, status and whether an
   * acknowledge or resolve is in flight (null before the incident exists).
   */
  standing(streamId: string): Promise<IncidentStanding | null>;
  /** `/incident ack mine`: the open incidents assigned to this Slack user, newest first. */
  assignedTo(slackUserId: string): Promise<IncidentStanding[]>;
}>;

export type IncidentStanding = Readonly<{
  streamId: string;
  number: number | null;
  label: string;
  status: 'triggered' | 'acknowledged' | 'resolved' | null;
  statusInFlight: 'acknowledge' | 'resolve' | null;
}>;

/** What incident handlers get besides the shared HandlerDeps. */
export type IncidentHandlerDeps = Readonly<{
  queries: IncidentQueries;
  /** `views.open`: call it at once, inside the 3 s trigger window; the view's id. Throws coded errors. */
  openView(triggerId: string, view: ModalView): Promise<string | undefined>;
  /** `views.update` of a view `openView` opened (its id): the answer that came after the 3 s. */
  updateView?(viewId: string, view: ModalView): Promise<void>;
  /** Incidents per bulk `PUT /incidents` (the vendor's limit, 250): bulk moves are chunked by it. */
  bulkLimit?: number;
  /** Issue 20: `/oncall cover`, through the time-off lifecycle's port (undefined when it is off). */
  coverAsks?: () => CoverAsks | undefined;
}>;

export type IncidentQueriesDeps = Readonly<{
  store: EventStore;
  readModels: IncidentReadModels;
  services: ServiceDirectory;
  identity: IdentityResolver;
  pagerduty: Pick<PagerDutyClient, 'listOnCalls'> & Partial<Pick<PagerDutyClient, 'listIncidentAlerts'>>;
  /** The incident service's priorities for the card's select (bounded by the caller). */
  priorities?(): Promise<readonly Priority[] | null>;
  /** Alerts asked per page in `show` (default 100, the vendor's maximum). */
  alertsPageSize?: number;
  /**
   * The truth during leave (issue 20): who is away now and who is paged in their place, by the
   * paging plan's rule (src/incidents/onCallLeave.ts). Absent: `/oncall` names who the incident
   * service lists, as before.
   */
  leave?: Omit<LeaveNotesDeps, 'absences' | 'slackUserOf'> &
    Readonly<{ absences: () => LeaveNotesDeps['absences'] }>;
}>;

/** Alerts `show` reads at most (its count says "at least" beyond). */
export const MAX_ALERTS_READ = 1_000;

/** How far ahead `/oncall` looks. */
const ONCALL_AHEAD_MS = 7 * 24 * 3600 * 1000;

const standingOf = (v: IncidentView): IncidentStanding => {
  const inFlight = v.pending.find((p) => p.action === 'acknowledge' || p.action === 'resolve');
  return {
    streamId: v.streamId,
    number: v.number,
    label: `${v.number === null ? '' : `#${v.number} `}${v.title}`,
    status: v.status,
    statusInFlight: inFlight ? (inFlight.action as 'acknowledge' | 'resolve') : null,
  };
};

const message = (text: string): SlackMessage => ({ text, blocks: [{ type: 'section', text: mrkdwn(text) }] });

export const createIncidentQueries = (deps: IncidentQueriesDeps): IncidentQueries => {
  const { store, readModels } = deps;

  const view = async (streamId: string): Promise<IncidentView | null> => {
    const { state } = await readIncidentState(store, streamId);
    const v = toIncidentView(streamId, state);
    return v.phase === 'notTriggered' ? null : withSlackUsers(v, readModels.slackUserOf);
  };

  const person = (ref: PagerDutyOnCall['user']): string => {
    const slack = readModels.slackUserOf(ref.id);
    return slack ? mention(slack) : escapeMrkdwn(ref.name ?? ref.summary ?? ref.id);
  };

  const onCallMessage = (
    title: string,
    rows: readonly PagerDutyOnCall[],
    now: Date,
    empty: string,
    notes: ReadonlyMap<string, string> = new Map(),
  ): SlackMessage => {
    const nowMs = now.getTime();
    const byPolicy = new Map<string, { name: string; levels: Map<number, PagerDutyOnCall[]> }>();
    for (const r of rows) {
      const p = byPolicy.get(r.escalation_policy.id) ?? {
        name: r.escalation_policy.summary ?? r.escalation_policy.id,
        levels: new Map(),
      };
      const list = p.levels.get(r.escalation_level) ?? [];
      list.push(r);
      p.levels.set(r.escalation_level, list);
      byPolicy.set(r.escalation_policy.id, p);
    }
    const blocks: KnownBlock[] = [{ type: 'header', text: plain(truncate(title, SLACK_LIMITS.headerText)) }];
    const lines: string[] = [];
    for (const p of byPolicy.values()) {
      const out: string[] = [`*${escapeMrkdwn(p.name)}*`];
      for (const [level, entries] of [...p.levels.entries()].sort((a, b) => a[0] - b[0])) {
        const startOf = (e: PagerDutyOnCall) => (e.start ? Date.parse(e.start) : Number.NEGATIVE_INFINITY);
        const endOf = (e: PagerDutyOnCall) => (e.end ? Date.parse(e.end) : Number.POSITIVE_INFINITY);
        const sorted = [...entries].sort((a, b) => startOf(a) - startOf(b));
        const current = sorted.filter((e) => startOf(e) <= nowMs && endOf(e) > nowMs);
        const currentEnd = Math.max(nowMs, ...current.map(endOf));
        const next = sorted.find(
          (e) => startOf(e) >= currentEnd && !current.some((c) => c.user.id === e.user.id),
        );
        const where = (e: PagerDutyOnCall) =>
          e.schedule ? ` (${escapeMrkdwn(e.schedule.summary ?? e.schedule.id)})` : '';
        const onNow = current.length
          ? current
              .map((e) => {
                const note = notes.get(leaveNoteKey(e.escalation_policy.id, level, e.user.id));
                return `${person(e.user)}${where(e)}${e.end ? ` until ${slackDate(e.end)}` : ''}${note ? ` ${note}` : ''}`;
              })
              .join(', ')
          : 'nobody';
        const then = next
          ? ` · next: ${person(next.user)} from ${next.start ? slackDate(next.start) : 'now'}`
          : '';
        out.push(`• Level ${level}: ${onNow}${then}`);
      }
      lines.push(out.join('\n'));
    }
    if (lines.length === 0) blocks.push({ type: 'section', text: mrkdwn(empty) });
    for (const l of lines.slice(0, SLACK_LIMITS.blocksPerMessage - 2)) {
      blocks.push({ type: 'section', text: mrkdwn(truncate(l, SLACK_LIMITS.sectionText)) });
    }
    return { text: `${title}: ${lines.length ? lines.join('\n') : empty}`.slice(0, 3000), blocks };
  };

  /** Who is away now and who is paged in their place (issue 20); none without time off. */
  const notesOf = async (rows: readonly PagerDutyOnCall[], now: Date) =>
    deps.leave
      ? leaveNotes(
          {
            absences: deps.leave.absences(),
            rota: deps.leave.rota,
            logger: deps.leave.logger,
            slackUserOf: async (id) => readModels.slackUserOf(id) ?? (await deps.identity.slackUserFor(id)),
          },
          rows,
          now,
        )
      : new Map<string, string>();

  /** The message for these rows, with the truth during leave. */
  const onCallAnswer = async (
    title: string,
    rows: readonly PagerDutyOnCall[],
    now: Date,
    empty: string,
  ): Promise<SlackMessage> => onCallMessage(title, rows, now, empty, await notesOf(rows, now));

  /** The next 7 days of on-call entries, every page of them (src/incidents/onCall.ts). */
  const fetchOnCalls = (now: Date, filters: OnCallFilters) =>
    listOnCallsInRange({ pagerduty: deps.pagerduty }, filters, {
      since: now,
      until: new Date(now.getTime() + ONCALL_AHEAD_MS),
    });

  return {
    async cardOwner(channel, ts) {
      await readModels.catchUp();
      return readModels.streamForCard(channel, ts) ?? null;
    },

    async findIncident(ref) {
      let streamId = readModels.streamForRef(ref);
      if (!streamId) {
        await readModels.catchUp();
        streamId = readModels.streamForRef(ref);
      }
      if (!streamId) return null;
      const v = await view(streamId);
      if (!v) return null;
      return { streamId, label: `${v.number === null ? '' : `#${v.number} `}${v.title}` };
    },

    async standing(streamId) {
      const v = await view(streamId);
      return v ? standingOf(v) : null;
    },

    async assignedTo(slackUserId) {
      await readModels.catchUp();
      const views = await Promise.all(readModels.openIncidents().map((r) => view(r.streamId)));
      return views
        .filter((v): v is IncidentView => v !== null && v.phase === 'open')
        .filter((v) => v.assignees.some((a) => a.slackUserId === slackUserId))
        .map(standingOf);
    },

    async card(streamId) {
      const v = await view(streamId);
      const priorities = deps.priorities ? await deps.priorities() : null;
      return v ? incidentCard(v, { priorities }) : null;
    },

    async show(streamId) {
      const v = await view(streamId);
      if (!v) return null;
      const priorities = deps.priorities ? await deps.priorities() : null;
      const card = incidentCard(v, { priorities });
      const listAlerts = deps.pagerduty.listIncidentAlerts;
      if (!v.upstreamId || !listAlerts) return card;
      const upstreamId = v.upstreamId;
      const alerts: AlertLine[] = [];
      let complete = true;
      try {
        for await (const a of paginate((p) => listAlerts(upstreamId, p), {
          limit: deps.alertsPageSize ?? 100,
          maxItems: MAX_ALERTS_READ + 1,
        })) {
          if (alerts.length === MAX_ALERTS_READ) {
            complete = false;
            break;
          }
          alerts.push({ status: a.status, summary: a.summary ?? null, createdAt: a.created_at });
        }
      } catch (error) {
        // The card is still worth showing; the alerts part says it could not be read.
        const note = ":warning: Switchboard couldn't read this incident's alerts just now.";
        if (isChatOpsError(error)) {
          return { ...card, blocks: [...(card.blocks ?? []), { type: 'context', elements: [mrkdwn(note)] }] };
        }
        throw error;
      }
      const blocks = [...(card.blocks ?? []), ...incidentAlertsBlocks(alerts, complete)];
      return { ...card, blocks: blocks.slice(0, SLACK_LIMITS.blocksPerMessage) };
    },

    async list({ service }) {
      await readModels.catchUp();
      let rows = readModels.openIncidents();
      let title = 'Open incidents';
      if (service) {
        try {
          const s = await deps.services.resolve(service);
          rows = rows.filter((r) => r.serviceId === s.id);
          title = `Open incidents: ${s.name}`;
        } catch (error) {
          if (isChatOpsError(error) && error.code === 'SB_NOT_FOUND')
            return message(`:mag: ${error.message}`);
          throw error;
        }
      }
      const views = (await Promise.all(rows.map((r) => view(r.streamId)))).filter((v) => v !== null);
      return incidentList(views, { title });
    },

    async timeline(streamId, options = {}) {
      const records = await store.readStream(streamId);
      const v = await view(streamId);
      const title = v ? `${v.number === null ? '' : `#${v.number} `}${v.title}` : streamId;
      if (options.full) {
        return incidentTimeline({
          title: `${title} (full audit)`,
          entries: toTimelineEntries(records, { scope: 'audit', commands: 'all' }),
        });
      }
      const entries = toTimelineEntries(records);
      const ref = v?.number ?? streamId;
      const hidden = records.length - entries.length;
      return incidentTimeline({
        title,
        entries,
        ...(hidden > 0
          ? {
              note: `${hidden} technical entr${hidden === 1 ? 'y' : 'ies'} hidden: \`/incident timeline ${ref} all\``,
            }
          : {}),
      });
    },

    async onCall(input) {
      try {
        return await onCall(input);
      } catch (error) {
        // The shared request budget is spent: say when it frees rather than fail or hold the user.
        if (isChatOpsError(error) && error.code === 'SB_UPSTREAM_RATE_LIMITED') return busy(error, input.now);
        throw error;
      }
    },

    async subscriptions(channel) {
      await readModels.catchUp();
      return readModels.subscriptionsOfChannel(channel).map((s) => s.serviceName ?? s.serviceId);
    },

    triggerServices() {
      return deps.services.cached()?.map((s) => ({ id: s.id, name: s.name }));
    },
  };

  async function onCall({
    target,
    now,
  }: Readonly<{ target: OnCallTarget; now: Date }>): Promise<SlackMessage> {
    await readModels.catchUp();
    if (target.kind === 'everyone') {
      return onCallAnswer('On call now', await fetchOnCalls(now, {}), now, 'Nobody is on call.');
    }
    if (target.kind === 'user') {
      let upstreamUserId: string;
      try {
        upstreamUserId = (
          await deps.identity.resolve(target.slackUserId, {
            kind: 'target',
            slackUserId: target.slackUserId,
          })
        ).id;
      } catch (error) {
        if (isChatOpsError(error) && error.code === 'SB_UNMAPPED_USER')
          return message(`:bust_in_silhouette: ${error.message}`);
        throw error;
      }
      const rows = await fetchOnCalls(now, { userIds: [upstreamUserId] });
      return onCallAnswer(
        'On-call shifts in the next 7 days',
        rows,
        now,
        `${mention(target.slackUserId)} has no on-call shift in the next 7 days.`,
      );
    }
    const text = target.text.trim();
    const services = await deps.services.all();
    const q = text.toLowerCase();
    const service =
      services.find((s) => s.id.toLowerCase() === q || s.name.toLowerCase() === q) ??
      (services.filter((s) => s.name.toLowerCase().startsWith(q)).length === 1
        ? services.find((s) => s.name.toLowerCase().startsWith(q))
        : undefined);
    if (service?.escalationPolicyId) {
      const rows = await fetchOnCalls(now, { escalationPolicyIds: [service.escalationPolicyId] });
      return onCallAnswer(
        `On call for ${service.name}`,
        rows,
        now,
        `Nobody is on call for ${escapeMrkdwn(service.name)}.`,
      );
    }
    // A schedule or an escalation policy, by id or name.
    const all = await fetchOnCalls(now, {});
    const matches = (ref: { id: string; summary?: string | null | undefined } | null | undefined) =>
      !!ref && (ref.id.toLowerCase() === q || (ref.summary ?? '').toLowerCase().includes(q));
    const rows = all.filter((r) => matches(r.schedule) || matches(r.escalation_policy));
    if (rows.length === 0) {
      return message(
        `:mag: No service, schedule or escalation policy matches “${escapeMrkdwn(truncate(text, 80))}”. Services: ${services
          .map((s) => escapeMrkdwn(s.name))
          .join(', ')}.`,
      );
    }
    return onCallAnswer(`On call: ${text}`, rows, now, 'Nobody is on call.');
  }
};

/**
 * `/oncall` when the incident service's request budget is spent. A clear "try again at" rather than
 * a wait: the budget frees up to a minute later, far past Slack's 3 s for the answer, and a query
 * held that long in memory helps nobody (the person can ask again in one keystroke).
 */
const busy = (error: { details: Readonly<Record<string, unknown>> }, now: Date): SlackMessage => {
  const retryAfterMs = typeof error.details.retryAfterMs === 'number' ? error.details.retryAfterMs : 60_000;
  const at =
    typeof error.details.retryAt === 'string'
      ? new Date(error.details.retryAt)
      : new Date(now.getTime() + retryAfterMs);
  // Round up to the next minute so "try again at" is never too early.
  const minute = new Date(Math.ceil(at.getTime() / 60_000) * 60_000);
  return message(
    `:hourglass_flowing_sand: The incident service is busy: Switchboard has used its share of requests for this minute. Try \`/oncall\` again ${slackDate(minute)}.`,
  );
};
