import type { EventStore, RecordedEvent } from '../../src/eventStore/eventStore.ts';
import type { PagerDutySimulator } from '../simulators/pagerduty/index.ts';
import type { SimIncident } from '../simulators/pagerduty/model.ts';
import { onCallAt, renderFinal } from '../simulators/pagerduty/schedules.ts';

/**
 * The console's side panel data: the incident service as its web app would show it (incidents,
 * who is on call), and the event store (streams, one stream's events, the live tail). Read-only;
 * acting on the incident service goes through the simulator's web app or its Events API.
 */

type Json = Record<string, unknown>;

export type PersonRef = Readonly<{ id: string; name: string; email: string }>;

export type PanelIncident = Readonly<{
  id: string;
  number: number;
  title: string;
  status: SimIncident['status'];
  urgency: SimIncident['urgency'];
  service: Readonly<{ id: string; name: string }>;
  assignees: readonly PersonRef[];
  escalationLevel: number;
  createdAt: string;
  updatedAt: string;
  lastChangedBy: string;
}>;

export type OnCallTarget =
  | Readonly<{ kind: 'user'; user: PersonRef | null }>
  | Readonly<{
      kind: 'schedule';
      schedule: Readonly<{ id: string; name: string }>;
      now: PersonRef | null;
      /** When the current shift ends, and who is next. */
      until: string | null;
      next: PersonRef | null;
    }>;

export type PagerDutyPanel = Readonly<{
  incidents: readonly PanelIncident[];
  services: ReadonlyArray<
    Readonly<{ id: string; name: string; description: string; routingKey: string; escalationPolicy: string }>
  >;
  onCall: ReadonlyArray<
    Readonly<{
      id: string;
      name: string;
      services: readonly string[];
      levels: ReadonlyArray<
        Readonly<{ level: number; delayMinutes: number; targets: readonly OnCallTarget[] }>
      >;
    }>
  >;
  /** Each schedule's shifts from now on (final, overrides applied) and its overrides, as its page shows them. */
  schedules: readonly PanelSchedule[];
  people: readonly PersonRef[];
}>;

export type PanelShift = Readonly<{ start: string; end: string; user: PersonRef | null }>;

export type PanelSchedule = Readonly<{
  id: string;
  name: string;
  timeZone: string;
  description: string;
  /** The final schedule (rotation with overrides on top) from now for {@link SCHEDULE_HORIZON_DAYS} days. */
  upcoming: readonly PanelShift[];
  /** Overrides not yet over, earliest first (the service keeps them until they end; there is no delete). */
  overrides: ReadonlyArray<PanelShift & Readonly<{ id: string }>>;
}>;

/** How far ahead the panel shows each schedule. */
export const SCHEDULE_HORIZON_DAYS = 21;

const STATUS_ORDER: Record<SimIncident['status'], number> = { triggered: 0, acknowledged: 1, resolved: 2 };

