import type { HiBobSimulator, SimEmployee, SimTimeOffRequest } from '../simulators/hibob/index.ts';

/**
 * What the console's HR tab needs from the HR service, as its own web app would show it: every
 * time-off request (who, policy, dates, status, approver, whether it was made in Switchboard or in
 * HR), who is out today and this week, the employees; and what a person can do there: ask for
 * time off, cancel a request, terminate an employee. It reads the HR simulator's truth, not what
 * its API shows through the read-after-write lag; the panel says how late the API shows changes.
 * `sandbox.ts` adapts the simulator to this shape ({@link simulatorHr}), so the console knows no
 * vendor's API.
 *
 * Everything the page sends is checked here before it reaches the simulator
 * ({@link parseHrRequest}, {@link parseRequestId}, {@link parseEmployeeId}); a refusal names what
 * was wrong. Dates are calendar days; "today" and "this week" (Monday to Sunday) are UTC's, and the
 * panel says so.
 */

export type HrPerson = Readonly<{ id: string; name: string; email: string }>;

export type HrPanelRequest = Readonly<{
  id: number;
  employee: HrPerson;
  policyType: string;
  startDate: string;
  endDate: string;
  /** `all_day`, `morning` or `afternoon`: the first and last day's part. */
  startPortion: string;
  endPortion: string;
  /** Working days (Monday to Friday), half days as 0.5. */
  days: number;
  description: string | null;
  status: SimTimeOffRequest['status'];
  /**
   * Who approves: the approver named on the request (Switchboard names the one who approved it in
   * Slack), else the employee's manager in HR (`byManager`), null when there is neither.
   */
  approver: (HrPerson & { byManager: boolean }) | null;
  /** `switchboard`: made through the API by Switchboard's service user; `hr`: in HR's web app. */
  madeIn: 'switchboard' | 'hr';
  /** ISO time it was made. */
  createdAt: string;
}>;

export type HrAbsence = Readonly<{
  requestId: number;
  employee: HrPerson;
  policyType: string;
  startDate: string;
  endDate: string;
  /** Approved, or still waiting for the approver (`pending`). */
  status: 'approved' | 'pending';
}>;

export type HrPanelEmployee = HrPerson &
  Readonly<{
    title: string;
    department: string;
    site: string;
    manager: HrPerson | null;
    status: SimEmployee['status'];
  }>;

export type HrPanel = Readonly<{
  /** How late HR's API shows a change (its read-after-write lag), in seconds. */
  lagSeconds: number;
  /** The zone of `today` and `week` (UTC). */
  zone: 'UTC';
  today: string;
  /** This week, Monday to Sunday. */
  week: Readonly<{ from: string; to: string }>;
  /** Newest first. */
  requests: readonly HrPanelRequest[];
  outToday: readonly HrAbsence[];
  outThisWeek: readonly HrAbsence[];
  employees: readonly HrPanelEmployee[];
  /** Policy types and their yearly allowance in days. */
  policies: ReadonlyArray<Readonly<{ name: string; days: number }>>;
}>;

export type HrRequestInput = Readonly<{
  employeeId: string;
  policyType: string;
  startDate: string;
  endDate: string;
  startDatePortion: 'all_day' | 'morning' | 'afternoon';
  endDatePortion: 'all_day' | 'morning' | 'afternoon';
  description?: string;
}>;

export type SandboxHr = Readonly<{
  /** HR's policy type names. */
  policies: readonly string[];
  panel(nowMs: number): HrPanel;
  /** The employee asks for time off in HR's web app (pending until their manager decides); its id. */
  requestTimeOff(input: HrRequestInput): number;
  /** The request's owner cancels it in the web app. */
  cancel(requestId: number): void;
  /** HR terminates the employee. */
  terminate(employeeId: string): void;
  /** Calls `listener` after every change in HR; returns the unsubscribe. */
  onChange(listener: () => void): () => void;
}>;

/** A refusal with the message the person sees: 400 bad input, 404 nothing by that id, 409 not now. */
export class HrInputError extends Error {
  readonly status: 400 | 404 | 409;
  constructor(message: string, status: 400 | 404 | 409 = 400) {
    super(message);
    this.name = 'HrInputError';
    this.status = status;
  }
}

const DATE = /^\d{4}-\d{2}-\d{2}$/;
const PORTIONS = ['all_day', 'morning', 'afternoon'] as const;
type Portion = (typeof PORTIONS)[number];
/** The longest request the web app takes, in calendar days. */
export const MAX_REQUEST_DAYS = 366;
export const MAX_DESCRIPTION = 500;

const isCalendarDate = (v: string): boolean =>
  DATE.test(v) && new Date(`${v}T00:00:00Z`).toISOString().slice(0, 10) === v;

