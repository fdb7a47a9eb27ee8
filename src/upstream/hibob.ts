import type { Dispatcher } from 'undici';
import { z } from 'zod';
import { type Clock, systemClock } from '../core/clock.ts';
import { ChatOpsError, isChatOpsError, ValidationError } from '../core/errors.ts';
import type { Logger } from '../logger.ts';
import {
  createUpstreamHttp,
  type UpstreamRequest,
  type UpstreamTimeouts,
  type VendorErrorInfo,
} from './http.ts';
import { createQueueingBudget, type QueueingBudget } from './queueingBudget.ts';

/**
 * The HR client (HiBob-shaped, https://apidocs.hibob.com/): people search and read, time off
 * (submit, read, cancel, who's out, balance, policy types, the changes feed) and a field update,
 * each on `createUpstreamHttp` (undici, deadlines, zod-checked answers, coded and scrubbed errors).
 * Credentials: the service user, `Authorization: Basic base64(<serviceUserId>:<token>)`; neither
 * part ever appears in an error (the vendor's echoes are scrubbed of both).
 *
 * | Answer | What the caller gets |
 * |---|---|
 * | 304 on an update | success (`{ changed: false }`): nothing needed changing |
 * | 400 | SB_VALIDATION; `details.field` or `details.policy` names what the service refused, `details.forRequester` says it in words for the employee |
 * | 401 | SB_UPSTREAM_AUTH, and **the circuit opens**: every HR call of this client is refused unsent (SB_UPSTREAM_AUTH, `reason: 'auth_circuit_open'`, `retryAt`) for `authBlockMs` (default 5 min), then one probe goes; another 401 opens it again. An error log with `code: 'HIBOB_AUTH_FAILED'` and `onAuthAlert` tell an operator. Why: more than 50 failed authentications from one address in 10 s block the address for 5 minutes |
 * | 403 | SB_UPSTREAM_AUTH; `details.permission` names the missing permission (for an operator, not for employees) |
 * | 404 | SB_NOT_FOUND |
 * | 429 | waits until `X-RateLimit-Reset` (a Unix time) and tries once more when that is within `maxQueueMs`; otherwise SB_UPSTREAM_RATE_LIMITED with `retryAfterMs` for the durable retry |
 * | 5xx, network | SB_UPSTREAM_UNAVAILABLE (retryable) |
 *
 * People search is limited to 50 a minute: searches queue on a budget of this client instance (a
 * sliding 60 s window, queueingBudget.ts) instead of meeting 429s. It returns every match in one
 * array; the answer's keys are in slash notation (`"/work/reportsTo"`) and the same employee may
 * also carry nested category objects (`"work": {...}`): `parseEmployee` reads both, and
 * `work.reportsTo` as a string employee id or an employee-reference object.
 *
 * Submitting time off answers no request id (none in any public schema). `findSubmittedRequest`
 * finds it: the changes feed (`GET /timeoff/requests/changes?since=`) from just before the submit,
 * the `Created` change for that employee, policy and dates; the feed lags like every read (up to
 * ~20 s), so the caller retries until it appears, never assuming.
 *
 * @example
 * const hr = createHiBobClient({ baseUrl, serviceUserId, token, clock, logger });
 * const [ana] = await hr.searchPeople({ filter: { fieldPath: 'root.email', values: ['ana@example.org'] } });
 * const since = clock.now();
 * await hr.submitTimeOff(ana.id, { policyType: 'Holiday', startDate: '2026-12-01', endDate: '2026-12-03', skipManagerApproval: true, approver: ana.managerId });
 * const found = await hr.findSubmittedRequest(ana.id, { policyType: 'Holiday', startDate: '2026-12-01', endDate: '2026-12-03' }, since);
 */

export const HIBOB_SEARCH_PER_MINUTE = 50;
/** How long a 401 stops every HR call: the service's own block after an authentication storm. */
export const HIBOB_AUTH_BLOCK_MS = 5 * 60_000;

