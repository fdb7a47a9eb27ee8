import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type Clock, systemClock } from '../../../src/core/clock.ts';
import { hrEmployees } from '../../world.ts';
import type { ContractViolation, Simulator } from '../simulator.ts';
import { createHiBobWebhooks, type HiBobDeliveryAttempt, type HiBobWebhookOptions } from './webhooks.ts';

/**
 * A loopback HR people service (HiBob-shaped, https://apidocs.hibob.com/) on one `node:http`
 * server (port 0), base path `/v1`. For the sandbox and the tests; the bot never imports it. It is a
 * {@link Simulator} (../simulator.ts): `env()`, `connect(botUrl)`, `exportState()`…
 *
 * Endpoints: `POST /v1/people/search` (fields, at most one filter on `root.id`/`root.email` with
 * `equals`, `showInactive`), `POST /v1/people/{idOrEmail}`, `PUT /v1/people/{idOrEmail}` (304 when
 * nothing changed), `POST /v1/timeoff/employees/{id}/requests` (answers 200 with no request id, as
 * the vendor's public schema has none), `GET|DELETE /v1/timeoff/employees/{id}/requests/{requestId}`,
 * `GET /v1/timeoff/whosout?from&to[&includePending]`, `GET /v1/timeoff/employees/{id}/balance?policyType&date`,
 * `GET /v1/timeoff/policy-types`, `GET /v1/timeoff/requests/changes?since[&includePending]`.
 *
 * What it enforces, as the vendor would:
 * - service-user Basic auth (`id:token`); a wrong or missing credential → 401 `{ key, error }`;
 *   **more than 50 401s from one address within 10 s block it for 5 minutes** (every request from
 *   it → 403 `ip_blocked`), on its clock;
 * - permission groups: each service user has a set of permissions (`People: view`, `People: edit`,
 *   `Time off: view`, `Time off: edit`, `Time off: settings`, `Time off: import`); a request its
 *   groups do not allow → 403 `{ key: 'forbidden', error, permission }` naming what is missing
 *   (`skipManagerApproval`/`approver` need `Time off: import`, policy types `Time off: settings`);
 * - people search: 50 per minute per service user on a sliding window of arrival times; every
 *   search answer carries `X-RateLimit-Limit`, `-Remaining`, `-Reset` (Unix seconds); over it → 429;
 *   the answer's keys in slash notation plus nested category objects (`answerShape`), `work.reportsTo`
 *   as an object `{ id, email }` or a string id (`reportsToShape`); unknown fields silently dropped;
 * - 400 `{ key, error, field | policy }` naming the invalid parameter or the unknown policy;
 * - **read-after-write lag**: every write becomes visible to reads `lagMs` later on its clock
 *   (default 20 s; shortened in tests, never skipped). Within the lag a read shows the old state;
 *   writes act on the current state (cancelling a request just made works);
 * - signed v2 webhooks to `/webhooks/hibob` once `connect(botUrl)` named the bot (`companyId`,
 *   `type`, `triggeredBy`, `triggeredAt`, `version: 'v2'`, `data`), retried on non-2xx:
 *   `employee.created`, `employee.joined`, `employee.updated`, `employee.left`,
 *   `timeoff.request.requested`, `timeoff.request.cancelled`.
 *
 * Seeded organisation: the sandbox world's HR employees (`hrEmployees()` in ../../world.ts; managers,
 * departments, sites), plus one former employee (terminated), policies `Holiday` (25 days) and
 * `Sick` (10 days) with balances from the approved requests. `employees` replaces the seed.
 *
 * Hooks for tests and the sandbox:
 * - the HR web app, acting as a person would in the browser: `webApp.requestTimeOff({ employeeId,
 *   policyType, startDate, endDate, … })` (a pending request; returns its id), `webApp.cancel(requestId)`,
 *   `webApp.terminate(employeeId)` (`employee.left`), `webApp.hire(employee)` (`employee.created` and
 *   `employee.joined`), `webApp.update(employeeId, { title | department | site | managerId })`;
 * - faults: `failNext(operation, { status, times, body, echoAuthorization })`, `delayNext(operation,
 *   { until })` (held until a promise the test opens); operations are the client's names:
 *   `searchPeople`, `getEmployee`, `updateEmployee`, `submitTimeOff`, `getTimeOffRequest`,
 *   `cancelTimeOffRequest`, `whosOut`, `balance`, `policyTypes`, `timeOffChanges`;
 * - records: `requests` (each with its operation, status and the clock time it arrived, `at`),
 *   `requestsFor(operation)`, `timeOffRequests()` and `employees()` (the truth, lag aside; each
 *   request says whether it was made through the API or in the web app, `via`), `webhooks.attempts`,
 *   `webhooks.idle()`, `onChange(listener)` after every write (the sandbox saves its world then);
 * - `setPermissions(serviceUserId, permissions)`, `setLagMs(ms)` and `lagMs()`,
 *   `assertNoViolations()` (unknown routes, requests without credentials, bodies that are not JSON,
 *   filters the contract refuses), `stop()`.
 *
 * @example
 * const sim = await startHiBobSimulator({ clock, lagMs: 1_000 });
 * const hr = createHiBobClient({ ...sim.clientOptions(), clock });
 * await hr.submitTimeOff(ana, { policyType: 'Holiday', startDate: '2026-12-01', endDate: '2026-12-02' });
 * sim.assertNoViolations();
 * await sim.stop();
 */

