import type { TimeOffOptions } from '../../handlers/timeOff/module.ts';
import type { HiBobSimulatorOptions } from '../../sandbox/simulators/hibob/index.ts';
import {
  type PagerDutySimulator,
  startPagerDutySimulator,
} from '../../sandbox/simulators/pagerduty/index.ts';
import type { SimulatorSeed } from '../../sandbox/simulators/pagerduty/model.ts';
import { startVonageSimulator, type VonageSimulator } from '../../sandbox/simulators/vonage/index.ts';
import { type ManualClock, manualClock } from '../../src/core/clock.ts';
import type { RecordedEvent } from '../../src/eventStore/eventStore.ts';
import { TIME_OFF_ACTION } from '../../src/timeOff/blocks/timeOffIds.ts';
import { createVonageClient } from '../../src/upstream/vonage.ts';
import { slackDriver } from '../support/slackHarness.ts';
import { waitFor } from '../support/waitFor.ts';
import {
  ANA,
  BEN,
  CHEN,
  DANA,
  FRANK,
  GIL,
  HR_IDS,
  messageText,
  startTimeOffHarness,
  type TimeOffHarness,
} from '../timeOff/harness.ts';

/**
 * Issue 12 end to end: the whole app with all three lifecycles switched on — incidents against the
 * PagerDuty simulator, phone verification and paging against the Vonage simulator, time off against
 * the HR simulator — and the fake Slack, all on ONE manual clock (HR's lag, the rota, pages, timers).
 * It is the time-off harness (`test/timeOff/harness.ts`: its org, its Slack helpers) with the two
 * other simulators added.
 *
 * The organisation (HR; Slack users joined by email; the same emails in the incident service):
 *
 *   Frank Moreau (U0FRANK, head of engineering, no manager)
 *   └─ Dana Lee (U0DANA, engineering manager)
 *      ├─ Ana Silva (U0ANA)
 *      ├─ Ben Okafor (U0BEN)
 *      └─ Chen Wei (U0CHEN)
 *   Gil Santos (U0GIL): in Slack, not in HR nor in the incident service.
 *
 * The clock starts on Monday 23 November 2026, 09:00 UTC (`start` changes it). The rota is anchored
 * to the clock's first Monday 00:00 UTC (`WEEK_START`), never to the calendar:
 *
 * - Payments primary (PSCHPAY, weekly, UTC): Ben this week, Ana NEXT week (`nextWeek()`), Chen the
 *   week after, then Ben again.
 * - Payments escalation policy (PEPPAY): level 1 Payments primary, level 2 Dana, level 3 Frank.
 * - Platform escalation policy (PEPPLT): level 1 Chen, level 2 Ana (named directly: a leaver's
 *   policy mention).
 * - Services: Payments API (PSVCPAY, policy PEPPAY), Platform Gateway (PSVCPLT, policy PEPPLT).
 * - Slack channels #payments (C0PAY, subscribed to Payments API) and #platform (C0PLT, subscribed to
 *   Platform Gateway), subscribed at start by Dana with `/incident subscribe`.
 *
 * Time zones (Slack and the incident service agree): Dana Europe/Warsaw, Ana Europe/Lisbon, Ben
 * Europe/London, Chen Asia/Singapore, Frank UTC.
 */

export { ANA, BEN, CHEN, DANA, FRANK, GIL, HR_IDS, messageText };

export const PD_IDS = {
  frank: 'PFRANK1',
  dana: 'PDANA01',
  ana: 'PANA001',
  ben: 'PBEN001',
  chen: 'PCHEN01',
} as const;

export const PAYMENTS_CHANNEL = 'C0PAY';
export const PLATFORM_CHANNEL = 'C0PLT';
export const PAYMENTS_SCHEDULE = 'PSCHPAY';
export const PAYMENTS_POLICY = 'PEPPAY';
export const PLATFORM_POLICY = 'PEPPLT';
export const PAYMENTS = 'Payments API';
export const PLATFORM = 'Platform Gateway';

/** Phones (E.164 digits) in Ofcom's drama range: the Vonage simulator's handsets. */
export const PHONES = {
  [ANA]: '447700900101',
  [BEN]: '447700900102',
  [CHEN]: '447700900103',
  [DANA]: '447700900104',
  [FRANK]: '447700900106',
} as const;

export const MINUTE = 60_000;
export const HOUR = 60 * MINUTE;
export const DAY = 24 * HOUR;
export const WEEK = 7 * DAY;

const TZ = {
  frank: 'UTC',
  dana: 'Europe/Warsaw',
  ana: 'Europe/Lisbon',
  ben: 'Europe/London',
  chen: 'Asia/Singapore',
} as const;