export type HiBobClientOptions = Readonly<{
  /** Including the version segment: `https://api.hibob.com/v1`. */
  baseUrl: string;
  serviceUserId: string;
  token: string;
  dispatcher?: Dispatcher;
  clock?: Clock;
  timeouts?: UpstreamTimeouts;
  /** People searches per minute (default 50). */
  searchPerMinute?: number;
  /** How a queued request waits (default a timer); tests move a manual clock here. */
  waitUntil?: (atMs: number) => Promise<void>;
  /** The longest a request waits (search queue, 429 reset) before it is refused. Default 60 s. */
  maxQueueMs?: number;
  /** How long a 401 stops every call (default 5 min; never less). */
  authBlockMs?: number;
  logger?: Pick<Logger, 'error' | 'warn'>;
  /** Called when a 401 opens the circuit (a counter, a page to an operator). */
  onAuthAlert?: (alert: HiBobAuthAlert) => void;
}>;

export type HiBobAuthAlert = Readonly<{ operation: string; at: string; retryAt: string; failures: number }>;

// ---------------------------------------------------------------- shapes

export type HiBobEmployee = Readonly<{
  id: string;
  email?: string | undefined;
  displayName?: string | undefined;
  firstName?: string | undefined;
  surname?: string | undefined;
  title?: string | undefined;
  department?: string | undefined;
  site?: string | undefined;
  /** The manager's employee id (`work.reportsTo`, a string or an object in the answer). */
  managerId?: string | undefined;
  startDate?: string | undefined;
  /** `internal.lifecycleStatus` or `internal.status` when asked for (e.g. `employed`, `terminated`). */
  status?: string | undefined;
}>;

export type PeopleFilter = Readonly<{ fieldPath: 'root.id' | 'root.email'; values: readonly string[] }>;

export type SearchPeopleInput = Readonly<{
  fields?: readonly string[];
  /** At most one filter, as the service takes. */
  filter?: PeopleFilter;
  showInactive?: boolean;
}>;

export type DayPortion = 'all_day' | 'morning' | 'afternoon';

export type SubmitTimeOffInput = Readonly<{
  policyType: string;
  startDate: string;
  endDate: string;
  startDatePortion?: DayPortion;
  endDatePortion?: DayPortion;
  description?: string;
  /** Records the request already approved (Switchboard ran the approval). Needs `approver`. */
  skipManagerApproval?: boolean;
  /** The approving employee's id; only with `skipManagerApproval`. */
  approver?: string;
}>;

export type TimeOffRequest = Readonly<{
  requestId: number;
  employeeId: string;
  policyTypeDisplayName?: string | undefined;
  startDate: string;
  endDate: string;
  startDatePortion?: string | undefined;
  endDatePortion?: string | undefined;
  status: string;
  approved?: boolean | undefined;
  description?: string | null | undefined;
  totalDuration?: number | undefined;
  durationUnit?: string | undefined;
}>;

export type WhosOutEntry = Readonly<{
  employeeId: string;
  employeeDisplayName?: string | undefined;
  policyType?: string | undefined;
  policyTypeDisplayName?: string | undefined;
  requestId?: number | undefined;
  startDate: string;
  endDate: string;
  startPortion?: string | undefined;
  endPortion?: string | undefined;
  status?: string | undefined;
}>;

export type TimeOffChange = Readonly<{
  changeType: string;
  changeReason?: string | null | undefined;
  requestId: number;
  employeeId: string;
  employeeEmail?: string | undefined;
  employeeDisplayName?: string | undefined;
  policyTypeDisplayName?: string | undefined;
  policyType?: string | undefined;
  startDate: string;
  endDate: string;
  startDatePortion?: string | undefined;
  endDatePortion?: string | undefined;
  status?: string | undefined;
}>;

export type TimeOffBalance = Readonly<{
  employeeId: string;
  policy: string;
  pointInTime?: string | undefined;
  annualAllowance?: number | undefined;
  totalTaken?: number | undefined;
  totalBalanceAsOfDate: number;
}>;

// ---------------------------------------------------------------- answers