export const pagerDutyPanel = (sim: PagerDutySimulator, nowMs: number): PagerDutyPanel => {
  const model = sim.state;
  const person = (id: string | undefined): PersonRef | null => {
    const u = id ? model.users.get(id) : undefined;
    return u ? { id: u.id, name: u.name, email: u.email } : null;
  };
  const agentName = (inc: SimIncident): string => {
    const a = inc.lastStatusChangeBy;
    if (a.kind === 'user') return model.users.get(a.userId)?.name ?? a.userId;
    if (a.kind === 'service') return `${model.services.get(a.serviceId)?.name ?? a.serviceId} (monitoring)`;
    return 'the incident service';
  };
  const incidents = [...model.incidents.values()]
    .sort((a, b) => STATUS_ORDER[a.status] - STATUS_ORDER[b.status] || b.number - a.number)
    .map(
      (i): PanelIncident => ({
        id: i.id,
        number: i.number,
        title: i.title,
        status: i.status,
        urgency: i.urgency,
        service: { id: i.serviceId, name: model.services.get(i.serviceId)?.name ?? i.serviceId },
        assignees: i.assignments.map((a) => person(a.userId)).filter((p): p is PersonRef => p !== null),
        escalationLevel: i.escalationLevel,
        createdAt: i.createdAt,
        updatedAt: i.updatedAt,
        lastChangedBy: agentName(i),
      }),
    );
  const services = [...model.services.values()].map((s) => ({
    id: s.id,
    name: s.name,
    description: s.description,
    routingKey: s.integrationKey,
    escalationPolicy: model.policies.get(s.escalationPolicyId)?.name ?? s.escalationPolicyId,
  }));
  const onCall = [...model.policies.values()].map((p) => ({
    id: p.id,
    name: p.name,
    services: [...model.services.values()].filter((s) => s.escalationPolicyId === p.id).map((s) => s.name),
    levels: p.rules.map((r, i) => ({
      level: i + 1,
      delayMinutes: r.escalationDelayInMinutes,
      targets: r.targets.map((t): OnCallTarget => {
        if (t.type === 'user_reference') return { kind: 'user', user: person(t.id) };
        const schedule = model.schedules.get(t.id);
        if (!schedule)
          return { kind: 'schedule', schedule: { id: t.id, name: t.id }, now: null, until: null, next: null };
        const shifts = renderFinal(schedule, nowMs, nowMs + 45 * 24 * 3600 * 1000);
        const current = shifts[0];
        return {
          kind: 'schedule',
          schedule: { id: schedule.id, name: schedule.name },
          now: person(onCallAt(schedule, nowMs)),
          until: current ? new Date(current.end).toISOString() : null,
          next: person(shifts[1]?.userId),
        };
      }),
    })),
  }));
  const horizon = nowMs + SCHEDULE_HORIZON_DAYS * 24 * 3600 * 1000;
  const iso = (ms: number) => new Date(ms).toISOString();
  const schedules = [...model.schedules.values()].map(
    (s): PanelSchedule => ({
      id: s.id,
      name: s.name,
      timeZone: s.timeZone,
      description: s.description,
      upcoming: renderFinal(s, nowMs, horizon).map((e) => ({
        start: iso(e.start),
        end: iso(e.end),
        user: person(e.userId),
      })),
      overrides: s.overrides
        .filter((o) => Date.parse(o.end) > nowMs)
        .sort((a, b) => Date.parse(a.start) - Date.parse(b.start) || a.seq - b.seq)
        .map((o) => ({ id: o.id, start: o.start, end: o.end, user: person(o.userId) })),
    }),
  );
  const people = [...model.users.values()].map((u) => ({ id: u.id, name: u.name, email: u.email }));
  return { incidents, services, onCall, schedules, people };
};

export type StoreEventRow = Readonly<{
  id: string;
  streamId: string;
  revision: number;
  position: string;
  type: string;
  kind: string;
  /** Who caused it, from the metadata (or the recorded input). */
  actor: string | null;
  recordedAt: string;
  data: Json;
  metadata: Json;
}>;

const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);

/** Who an event is attributed to: `metadata.actor`, else the recorded input's actor or `by`, else its webhook source. */
export const actorOf = (e: Pick<RecordedEvent, 'data' | 'metadata'>): string | null => {
  const m = e.metadata as Json;
  const d = e.data as Json;
  const input = (d['input'] ?? {}) as Json;
  const source = str(m['source']);
  return (
    str(m['actor']) ??
    str(input['actor']) ??
    str(d['by']) ??
    str(m['by']) ??
    (source && source !== 'slack' ? `${source} webhook` : null)
  );
};

export const storeEventRow = (e: RecordedEvent): StoreEventRow => ({
  id: e.id,
  streamId: e.streamId,
  revision: e.revision,
  position: String(e.position),
  type: e.type,
  kind: e.kind,
  actor: actorOf(e),
  recordedAt: e.recordedAt.toISOString(),
  data: e.data as Json,
  metadata: e.metadata as Json,
});

/** The newest `limit` events of a stream, oldest first. */
export const readStreamRows = async (
  store: EventStore,
  streamId: string,
  limit = 500,
): Promise<StoreEventRow[]> =>
  (await store.readStream(streamId, { direction: 'backwards', maxCount: limit }))
    .reverse()
    .map(storeEventRow);

export const listStreamRows = async (store: EventStore, prefix?: string) =>
  (await store.listStreams({ ...(prefix ? { prefix } : {}), limit: 1000 }))
    .sort((a, b) => (a.lastPosition < b.lastPosition ? 1 : a.lastPosition > b.lastPosition ? -1 : 0))
    .map((s) => ({
      streamId: s.streamId,
      events: s.lastRevision + 1,
      lastPosition: String(s.lastPosition),
      lastRecordedAt: s.lastRecordedAt.toISOString(),
    }));

/** The newest `limit` events of the whole store, newest first (the tail's starting point). */
export const recentEventRows = async (store: EventStore, limit = 50): Promise<StoreEventRow[]> => {
  const head = await store.headPosition();
  if (head === undefined) return [];
  const from = head - BigInt(limit * 4);
  const events = await store.readAll(from > 0n ? { after: from } : {});
  return events.slice(-limit).reverse().map(storeEventRow);
};
