import type { SimulatorSeed } from './simulators/pagerduty/index.ts';
import { rotationDescription } from './simulators/pagerduty/schedules.ts';
import type { FakeChannel, FakeUser } from './simulators/slack/fakeSlack.ts';

/**
 * The sandbox's demo world, in one place: the people (as Slack users, incident-service users and
 * HR employees, joined by email as Switchboard joins them), the channels, the services with their
 * escalation policies and on-call schedules, and the incidents that are open when the sandbox
 * first starts. `hrEmployees()` is the HR service's organisation (the HR simulator seeds itself
 * with it, plus one former employee): everyone but Frank reports to someone, and their manager
 * approves their time off.
 *
 * The organisation: Frank (head of engineering) ← Dana (engineering manager, Payments and Data)
 * ← Ana and Ben; Frank ← Eve (platform lead) ← Chen. The rotations, from the sandbox clock's
 * first day: Payments primary is weekly, Ben this week, **Ana next week**, Ben the week after (so
 * when Ana asks for next week off, Dana's approval DM shows the conflict and Ben, free and not
 * away, can cover); Database on-call is daily, Dana then Chen; Platform primary weekly, Chen then Eve.
 */

export type Person = Readonly<{
  slackId: string;
  /** Slack handle (`@ana`). */
  handle: string;
  realName: string;
  email: string;
  tz: string;
  title: string;
  /** The incident service's user id. */
  pagerdutyId: string;
  /**
   * Their phone in the sandbox (E.164): the communications simulator's handset for them, with an
   * SMS inbox and incoming calls in the console. Ofcom's drama range (+44 7700 900000–900999),
   * numbers that look real and reach nobody.
   */
  phone: string;
  pagerdutyRole: 'admin' | 'user' | 'limited_user';
  teams: readonly TeamId[];
  hr: Readonly<{
    /** HR's employee id (numeric text, as the HR service's ids are). */
    employeeId: string;
    /** Email of the person they report to; their time-off approver. */
    managerEmail: string | null;
    department: string;
    site: string;
    startDate: string;
  }>;
}>;

type TeamId = 'PTPAY01' | 'PTPLT01' | 'PTDAT01';