const employeeRef = z.union([
  z.string(),
  z.number(),
  z.looseObject({ id: z.union([z.string(), z.number()]) }),
]);
const searchAnswer = z.looseObject({ employees: z.array(z.record(z.string(), z.unknown())) });
const employeeAnswer = z.record(z.string(), z.unknown());
const timeOffRequest = z.looseObject({
  requestId: z.number().int(),
  employeeId: z.union([z.string(), z.number()]).transform(String),
  policyTypeDisplayName: z.string().optional(),
  startDate: z.string(),
  endDate: z.string(),
  startDatePortion: z.string().optional(),
  endDatePortion: z.string().optional(),
  status: z.string(),
  approved: z.boolean().optional(),
  description: z.string().nullish(),
  totalDuration: z.number().optional(),
  durationUnit: z.string().optional(),
});
const whosOut = z.looseObject({
  outs: z.array(
    z.looseObject({
      employeeId: z.union([z.string(), z.number()]).transform(String),
      employeeDisplayName: z.string().optional(),
      policyType: z.string().optional(),
      policyTypeDisplayName: z.string().optional(),
      requestId: z.number().int().optional(),
      startDate: z.string(),
      endDate: z.string(),
      startPortion: z.string().optional(),
      endPortion: z.string().optional(),
      status: z.string().optional(),
    }),
  ),
});
const changes = z.looseObject({
  changes: z.array(
    z.looseObject({
      changeType: z.string(),
      changeReason: z.string().nullish(),
      requestId: z.number().int(),
      employeeId: z.union([z.string(), z.number()]).transform(String),
      employeeEmail: z.string().optional(),
      employeeDisplayName: z.string().optional(),
      policyTypeDisplayName: z.string().optional(),
      policyType: z.string().optional(),
      startDate: z.string(),
      endDate: z.string(),
      startDatePortion: z.string().optional(),
      endDatePortion: z.string().optional(),
      status: z.string().optional(),
    }),
  ),
});
const balance = z.looseObject({
  employeeId: z.union([z.string(), z.number()]).transform(String),
  policy: z.string(),
  pointInTime: z.string().optional(),
  annualAllowance: z.number().optional(),
  totalTaken: z.number().optional(),
  totalBalanceAsOfDate: z.number(),
});
const policyTypes = z.looseObject({ policyTypes: z.array(z.string()) });
const anything = z.unknown();

// ---------------------------------------------------------------- reading employees (both shapes)

/** The value at a dot path (`work.reportsTo`) in slash notation (`"/work/reportsTo"`) or nested. */
export const employeeField = (raw: Readonly<Record<string, unknown>>, path: string): unknown => {
  const parts = path.split('.');
  const slash = `/${parts.join('/')}`;
  if (slash in raw) return raw[slash];
  let node: unknown = raw;
  for (const part of parts) {
    if (node === null || typeof node !== 'object' || Array.isArray(node)) {
      node = undefined;
      break;
    }
    node = (node as Record<string, unknown>)[part];
  }
  if (node !== undefined) return node;
  // The default set puts root fields at the top: `{ id, email, displayName }`.
  return parts[0] === 'root' && parts.length === 2 ? raw[parts[1]!] : undefined;
};

const text = (v: unknown): string | undefined =>
  typeof v === 'string' && v.length > 0 ? v : typeof v === 'number' ? String(v) : undefined;

/** A list field may come with `humanReadable` values or as `{ value }`; take the text. */
const listText = (v: unknown): string | undefined => {
  if (v !== null && typeof v === 'object' && !Array.isArray(v)) {
    const o = v as Record<string, unknown>;
    return text(o.name) ?? text(o.value) ?? text(o.id);
  }
  return text(v);
};

/** `work.reportsTo`: a string employee id, or an employee reference `{ id, email, … }`. */
const managerIdOf = (v: unknown): string | undefined => {
  const parsed = employeeRef.safeParse(v);
  if (!parsed.success) return undefined;
  const ref = parsed.data;
  return typeof ref === 'object' ? text(ref.id) : text(ref);
};

/** One employee of a search or read answer, in either shape; undefined when it has no id. */
export const parseEmployee = (raw: Readonly<Record<string, unknown>>): HiBobEmployee | undefined => {
  const id = text(employeeField(raw, 'root.id'));
  if (id === undefined || !/^[A-Za-z0-9_-]{1,64}$/.test(id)) return undefined;
  return {
    id,
    email: text(employeeField(raw, 'root.email')),
    displayName: text(employeeField(raw, 'root.displayName')),
    firstName: text(employeeField(raw, 'root.firstName')),
    surname: text(employeeField(raw, 'root.surname')),
    title: listText(employeeField(raw, 'work.title')),
    department: listText(employeeField(raw, 'work.department')),
    site: listText(employeeField(raw, 'work.site')),
    managerId: managerIdOf(employeeField(raw, 'work.reportsTo')),
    startDate: text(employeeField(raw, 'work.startDate')),
    status:
      text(employeeField(raw, 'internal.lifecycleStatus')) ?? text(employeeField(raw, 'internal.status')),
  };
};

