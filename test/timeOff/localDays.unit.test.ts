import { describe, expect, it } from 'vitest';
import { timeOffDecider } from '../../machines/timeOff/decider.ts';
import type { TimeOffEvent } from '../../machines/timeOff/events.ts';
import { foldHistory } from '../../src/application/fold.ts';
import type { RecordedEvent } from '../../src/eventStore/eventStore.ts';
import { rangeOfRequest } from '../../src/timeOff/absences.ts';
import { toTimeOffView } from '../../src/timeOff/blocks/timeOffView.ts';
import { absenceInterval, dayIn, localInstant } from '../../src/timeOff/localDays.ts';

/**
 * Issue 19 item 4: an absence is an interval in its requester's zone: a day from local midnight to
 * midnight, a morning [00:00, 12:00), an afternoon [12:00, 24:00). Zones are passed in; nothing
 * here depends on the machine's zone or the calendar.
 */
const iso = (r: Readonly<{ since: Date; until: Date }>) => [r.since.toISOString(), r.until.toISOString()];

describe('absences as intervals in the requester’s zone', () => {
  it('a day, a morning, an afternoon and “Wed pm – Thu am” in Singapore, New York and UTC', () => {
    const day = { startDate: '2026-12-09', endDate: '2026-12-09' } as const;
    expect(iso(absenceInterval(day, 'Asia/Singapore'))).toEqual([
      '2026-12-08T16:00:00.000Z',
      '2026-12-09T16:00:00.000Z',
    ]);
    expect(
      iso(absenceInterval({ ...day, startPortion: 'morning', endPortion: 'morning' }, 'America/New_York')),
    ).toEqual(['2026-12-09T05:00:00.000Z', '2026-12-09T17:00:00.000Z']);
    expect(
      iso(absenceInterval({ ...day, startPortion: 'afternoon', endPortion: 'afternoon' }, 'UTC')),
    ).toEqual(['2026-12-09T12:00:00.000Z', '2026-12-10T00:00:00.000Z']);
    expect(
      iso(
        absenceInterval(
          {
            startDate: '2026-12-09',
            endDate: '2026-12-10',
            startPortion: 'afternoon',
            endPortion: 'morning',
          },
          'Europe/Warsaw',
        ),
      ),
    ).toEqual(['2026-12-09T11:00:00.000Z', '2026-12-10T11:00:00.000Z']);
  });

  it('a day with a daylight-saving change is as long as the zone makes it; a skipped midnight starts at the jump', () => {
    // Europe/Lisbon moves to summer time on Sunday 29 March 2026 at 01:00 UTC: a 23-hour day.
    const spring = absenceInterval({ startDate: '2026-03-29', endDate: '2026-03-29' }, 'Europe/Lisbon');
    expect(iso(spring)).toEqual(['2026-03-29T00:00:00.000Z', '2026-03-29T23:00:00.000Z']);
    // America/Santiago skips 00:00-01:00 on Sunday 6 September 2026: the day starts at 01:00 local.
    expect(localInstant('2026-09-06', 0, 'America/Santiago').toISOString()).toBe('2026-09-06T04:00:00.000Z');
    expect(dayIn(new Date('2026-09-06T04:00:00.000Z'), 'America/Santiago')).toBe('2026-09-06');
  });

  it('a request stored before zones were (no zone on TimeOffRequested) still folds, and its days are UTC days', () => {
    const requested: TimeOffEvent = {
      type: 'TimeOffRequested',
      data: {
        timeOffId: '7d3c2a10-5b6e-4f8a-9c1d-2e3f4a5b6c7d',
        policyType: 'Holiday',
        startDate: '2026-12-09',
        endDate: '2026-12-10',
        startPortion: 'afternoon',
        endPortion: 'morning',
        description: '',
        requester: { hrId: '1', slackUserId: 'U0CHEN', displayName: 'Chen Wei' },
        approver: { hrId: '2', slackUserId: 'U0DANA', displayName: 'Dana Lee' },
        workingDays: 1,
        remindAt: [],
        expiresAt: '2026-12-02T10:00:00.000Z',
        at: '2026-11-23T10:00:00.000Z',
      },
    };
    const stored = [
      {
        ...requested,
        kind: 'event',
        id: 'e1',
        streamId: 'timeoff-x',
        version: 1,
      } as unknown as RecordedEvent,
    ];
    const view = toTimeOffView(foldHistory(timeOffDecider, stored));
    expect(view?.zone).toBeUndefined();
    expect(iso(rangeOfRequest(view!))).toEqual(['2026-12-09T12:00:00.000Z', '2026-12-10T12:00:00.000Z']);
    expect(iso(rangeOfRequest({ ...view!, zone: 'Asia/Singapore' }))).toEqual([
      '2026-12-09T04:00:00.000Z',
      '2026-12-10T04:00:00.000Z',
    ]);
  });
});
