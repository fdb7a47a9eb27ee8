import { type DirectoryState, employeeById } from '../../machines/timeOff/directory.ts';
import type { DayPortion } from '../../machines/timeOff/workingDays.ts';
import type { WhosOutEntry } from '../upstream/hibob.ts';
import type { WhosOutRow } from './blocks/answers.ts';
import type { AbsenceEntry } from './readModel.projection.ts';

/**
 * `/whosout`: Switchboard's own requests and what HR says, one row per absence; the kind of leave
 * shown to the person and to their managers only.
 */

/** The portion words HR uses, as ours. */
const portionOf = (raw: string | undefined): DayPortion => {
  const p = (raw ?? '').toLowerCase().replace(/[^a-z]/g, '');
  if (p === 'morning' || p === 'am') return 'morning';
  if (p === 'afternoon' || p === 'pm') return 'afternoon';
  return 'all_day';
};

/** Is `reader` the employee, or above them in HR's reporting line? */
export const managesOrIs = (directory: DirectoryState, reader: string, employeeHrId: string): boolean => {
  let current: string | null = employeeHrId;
  for (let depth = 0; current !== null && depth < 50; depth++) {
    if (current === reader) return true;
    current = employeeById(directory, current)?.managerHrId ?? null;
  }
  return false;
};

/**
 * Everyone out in `range`: Switchboard's requests and HR's calendar entries seen through webhooks
 * (the read model), merged with HR's own who's out (leave from before Switchboard, requests in the
 * web app), one row per request: by HR request id, else by person and dates.
 */
export const mergeWhosOut = (
  known: readonly AbsenceEntry[],
  fromHr: readonly WhosOutEntry[],
  names: Readonly<{
    slackUserOf(employeeHrId: string): string | null;
    nameOf(employeeHrId: string): string | null;
  }>,
): WhosOutRow[] => {
  const rows: WhosOutRow[] = [];
  const hrIds = new Set<string>();
  const personDates = new Set<string>();
  const key = (employee: string, start: string, end: string) => `${employee}|${start}|${end}`;
  for (const a of known) {
    if (a.hrRequestId) hrIds.add(a.hrRequestId);
    personDates.add(key(a.employeeHrId, a.startDate, a.endDate));
    rows.push(a);
  }
  for (const e of fromHr) {
    const status = (e.status ?? 'approved').toLowerCase();
    if (status !== 'approved' && status !== 'pending') continue;
    const id = e.requestId === undefined ? null : String(e.requestId);
    const k = key(e.employeeId, e.startDate, e.endDate);
    if ((id !== null && hrIds.has(id)) || personDates.has(k)) continue;
    if (id !== null) hrIds.add(id);
    personDates.add(k);
    rows.push({
      employeeHrId: e.employeeId,
      slackUserId: names.slackUserOf(e.employeeId),
      displayName: e.employeeDisplayName ?? names.nameOf(e.employeeId) ?? `HR employee ${e.employeeId}`,
      policyType: e.policyTypeDisplayName ?? e.policyType ?? 'Time off',
      startDate: e.startDate,
      endDate: e.endDate,
      startPortion: portionOf(e.startPortion),
      endPortion: portionOf(e.endPortion),
      status: status === 'approved' ? 'approved' : 'requested',
    });
  }
  return rows.sort(
    (a, b) => a.startDate.localeCompare(b.startDate) || a.displayName.localeCompare(b.displayName),
  );
};