// ---------------------------------------------------------------- errors

/**
 * The service's error body is `{ key, error }`; a 400 may name the parameter and a 403 the
 * permission (`field`, `policy`, `permission`). Those ride in `errors` as `name=value` so the
 * shared mapping scrubs them like the rest.
 */
const parseHiBobError = (json: unknown): VendorErrorInfo | undefined => {
  if (json === null || typeof json !== 'object' || Array.isArray(json)) return undefined;
  const o = json as Record<string, unknown>;
  const named = (['field', 'policy', 'permission'] as const)
    .filter((k) => typeof o[k] === 'string' && (o[k] as string).length <= 200)
    .map((k) => `${k}=${o[k] as string}`);
  const message =
    typeof o.error === 'string' ? o.error : typeof o.message === 'string' ? o.message : undefined;
  const code = typeof o.key === 'string' ? o.key : undefined;
  if (message === undefined && code === undefined && named.length === 0) return undefined;
  return { code, message, errors: named };
};

/** The request's fields as the requester knows them. */
const FIELD_WORDS: Readonly<Record<string, string>> = {
  policyType: 'the policy',
  startDate: 'the start date (or the dates overlap time off you already have)',
  endDate: 'the end date',
  startDatePortion: 'the half day on the first day',
  endDatePortion: 'the half day on the last day',
  description: 'the note',
  approver: 'the approver',
  requestRangeType: 'the kind of request',
};

const named = (e: ChatOpsError, name: string): string | undefined => {
  const errors = e.details.vendorErrors;
  if (!Array.isArray(errors)) return undefined;
  const hit = (errors as string[]).find((s) => s.startsWith(`${name}=`));
  return hit?.slice(name.length + 1);
};

/** Adds `field` / `policy` / `permission` and words for the requester to a 400 or 403. */
const refine = (e: unknown): never => {
  if (!(e instanceof ChatOpsError)) throw e;
  const status = e.details.status;
  if (status === 400) {
    const field = named(e, 'field');
    const policy = named(e, 'policy');
    const forRequester =
      policy !== undefined
        ? `HR has no time-off policy called "${policy}". Pick one of the policies HR offers.`
        : field !== undefined
          ? `HR refused ${FIELD_WORDS[field] ?? `the field ${field}`}. Check it and try again.`
          : 'HR refused the request as it stands. Check the dates and the policy and try again.';
    throw new ChatOpsError(e.code, e.message, {
      cause: e,
      details: {
        ...e.details,
        ...(field === undefined ? {} : { field }),
        ...(policy === undefined ? {} : { policy }),
        forRequester,
      },
    });
  }
  if (status === 403) {
    const permission = named(e, 'permission');
    throw new ChatOpsError(
      e.code,
      `${e.message}${permission === undefined ? '' : ` (the HR service user lacks the permission "${permission}")`}`,
      {
        cause: e,
        details: { ...e.details, reason: 'permission_missing', permission: permission ?? 'unknown' },
      },
    );
  }
  throw e;
};

// ---------------------------------------------------------------- input checks