export const HIBOB_PERMISSIONS = [
  'People: view',
  'People: edit',
  'Time off: view',
  'Time off: edit',
  'Time off: settings',
  'Time off: import',
] as const;
export type HiBobPermission = (typeof HIBOB_PERMISSIONS)[number];

export type SimEmployee = {
  id: string;
  email: string;
  displayName: string;
  firstName: string;
  surname: string;
  title: string;
  department: string;
  site: string;
  managerId: string | null;
  startDate: string;
  status: 'employed' | 'terminated';
};

export type SimTimeOffRequest = {
  requestId: number;
  employeeId: string;
  policyType: string;
  startDate: string;
  endDate: string;
  startDatePortion: string;
  endDatePortion: string;
  description: string | null;
  status: 'pending' | 'approved' | 'canceled';
  approver: string | null;
  /** Clock time it was made (ms). */
  createdAt: number;
  /**
   * Where it was made: through the API (a service user: Switchboard) or in the HR web app by the
   * employee. Absent in states saved before it was kept.
   */
  via?: 'api' | 'webApp';
};

type Change = {
  at: number;
  changeType: 'Created' | 'Canceled';
  requestId: number;
  /** The request's status the change left it in. */
  status: SimTimeOffRequest['status'];
};

/** A value's versions: each visible to reads from `visibleAt`. */
type Versions<T> = Array<{ visibleAt: number; value: T }>;

export type HiBobSimState = {
  employees: Array<{ id: string; versions: Versions<SimEmployee> }>;
  requests: Array<{ id: number; versions: Versions<SimTimeOffRequest> }>;
  changes: Array<Change & { visibleAt: number }>;
  nextRequestId: number;
};

export type HiBobFault = Readonly<{
  status: 400 | 401 | 403 | 404 | 429 | 500 | 503;
  times?: number;
  body?: Readonly<Record<string, unknown>>;
  /** The body repeats the request's `Authorization` header, as some gateways do. */
  echoAuthorization?: boolean;
}>;

export type RecordedHiBobRequest = {
  readonly operation: string | undefined;
  readonly method: string;
  readonly url: string;
  readonly body: unknown;
  /** The simulator's clock when it arrived (ms). */
  readonly at: number;
  status?: number;
};

export type HiBobSimulatorOptions = Readonly<{
  clock?: Clock;
  /** Read-after-write lag, default 20 000 ms. */
  lagMs?: number;
  serviceUsers?: ReadonlyArray<{ id: string; token: string; permissions?: readonly HiBobPermission[] }>;
  webhookSecret?: string;
  companyId?: number;
  employees?: readonly SimEmployee[];
  searchPerMinute?: number;
  answerShape?: 'slash' | 'nested' | 'both';
  reportsToShape?: 'object' | 'string';
  webhooks?: HiBobWebhookOptions;
}>;

export const POLICIES: Readonly<Record<string, number>> = { Holiday: 25, Sick: 10 };
const DATE = /^\d{4}-\d{2}-\d{2}$/;
const PORTIONS = new Set(['all_day', 'morning', 'afternoon']);
const AUTH_STORM_LIMIT = 50;
const AUTH_STORM_WINDOW_MS = 10_000;
const AUTH_BLOCK_MS = 5 * 60_000;

class Answer extends Error {
  readonly status: number;
  readonly body: unknown;
  readonly headers: Record<string, string>;
  constructor(status: number, body: unknown, headers: Record<string, string> = {}) {
    super(`HTTP ${status}`);
    this.status = status;
    this.body = body;
    this.headers = headers;
  }
}
const fail = (status: number, key: string, error: string, extra: Record<string, string> = {}) =>
  new Answer(status, { key, error, ...extra });

const readBody = (req: IncomingMessage): Promise<Buffer> =>
  new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });

const isDate = (v: unknown): v is string =>
  typeof v === 'string' &&
  DATE.test(v) &&
  !Number.isNaN(Date.parse(`${v}T00:00:00Z`)) &&
  new Date(`${v}T00:00:00Z`).toISOString().slice(0, 10) === v;

/** Working days (Monday to Friday) from `start` to `end` inclusive, half days counted as 0.5. */
export const workingDays = (start: string, end: string, startPortion = 'all_day', endPortion = 'all_day') => {
  let days = 0;
  const last = Date.parse(`${end}T00:00:00Z`);
  for (let t = Date.parse(`${start}T00:00:00Z`); t <= last; t += 86_400_000) {
    const dow = new Date(t).getUTCDay();
    if (dow !== 0 && dow !== 6) days += 1;
  }
  const firstDow = new Date(`${start}T00:00:00Z`).getUTCDay();
  const lastDow = new Date(`${end}T00:00:00Z`).getUTCDay();
  if (startPortion !== 'all_day' && firstDow !== 0 && firstDow !== 6) days -= 0.5;
  if (endPortion !== 'all_day' && end !== start && lastDow !== 0 && lastDow !== 6) days -= 0.5;
  return Math.max(0, days);
};

