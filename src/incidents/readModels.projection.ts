import { INCIDENT_ROUTING_STREAM_PREFIX } from '../../machines/incidentRouting/streams.ts';
import type { EventFilter, EventStore, RecordedEvent } from '../eventStore/eventStore.ts';
import { PERSON_EVENT_TYPES, PERSON_STREAM_PREFIX, upcastPersonEvent } from '../people/events.ts';
import type { Processor } from '../processors/runner.ts';
import {
  createResumableState,
  type ReadModelRegistration,
  type ResumableState,
  readModelProcessor,
} from '../processors/snapshots.ts';

/**
 * The incident lifecycle's read models, in memory:
 * - the incident index: upstream id and number → stream id (from `IncidentLinked`, the first fact
 *   of every incident known upstream), so `/incident ack 42` and note webhooks find their stream;
 * - incidents by phase (triggering, open, resolved, not created) with their service, for
 *   `/incident list` and for routing cards to subscribed channels;
 * - channel subscriptions per service (`incidentRouting-<service>`);
 * - people: Slack user ↔ incident-service user (the people directory's `identity-<slackUserId>`
 *   links for `system: 'incidents'`, old `SlackUserMapped` events upcast), so cards mention people
 *   the incident service names;
 * - pages sent per person: when each page by phone went out (the page activity `sms_submitted` or
 *   `sms_failed` recorded on incident streams, one per page), for the "fewest recent night pages"
 *   ranking (`onCall.nightPagesOf`).
 *
 * In memory, resumed from a snapshot (processor `incident-read-models`, `resumeFrom: 'snapshot'`,
 * stream `snapshot-incident-read-models`, see src/processors/snapshots.ts): a start loads the last
 * snapshot and reads only the events after it. Bump `INCIDENT_READ_MODELS_VERSION` when the state or
 * `apply` changes: the next start rebuilds from zero.
 *
 * Read-your-writes: the processor follows the store in the background; `catchUp()` reads whatever
 * it has not applied yet, so a query right after a write sees it. Both paths read the same filtered
 * sequence in order and apply an event only if its position is past the last applied one.
 *
 * @example
 * const readModels = createIncidentReadModels({ store });
 * await readModels.catchUp();
 * readModels.streamForRef('42'); // 'incident-9b2…'
 */

export type IncidentPhaseRow = 'triggering' | 'open' | 'resolved' | 'triggerFailed';

export type IncidentRow = Readonly<{
  streamId: string;
  phase: IncidentPhaseRow;
  upstreamId: string | null;
  number: number | null;
  serviceId: string | null;
  /** Position of the last event that changed the row (newest first in lists). */
  position: bigint;
}>;

export type Subscription = Readonly<{ serviceId: string; serviceName: string | null; channel: string }>;

/** Page activity is recorded as a command in the incident's stream (src/incidents/paging.ts). */
const PAGE_ACTIVITY = 'RecordIncidentPageActivity';
/** The page activity that says a page went out to someone: one per page (its SMS, sent or not). */
const PAGE_SENT_KINDS: ReadonlySet<string> = new Set(['sms_submitted', 'sms_failed']);
/** Pages kept per person (the newest): the ranking looks back weeks, not years. */
const PAGES_KEPT = 200;

const TYPES = [
  'IncidentTriggerRequested',
  'IncidentLinked',
  'IncidentTriggered',
  'IncidentResolved',
  'IncidentReopened',
  'IncidentUpstreamCallFailed',
  'IncidentChannelSubscribed',
  'IncidentChannelUnsubscribed',
  'IncidentCardPosted',
  PAGE_ACTIVITY,
  ...PERSON_EVENT_TYPES,
];

export const INCIDENT_READ_MODEL_FILTER: EventFilter = {
  streamPrefixes: ['incident-', INCIDENT_ROUTING_STREAM_PREFIX, PERSON_STREAM_PREFIX],
  eventTypes: TYPES,
};

export type IncidentReadModels = Readonly<{
  processor: Processor;
  /** Its snapshots (`snapshot()` for the rebuild CLI, `appliedSinceStart()` for tests). */
  resumable: ResumableState;
  /** Applies every matching event the store holds that this has not applied yet. */
  catchUp(): Promise<void>;
  streamForUpstreamId(upstreamId: string): string | undefined;
  streamForNumber(number: number): string | undefined;
  /** `42`, `#42`, an upstream id (`Q1ABC2D`) or a stream id → stream id. */
  streamForRef(ref: string): string | undefined;
  incident(streamId: string): IncidentRow | undefined;
  /** Incidents not resolved (and not failed to create), newest first. */
  openIncidents(): IncidentRow[];
  channelsForService(serviceId: string): string[];
  subscriptionsOfChannel(channel: string): Subscription[];
  /** The Slack user we know for an incident-service user id, or null. */
  slackUserOf(upstreamUserId: string): string | null;
  /** The incident whose card is the message `ts` in `channel` (as recorded when it was posted). */
  streamForCard(channel: string, ts: string): string | undefined;
  /** When pages went out to the Slack user (epoch ms, oldest first; the newest 200). */
  pagesSentTo(slackUserId: string): readonly number[];
}>;