export const PEOPLE: readonly Person[] = [
  {
    slackId: 'U01ANA',
    handle: 'ana',
    realName: 'Ana Silva',
    email: 'ana.silva@switchboard.example',
    tz: 'Europe/Lisbon',
    title: 'Site Reliability Engineer',
    pagerdutyId: 'PANA001',
    pagerdutyRole: 'user',
    phone: '+447700900101',
    teams: ['PTPAY01'],
    hr: {
      employeeId: '3332883804594373011',
      managerEmail: 'dana.kowalski@switchboard.example',
      department: 'Engineering',
      site: 'Lisbon',
      startDate: '2022-03-01',
    },
  },
  {
    slackId: 'U02BEN',
    handle: 'ben',
    realName: 'Ben Okafor',
    email: 'ben.okafor@switchboard.example',
    tz: 'Europe/London',
    title: 'Backend Engineer, Payments',
    pagerdutyId: 'PBEN002',
    pagerdutyRole: 'user',
    phone: '+447700900102',
    teams: ['PTPAY01'],
    hr: {
      employeeId: '3332883804594373012',
      managerEmail: 'dana.kowalski@switchboard.example',
      department: 'Engineering',
      site: 'London',
      startDate: '2023-06-12',
    },
  },
  {
    slackId: 'U03CHEN',
    handle: 'chen',
    realName: 'Chen Wei',
    email: 'chen.wei@switchboard.example',
    tz: 'Asia/Singapore',
    title: 'Platform Engineer',
    pagerdutyId: 'PCHE003',
    pagerdutyRole: 'user',
    phone: '+447700900103',
    teams: ['PTPLT01', 'PTDAT01'],
    hr: {
      employeeId: '3332883804594373013',
      managerEmail: 'eve.martin@switchboard.example',
      department: 'Engineering',
      site: 'Singapore',
      startDate: '2021-11-15',
    },
  },
  {
    slackId: 'U04DANA',
    handle: 'dana',
    realName: 'Dana Kowalski',
    email: 'dana.kowalski@switchboard.example',
    tz: 'Europe/Warsaw',
    title: 'Engineering Manager, Payments and Data',
    pagerdutyId: 'PDAN004',
    pagerdutyRole: 'user',
    phone: '+447700900104',
    teams: ['PTPAY01', 'PTDAT01'],
    hr: {
      employeeId: '3332883804594373014',
      managerEmail: 'frank.moreau@switchboard.example',
      department: 'Engineering',
      site: 'Warsaw',
      startDate: '2020-09-01',
    },
  },
  {
    slackId: 'U05EVE',
    handle: 'eve',
    realName: 'Eve Martin',
    email: 'eve.martin@switchboard.example',
    tz: 'America/New_York',
    title: 'Platform Lead',
    pagerdutyId: 'PEVE005',
    pagerdutyRole: 'admin',
    phone: '+447700900105',
    teams: ['PTPLT01'],
    hr: {
      employeeId: '3332883804594373015',
      managerEmail: 'frank.moreau@switchboard.example',
      department: 'Engineering',
      site: 'New York',
      startDate: '2019-02-04',
    },
  },
  {
    slackId: 'U06FRANK',
    handle: 'frank',
    realName: 'Frank Moreau',
    email: 'frank.moreau@switchboard.example',
    tz: 'Europe/Paris',
    title: 'Head of Engineering',
    pagerdutyId: 'PFRA006',
    pagerdutyRole: 'admin',
    phone: '+447700900106',
    teams: ['PTPAY01', 'PTPLT01', 'PTDAT01'],
    hr: {
      employeeId: '3332883804594373016',
      managerEmail: null,
      department: 'Engineering',
      site: 'Paris',
      startDate: '2018-05-14',
    },
  },
];

const person = (handle: string): Person => {
  const p = PEOPLE.find((x) => x.handle === handle);
  if (!p) throw new Error(`no person @${handle} in the demo world`);
  return p;
};

export const CHANNELS: readonly FakeChannel[] = [
  { id: 'C01INCIDENTS', name: 'incidents', is_im: false },
  { id: 'C02GENERAL', name: 'general', is_im: false },
];
export const INCIDENTS_CHANNEL = 'C01INCIDENTS';
export const GENERAL_CHANNEL = 'C02GENERAL';

/** The person the sandbox acts as when it sets things up (`/incident subscribe …`). */
export const ADMIN = person('frank');

/** The number Switchboard texts and calls from (the communications account's own number). */
export const SWITCHBOARD_NUMBER = '+447700900000';

/** Each person's sandbox phone number, by Slack user id: what a new world starts with. */
export const phoneBook = (): Record<string, string> =>
  Object.fromEntries(PEOPLE.map((p) => [p.slackId, p.phone]));

/** Slack users of the workspace (the bot user is added by the fake). */
export const slackUsers = (): FakeUser[] =>
  PEOPLE.map((p) => ({ id: p.slackId, name: p.handle, real_name: p.realName, email: p.email, tz: p.tz }));

/** HR employees with managers by employee id: what the HR simulator is seeded with. */
export const hrEmployees = () =>
  PEOPLE.map((p) => ({
    id: p.hr.employeeId,
    email: p.email,
    displayName: p.realName,
    title: p.title,
    department: p.hr.department,
    site: p.hr.site,
    startDate: p.hr.startDate,
    managerId: p.hr.managerEmail
      ? (PEOPLE.find((m) => m.email === p.hr.managerEmail)?.hr.employeeId ?? null)
      : null,
  }));

/** Services by the name people type (`/incident trigger db …`). */
export const SERVICES = {
  api: { id: 'PSVCAPI', name: 'api', description: 'Payments API: cards and transfers' },
  db: { id: 'PSVCDB1', name: 'db', description: 'Primary Postgres cluster' },
  web: { id: 'PSVCWEB', name: 'web', description: 'Storefront web app and CDN' },
} as const;