const DATE = /^\d{4}-\d{2}-\d{2}$/;
const EMPLOYEE_ID = /^[A-Za-z0-9_-]{1,64}$/;
const EMAIL = /^[^\s@/?#]{1,64}@[^\s@/?#]{1,255}$/;

const validDate = (v: unknown, field: string): string => {
  if (typeof v !== 'string' || !DATE.test(v) || Number.isNaN(Date.parse(`${v}T00:00:00Z`))) {
    throw new ValidationError(`${field} must be a date like 2026-12-01`, { details: { field } });
  }
  if (new Date(`${v}T00:00:00Z`).toISOString().slice(0, 10) !== v) {
    throw new ValidationError(`${field} is not a real date: ${v}`, { details: { field } });
  }
  return v;
};

const employeeId = (v: unknown, field = 'employeeId'): string => {
  if (typeof v !== 'string' || !EMPLOYEE_ID.test(v)) {
    throw new ValidationError(`${field} must be an HR employee id (letters, digits, - or _)`, {
      details: { field },
    });
  }
  return v;
};

const idOrEmail = (v: unknown): string => {
  if (typeof v === 'string' && (EMPLOYEE_ID.test(v) || EMAIL.test(v))) return v;
  throw new ValidationError('the employee must be named by HR employee id or work email', {
    details: { field: 'identifier' },
  });
};

const requestIdOf = (v: unknown): number => {
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v <= 0) {
    throw new ValidationError('requestId must be a positive whole number', {
      details: { field: 'requestId' },
    });
  }
  return v;
};

const PORTIONS = new Set<DayPortion>(['all_day', 'morning', 'afternoon']);
const FIELD_ID = /^[A-Za-z0-9_]+(\.[A-Za-z0-9_]+)+$/;

/**
 * How long a durable retry waits after HR refused our credentials (a 401, or the 401 circuit
 * open): until the circuit reopens (`retryAt` on the error), 5 minutes when it does not say; null
 * for any other error.
 */
export const hibobAuthWaitMs = (e: unknown, now: Date): number | null => {
  if (!isChatOpsError(e)) return null;
  const { reason, status, retryAt } = e.details;
  if (reason !== 'auth_circuit_open' && reason !== 'auth_failed' && status !== 401) return null;
  const at = typeof retryAt === 'string' ? Date.parse(retryAt) : Number.NaN;
  return Number.isNaN(at) ? HIBOB_AUTH_BLOCK_MS : Math.max(0, at - now.getTime());
};

// ---------------------------------------------------------------- the client

export type HiBobClient = Readonly<{
  searchPeople(input?: SearchPeopleInput): Promise<HiBobEmployee[]>;
  getEmployee(identifier: string, fields?: readonly string[]): Promise<HiBobEmployee>;
  /** `PUT /people/{identifier}`; a 304 (nothing changed) is success with `changed: false`. */
  updateEmployee(
    identifier: string,
    fields: Readonly<Record<string, unknown>>,
  ): Promise<{ changed: boolean }>;
  submitTimeOff(employeeId: string, input: SubmitTimeOffInput): Promise<void>;
  getTimeOffRequest(employeeId: string, requestId: number): Promise<TimeOffRequest>;
  cancelTimeOffRequest(employeeId: string, requestId: number): Promise<void>;
  whosOut(input: Readonly<{ from: string; to: string; includePending?: boolean }>): Promise<WhosOutEntry[]>;
  balance(employeeId: string, policyType: string, date: string): Promise<TimeOffBalance>;
  policyTypes(): Promise<string[]>;
  changesSince(since: Date, options?: Readonly<{ includePending?: boolean }>): Promise<TimeOffChange[]>;
  /**
   * The request a submit created, through the changes feed since `since` (taken before the
   * submit): the newest `Created` change for the employee, policy and dates. Undefined while the
   * feed has not caught up (read-after-write lag): retry.
   */
  findSubmittedRequest(
    employeeId: string,
    match: Readonly<{ policyType: string; startDate: string; endDate: string }>,
    since: Date,
  ): Promise<TimeOffChange | undefined>;
  /** The 401 circuit now: open until `retryAt`, or closed. */
  authCircuit(): Readonly<{ open: boolean; retryAt?: string; failures: number }>;
  /** Searches waiting for the budget now. */
  searchQueued(): number;
  /** Searches let go whose answer is not in yet. */
  searchInFlight(): number;
}>;

