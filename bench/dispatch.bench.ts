/**
 * What parsing costs on the dispatch path (issue 8): every stored event is upcast and parsed with
 * its zod schema when a stream is folded, and every command's data is parsed before the decider.
 * `npm run bench -- dispatch` (`--quick` for a smoke run); alone:
 * `node scripts/node24.mjs bench/dispatch.bench.ts`.
 *
 * Candidate: the incident decider as the app uses it (parseEvent + command schemas). Baseline: the
 * same decider with both taken away (stored data folded as it is, commands unchecked), which is what
 * folding did before. Rounds alternate, in one process (see bench/support.ts `interleave`):
 * - dispatch.fold.typical: folds per second of a typical incident stream (triggered from Slack,
 *   card posted, acknowledged, two notes, card updated: 11 events);
 * - dispatch.fold.long: the same with 50 notes (107 events);
 * - dispatch.command: `bus.dispatch` of `RecordIncidentCardUpdated` on typical streams (11 to 21
 *   events: read, fold, check, decide, append) on the in-memory store, commands per second. In-memory so the fsync of a
 *   file store (0.2–0.4 ms a commit on this disk) does not hide the difference.
 */
import { randomUUID } from 'node:crypto';
import { incidentDecider } from '../machines/incident/decider.ts';
import { incidentStreamIdForRequest } from '../machines/incident/streams.ts';
import { type CommandBus, type CommandRoute, createCommandBus } from '../src/application/dispatch.ts';
import { foldHistory } from '../src/application/fold.ts';
import type { Command, JsonObject } from '../src/core/messages.ts';
import type { EventStore } from '../src/eventStore/eventStore.ts';
import { openEventStore } from '../src/eventStore/openEventStore.ts';
import { incidentRoutes } from '../src/incidents/routes.ts';
import { emit, interleave, note, perSecond } from './support.ts';

const quick = process.argv.includes('--quick');
const ROUNDS = quick ? 3 : 21;
const FOLDS_PER_ROUND = quick ? 200 : 2_000;
const LONG_FOLDS_PER_ROUND = quick ? 40 : 300;
const COMMANDS_PER_ROUND = quick ? 50 : 300;

const ANA = { id: 'PUSR001', email: 'ana.silva@example.org', name: 'Ana Silva' };
const NOW = '2026-11-22T02:04:00.000Z';
let seq = 0;
const command = (type: string, data: object, commandId = randomUUID()): Command => ({
  type,
  data: data as JsonObject,
  metadata: { now: NOW, commandId, actor: 'U0ANA', causationId: `input-${++seq}` },
});

/** An incident triggered from Slack, its card, an acknowledgement and `notes` notes, as the app records them. */
const seedIncident = async (bus: CommandBus, notes: number): Promise<string> => {
  const requestId = randomUUID();
  const streamId = incidentStreamIdForRequest(requestId);
  const by = { by: 'U0ANA', asUser: ANA };
  const succeeded = (rid: string, action: string, extra: object = {}) =>
    command('RecordIncidentUpstreamCallSucceeded', {
      streamId,
      requestId: rid,
      action,
      via: 'rest',
      incident: null,
      noteId: null,
      ...extra,
    });
  await bus.dispatch(
    command(
      'TriggerIncident',
      {
        ...by,
        service: { id: 'PSVC001', name: 'Payments API' },
        title: 'card auth failing',
        urgency: 'high',
        details: null,
        channel: 'C0OPS',
      },
      requestId,
    ),
  );
  await bus.dispatch(command('RecordIncidentCardPosted', { streamId, channel: 'C0OPS', ts: '1.000001' }));
  await bus.dispatch(
    succeeded(requestId, 'trigger', {
      incident: {
        id: `P${requestId.slice(0, 6).toUpperCase()}`,
        number: 42,
        title: 'card auth failing',
        status: 'triggered',
        urgency: 'high',
        priority: null,
        service: { id: 'PSVC001', name: 'Payments API' },
        assignees: [{ id: 'PUSR001', name: 'Ana Silva', slackUserId: 'U0ANA' }],
        htmlUrl: 'https://acme.pagerduty.com/incidents/PX',
        createdAt: NOW,
        incidentKey: `switchboard:${requestId}`,
        escalationLevel: 1,
        resolveReason: null,
      },
    }),
  );
  const ack = randomUUID();
  await bus.dispatch(command('AcknowledgeIncident', { streamId, ...by }, ack));
  await bus.dispatch(succeeded(ack, 'acknowledge'));
  for (let i = 0; i < notes; i++) {
    const n = randomUUID();
    await bus.dispatch(
      command('AddIncidentNote', { streamId, ...by, content: `note ${i}: still looking` }, n),
    );
    await bus.dispatch(succeeded(n, 'note', { noteId: `PNOTE${i}` }));
  }
  await bus.dispatch(command('RecordIncidentCardUpdated', { streamId, channel: 'C0OPS', ts: '1.000001' }));
  return streamId;
};