/** Monday 00:00 UTC of the week `at` falls in. */
export const weekStartOf = (at: Date): Date => {
  const day = new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), at.getUTCDate()));
  const sinceMonday = (day.getUTCDay() + 6) % 7;
  return new Date(day.getTime() - sinceMonday * DAY);
};

const isoDay = (d: Date): string => d.toISOString().slice(0, 10);

/** The incident-service account of the joins world, its rota starting at `weekStart`. */
export const joinsSeed = (weekStart: Date): SimulatorSeed => {
  const start = weekStart.toISOString();
  const user = (id: string, name: string, first: string, tz: string, role: 'admin' | 'user') => ({
    id,
    name,
    email: `${first}@example.org`,
    timeZone: tz,
    role,
    teamIds: ['PTEAMPAY'],
  });
  return {
    teams: [{ id: 'PTEAMPAY', name: 'Payments', description: 'Payments and its platform' }],
    users: [
      user(PD_IDS.frank, 'Frank Moreau', 'frank', TZ.frank, 'admin'),
      user(PD_IDS.dana, 'Dana Lee', 'dana', TZ.dana, 'user'),
      user(PD_IDS.ana, 'Ana Silva', 'ana', TZ.ana, 'user'),
      user(PD_IDS.ben, 'Ben Okafor', 'ben', TZ.ben, 'user'),
      user(PD_IDS.chen, 'Chen Wei', 'chen', TZ.chen, 'user'),
    ],
    schedules: [
      {
        id: PAYMENTS_SCHEDULE,
        name: 'Payments primary',
        timeZone: 'UTC',
        description: 'Weekly rotation, handoff Monday 00:00 UTC',
        teamIds: ['PTEAMPAY'],
        overrides: [],
        layers: [
          {
            id: 'PLAYPAY',
            name: 'Weekly',
            start,
            rotationVirtualStart: start,
            rotationTurnLengthSeconds: 7 * 24 * 3600,
            userIds: [PD_IDS.ben, PD_IDS.ana, PD_IDS.chen],
          },
        ],
      },
    ],
    escalationPolicies: [
      {
        id: PAYMENTS_POLICY,
        name: 'Payments',
        description: 'Payments primary, then the engineering manager, then the head of engineering',
        numLoops: 0,
        teamIds: ['PTEAMPAY'],
        rules: [
          {
            id: 'PRPAY01',
            escalationDelayInMinutes: 30,
            targets: [{ type: 'schedule_reference', id: PAYMENTS_SCHEDULE }],
          },
          {
            id: 'PRPAY02',
            escalationDelayInMinutes: 30,
            targets: [{ type: 'user_reference', id: PD_IDS.dana }],
          },
          {
            id: 'PRPAY03',
            escalationDelayInMinutes: 30,
            targets: [{ type: 'user_reference', id: PD_IDS.frank }],
          },
        ],
      },
      {
        id: PLATFORM_POLICY,
        name: 'Platform',
        description: 'Chen, then Ana',
        numLoops: 0,
        teamIds: ['PTEAMPAY'],
        rules: [
          {
            id: 'PRPLT01',
            escalationDelayInMinutes: 30,
            targets: [{ type: 'user_reference', id: PD_IDS.chen }],
          },
          {
            id: 'PRPLT02',
            escalationDelayInMinutes: 30,
            targets: [{ type: 'user_reference', id: PD_IDS.ana }],
          },
        ],
      },
    ],
    services: [
      {
        id: 'PSVCPAY',
        name: PAYMENTS,
        description: 'Card and transfer API',
        status: 'active',
        escalationPolicyId: PAYMENTS_POLICY,
        teamIds: ['PTEAMPAY'],
        integrationKey: 'a1b2c3d4e5f60718293a4b5c6d7e8f91',
        integrationId: 'PINTPAY',
        acknowledgementTimeout: 1800,
        autoResolveTimeout: null,
        defaultUrgency: 'high',
        createdAt: '2026-01-05T09:00:00Z',
      },
      {
        id: 'PSVCPLT',
        name: PLATFORM,
        description: 'Edge gateway',
        status: 'active',
        escalationPolicyId: PLATFORM_POLICY,
        teamIds: ['PTEAMPAY'],
        integrationKey: 'c3d4e5f60718293a4b5c6d7e8f90a1b3',
        integrationId: 'PINTPLT',
        acknowledgementTimeout: null,
        autoResolveTimeout: null,
        defaultUrgency: 'high',
        createdAt: '2026-01-05T09:00:00Z',
      },
    ],
    priorities: [
      { id: 'PPRI001', name: 'P1', description: 'Critical: customer-facing outage' },
      { id: 'PPRI002', name: 'P2', description: 'High' },
    ],
  };
};

