import type { DirectoryEmployee, EmployeeStatus } from '../../../machines/timeOff/directory.ts';
import {
  type HrTimeOffEntry,
  hrTimeOffStatusOf,
  parseHrRequestId,
} from '../../../machines/timeOff/hrCalendar.ts';
import { truncate } from '../../slack/text.ts';
import type { HiBobEmployee, TimeOffRequest } from '../../upstream/hibob.ts';

/**
 * HR's answers as the facts Switchboard keeps (pure): a time-off request or change as an HR
 * calendar entry, an employee as the directory keeps them. What does not check out is left out.
 */

/** The fields the directory needs, and only those (one search answers everyone). */
export const DIRECTORY_FIELDS = [
  'root.id',
  'root.email',
  'root.displayName',
  'root.firstName',
  'root.surname',
  'work.reportsTo',
  'work.site',
  'internal.lifecycleStatus',
] as const;

const PORTIONS = new Set(['all_day', 'morning', 'afternoon']);
const portionOf = (v: string | undefined): HrTimeOffEntry['startPortion'] =>
  v !== undefined && PORTIONS.has(v) ? (v as HrTimeOffEntry['startPortion']) : 'all_day';

const DATE = /^\d{4}-\d{2}-\d{2}$/;

/** An HR time-off answer (a read or a change) as an entry, or null when it does not check out. */
export const hrEntryOf = (
  r: Pick<
    TimeOffRequest,
    | 'requestId'
    | 'employeeId'
    | 'startDate'
    | 'endDate'
    | 'startDatePortion'
    | 'endDatePortion'
    | 'policyTypeDisplayName'
    | 'approved'
  > &
    Readonly<{ status?: string | undefined; policyType?: string | undefined }>,
): HrTimeOffEntry | null => {
  const hrRequestId = parseHrRequestId(r.requestId);
  if (hrRequestId === null || !/^[A-Za-z0-9_-]{1,64}$/.test(r.employeeId)) return null;
  if (!DATE.test(r.startDate) || !DATE.test(r.endDate)) return null;
  return {
    hrRequestId,
    employeeId: r.employeeId,
    policyType: truncate(r.policyTypeDisplayName ?? r.policyType ?? '', 100),
    startDate: r.startDate,
    endDate: r.endDate,
    startPortion: portionOf(r.startDatePortion),
    endPortion: portionOf(r.endDatePortion),
    status: hrTimeOffStatusOf(r.status, r.approved),
  };
};

export const statusOfEmployee = (status: string | undefined): EmployeeStatus => {
  const s = (status ?? 'employed').toLowerCase();
  if (s === 'employed' || s === 'active') return 'active';
  if (s === 'terminated' || s === 'left' || s === 'deleted') return 'left';
  return 'inactive';
};

/** An HR employee as the directory keeps them, or null without an email. */
export const directoryEmployeeOf = (e: HiBobEmployee): DirectoryEmployee | null => {
  const email = e.email?.trim().toLowerCase();
  if (!email || email.length < 3 || email.length > 320) return null;
  const name = e.displayName ?? [e.firstName, e.surname].filter(Boolean).join(' ');
  return {
    hrId: e.id,
    email,
    displayName: truncate(name, 200),
    managerHrId: e.managerId && /^[A-Za-z0-9_-]{1,64}$/.test(e.managerId) ? e.managerId : null,
    site: e.site ? truncate(e.site, 200) : null,
    status: statusOfEmployee(e.status),
  };
};