const WEEK = 7 * 24 * 3600;
const DAY = 24 * 3600;

/**
 * The incident service's account: users, teams, schedules, escalation policies, services. The
 * rotations start at `rotationStart` (the simulator's {@link rotationAnchor} of the sandbox's
 * clock when the world is first made), so the first person of each rotation is on call then.
 */
export const pagerDutySeed = (rotationStart: string): SimulatorSeed => ({
  teams: [
    { id: 'PTPAY01', name: 'Payments', description: 'Payments API and its clients' },
    { id: 'PTPLT01', name: 'Platform', description: 'Edge, web and build' },
    { id: 'PTDAT01', name: 'Data', description: 'Databases and pipelines' },
  ],
  users: PEOPLE.map((p) => ({
    id: p.pagerdutyId,
    name: p.realName,
    email: p.email,
    timeZone: p.tz,
    role: p.pagerdutyRole,
    jobTitle: p.title,
    teamIds: [...p.teams],
  })),
  schedules: [
    {
      id: 'PSCHPAY',
      name: 'Payments primary',
      timeZone: 'UTC',
      description: rotationDescription(rotationStart, 'weekly'),
      teamIds: ['PTPAY01'],
      overrides: [],
      layers: [
        {
          id: 'PLAYPAY',
          name: 'Weekly',
          start: rotationStart,
          rotationVirtualStart: rotationStart,
          rotationTurnLengthSeconds: WEEK,
          // Ben this week, Ana next week (the headline's conflict), Ben the week after.
          userIds: [person('ben').pagerdutyId, person('ana').pagerdutyId],
        },
      ],
    },
    {
      id: 'PSCHDAT',
      name: 'Database on-call',
      timeZone: 'UTC',
      description: rotationDescription(rotationStart, 'daily'),
      teamIds: ['PTDAT01'],
      overrides: [],
      layers: [
        {
          id: 'PLAYDAT',
          name: 'Daily',
          start: rotationStart,
          rotationVirtualStart: rotationStart,
          rotationTurnLengthSeconds: DAY,
          userIds: [person('dana').pagerdutyId, person('chen').pagerdutyId],
        },
      ],
    },
    {
      id: 'PSCHPLT',
      name: 'Platform primary',
      timeZone: 'UTC',
      description: rotationDescription(rotationStart, 'weekly'),
      teamIds: ['PTPLT01'],
      overrides: [],
      layers: [
        {
          id: 'PLAYPLT',
          name: 'Weekly',
          start: rotationStart,
          rotationVirtualStart: rotationStart,
          rotationTurnLengthSeconds: WEEK,
          userIds: [person('chen').pagerdutyId, person('eve').pagerdutyId],
        },
      ],
    },
  ],
  escalationPolicies: [
    {
      id: 'PEPPAY1',
      name: 'Payments',
      description: 'Payments primary, then the head of engineering',
      numLoops: 1,
      teamIds: ['PTPAY01'],
      rules: [
        {
          id: 'PRPAY01',
          escalationDelayInMinutes: 15,
          targets: [{ type: 'schedule_reference', id: 'PSCHPAY' }],
        },
        {
          id: 'PRPAY02',
          escalationDelayInMinutes: 15,
          targets: [{ type: 'user_reference', id: person('frank').pagerdutyId }],
        },
      ],
    },
    {
      id: 'PEPDAT1',
      name: 'Databases',
      description: 'Database on-call, then Payments primary, then the head of engineering',
      numLoops: 0,
      teamIds: ['PTDAT01'],
      rules: [
        {
          id: 'PRDAT01',
          escalationDelayInMinutes: 10,
          targets: [{ type: 'schedule_reference', id: 'PSCHDAT' }],
        },
        {
          id: 'PRDAT02',
          escalationDelayInMinutes: 15,
          targets: [{ type: 'schedule_reference', id: 'PSCHPAY' }],
        },
        {
          id: 'PRDAT03',
          escalationDelayInMinutes: 15,
          targets: [{ type: 'user_reference', id: person('frank').pagerdutyId }],
        },
      ],
    },
    {
      id: 'PEPPLT1',
      name: 'Platform',
      description: 'Platform primary, then the platform lead',
      numLoops: 1,
      teamIds: ['PTPLT01'],
      rules: [
        {
          id: 'PRPLT01',
          escalationDelayInMinutes: 30,
          targets: [{ type: 'schedule_reference', id: 'PSCHPLT' }],
        },
        {
          id: 'PRPLT02',
          escalationDelayInMinutes: 30,
          targets: [{ type: 'user_reference', id: person('eve').pagerdutyId }],
        },
      ],
    },
  ],
  services: [
    {
      ...SERVICES.api,
      status: 'active',
      escalationPolicyId: 'PEPPAY1',
      teamIds: ['PTPAY01'],
      integrationKey: '5a0d1c2e3f4a5b6c7d8e9f0a1b2c3d01',
      integrationId: 'PINTAPI',
      acknowledgementTimeout: null,
      autoResolveTimeout: null,
      defaultUrgency: 'high',
      createdAt: '2026-01-05T09:00:00Z',
    },
    {
      ...SERVICES.db,
      status: 'active',
      escalationPolicyId: 'PEPDAT1',
      teamIds: ['PTDAT01'],
      integrationKey: '5a0d1c2e3f4a5b6c7d8e9f0a1b2c3d02',
      integrationId: 'PINTDB1',
      acknowledgementTimeout: null,
      autoResolveTimeout: null,
      defaultUrgency: 'high',
      createdAt: '2026-01-05T09:00:00Z',
    },
    {
      ...SERVICES.web,
      status: 'active',
      escalationPolicyId: 'PEPPLT1',
      teamIds: ['PTPLT01'],
      integrationKey: '5a0d1c2e3f4a5b6c7d8e9f0a1b2c3d03',
      integrationId: 'PINTWEB',
      acknowledgementTimeout: null,
      autoResolveTimeout: null,
      defaultUrgency: 'low',
      createdAt: '2026-01-05T09:00:00Z',
    },
  ],
  priorities: [
    { id: 'PPRIO01', name: 'P1', description: 'Critical: customers cannot pay' },
    { id: 'PPRIO02', name: 'P2', description: 'High: degraded for many' },
    { id: 'PPRIO03', name: 'P3', description: 'Moderate' },
    { id: 'PPRIO04', name: 'P4', description: 'Low' },
  ],
});