/** The incident decider as folding and dispatch were before: no event parsing, no command schemas. */
const unparsed = { ...incidentDecider, parseEvent: undefined, commandSchemas: undefined };

const baselineRoutes = (routes: Readonly<Record<string, CommandRoute>>): Record<string, CommandRoute> =>
  Object.fromEntries(
    Object.entries(routes).map(([type, route]) => [
      type,
      route.decider === (incidentDecider as unknown) ? { ...route, decider: unparsed as never } : route,
    ]),
  );

const timeFolds = (history: Parameters<typeof foldHistory>[1], parse: boolean, times: number) => {
  const decider = parse ? incidentDecider : unparsed;
  const started = performance.now();
  for (let i = 0; i < times; i++) foldHistory(decider, history);
  return perSecond(times, performance.now() - started);
};

const store: EventStore = await openEventStore('sqlite::memory:');
const routes = incidentRoutes({ streamForUpstreamId: () => undefined });
const parsedBus = createCommandBus(store, routes);
const plainBus = createCommandBus(store, baselineRoutes(routes));

const typical = await store.readStream(await seedIncident(parsedBus, 2));
const long = await store.readStream(await seedIncident(parsedBus, 50));
const eventsIn = (h: typeof typical) => h.filter((m) => m.kind === 'event').length;
note(`typical stream: ${eventsIn(typical)} events; long: ${eventsIn(long)} events`);
// Warm both paths up (JIT, zod's compiled parsers) before measuring.
timeFolds(typical, true, 200);
timeFolds(typical, false, 200);

for (const [name, history, times] of [
  ['dispatch.fold.typical', typical, FOLDS_PER_ROUND],
  ['dispatch.fold.long', long, LONG_FOLDS_PER_ROUND],
] as const) {
  const r = await interleave(ROUNDS, {
    candidate: async () => timeFolds(history, true, times),
    baseline: async () => timeFolds(history, false, times),
  });
  const perEventUs = ((1 / r.candidate - 1 / r.baseline) * 1e6) / eventsIn(history);
  note(`${name}: parse adds ${perEventUs.toFixed(2)} µs per stored event`);
  emit({
    bench: name,
    value: r.candidate,
    unit: 'folds/s',
    baseline: 'the same fold without parsing',
    baselineValue: r.baseline,
    ratio: r.pairedRatio,
  });
}

/** Seeds fresh typical streams (untimed), then times 10 card updates on each: streams stay 11–21 events. */
const dispatchRound = async (bus: CommandBus): Promise<number> => {
  const streams: string[] = [];
  for (let i = 0; i < COMMANDS_PER_ROUND / 10; i++) streams.push(await seedIncident(parsedBus, 2));
  const started = performance.now();
  for (let i = 0; i < 10; i++) {
    for (const streamId of streams) {
      await bus.dispatch(
        command('RecordIncidentCardUpdated', { streamId, channel: 'C0OPS', ts: '1.000001' }),
      );
    }
  }
  return perSecond(streams.length * 10, performance.now() - started);
};
await dispatchRound(parsedBus);
await dispatchRound(plainBus);
const d = await interleave(ROUNDS, {
  candidate: () => dispatchRound(parsedBus),
  baseline: () => dispatchRound(plainBus),
});
note(
  `dispatch.command: ${(1000 / d.candidate).toFixed(3)} ms vs ${(1000 / d.baseline).toFixed(3)} ms a command ` +
    '(streams of 11 to 21 events)',
);
emit({
  bench: 'dispatch.command',
  value: d.candidate,
  unit: 'commands/s',
  baseline: 'the same dispatch without parsing',
  baselineValue: d.baseline,
  ratio: d.pairedRatio,
});
await store.close();