export type JoinsHarness = TimeOffHarness &
  Readonly<{
    pd: PagerDutySimulator;
    vonage: VonageSimulator;
    /** Monday 00:00 UTC of the clock's first week: the rota's anchor. */
    weekStart: Date;
    /** Next week's Monday-Friday as HR dates (`2026-11-30` … `2026-12-04` by default): Ana's turn. */
    nextWeek(): Readonly<{ from: string; to: string; monday: Date; nextMonday: Date }>;
    /** `/incident <text>` (or `command`) as `user` in `channel`; the ack's text. */
    incident(
      text: string,
      o?: Readonly<{ user?: string; channel?: string; command?: string }>,
    ): Promise<string>;
    /** `/oncall <text>` as `user` in #payments; the ack's text plus what went to its response_url. */
    oncall(text: string, user?: string): Promise<string>;
    /** Triggers an incident on `service` (as Dana) and waits for its stream. */
    trigger(
      title: string,
      service?: string,
    ): Promise<{ streamId: string; number: number; incidentId: string }>;
    /** Links a verified phone (digits) to the person, as a checked code does. */
    verifyPhone(slackUserId: string, digits?: string): Promise<void>;
    /**
     * Approved leave the Switchboard way: `/timeoff <text>` as `user`, their approver (found by the
     * Approve button in someone's DMs) approves, and the clock moves until HR confirms it.
     * Returns the request id.
     */
    approvedLeave(user: string, text: string): Promise<string>;
    /** Moves the clock and waits until due timers fired and everything settled. */
    advanceTimers(ms: number): Promise<void>;
    stream(streamId: string): Promise<RecordedEvent[]>;
    /** The page activity recorded on an incident (kind, person, detail), in order. */
    pageActivity(
      streamId: string,
    ): Promise<{ kind: string; slackUserId: string | null; detail: string | null; level: number | null }[]>;
    /** Who was sent an SMS (digits), oldest first. */
    smsTo(digits: string): readonly { text: string }[];
  }>;

