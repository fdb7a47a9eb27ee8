import { describe, expect, it } from 'vitest';
import {
  type HrReadCommand,
  type HrReadEvent,
  hrReadDecider,
  hrReadOfStream,
  hrReadStreamId,
  parseHrEmployeeId,
} from '../../../machines/timeOff/hrReads.ts';
import { deciderSpec } from '../../support/deciderSpec.ts';

const spec = deciderSpec(hrReadDecider);
const T0 = '2026-11-23T09:00:00.000Z';
const DUE = '2026-11-23T09:00:30.000Z';
const meta = (commandId: string, now = T0) => ({ commandId, now, actor: 'hibob:webhook' });

const ask = (commandId: string, expect: 'present' | 'cancelled' = 'present'): HrReadCommand => ({
  type: 'RequestHrReRead',
  data: {
    action: 'read_timeoff',
    id: '55500001',
    employeeId: '3332883804594373003',
    expect,
    reason: 'timeoff.request.requested',
    notBefore: DUE,
  },
  metadata: meta(commandId),
});
const asked: HrReadEvent = {
  type: 'HrReReadRequested',
  data: {
    readId: 'read-1',
    action: 'read_timeoff',
    id: '55500001',
    employeeId: '3332883804594373003',
    expect: 'present',
    reason: 'timeoff.request.requested',
    notBefore: DUE,
    at: T0,
  },
};

describe('HR re-reads', () => {
  it('a re-read waits for its first attempt until HR’s lag has passed', () => {
    const state = spec.given([]).when(ask('read-1')).then([asked]);
    expect(state.reads[0]).toMatchObject({ attempt: 0, failedAttempts: 0, nextAttemptAt: DUE });
  });

  it('the same notification while one waits adds nothing; a cancel after it does', () => {
    spec.given([asked]).when(ask('read-2')).then([]);
    const { events } = spec.given([asked]).when(ask('read-3', 'cancelled')).events();
    expect(events.map((e) => e.type)).toEqual(['HrReReadRequested']);
  });

  it('the first attempt starts when due, then fails and retries like any upstream call, and ends once', () => {
    const retried: HrReadEvent = {
      type: 'HrReReadRetried',
      data: { requestId: 'read-1', action: 'read_timeoff', attempt: 1, at: DUE },
    };
    spec
      .given([asked])
      .when({
        type: 'RetryHrReRead',
        data: { action: 'read_timeoff', id: '55500001', requestId: 'read-1', attempt: 1 },
        metadata: meta('retry-1', DUE),
      })
      .then([retried]);
    // Done before it started (a forged or early report) is ignored.
    spec
      .given([asked])
      .when({
        type: 'RecordHrReReadDone',
        data: { action: 'read_timeoff', id: '55500001', readId: 'read-1' },
        metadata: meta('done-0', DUE),
      })
      .then([]);
    const done = spec
      .given([asked, retried])
      .when({
        type: 'RecordHrReReadDone',
        data: { action: 'read_timeoff', id: '55500001', readId: 'read-1' },
        metadata: meta('done-1', DUE),
      })
      .then([{ type: 'HrReReadDone', data: { readId: 'read-1', at: DUE } }]);
    expect(done.reads).toEqual([]);
  });

  it('names its stream only from ids that are HR ids', () => {
    expect(hrReadStreamId('read_timeoff', '55500001')).toBe('hrread-timeoff-55500001');
    expect(hrReadStreamId('read_employee', '3332883804594373003')).toBe(
      'hrread-employee-3332883804594373003',
    );
    expect(() => hrReadStreamId('read_timeoff', '1/../2')).toThrow(TypeError);
    expect(() => hrReadStreamId('read_employee', 'a b')).toThrow(TypeError);
    expect(hrReadOfStream('hrread-timeoff-55500001')).toEqual({ action: 'read_timeoff', id: '55500001' });
    expect(hrReadOfStream('hrread-timeoff-x')).toBeNull();
    expect(parseHrEmployeeId('../people')).toBeNull();
    expect(parseHrEmployeeId(12345)).toBe('12345');
  });
});