/**
 * Incidents open when the sandbox first starts. They are created in the incident service after
 * Switchboard is up, so it learns of them the way it learns of any: through signed webhooks.
 */
export type SeedIncident =
  | Readonly<{
      via: 'monitoring';
      service: keyof typeof SERVICES;
      summary: string;
      severity: 'critical' | 'error' | 'warning' | 'info';
      source: string;
      dedupKey: string;
    }>
  | Readonly<{
      via: 'web';
      service: keyof typeof SERVICES;
      title: string;
      by: string;
      urgency: 'high' | 'low';
      acknowledgedBy?: string;
    }>;

export const SEED_INCIDENTS: readonly SeedIncident[] = [
  {
    via: 'monitoring',
    service: 'db',
    summary: 'Replication lag above 30 s on db-replica-2',
    severity: 'error',
    source: 'prometheus: pg_replication_lag_seconds',
    dedupKey: 'db-replica-2-replication-lag',
  },
  {
    via: 'web',
    service: 'api',
    title: 'Elevated 5xx on POST /v1/payments',
    by: person('ben').email,
    urgency: 'high',
    acknowledgedBy: person('ben').email,
  },
];

export const routingKeyOf = (service: keyof typeof SERVICES): string => {
  // Services and their keys do not depend on the rotations; any anchor will do.
  const s = pagerDutySeed(new Date(0).toISOString()).services.find((x) => x.id === SERVICES[service].id);
  if (!s) throw new Error(`no service ${service}`);
  return s.integrationKey;
};