export const createHiBobClient = (options: HiBobClientOptions): HiBobClient => {
  const clock = options.clock ?? systemClock;
  const nowMs = () => clock.now().getTime();
  const maxQueueMs = options.maxQueueMs ?? 60_000;
  const authBlockMs = Math.max(HIBOB_AUTH_BLOCK_MS, options.authBlockMs ?? HIBOB_AUTH_BLOCK_MS);
  const waitUntil =
    options.waitUntil ??
    ((atMs: number) => new Promise<void>((resolve) => setTimeout(resolve, Math.max(0, atMs - nowMs()))));
  const basic = `Basic ${Buffer.from(`${options.serviceUserId}:${options.token}`).toString('base64')}`;
  const http = createUpstreamHttp({
    vendor: 'hibob',
    baseUrl: options.baseUrl,
    ...(options.dispatcher ? { dispatcher: options.dispatcher } : {}),
    clock,
    ...(options.timeouts ? { timeouts: options.timeouts } : {}),
    defaultHeaders: { authorization: basic, accept: 'application/json' },
    parseVendorError: parseHiBobError,
    secrets: [options.serviceUserId, options.token],
  });
  const search: QueueingBudget = createQueueingBudget({
    name: 'peopleSearch',
    vendor: 'hibob',
    perSecond: options.searchPerMinute ?? HIBOB_SEARCH_PER_MINUTE,
    windowMs: 60_000,
    now: nowMs,
    waitUntil,
    maxWaitMs: maxQueueMs,
  });

  /** The 401 circuit: open until `openUntil`; after it one probe goes while the rest wait refused. */
  let openUntil = 0;
  let probing = false;
  let failures = 0;

  const circuitOpenError = (operation: string) => {
    const now = nowMs();
    const retryAtMs = Math.max(openUntil, now);
    return new ChatOpsError(
      'SB_UPSTREAM_AUTH',
      `hibob ${operation} not sent: HR refused our credentials; every HR call is stopped until ${new Date(retryAtMs).toISOString()}`,
      {
        details: {
          vendor: 'hibob',
          operation,
          retryable: false,
          reason: 'auth_circuit_open',
          retryAt: new Date(retryAtMs).toISOString(),
          retryAfterMs: retryAtMs - now,
        },
      },
    );
  };

  const refuseWhileOpen = (operation: string) => {
    if (nowMs() < openUntil || (openUntil > 0 && probing)) throw circuitOpenError(operation);
    // The block is over: this call is the probe (until it answers, the others are refused).
    const probe = openUntil > 0;
    if (probe) probing = true;
    return probe;
  };

  /**
   * Every 401 counts and pushes the reopening out; the operator is told once per opening (calls
   * already out when the circuit opened may bring more 401s back).
   */
  const openCircuit = (operation: string) => {
    failures += 1;
    const at = nowMs();
    const wasOpen = at < openUntil;
    openUntil = at + authBlockMs;
    if (wasOpen) return;
    const alert: HiBobAuthAlert = {
      operation,
      at: new Date(at).toISOString(),
      retryAt: new Date(openUntil).toISOString(),
      failures,
    };
    options.logger?.error(
      { code: 'HIBOB_AUTH_FAILED', alert: 'operator', ...alert },
      'HR refused the service user credentials (401): every HR call is stopped; check HIBOB_SERVICE_USER_ID and HIBOB_SERVICE_USER_TOKEN',
    );
    options.onAuthAlert?.(alert);
  };

  const retryAfterOf = (e: unknown): number | undefined => {
    if (!(e instanceof ChatOpsError) || e.code !== 'SB_UPSTREAM_RATE_LIMITED') return undefined;
    const ms = e.details.retryAfterMs;
    return typeof ms === 'number' ? ms : undefined;
  };

  /** Sends once (through the budget when given); 401 opens the circuit; 400/403 are refined. */
  const send = async <T>(req: UpstreamRequest<T>, probe: boolean, budget?: QueueingBudget) => {
    const release = budget ? await budget.take(req.operation) : () => undefined;
    try {
      // A call that queued (search budget, a 429's reset) while a 401 opened the circuit stays unsent.
      if (!probe && nowMs() < openUntil) throw circuitOpenError(req.operation);
      return await http.request(req);
    } catch (e) {
      const retryAfterMs = retryAfterOf(e);
      if (budget && retryAfterMs !== undefined) budget.exhaustUntil(nowMs() + retryAfterMs);
      throw e;
    } finally {
      release();
    }
  };

  const call = async <T>(req: UpstreamRequest<T>, budget?: QueueingBudget) => {
    const probe = refuseWhileOpen(req.operation);
    try {
      let res: Awaited<ReturnType<typeof send<T>>>;
      try {
        res = await send(req, probe, budget);
      } catch (e) {
        // 429: wait for the reset the service named, once, when it is near enough.
        const retryAfterMs = retryAfterOf(e);
        if (retryAfterMs === undefined || retryAfterMs > maxQueueMs) throw e;
        await waitUntil(nowMs() + retryAfterMs);
        res = await send(req, probe, budget);
      }
      if (probe) openUntil = 0;
      return res;
    } catch (e) {
      if (e instanceof ChatOpsError && e.details.status === 401) {
        openCircuit(req.operation);
        throw new ChatOpsError(e.code, e.message, {
          cause: e,
          details: { ...e.details, reason: 'auth_failed', retryAt: new Date(openUntil).toISOString() },
        });
      }
      if (probe) openUntil = 0; // the credentials were accepted: the circuit closes
      return refine(e);
    } finally {
      if (probe) probing = false;
    }
  };

  const searchPeople: HiBobClient['searchPeople'] = async (input = {}) => {
    const fields = input.fields ?? [
      'root.id',
      'root.email',
      'root.displayName',
      'root.firstName',
      'root.surname',
      'work.title',
      'work.department',
      'work.site',
      'work.reportsTo',
      'work.startDate',
      'internal.lifecycleStatus',
    ];
    if (fields.length > 400 || fields.some((f) => !FIELD_ID.test(f))) {
      throw new ValidationError('fields must be at most 400 field ids like work.reportsTo', {
        details: { field: 'fields' },
      });
    }
    const filter = input.filter;
    if (filter) {
      if (filter.fieldPath !== 'root.id' && filter.fieldPath !== 'root.email') {
        throw new ValidationError('a people filter is on root.id or root.email', {
          details: { field: 'filters' },
        });
      }
      if (filter.values.length === 0 || filter.values.some((v) => typeof v !== 'string' || v.length === 0)) {
        throw new ValidationError('a people filter needs at least one value', {
          details: { field: 'filters' },
        });
      }
    }
    const { data } = await call(
      {
        operation: 'searchPeople',
        method: 'POST',
        path: '/people/search',
        body: {
          fields,
          ...(filter
            ? { filters: [{ fieldPath: filter.fieldPath, operator: 'equals', values: filter.values }] }
            : {}),
          showInactive: input.showInactive ?? false,
        },
        schema: searchAnswer,
      },
      search,
    );
    return data.employees.map(parseEmployee).filter((e): e is HiBobEmployee => e !== undefined);
  };

  const client: HiBobClient = {
    searchPeople,

    async getEmployee(identifier, fields) {
      const id = idOrEmail(identifier);
      const { data } = await call({
        operation: 'getEmployee',
        method: 'POST',
        path: `/people/${encodeURIComponent(id)}`,
        body: fields ? { fields } : {},
        schema: employeeAnswer,
      });
      const employee = parseEmployee(data);
      if (!employee) {
        throw new ChatOpsError('SB_UPSTREAM_REJECTED', 'hibob getEmployee: the answer has no employee id', {
          details: {
            vendor: 'hibob',
            operation: 'getEmployee',
            retryable: false,
            reason: 'unexpected_response',
          },
        });
      }
      return employee;
    },

    async updateEmployee(identifier, fields) {
      const id = idOrEmail(identifier);
      try {
        await call({
          operation: 'updateEmployee',
          method: 'PUT',
          path: `/people/${encodeURIComponent(id)}`,
          body: fields,
          schema: anything,
        });
        return { changed: true };
      } catch (e) {
        if (e instanceof ChatOpsError && e.details.status === 304) return { changed: false };
        throw e;
      }
    },

    async submitTimeOff(employee, input) {
      const id = employeeId(employee);
      const startDate = validDate(input.startDate, 'startDate');
      const endDate = validDate(input.endDate, 'endDate');
      if (endDate < startDate) {
        throw new ValidationError('endDate must not be before startDate', { details: { field: 'endDate' } });
      }
      if (
        typeof input.policyType !== 'string' ||
        input.policyType.trim() === '' ||
        input.policyType.length > 100
      ) {
        throw new ValidationError('policyType must name one of HR policy types', {
          details: { field: 'policyType' },
        });
      }
      for (const [field, v] of [
        ['startDatePortion', input.startDatePortion],
        ['endDatePortion', input.endDatePortion],
      ] as const) {
        if (v !== undefined && !PORTIONS.has(v)) {
          throw new ValidationError(`${field} must be all_day, morning or afternoon`, { details: { field } });
        }
      }
      if (input.description !== undefined && input.description.length > 1000) {
        throw new ValidationError('description is at most 1000 characters', {
          details: { field: 'description' },
        });
      }
      if (input.approver !== undefined) {
        employeeId(input.approver, 'approver');
        if (input.skipManagerApproval !== true) {
          throw new ValidationError('approver is only taken with skipManagerApproval', {
            details: { field: 'approver' },
          });
        }
      }
      await call({
        operation: 'submitTimeOff',
        method: 'POST',
        path: `/timeoff/employees/${id}/requests`,
        body: {
          requestRangeType: 'days',
          policyType: input.policyType,
          startDate,
          endDate,
          startDatePortion: input.startDatePortion ?? 'all_day',
          endDatePortion: input.endDatePortion ?? 'all_day',
          ...(input.description === undefined ? {} : { description: input.description }),
          ...(input.skipManagerApproval === undefined
            ? {}
            : { skipManagerApproval: input.skipManagerApproval }),
          ...(input.approver === undefined ? {} : { approver: input.approver }),
        },
        schema: anything,
      });
    },

    async getTimeOffRequest(employee, requestId) {
      const { data } = await call({
        operation: 'getTimeOffRequest',
        method: 'GET',
        path: `/timeoff/employees/${employeeId(employee)}/requests/${requestIdOf(requestId)}`,
        schema: timeOffRequest,
      });
      return data;
    },

    async cancelTimeOffRequest(employee, requestId) {
      await call({
        operation: 'cancelTimeOffRequest',
        method: 'DELETE',
        path: `/timeoff/employees/${employeeId(employee)}/requests/${requestIdOf(requestId)}`,
        schema: anything,
      });
    },

    async whosOut(input) {
      const from = validDate(input.from, 'from');
      const to = validDate(input.to, 'to');
      if (to < from) throw new ValidationError('to must not be before from', { details: { field: 'to' } });
      const { data } = await call({
        operation: 'whosOut',
        method: 'GET',
        path: '/timeoff/whosout',
        query: { from, to, ...(input.includePending ? { includePending: true } : {}) },
        schema: whosOut,
      });
      return data.outs;
    },

    async balance(employee, policyType, date) {
      if (typeof policyType !== 'string' || policyType.trim() === '') {
        throw new ValidationError('policyType must name one of HR policy types', {
          details: { field: 'policyType' },
        });
      }
      const { data } = await call({
        operation: 'balance',
        method: 'GET',
        path: `/timeoff/employees/${employeeId(employee)}/balance`,
        query: { policyType, date: validDate(date, 'date') },
        schema: balance,
      });
      return data;
    },

    async policyTypes() {
      const { data } = await call({
        operation: 'policyTypes',
        method: 'GET',
        path: '/timeoff/policy-types',
        schema: policyTypes,
      });
      return data.policyTypes;
    },

    async changesSince(since, opts = {}) {
      if (!(since instanceof Date) || Number.isNaN(since.getTime())) {
        throw new ValidationError('since must be a time', { details: { field: 'since' } });
      }
      const { data } = await call({
        operation: 'timeOffChanges',
        method: 'GET',
        path: '/timeoff/requests/changes',
        query: { since: since.toISOString(), ...(opts.includePending ? { includePending: true } : {}) },
        schema: changes,
      });
      return data.changes;
    },

    async findSubmittedRequest(employee, match, since) {
      const id = employeeId(employee);
      const all = await client.changesSince(since, { includePending: true });
      const hits = all.filter(
        (c) =>
          c.changeType === 'Created' &&
          c.employeeId === id &&
          c.startDate === match.startDate &&
          c.endDate === match.endDate &&
          (c.policyType ?? c.policyTypeDisplayName) === match.policyType,
      );
      return hits.at(-1);
    },

    authCircuit() {
      const open = nowMs() < openUntil;
      return open ? { open, retryAt: new Date(openUntil).toISOString(), failures } : { open, failures };
    },
    searchQueued: () => search.queued(),
    searchInFlight: () => search.inFlight(),
  };
  return client;
};