const seedEmployees = (): SimEmployee[] => [
  ...hrEmployees().map((e) => {
    const [firstName = e.displayName, ...rest] = e.displayName.split(' ');
    return {
      id: e.id,
      email: e.email,
      displayName: e.displayName,
      firstName,
      surname: rest.join(' '),
      title: e.title,
      department: e.department,
      site: e.site,
      managerId: e.managerId,
      startDate: e.startDate,
      status: 'employed' as const,
    };
  }),
  {
    id: '3332883804594373099',
    email: 'former.employee@switchboard.example',
    displayName: 'Gil Former',
    firstName: 'Gil',
    surname: 'Former',
    title: 'Support Engineer',
    department: 'Support',
    site: 'Lisbon',
    managerId: null,
    startDate: '2020-01-06',
    status: 'terminated',
  },
];

export const startHiBobSimulator = async (options: HiBobSimulatorOptions = {}) => {
  const clock = options.clock ?? systemClock;
  const now = () => clock.now().getTime();
  let lagMs = options.lagMs ?? 20_000;
  const companyId = options.companyId ?? 700001;
  const webhookSecret = options.webhookSecret ?? 'hibob-sim-webhook-secret';
  const searchPerMinute = options.searchPerMinute ?? 50;
  const answerShape = options.answerShape ?? 'both';
  const reportsToShape = options.reportsToShape ?? 'object';
  const users = new Map(
    (
      options.serviceUsers ?? [
        { id: 'SERVICE-USER-SB', token: 'hibob-sim-token', permissions: [...HIBOB_PERMISSIONS] },
      ]
    ).map((u) => [u.id, { token: u.token, permissions: new Set(u.permissions ?? HIBOB_PERMISSIONS) }]),
  );
  const primary = [...users.entries()][0]!;

  const employees = new Map<string, Versions<SimEmployee>>();
  for (const e of options.employees ?? seedEmployees()) employees.set(e.id, [{ visibleAt: 0, value: e }]);
  const requestsById = new Map<number, Versions<SimTimeOffRequest>>();
  let changes: Array<Change & { visibleAt: number }> = [];
  let nextRequestId = 55_500_001;

  const requests: RecordedHiBobRequest[] = [];
  const violations: ContractViolation[] = [];
  const faults: Array<{ op: string; fault: HiBobFault; left: number }> = [];
  const delays: Array<{ op: string; until: Promise<unknown>; left: number }> = [];
  const searchArrivals = new Map<string, number[]>();
  const failedAuth = new Map<string, number[]>();
  const blockedUntil = new Map<string, number>();
  let botUrl: string | undefined;
  const webhooks = createHiBobWebhooks({ ...options.webhooks, secret: () => webhookSecret });

  const changeListeners = new Set<() => void>();

  const violation = (summary: string) => violations.push({ simulator: 'hibob', summary });

  // ---------------------------------------------------------------- state with lag

  const latest = <T>(versions: Versions<T>): T => versions.at(-1)!.value;
  const visible = <T>(versions: Versions<T> | undefined): T | undefined => {
    if (!versions) return undefined;
    const t = now();
    for (let i = versions.length - 1; i >= 0; i--) if (versions[i]!.visibleAt <= t) return versions[i]!.value;
    return undefined;
  };
  const write = <K, T>(map: Map<K, Versions<T>>, key: K, value: T) => {
    const versions = map.get(key) ?? [];
    versions.push({ visibleAt: now() + lagMs, value });
    map.set(key, versions);
    for (const listener of changeListeners) listener();
  };

  const triggeredAt = () => clock.now().toISOString().replace('Z', '000');
  const emit = (type: string, triggeredBy: string, data: Record<string, unknown>) => {
    if (botUrl === undefined) return;
    webhooks.send(type, `${botUrl}/webhooks/hibob`, {
      companyId,
      type,
      triggeredBy,
      triggeredAt: triggeredAt(),
      version: 'v2',
      data,
    });
  };

  const findEmployee = (identifier: string, readView: boolean): SimEmployee | undefined => {
    const pick = (v: Versions<SimEmployee>) => (readView ? visible(v) : latest(v));
    const byId = employees.get(identifier);
    if (byId) return pick(byId);
    for (const versions of employees.values()) {
      const e = pick(versions);
      if (e && e.email.toLowerCase() === identifier.toLowerCase()) return e;
    }
    return undefined;
  };

  // ---------------------------------------------------------------- views

  const FIELD_VALUES = (e: SimEmployee): Record<string, unknown> => {
    const manager = e.managerId ? findEmployee(e.managerId, true) : undefined;
    return {
      'root.id': e.id,
      'root.email': e.email,
      'root.displayName': e.displayName,
      'root.firstName': e.firstName,
      'root.surname': e.surname,
      'root.companyId': companyId,
      'work.title': e.title,
      'work.department': e.department,
      'work.site': e.site,
      'work.startDate': e.startDate,
      'work.reportsTo':
        e.managerId === null
          ? null
          : reportsToShape === 'string'
            ? e.managerId
            : {
                id: e.managerId,
                email: manager?.email,
                firstName: manager?.firstName,
                surname: manager?.surname,
              },
      'internal.lifecycleStatus': e.status,
      'internal.status': e.status === 'employed' ? 'Active' : 'Inactive',
    };
  };
  const DEFAULT_FIELDS = [
    'root.id',
    'root.email',
    'root.displayName',
    'root.firstName',
    'root.surname',
    'root.companyId',
  ];

  const employeeView = (e: SimEmployee, fields: readonly string[] | undefined) => {
    const values = FIELD_VALUES(e);
    const out: Record<string, unknown> = {};
    for (const f of fields ?? [
      ...DEFAULT_FIELDS,
      'work.title',
      'work.department',
      'work.site',
      'work.reportsTo',
    ]) {
      if (!(f in values)) continue; // unknown fields are silently dropped, as the vendor does
      const [category, name] = f.split('.') as [string, string];
      if (answerShape !== 'nested') out[`/${category}/${name}`] = values[f];
      if (answerShape !== 'slash') {
        const node = (out[category] ?? {}) as Record<string, unknown>;
        node[name] = values[f];
        out[category] = node;
      }
    }
    return out;
  };

  const requestView = (r: SimTimeOffRequest) => ({
    requestId: r.requestId,
    employeeId: r.employeeId,
    policyTypeDisplayName: r.policyType,
    type: 'days',
    startDate: r.startDate,
    startDatePortion: r.startDatePortion,
    endDate: r.endDate,
    endDatePortion: r.endDatePortion,
    status: r.status,
    approved: r.status === 'approved',
    description: r.description,
    durationUnit: 'days',
    totalDuration: workingDays(r.startDate, r.endDate, r.startDatePortion, r.endDatePortion),
    visibility: 'Public',
  });

  // ---------------------------------------------------------------- auth and limits

  const authenticate = (req: IncomingMessage, address: string) => {
    const block = blockedUntil.get(address) ?? 0;
    if (now() < block) throw fail(403, 'ip_blocked', 'Too many failed authentications from this address');
    const header = req.headers.authorization;
    if (typeof header !== 'string' || !/^Basic\s+\S+$/i.test(header.trim())) {
      violation(`${req.method} ${req.url}: no Basic service-user credentials`);
      throw authFailure(address);
    }
    const decoded = Buffer.from(header.trim().split(/\s+/)[1]!, 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    const id = colon < 0 ? decoded : decoded.slice(0, colon);
    const user = users.get(id);
    if (!user || colon < 0 || decoded.slice(colon + 1) !== user.token) throw authFailure(address);
    return { id, permissions: user.permissions };
  };

  const authFailure = (address: string) => {
    const t = now();
    const recent = (failedAuth.get(address) ?? []).filter((x) => x > t - AUTH_STORM_WINDOW_MS);
    recent.push(t);
    failedAuth.set(address, recent);
    if (recent.length > AUTH_STORM_LIMIT) blockedUntil.set(address, t + AUTH_BLOCK_MS);
    return fail(401, 'unauthorized', 'Invalid service user credentials');
  };

  const need = (permissions: ReadonlySet<string>, permission: HiBobPermission) => {
    if (!permissions.has(permission)) {
      throw fail(403, 'forbidden', `The service user's permission groups do not grant ${permission}`, {
        permission,
      });
    }
  };

  const searchLimit = (userId: string): Record<string, string> => {
    const t = now();
    const window = (searchArrivals.get(userId) ?? []).filter((x) => x > t - 60_000);
    searchArrivals.set(userId, window);
    const resetAt = (oldest: number | undefined) => String(Math.ceil(((oldest ?? t) + 60_000) / 1000));
    if (window.length >= searchPerMinute) {
      throw new Answer(
        429,
        { key: 'rate_limit', error: `Search is limited to ${searchPerMinute} requests per minute` },
        {
          'x-ratelimit-limit': String(searchPerMinute),
          'x-ratelimit-remaining': '0',
          'x-ratelimit-reset': resetAt(window[0]),
        },
      );
    }
    window.push(t);
    return {
      'x-ratelimit-limit': String(searchPerMinute),
      'x-ratelimit-remaining': String(searchPerMinute - window.length),
      'x-ratelimit-reset': resetAt(window[0]),
    };
  };

  // ---------------------------------------------------------------- routes

  type Route = {
    method: string;
    pattern: RegExp;
    operation: string;
    run: (ctx: {
      params: string[];
      query: URLSearchParams;
      body: Record<string, unknown>;
      user: { id: string; permissions: ReadonlySet<string> };
    }) => { status: number; body?: unknown; headers?: Record<string, string> };
  };

  const fieldsOf = (body: Record<string, unknown>, path: string) => {
    const fields = body.fields;
    if (fields === undefined) return undefined;
    if (!Array.isArray(fields) || fields.length > 400 || fields.some((f) => typeof f !== 'string')) {
      violation(`${path}: fields must be at most 400 field ids`);
      throw fail(400, 'invalid_fields', 'fields must be an array of at most 400 field ids', {
        field: 'fields',
      });
    }
    return fields as string[];
  };

  const routes: Route[] = [
    {
      method: 'POST',
      pattern: /^\/people\/search$/,
      operation: 'searchPeople',
      run: ({ body, user }) => {
        need(user.permissions, 'People: view');
        const fields = fieldsOf(body, 'POST /people/search');
        const filters = body.filters ?? [];
        if (!Array.isArray(filters) || filters.length > 1) {
          violation('POST /people/search: at most one filter');
          throw fail(400, 'invalid_filter', 'At most one filter is supported', { field: 'filters' });
        }
        const filter = filters[0] as
          | { fieldPath?: unknown; operator?: unknown; values?: unknown }
          | undefined;
        if (
          filter &&
          ((filter.fieldPath !== 'root.id' && filter.fieldPath !== 'root.email') ||
            filter.operator !== 'equals' ||
            !Array.isArray(filter.values) ||
            filter.values.length === 0)
        ) {
          violation('POST /people/search: a filter is root.id or root.email, equals, with values');
          throw fail(400, 'invalid_filter', 'Filter must be root.id or root.email with equals and values', {
            field: 'filters',
          });
        }
        const headers = searchLimit(user.id);
        const wanted = new Set((filter?.values as string[] | undefined)?.map((v) => v.toLowerCase()));
        const out = [...employees.values()]
          .map((v) => visible(v))
          .filter((e): e is SimEmployee => e !== undefined)
          .filter((e) => body.showInactive === true || e.status === 'employed')
          .filter(
            (e) => !filter || wanted.has((filter.fieldPath === 'root.id' ? e.id : e.email).toLowerCase()),
          )
          .map((e) => employeeView(e, fields));
        return { status: 200, body: { employees: out }, headers };
      },
    },
    {
      method: 'POST',
      pattern: /^\/people\/([^/]+)$/,
      operation: 'getEmployee',
      run: ({ params, body, user }) => {
        need(user.permissions, 'People: view');
        const e = findEmployee(decodeURIComponent(params[0]!), true);
        if (!e) throw fail(404, 'not_found', 'Employee not found');
        return { status: 200, body: employeeView(e, fieldsOf(body, 'POST /people/{identifier}')) };
      },
    },
    {
      method: 'PUT',
      pattern: /^\/people\/([^/]+)$/,
      operation: 'updateEmployee',
      run: ({ params, body, user }) => {
        need(user.permissions, 'People: edit');
        const e = findEmployee(decodeURIComponent(params[0]!), false);
        if (!e) throw fail(404, 'not_found', 'Employee not found');
        const work = (body.work ?? {}) as Record<string, unknown>;
        const next = { ...e };
        for (const [k, v] of Object.entries(work)) {
          if (k !== 'title' && k !== 'department' && k !== 'site') {
            throw fail(400, 'invalid_field', `Unknown or read-only field work.${k}`, { field: `work.${k}` });
          }
          if (typeof v !== 'string')
            throw fail(400, 'invalid_field', `work.${k} must be text`, { field: `work.${k}` });
          next[k] = v;
        }
        if (JSON.stringify(next) === JSON.stringify(e)) return { status: 304 };
        write(employees, e.id, next);
        emit('employee.updated', 'system', {
          employeeId: e.id,
          fieldUpdates: Object.keys(work).map((k) => ({ fieldId: `work.${k}` })),
        });
        return { status: 200, body: {} };
      },
    },
    {
      method: 'POST',
      pattern: /^\/timeoff\/employees\/([^/]+)\/requests$/,
      operation: 'submitTimeOff',
      run: ({ params, body, user }) => {
        need(user.permissions, 'Time off: edit');
        const skip = body.skipManagerApproval === true;
        if (skip || body.approver !== undefined) need(user.permissions, 'Time off: import');
        const employee = findEmployee(params[0]!, false);
        if (employee?.status !== 'employed') throw fail(404, 'not_found', 'Employee not found');
        const request = createRequest(employee, body, skip, 'api');
        emit('timeoff.request.requested', user.id, timeOffData(request));
        return { status: 200, body: {} };
      },
    },
    {
      method: 'GET',
      pattern: /^\/timeoff\/employees\/([^/]+)\/requests\/(\d+)$/,
      operation: 'getTimeOffRequest',
      run: ({ params, user }) => {
        need(user.permissions, 'Time off: view');
        const r = visible(requestsById.get(Number(params[1])));
        if (!r || r.employeeId !== params[0]) throw fail(404, 'not_found', 'Time off request not found');
        return { status: 200, body: requestView(r) };
      },
    },
    {
      method: 'DELETE',
      pattern: /^\/timeoff\/employees\/([^/]+)\/requests\/(\d+)$/,
      operation: 'cancelTimeOffRequest',
      run: ({ params, user }) => {
        need(user.permissions, 'Time off: edit');
        const versions = requestsById.get(Number(params[1]));
        const r = versions && latest(versions);
        if (!r || r.employeeId !== params[0]) throw fail(404, 'not_found', 'Time off request not found');
        if (r.status !== 'canceled') cancelRequest(r, user.id);
        return { status: 200 };
      },
    },
    {
      method: 'GET',
      pattern: /^\/timeoff\/whosout$/,
      operation: 'whosOut',
      run: ({ query, user }) => {
        need(user.permissions, 'Time off: view');
        const from = query.get('from');
        const to = query.get('to');
        if (!isDate(from)) throw fail(400, 'invalid_parameter', 'from must be a date', { field: 'from' });
        if (!isDate(to)) throw fail(400, 'invalid_parameter', 'to must be a date', { field: 'to' });
        const pending = query.get('includePending') === 'true';
        const outs = [...requestsById.values()]
          .map((v) => visible(v))
          .filter((r): r is SimTimeOffRequest => r !== undefined)
          .filter((r) => r.status === 'approved' || (pending && r.status === 'pending'))
          .filter((r) => r.startDate <= to && r.endDate >= from)
          .flatMap((r) => {
            const e = findEmployee(r.employeeId, true);
            if (e?.status !== 'employed') return [];
            return [
              {
                employeeId: r.employeeId,
                employeeDisplayName: e.displayName,
                policyType: r.policyType,
                policyTypeDisplayName: r.policyType,
                requestId: r.requestId,
                startDate: r.startDate,
                endDate: r.endDate,
                startPortion: r.startDatePortion,
                endPortion: r.endDatePortion,
                status: r.status,
              },
            ];
          });
        return { status: 200, body: { outs } };
      },
    },
    {
      method: 'GET',
      pattern: /^\/timeoff\/employees\/([^/]+)\/balance$/,
      operation: 'balance',
      run: ({ params, query, user }) => {
        need(user.permissions, 'Time off: view');
        const policy = query.get('policyType');
        const date = query.get('date');
        if (!policy) throw fail(400, 'invalid_parameter', 'policyType is required', { field: 'policyType' });
        if (!(policy in POLICIES))
          throw fail(400, 'invalid_policy', `No time off policy ${policy}`, { policy });
        if (!isDate(date)) throw fail(400, 'invalid_parameter', 'date must be a date', { field: 'date' });
        const e = findEmployee(params[0]!, true);
        if (!e) throw fail(404, 'not_found', 'Employee not found');
        const year = date.slice(0, 4);
        const taken = [...requestsById.values()]
          .map((v) => visible(v))
          .filter(
            (r): r is SimTimeOffRequest =>
              r !== undefined &&
              r.employeeId === e.id &&
              r.policyType === policy &&
              r.status === 'approved' &&
              r.startDate.startsWith(year),
          )
          .reduce(
            (sum, r) => sum + workingDays(r.startDate, r.endDate, r.startDatePortion, r.endDatePortion),
            0,
          );
        const allowance = POLICIES[policy]!;
        return {
          status: 200,
          body: {
            employeeId: e.id,
            policy,
            pointInTime: date,
            annualAllowance: allowance,
            startingBalance: allowance,
            totalTaken: taken,
            totalBalanceAsOfDate: allowance - taken,
            totalRoundedBalanceAsOfDate: Math.floor(allowance - taken),
          },
        };
      },
    },
    {
      method: 'GET',
      pattern: /^\/timeoff\/policy-types$/,
      operation: 'policyTypes',
      run: ({ user }) => {
        need(user.permissions, 'Time off: settings');
        return { status: 200, body: { policyTypes: Object.keys(POLICIES) } };
      },
    },
    {
      method: 'GET',
      pattern: /^\/timeoff\/requests\/changes$/,
      operation: 'timeOffChanges',
      run: ({ query, user }) => {
        need(user.permissions, 'Time off: view');
        const since = Date.parse(query.get('since') ?? '');
        if (Number.isNaN(since)) {
          throw fail(400, 'invalid_parameter', 'since must be an ISO-8601 time', { field: 'since' });
        }
        const pending = query.get('includePending') === 'true';
        const t = now();
        const out = changes
          .filter((c) => c.at >= since && c.visibleAt <= t)
          .flatMap((c) => {
            const r = latest(requestsById.get(c.requestId)!);
            if (!pending && c.status === 'pending') return [];
            const e = findEmployee(r.employeeId, false);
            return [
              {
                changeType: c.changeType,
                changeReason: null,
                requestId: r.requestId,
                employeeId: r.employeeId,
                employeeEmail: e?.email,
                employeeDisplayName: e?.displayName,
                policyType: r.policyType,
                policyTypeDisplayName: r.policyType,
                startDate: r.startDate,
                endDate: r.endDate,
                startDatePortion: r.startDatePortion,
                endDatePortion: r.endDatePortion,
                status: c.status,
              },
            ];
          });
        return { status: 200, body: { changes: out } };
      },
    },
  ];

  const timeOffData = (r: SimTimeOffRequest) => ({
    timeoffRequestId: r.requestId,
    employeeId: r.employeeId,
    getApi: `${url}/v1/timeoff/employees/${r.employeeId}/requests/${r.requestId}`,
  });

  const createRequest = (
    employee: SimEmployee,
    body: Record<string, unknown>,
    skip: boolean,
    via: 'api' | 'webApp',
  ) => {
    const rangeType = body.requestRangeType ?? 'days';
    if (rangeType !== 'days') {
      throw fail(400, 'invalid_parameter', 'Only requestRangeType days is supported here', {
        field: 'requestRangeType',
      });
    }
    const policy = body.policyType;
    if (typeof policy !== 'string' || policy === '') {
      throw fail(400, 'invalid_parameter', 'policyType is required', { field: 'policyType' });
    }
    if (!(policy in POLICIES))
      throw fail(400, 'invalid_policy', `Invalid time off policy ${policy}`, { policy });
    for (const f of ['startDate', 'endDate'] as const) {
      if (!isDate(body[f])) throw fail(400, 'invalid_parameter', `${f} must be a date`, { field: f });
    }
    const startDate = body.startDate as string;
    const endDate = body.endDate as string;
    if (endDate < startDate)
      throw fail(400, 'invalid_parameter', 'endDate is before startDate', { field: 'endDate' });
    for (const f of ['startDatePortion', 'endDatePortion'] as const) {
      if (body[f] !== undefined && !PORTIONS.has(body[f] as string)) {
        throw fail(400, 'invalid_parameter', `${f} must be all_day, morning or afternoon`, { field: f });
      }
    }
    if (body.approver !== undefined) {
      if (!skip) {
        throw fail(400, 'invalid_parameter', 'approver is only allowed with skipManagerApproval', {
          field: 'approver',
        });
      }
      const approver = typeof body.approver === 'string' ? findEmployee(body.approver, false) : undefined;
      if (!approver)
        throw fail(400, 'invalid_parameter', 'approver is not an employee', { field: 'approver' });
    }
    const overlapping = [...requestsById.values()]
      .map(latest)
      .some(
        (r) =>
          r.employeeId === employee.id &&
          r.status !== 'canceled' &&
          r.startDate <= endDate &&
          r.endDate >= startDate,
      );
    if (overlapping) {
      throw fail(400, 'invalid_parameter', 'The employee already has time off in this period', {
        field: 'startDate',
      });
    }
    const request: SimTimeOffRequest = {
      requestId: nextRequestId++,
      employeeId: employee.id,
      policyType: policy,
      startDate,
      endDate,
      startDatePortion: (body.startDatePortion as string | undefined) ?? 'all_day',
      endDatePortion: (body.endDatePortion as string | undefined) ?? 'all_day',
      description: typeof body.description === 'string' ? body.description : null,
      status: skip ? 'approved' : 'pending',
      approver: typeof body.approver === 'string' ? body.approver : null,
      createdAt: now(),
      via,
    };
    write(requestsById, request.requestId, request);
    changes.push({
      at: now(),
      changeType: 'Created',
      requestId: request.requestId,
      status: request.status,
      visibleAt: now() + lagMs,
    });
    return request;
  };

  const cancelRequest = (r: SimTimeOffRequest, by: string) => {
    write(requestsById, r.requestId, { ...r, status: 'canceled' });
    changes.push({
      at: now(),
      changeType: 'Canceled',
      requestId: r.requestId,
      status: 'canceled',
      visibleAt: now() + lagMs,
    });
    emit('timeoff.request.cancelled', by, timeOffData(r));
  };

  // ---------------------------------------------------------------- server

  const send = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
    if (body === undefined || status === 304) {
      res.writeHead(status, headers).end();
      return;
    }
    res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body));
  };

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const parsed = new URL(req.url ?? '/', 'http://hibob.local');
    const method = req.method ?? 'GET';
    const raw = await readBody(req);
    const path = parsed.pathname.replace(/^\/v1(?=\/)/, '');
    let params: string[] = [];
    const route = parsed.pathname.startsWith('/v1/')
      ? routes.find((r) => {
          const m = r.method === method ? r.pattern.exec(path) : null;
          if (m) params = m.slice(1);
          return m !== null;
        })
      : undefined;
    let body: unknown;
    let badJson = false;
    if (raw.length > 0) {
      try {
        body = JSON.parse(raw.toString('utf8'));
      } catch {
        badJson = true;
      }
    }
    const record: RecordedHiBobRequest = {
      operation: route?.operation,
      method,
      url: req.url ?? '',
      body,
      at: now(),
    };
    requests.push(record);
    const answer = (status: number, b: unknown, headers?: Record<string, string>) => {
      record.status = status;
      send(res, status, b, headers);
    };
    const address = req.socket.remoteAddress ?? 'unknown';
    try {
      if (!route) {
        violation(`${method} ${parsed.pathname}: no such endpoint`);
        throw fail(404, 'not_found', 'No such endpoint');
      }
      const delay = delays.find((d) => d.op === route.operation && d.left > 0);
      if (delay) {
        delay.left -= 1;
        await delay.until;
      }
      const user = authenticate(req, address);
      const fault = faults.find((f) => f.op === route.operation && f.left > 0);
      if (fault) {
        fault.left -= 1;
        const f = fault.fault;
        const b = {
          key: `simulated_${f.status}`,
          error: `Simulated failure ${f.status}`,
          ...f.body,
          ...(f.echoAuthorization ? { echo: `Authorization: ${req.headers.authorization ?? ''}` } : {}),
        };
        if (f.status === 401) authFailure(address);
        const headers: Record<string, string> =
          f.status === 429 ? { 'x-ratelimit-reset': String(Math.ceil(now() / 1000) + 1) } : {};
        return answer(f.status, b, headers);
      }
      if (
        badJson ||
        (body !== undefined && (typeof body !== 'object' || body === null || Array.isArray(body)))
      ) {
        violation(`${method} ${parsed.pathname}: the body is not a JSON object`);
        throw fail(400, 'invalid_body', 'The body must be a JSON object');
      }
      const out = route.run({
        params,
        query: parsed.searchParams,
        body: (body ?? {}) as Record<string, unknown>,
        user,
      });
      return answer(out.status, out.body, out.headers);
    } catch (err) {
      if (err instanceof Answer) return answer(err.status, err.body, err.headers);
      throw err;
    }
  };

  const server: Server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      violation(
        `simulator crashed on ${req.method} ${req.url}: ${err instanceof Error ? err.stack : String(err)}`,
      );
      if (!res.headersSent) send(res, 500, { key: 'internal', error: 'Simulator error' });
    });
  });
  const url = await new Promise<string>((resolve) => {
    server.listen(0, '127.0.0.1', () =>
      resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`),
    );
  });

  // ---------------------------------------------------------------- the HR web app

  const webApp = {
    /** An employee asks for time off in the web app (pending, waiting for their manager); returns its id. */
    requestTimeOff(input: {
      employeeId: string;
      policyType: string;
      startDate: string;
      endDate: string;
      startDatePortion?: string;
      endDatePortion?: string;
      description?: string;
    }): number {
      const e = findEmployee(input.employeeId, false);
      if (e?.status !== 'employed') throw new Error(`no employed employee ${input.employeeId}`);
      try {
        const r = createRequest(e, { ...input, requestRangeType: 'days' }, false, 'webApp');
        emit('timeoff.request.requested', e.id, timeOffData(r));
        return r.requestId;
      } catch (err) {
        if (err instanceof Answer) throw new Error(JSON.stringify(err.body));
        throw err;
      }
    },
    /** Cancels a request in the web app (by its owner). */
    cancel(requestId: number) {
      const versions = requestsById.get(requestId);
      if (!versions) throw new Error(`no time off request ${requestId}`);
      const r = latest(versions);
      if (r.status !== 'canceled') cancelRequest(r, r.employeeId);
    },
    /** Terminates an employee (`employee.left`); they drop out of searches without showInactive. */
    terminate(employeeId: string) {
      const e = findEmployee(employeeId, false);
      if (!e) throw new Error(`no employee ${employeeId}`);
      write(employees, e.id, { ...e, status: 'terminated' });
      emit('employee.left', 'system', { employeeId: e.id });
    },
    /** Creates an employee and grants access (`employee.created`, then `employee.joined`). */
    hire(employee: Omit<SimEmployee, 'status'>) {
      write(employees, employee.id, { ...employee, status: 'employed' });
      emit('employee.created', 'system', { employeeId: employee.id });
      emit('employee.joined', 'system', { employeeId: employee.id });
    },
    /** Changes work fields (`employee.updated` with the changed field ids). */
    update(
      employeeId: string,
      change: Partial<Pick<SimEmployee, 'title' | 'department' | 'site' | 'managerId'>>,
    ) {
      const e = findEmployee(employeeId, false);
      if (!e) throw new Error(`no employee ${employeeId}`);
      write(employees, e.id, { ...e, ...change });
      const ids = Object.keys(change).map((k) => (k === 'managerId' ? 'work.reportsTo' : `work.${k}`));
      emit('employee.updated', 'system', {
        employeeId: e.id,
        fieldUpdates: ids.map((fieldId) => ({ fieldId })),
      });
    },
  };

  const handleObject = {
    name: 'hibob',
    url,
    /** The base URL the client takes (version segment included). */
    baseUrl: `${url}/v1`,
    clock,
    webhookSecret,
    env: () => ({
      HIBOB_API_URL: `${url}/v1`,
      HIBOB_SERVICE_USER_ID: primary[0],
      HIBOB_SERVICE_USER_TOKEN: primary[1].token,
      HIBOB_WEBHOOK_SECRET: webhookSecret,
    }),
    /** What `createHiBobClient` needs (credentials of the first service user). */
    clientOptions: () => ({ baseUrl: `${url}/v1`, serviceUserId: primary[0], token: primary[1].token }),
    connect(bot: string) {
      botUrl = bot.replace(/\/$/, '');
    },
    exportState: (): HiBobSimState => ({
      employees: [...employees.entries()].map(([id, versions]) => ({ id, versions })),
      requests: [...requestsById.entries()].map(([id, versions]) => ({ id, versions })),
      changes,
      nextRequestId,
    }),
    importState(state: HiBobSimState) {
      employees.clear();
      for (const e of state.employees) employees.set(e.id, e.versions);
      requestsById.clear();
      for (const r of state.requests) requestsById.set(r.id, r.versions);
      changes = [...state.changes];
      nextRequestId = state.nextRequestId;
    },
    contractViolations: (): readonly ContractViolation[] => [...violations],
    webApp,
    requests: requests as readonly RecordedHiBobRequest[],
    requestsFor: (operation: string) => requests.filter((r) => r.operation === operation),
    /** Every request as it stands now (the truth, without the read lag). */
    timeOffRequests: (): SimTimeOffRequest[] => [...requestsById.values()].map(latest),
    employee: (id: string) => findEmployee(id, false),
    /** Every employee as they stand now (the truth, terminated ones included). */
    employees: (): SimEmployee[] => [...employees.values()].map(latest),
    /** The read-after-write lag in force (ms). */
    lagMs: () => lagMs,
    /**
     * Calls `listener` after every write (a request made or cancelled, an employee changed);
     * returns the unsubscribe.
     */
    onChange(listener: () => void): () => void {
      changeListeners.add(listener);
      return () => changeListeners.delete(listener);
    },
    setPermissions(serviceUserId: string, permissions: readonly HiBobPermission[]) {
      const user = users.get(serviceUserId);
      if (!user) throw new Error(`no service user ${serviceUserId}`);
      user.permissions = new Set(permissions);
    },
    setLagMs(ms: number) {
      if (!(ms > 0))
        throw new Error('the read-after-write lag is never skipped: give it a positive duration');
      lagMs = ms;
    },
    failNext(operation: string, fault: HiBobFault) {
      faults.push({ op: operation, fault, left: fault.times ?? 1 });
    },
    delayNext(operation: string, delay: Readonly<{ until: Promise<unknown>; times?: number }>) {
      delays.push({ op: operation, until: delay.until, left: delay.times ?? 1 });
    },
    webhooks: {
      attempts: webhooks.attempts as readonly HiBobDeliveryAttempt[],
      idle: () => webhooks.idle(),
    },
    assertNoViolations() {
      if (violations.length > 0) {
        throw new Error(
          `HR simulator saw ${violations.length} violation(s):\n${violations.map((v) => v.summary).join('\n')}`,
        );
      }
    },
    clearViolations() {
      violations.length = 0;
    },
    async stop() {
      await webhooks.stop();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
  return handleObject satisfies Simulator<HiBobSimState>;
};

export type HiBobSimulator = Awaited<ReturnType<typeof startHiBobSimulator>>;
