import { describe, expect, it } from 'vitest';
import {
  addWorkingDays,
  holidaySet,
  isIsoDate,
  isWorkingDay,
  rangesOverlap,
  workingDaysRequested,
} from '../../../machines/timeOff/workingDays.ts';

const none = new Set<string>();

describe('working days', () => {
  it('Monday to Friday are working days, less the holidays passed in', () => {
    expect(isWorkingDay('2026-11-23', none)).toBe(true); // Monday
    expect(isWorkingDay('2026-11-28', none)).toBe(false); // Saturday
    expect(isWorkingDay('2026-11-29', none)).toBe(false); // Sunday
    expect(isWorkingDay('2026-12-25', holidaySet(['2026-12-25']))).toBe(false);
  });

  it('counts a range inclusively, skipping weekends and holidays, half days at the ends', () => {
    expect(workingDaysRequested({ start: '2026-11-23', end: '2026-11-27', holidays: none })).toBe(5);
    expect(workingDaysRequested({ start: '2026-11-27', end: '2026-11-30', holidays: none })).toBe(2);
    expect(
      workingDaysRequested({
        start: '2026-12-21',
        end: '2027-01-01',
        holidays: holidaySet(['2026-12-25', '2027-01-01']),
      }),
    ).toBe(8);
    expect(
      workingDaysRequested({
        start: '2026-11-23',
        end: '2026-11-25',
        startPortion: 'afternoon',
        endPortion: 'morning',
        holidays: none,
      }),
    ).toBe(2);
    expect(
      workingDaysRequested({
        start: '2026-11-23',
        end: '2026-11-23',
        startPortion: 'morning',
        endPortion: 'morning',
        holidays: none,
      }),
    ).toBe(0.5);
    expect(workingDaysRequested({ start: '2026-11-28', end: '2026-11-29', holidays: none })).toBe(0);
    expect(workingDaysRequested({ start: '2026-11-30', end: '2026-11-23', holidays: none })).toBe(0);
  });

  it('adds working days keeping the time of day, skipping weekends and holidays', () => {
    expect(addWorkingDays('2026-11-23T10:00:00.000Z', 1, none)).toBe('2026-11-24T10:00:00.000Z');
    expect(addWorkingDays('2026-11-27T16:30:00.000Z', 1, none)).toBe('2026-11-30T16:30:00.000Z');
    expect(addWorkingDays('2026-11-28T09:00:00.000Z', 1, none)).toBe('2026-11-30T09:00:00.000Z');
    expect(addWorkingDays('2026-11-27T16:30:00.000Z', 1, holidaySet(['2026-11-30']))).toBe(
      '2026-12-01T16:30:00.000Z',
    );
    expect(addWorkingDays('2026-11-23T10:00:00.000Z', 7, none)).toBe('2026-12-02T10:00:00.000Z');
    expect(() => addWorkingDays('not a time', 1, none)).toThrow(RangeError);
  });

  it('checks dates and overlaps', () => {
    expect(isIsoDate('2026-02-28')).toBe(true);
    expect(isIsoDate('2026-02-29')).toBe(false);
    expect(isIsoDate('2026-2-28')).toBe(false);
    expect(holidaySet(['2026-12-25', 'Christmas']).size).toBe(1);
    expect(rangesOverlap('2026-12-01', '2026-12-05', '2026-12-05', '2026-12-09')).toBe(true);
    expect(rangesOverlap('2026-12-01', '2026-12-04', '2026-12-05', '2026-12-09')).toBe(false);
  });
});