const dateField = (body: Readonly<Record<string, unknown>>, name: string, label: string): string => {
  const v = body[name];
  if (typeof v !== 'string' || v.trim() === '') throw new HrInputError(`${label} is required (YYYY-MM-DD)`);
  const d = v.trim();
  if (!DATE.test(d) || Number.isNaN(Date.parse(`${d}T00:00:00Z`)) || !isCalendarDate(d))
    throw new HrInputError(`${label} must be a calendar date as YYYY-MM-DD, not "${d.slice(0, 20)}"`);
  return d;
};

const portionField = (body: Readonly<Record<string, unknown>>, name: string, label: string): Portion => {
  const v = body[name];
  if (v === undefined || v === null || v === '') return 'all_day';
  if (typeof v === 'string' && (PORTIONS as readonly string[]).includes(v)) return v as Portion;
  throw new HrInputError(`${label} must be all_day, morning or afternoon`);
};

/** A time-off request as the web app's form sends it, checked. `policies`: the policy names HR has. */
export const parseHrRequest = (
  body: Readonly<Record<string, unknown>>,
  policies: readonly string[],
): HrRequestInput => {
  const employeeId = parseEmployeeId(body['employeeId']);
  const policyType = body['policyType'];
  if (typeof policyType !== 'string' || policyType === '')
    throw new HrInputError(`policyType is required: one of ${policies.join(', ')}`);
  if (!policies.includes(policyType))
    throw new HrInputError(
      `policyType must be one of ${policies.join(', ')}, not "${policyType.slice(0, 40)}"`,
    );
  const startDate = dateField(body, 'startDate', 'startDate (the first day off)');
  const endDate = dateField(body, 'endDate', 'endDate (the last day off)');
  if (endDate < startDate)
    throw new HrInputError(
      `endDate ${endDate} is before startDate ${startDate}: the last day comes after the first`,
    );
  const span = (Date.parse(`${endDate}T00:00:00Z`) - Date.parse(`${startDate}T00:00:00Z`)) / 86_400_000 + 1;
  if (span > MAX_REQUEST_DAYS)
    throw new HrInputError(`the request spans ${span} days; at most ${MAX_REQUEST_DAYS} at once`);
  const startDatePortion = portionField(body, 'startDatePortion', 'startDatePortion');
  const endDatePortion = portionField(body, 'endDatePortion', 'endDatePortion');
  const raw = body['description'];
  if (raw !== undefined && raw !== null && typeof raw !== 'string')
    throw new HrInputError('description must be text');
  const description = typeof raw === 'string' ? raw.trim() : '';
  if (description.length > MAX_DESCRIPTION)
    throw new HrInputError(`description is ${description.length} characters; at most ${MAX_DESCRIPTION}`);
  return {
    employeeId,
    policyType,
    startDate,
    endDate,
    startDatePortion,
    endDatePortion,
    ...(description ? { description } : {}),
  };
};

/** HR's request ids are positive whole numbers. */
export const parseRequestId = (raw: unknown): number => {
  const text = typeof raw === 'number' ? String(raw) : raw;
  if (typeof text !== 'string' || !/^[1-9]\d{0,14}$/.test(text))
    throw new HrInputError('the request id must be a whole number (as HR shows it)');
  return Number(text);
};

/** HR's employee ids are numeric text. */
export const parseEmployeeId = (raw: unknown): string => {
  if (typeof raw !== 'string' || raw === '')
    throw new HrInputError('employeeId is required: pick an employee');
  if (!/^\d{1,30}$/.test(raw)) throw new HrInputError('employeeId must be an HR employee id (digits)');
  return raw;
};

const dayOf = (ms: number): string => new Date(ms).toISOString().slice(0, 10);
const addDays = (date: string, days: number): string =>
  dayOf(Date.parse(`${date}T00:00:00Z`) + days * 86_400_000);

/** Working days from `start` to `end`, half days as 0.5 (the portions only count on weekdays). */
const workingDays = (r: SimTimeOffRequest): number => {
  let days = 0;
  for (let d = r.startDate; d <= r.endDate; d = addDays(d, 1)) {
    const dow = new Date(`${d}T00:00:00Z`).getUTCDay();
    if (dow === 0 || dow === 6) continue;
    const half =
      (d === r.startDate && r.startDatePortion !== 'all_day') ||
      (d === r.endDate && d !== r.startDate && r.endDatePortion !== 'all_day');
    days += half ? 0.5 : 1;
  }
  return days;
};

/** The HR simulator's hooks this adapter uses (`sandbox/simulators/hibob/`). */
type SimHr = Pick<
  HiBobSimulator,
  'webApp' | 'timeOffRequests' | 'employees' | 'employee' | 'lagMs' | 'onChange'
>;