export const startJoinsHarness = async (
  options: Readonly<{
    start?: string;
    env?: Record<string, string>;
    timeOff?: TimeOffOptions;
    lagMs?: number;
    /** The account, given the rota's week start (default `joinsSeed`). */
    seed?: (weekStart: Date) => SimulatorSeed;
    /** Slack time zones to use instead of the defaults above, by Slack user. */
    timeZones?: Readonly<Record<string, string>>;
    /** Options for the HR simulator (e.g. `employees` with other names). */
    hr?: HiBobSimulatorOptions;
  }> = {},
): Promise<JoinsHarness> => {
  const clock: ManualClock = manualClock(options.start ?? '2026-11-23T09:00:00.000Z');
  const weekStart = weekStartOf(clock.now());
  const pd = await startPagerDutySimulator({
    clock,
    seed: (options.seed ?? joinsSeed)(weekStart),
    webhooks: { retryDelaysMs: [20, 50, 100, 200], timeoutMs: 3_000 },
  });
  const vonage = await startVonageSimulator({
    clock,
    webhooks: { retryDelaysMs: [20, 50, 100, 200], timeoutMs: 3_000 },
  });
  const h = await startTimeOffHarness({
    clock,
    ...(options.lagMs !== undefined ? { lagMs: options.lagMs } : {}),
    ...(options.timeOff ? { timeOff: options.timeOff } : {}),
    ...(options.env ? { env: options.env } : {}),
    ...(options.hr ? { hr: options.hr } : {}),
    simulators: [pd, vonage],
    timeZones: {
      [FRANK]: TZ.frank,
      [DANA]: TZ.dana,
      [ANA]: TZ.ana,
      [BEN]: TZ.ben,
      [CHEN]: TZ.chen,
      ...options.timeZones,
    },
    channels: [
      { id: PAYMENTS_CHANNEL, name: 'payments', is_im: false },
      { id: PLATFORM_CHANNEL, name: 'platform', is_im: false },
    ],
    lifecycleOptions: {
      incidents: { retry: { baseMs: 30, maxMs: 2_000 } },
      verification: {
        client: createVonageClient({ ...vonage.clientOptions(), clock }),
        retry: { baseMs: 30, maxMs: 2_000 },
      },
    },
  });

  const slack = slackDriver(h.fake, { url: () => h.url, clock });

  const incident: JoinsHarness['incident'] = async (text, o = {}) => {
    const typed = await slack.slash(o.command ?? '/incident', text, {
      user: o.user ?? DANA,
      channel: o.channel ?? PAYMENTS_CHANNEL,
    });
    // The ack's text when it is JSON with one, else the body as sent.
    const said = typed.body?.['text'];
    return said === undefined || said === null ? typed.raw : String(said);
  };

  const advanceTimers = async (ms: number) => {
    clock.advance(ms);
    // Every timer due by the new time fires, and what it starts settles (h.idle is settle()).
    await h.idle();
  };

  const joins: JoinsHarness = Object.assign(Object.create(h) as TimeOffHarness, {
    pd,
    vonage,
    weekStart,
    nextWeek() {
      const monday = new Date(weekStart.getTime() + WEEK);
      return {
        from: isoDay(monday),
        to: isoDay(new Date(monday.getTime() + 4 * DAY)),
        monday,
        nextMonday: new Date(monday.getTime() + WEEK),
      };
    },
    incident,
    async oncall(text: string, user = DANA) {
      const typed = await slack.slash('/oncall', text, { user, channel: PAYMENTS_CHANNEL });
      await h.idle();
      return [typed.raw, ...h.responses(typed.responseUrl)].join('\n');
    },
    async trigger(title: string, service = PAYMENTS) {
      const before = new Set(pd.state.incidents.keys());
      await incident(`trigger ${service} ${title}`);
      const found = await waitFor(
        () => [...pd.state.incidents.values()].find((i) => !before.has(i.id) && i.title === title),
        { what: `incident “${title}” upstream`, timeoutMs: 15_000 },
      );
      const streamId = await waitFor(
        async () => {
          const api = h.sb.lifecycle('incidents');
          if (!api) throw new Error('the incident lifecycle is off');
          await api.readModels.catchUp();
          const s = api.readModels.streamForNumber(found.number);
          if (!s) return undefined;
          const events = await h.sb.store.readStream(s);
          return events.some((e) => e.type === 'IncidentTriggered') ? s : undefined;
        },
        { what: `the stream of #${found.number}`, timeoutMs: 15_000 },
      );
      await h.idle();
      return { streamId, number: found.number, incidentId: found.id };
    },
    async verifyPhone(slackUserId: string, digits?: string) {
      const phone = digits ?? PHONES[slackUserId as keyof typeof PHONES];
      if (!phone) throw new Error(`no sandbox phone for ${slackUserId}`);
      // As the verification lifecycle links a checked number: sealed under the person's own key.
      const phones = h.sb.lifecycle('verification')?.phones;
      if (!phones) throw new Error('the verification lifecycle is off');
      await h.sb.people.link(slackUserId, {
        system: 'phone',
        externalId: await phones.sealFor(slackUserId, phone),
        email: null,
        name: null,
      });
    },
    async approvedLeave(user: string, text: string) {
      const before = new Set(await h.requestIds(user));
      const asked = await h.timeoff(text, user);
      if (asked.status !== 200) throw new Error(`/timeoff ${text}: ${asked.status} ${asked.text}`);
      const timeOffId = await waitFor(async () => (await h.requestIds(user)).find((id) => !before.has(id)), {
        what: `${user}'s new request`,
        timeoutMs: 15_000,
      });
      await h.idle();
      const approver = h.api.readModel.view(timeOffId)?.approver.slackUserId ?? DANA;
      await h.click(TIME_OFF_ACTION.approve, approver);
      await waitFor(
        async () => {
          await advanceTimers(30_000);
          return (await h.types(timeOffId)).includes('TimeOffConfirmed') || undefined;
        },
        { what: `request ${timeOffId} confirmed by HR`, timeoutMs: 30_000 },
      );
      return timeOffId;
    },
    advanceTimers,
    stream: (streamId: string) => h.sb.store.readStream(streamId),
    async pageActivity(streamId: string) {
      return (await h.sb.store.readStream(streamId))
        .filter((m) => m.type === 'RecordIncidentPageActivity')
        .map((m) => {
          const d = m.data as {
            kind: string;
            slackUserId: string | null;
            detail?: string | null;
            level?: number;
          };
          return {
            kind: d.kind,
            slackUserId: d.slackUserId,
            detail: d.detail ?? null,
            level: d.level ?? null,
          };
        });
    },
    smsTo: (digits: string) => vonage.phones.inbox(digits),
  });

  // Each rota channel follows its service, as a team lead would set it up.
  await incident(`subscribe ${PAYMENTS}`, { channel: PAYMENTS_CHANNEL });
  await incident(`subscribe ${PLATFORM}`, { channel: PLATFORM_CHANNEL });
  await h.idle();
  return joins;
};