/** Version of the snapshotted state and of `apply`: bump it when either changes (rebuilds from zero). */
export const INCIDENT_READ_MODELS_VERSION = 3;
export const INCIDENT_READ_MODELS_ID = 'incident-read-models';

/**
 * The snapshotted state, in columns (one array per field: a third of the parse time of one small
 * array per row). The upstream-id and number indexes are not stored: they follow from the rows.
 */
type IncidentReadModelsState = Readonly<{
  streamIds: string[];
  positions: string[];
  phases: IncidentPhaseRow[];
  upstreamIds: (string | null)[];
  numbers: (number | null)[];
  serviceIds: (string | null)[];
  subscriptions: Subscription[];
  upstreamBySlack: [string, string][];
  slackByUpstream: [string, string][];
  cardKeys: string[];
  cardStreams: string[];
  /** Pages sent: Slack user → epoch ms (absent in snapshots of version 2). */
  pagesSent?: [string, number[]][];
}>;

export const createIncidentReadModels = (
  deps: Readonly<{ store: EventStore; snapshotEvery?: number }>,
): IncidentReadModels => {
  const { store } = deps;
  const byUpstreamId = new Map<string, string>();
  const byNumber = new Map<number, string>();
  const incidents = new Map<string, IncidentRow>();
  const subscriptions = new Map<string, Map<string, Subscription>>();
  /** Slack user → their incident-service user id, and back. */
  const upstreamBySlack = new Map<string, string>();
  const slackByUpstream = new Map<string, string>();
  /** `<channel> <ts>` of each card → its incident stream. */
  const byCard = new Map<string, string>();
  /** Slack user → when pages went out to them (epoch ms, in store order). */
  const pagesSent = new Map<string, number[]>();

  const setRow = (streamId: string, position: bigint, patch: Partial<IncidentRow>): void => {
    const row = incidents.get(streamId) ?? {
      streamId,
      phase: 'triggering' as const,
      upstreamId: null,
      number: null,
      serviceId: null,
      position,
    };
    incidents.set(streamId, { ...row, ...patch, position });
  };

  const apply = (e: RecordedEvent): void => {
    const d = e.data as Record<string, unknown>;
    if (e.kind === 'command') {
      if (e.type !== PAGE_ACTIVITY || !e.streamId.startsWith('incident-')) return;
      const at = Date.parse(String(e.metadata.now ?? ''));
      if (typeof d.slackUserId !== 'string' || !PAGE_SENT_KINDS.has(String(d.kind)) || Number.isNaN(at))
        return;
      const list = pagesSent.get(d.slackUserId) ?? [];
      list.push(at);
      if (list.length > PAGES_KEPT) list.splice(0, list.length - PAGES_KEPT);
      pagesSent.set(d.slackUserId, list);
      return;
    }
    if (e.kind !== 'event') return;
    const str = (v: unknown): string | null => (typeof v === 'string' ? v : null);
    if (e.streamId.startsWith(PERSON_STREAM_PREFIX)) {
      const fact = upcastPersonEvent(e);
      if (fact?.data.system !== 'incidents') return;
      const { slackUserId, externalId } = fact.data;
      const previous = upstreamBySlack.get(slackUserId);
      if (previous !== undefined && slackByUpstream.get(previous) === slackUserId) {
        slackByUpstream.delete(previous);
      }
      upstreamBySlack.delete(slackUserId);
      if (fact.type === 'PersonLinked') {
        upstreamBySlack.set(slackUserId, externalId);
        slackByUpstream.set(externalId, slackUserId);
      }
      return;
    }
    if (e.streamId.startsWith(INCIDENT_ROUTING_STREAM_PREFIX)) {
      const serviceId = str(d.serviceId);
      const channel = str(d.channel);
      if (!serviceId || !channel) return;
      const channels = subscriptions.get(serviceId) ?? new Map<string, Subscription>();
      if (e.type === 'IncidentChannelSubscribed') {
        channels.set(channel, { serviceId, serviceName: str(d.serviceName), channel });
      } else if (e.type === 'IncidentChannelUnsubscribed') {
        channels.delete(channel);
      }
      subscriptions.set(serviceId, channels);
      return;
    }
    if (!e.streamId.startsWith('incident-')) return;
    switch (e.type) {
      case 'IncidentTriggerRequested': {
        const service = d.service as { id?: unknown } | undefined;
        setRow(e.streamId, e.position, { phase: 'triggering', serviceId: str(service?.id) });
        break;
      }
      case 'IncidentLinked': {
        const upstreamId = str(d.upstreamId);
        const number = typeof d.number === 'number' ? d.number : null;
        if (upstreamId) byUpstreamId.set(upstreamId, e.streamId);
        if (number !== null) byNumber.set(number, e.streamId);
        setRow(e.streamId, e.position, { upstreamId, number });
        break;
      }
      case 'IncidentTriggered':
      case 'IncidentReopened': {
        const service = d.service as { id?: unknown } | undefined;
        const serviceId = str(service?.id);
        setRow(e.streamId, e.position, { phase: 'open', ...(serviceId ? { serviceId } : {}) });
        break;
      }
      case 'IncidentResolved':
        setRow(e.streamId, e.position, { phase: 'resolved' });
        break;
      case 'IncidentCardPosted': {
        const channel = str(d.channel);
        const ts = str(d.ts);
        if (channel && ts) byCard.set(`${channel} ${ts}`, e.streamId);
        break;
      }
      case 'IncidentUpstreamCallFailed':
        if (d.action === 'trigger' && d.final === true && incidents.get(e.streamId)?.phase === 'triggering') {
          setRow(e.streamId, e.position, { phase: 'triggerFailed' });
        }
        break;
      default:
        break;
    }
  };

  const save = (): IncidentReadModelsState => {
    const rows = [...incidents.values()];
    return {
      streamIds: rows.map((r) => r.streamId),
      positions: rows.map((r) => r.position.toString()),
      phases: rows.map((r) => r.phase),
      upstreamIds: rows.map((r) => r.upstreamId),
      numbers: rows.map((r) => r.number),
      serviceIds: rows.map((r) => r.serviceId),
      subscriptions: [...subscriptions.values()].flatMap((m) => [...m.values()]),
      upstreamBySlack: [...upstreamBySlack],
      slackByUpstream: [...slackByUpstream],
      cardKeys: [...byCard.keys()],
      cardStreams: [...byCard.values()],
      pagesSent: [...pagesSent].map(([k, v]) => [k, [...v]]),
    };
  };
  const reset = (): void => {
    for (const m of [
      byUpstreamId,
      byNumber,
      incidents,
      subscriptions,
      upstreamBySlack,
      slackByUpstream,
      byCard,
      pagesSent,
    ]) {
      m.clear();
    }
  };
  const load = (raw: unknown): void => {
    const state = raw as IncidentReadModelsState;
    state.streamIds.forEach((streamId, i) => {
      const upstreamId = state.upstreamIds[i] ?? null;
      const number = state.numbers[i] ?? null;
      incidents.set(streamId, {
        streamId,
        phase: state.phases[i]!,
        upstreamId,
        number,
        serviceId: state.serviceIds[i] ?? null,
        position: BigInt(state.positions[i]!),
      });
      if (upstreamId !== null) byUpstreamId.set(upstreamId, streamId);
      if (number !== null) byNumber.set(number, streamId);
    });
    for (const sub of state.subscriptions) {
      const channels = subscriptions.get(sub.serviceId) ?? new Map<string, Subscription>();
      channels.set(sub.channel, sub);
      subscriptions.set(sub.serviceId, channels);
    }
    for (const [k, v] of state.upstreamBySlack) upstreamBySlack.set(k, v);
    for (const [k, v] of state.slackByUpstream) slackByUpstream.set(k, v);
    state.cardKeys.forEach((key, i) => {
      byCard.set(key, state.cardStreams[i]!);
    });
    for (const [k, v] of state.pagesSent ?? []) pagesSent.set(k, [...v]);
  };
  const resumable = createResumableState({
    name: INCIDENT_READ_MODELS_ID,
    version: INCIDENT_READ_MODELS_VERSION,
    filter: INCIDENT_READ_MODEL_FILTER,
    store,
    apply,
    save,
    load,
    reset,
    ...(deps.snapshotEvery === undefined ? {} : { snapshotEvery: deps.snapshotEvery }),
  });

  const streamForRef = (ref: string): string | undefined => {
    const r = ref.trim().replace(/^#/, '');
    if (/^\d+$/.test(r)) return byNumber.get(Number(r));
    if (r.startsWith('incident-')) return incidents.has(r) ? r : undefined;
    return byUpstreamId.get(r) ?? byUpstreamId.get(r.toUpperCase());
  };

  return {
    processor: readModelProcessor(INCIDENT_READ_MODELS_ID, INCIDENT_READ_MODEL_FILTER, resumable),
    resumable,
    catchUp: resumable.catchUp,
    streamForUpstreamId: (id) => byUpstreamId.get(id),
    streamForNumber: (n) => byNumber.get(n),
    streamForRef,
    incident: (streamId) => incidents.get(streamId),
    openIncidents: () =>
      [...incidents.values()]
        .filter((r) => r.phase === 'open' || r.phase === 'triggering')
        .sort((a, b) => (a.position < b.position ? 1 : a.position > b.position ? -1 : 0)),
    channelsForService: (serviceId) => [...(subscriptions.get(serviceId)?.keys() ?? [])],
    subscriptionsOfChannel: (channel) =>
      [...subscriptions.values()].flatMap((m) => [...m.values()].filter((s) => s.channel === channel)),
    slackUserOf: (upstreamUserId) => slackByUpstream.get(upstreamUserId) ?? null,
    streamForCard: (channel, ts) => byCard.get(`${channel} ${ts}`),
    pagesSentTo: (slackUserId) => pagesSent.get(slackUserId) ?? [],
  };
};

/** Registered by the incidents module's declaration (`readModels`). */
export const INCIDENT_READ_MODELS: ReadModelRegistration = {
  name: INCIDENT_READ_MODELS_ID,
  create: (store) => createIncidentReadModels({ store }).resumable,
};