/** The simulator's web-app errors carry its JSON answer (`{ key, error, field }`): its words. */
const webAppWords = (e: unknown): string => {
  const text = e instanceof Error ? e.message : String(e);
  try {
    const body = JSON.parse(text) as { error?: unknown };
    if (typeof body.error === 'string') return body.error;
  } catch {
    // not an answer body
  }
  return text;
};

export const simulatorHr = (sim: SimHr, policies: Readonly<Record<string, number>>): SandboxHr => {
  const panel = (nowMs: number): HrPanel => {
    const employees = sim.employees();
    const byId = new Map(employees.map((e) => [e.id, e]));
    const ref = (e: SimEmployee): HrPerson => ({ id: e.id, name: e.displayName, email: e.email });
    const who = (idOrEmail: string): HrPerson => {
      const e =
        byId.get(idOrEmail) ?? employees.find((x) => x.email.toLowerCase() === idOrEmail.toLowerCase());
      return e ? ref(e) : { id: idOrEmail, name: idOrEmail, email: '' };
    };
    const requests = sim
      .timeOffRequests()
      .sort((a, b) => b.createdAt - a.createdAt || b.requestId - a.requestId)
      .map((r): HrPanelRequest => {
        const owner = byId.get(r.employeeId);
        const manager = owner?.managerId ? byId.get(owner.managerId) : undefined;
        return {
          id: r.requestId,
          employee: who(r.employeeId),
          policyType: r.policyType,
          startDate: r.startDate,
          endDate: r.endDate,
          startPortion: r.startDatePortion,
          endPortion: r.endDatePortion,
          days: workingDays(r),
          description: r.description,
          status: r.status,
          approver: r.approver
            ? { ...who(r.approver), byManager: false }
            : manager
              ? { ...ref(manager), byManager: true }
              : null,
          // States saved before `via` was kept: Switchboard always names the approver.
          madeIn: (r.via ?? (r.approver ? 'api' : 'webApp')) === 'api' ? 'switchboard' : 'hr',
          createdAt: new Date(r.createdAt).toISOString(),
        };
      });
    const today = dayOf(nowMs);
    const dow = (new Date(`${today}T00:00:00Z`).getUTCDay() + 6) % 7; // Monday 0
    const week = { from: addDays(today, -dow), to: addDays(today, 6 - dow) };
    const out = (from: string, to: string): HrAbsence[] =>
      requests
        .filter((r) => r.status !== 'canceled' && r.startDate <= to && r.endDate >= from)
        .sort((a, b) => (a.startDate < b.startDate ? -1 : a.startDate > b.startDate ? 1 : 0))
        .map((r) => ({
          requestId: r.id,
          employee: r.employee,
          policyType: r.policyType,
          startDate: r.startDate,
          endDate: r.endDate,
          status: r.status === 'approved' ? 'approved' : 'pending',
        }));
    return {
      lagSeconds: Math.round(sim.lagMs() / 100) / 10,
      zone: 'UTC',
      today,
      week,
      requests,
      outToday: out(today, today),
      outThisWeek: out(week.from, week.to),
      employees: employees
        .map((e) => {
          const manager = e.managerId ? byId.get(e.managerId) : undefined;
          return {
            ...ref(e),
            title: e.title,
            department: e.department,
            site: e.site,
            manager: manager ? ref(manager) : null,
            status: e.status,
          };
        })
        .sort((a, b) => a.name.localeCompare(b.name)),
      policies: Object.entries(policies).map(([name, days]) => ({ name, days })),
    };
  };

  return {
    policies: Object.keys(policies),
    panel,
    requestTimeOff(input) {
      const e = sim.employee(input.employeeId);
      if (!e) throw new HrInputError(`no employee ${input.employeeId} in HR`, 404);
      if (e.status !== 'employed')
        throw new HrInputError(`${e.displayName} has left the company: no time off to ask for`, 409);
      try {
        return sim.webApp.requestTimeOff(input);
      } catch (err) {
        throw new HrInputError(`HR refused the request: ${webAppWords(err)}`, 409);
      }
    },
    cancel(requestId) {
      const r = sim.timeOffRequests().find((x) => x.requestId === requestId);
      if (!r) throw new HrInputError(`no time-off request ${requestId} in HR`, 404);
      if (r.status === 'canceled') throw new HrInputError(`request ${requestId} is already cancelled`, 409);
      sim.webApp.cancel(requestId);
    },
    terminate(employeeId) {
      const e = sim.employee(employeeId);
      if (!e) throw new HrInputError(`no employee ${employeeId} in HR`, 404);
      if (e.status === 'terminated') throw new HrInputError(`${e.displayName} is already terminated`, 409);
      sim.webApp.terminate(employeeId);
    },
    onChange: (listener) => sim.onChange(listener),
  };
};
