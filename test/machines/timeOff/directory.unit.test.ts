import { describe, expect, it } from 'vitest';
import {
  type DirectoryCommand,
  type DirectoryEmployee,
  type DirectoryEvent,
  directoryDecider,
  directoryEmployees,
  employeeByEmail,
  isActive,
  managerOf,
  teammatesOf,
  teamOf,
} from '../../../machines/timeOff/directory.ts';
import { deciderSpec } from '../../support/deciderSpec.ts';

const spec = deciderSpec(directoryDecider);
const T0 = '2026-11-23T03:00:00.000Z';
const T1 = '2026-11-23T04:00:00.000Z';

const person = (n: number, extra: Partial<DirectoryEmployee> = {}): DirectoryEmployee => ({
  hrId: `33328838840177${String(n).padStart(5, '0')}`,
  email: `person${n}@example.org`,
  displayName: `Person ${n}`,
  // Ten managers (people 0–9), each with a tenth of the company; the managers report to person 0.
  managerHrId: n === 0 ? null : `33328838840177${String(n < 10 ? 0 : n % 10).padStart(5, '0')}`,
  site: n % 2 === 0 ? 'London' : 'Lisbon',
  status: 'active',
  ...extra,
});
const added = (e: DirectoryEmployee, at = T0): DirectoryEvent => ({
  type: 'DirectoryEmployeeAdded',
  data: { ...e, at },
});
const snapshot = (employees: DirectoryEmployee[], now = T1): DirectoryCommand => ({
  type: 'RecordDirectorySnapshot',
  data: { employees },
  metadata: { commandId: `snap-${now}`, now, actor: 'system:hr-directory' },
});
const update = (employee: DirectoryEmployee): DirectoryCommand => ({
  type: 'RecordEmployeeUpdate',
  data: { employee },
  metadata: { commandId: 'webhook-1', now: T1, actor: 'hibob:webhook' },
});

const COMPANY = Array.from({ length: 5000 }, (_, n) => person(n));
const HISTORY = COMPANY.map((e) => added(e));
const STATE = HISTORY.reduce(directoryDecider.evolve, directoryDecider.initialState());

describe('employee directory: snapshots record only differences', () => {
  it('a first snapshot adds everyone, one small fact each', () => {
    const { events } = spec
      .given([])
      .when(snapshot(COMPANY.slice(0, 3), T0))
      .events();
    expect(events).toEqual(COMPANY.slice(0, 3).map((e) => added(e)));
  });

  it('a snapshot of 5,000 people that changes nothing records nothing', () => {
    expect(directoryDecider.decide(snapshot(COMPANY), STATE)).toEqual([]);
  });

  it('one manager change among 5,000 records one fact, naming only that field', () => {
    const moved = COMPANY.map((e, n) => (n === 1234 ? { ...e, managerHrId: person(7).hrId } : e));
    expect(directoryDecider.decide(snapshot(moved), STATE)).toEqual([
      {
        type: 'DirectoryEmployeeChanged',
        data: { hrId: person(1234).hrId, changes: { managerHrId: person(7).hrId }, at: T1 },
      },
    ]);
  });

  it('a leaver (marked left, or gone from the snapshot) is one fact; a newcomer is one fact', () => {
    const people = [person(1), person(2, { status: 'left' }), person(4)];
    spec
      .given([added(person(1)), added(person(2)), added(person(3))])
      .when(snapshot(people))
      .then([
        { type: 'DirectoryEmployeeLeft', data: { hrId: person(2).hrId, at: T1 } },
        added(person(4), T1),
        { type: 'DirectoryEmployeeLeft', data: { hrId: person(3).hrId, at: T1 } },
      ]);
  });

  it('someone who already left and is still absent records nothing again', () => {
    const left: DirectoryEvent = { type: 'DirectoryEmployeeLeft', data: { hrId: person(3).hrId, at: T0 } };
    spec
      .given([added(person(1)), added(person(3)), left])
      .when(snapshot([person(1)]))
      .then([]);
  });

  it('emails are matched without case or spaces, so a re-cased email is no change', () => {
    spec
      .given([added(person(1))])
      .when(snapshot([person(1, { email: '  PERSON1@Example.org ' })]))
      .then([]);
  });

  it('refuses a snapshot listing someone twice', () => {
    spec
      .given([])
      .when(snapshot([person(1), person(1)]))
      .then({ code: 'SB_ILLEGAL_STATE', details: { reason: 'duplicate_employee' } });
  });

  it('a first snapshot of 5,000 people adds 5,000 facts', () => {
    const { events } = spec.given([]).when(snapshot(COMPANY, T0)).events();
    expect(events).toHaveLength(5000);
  });
});

describe('employee directory: single updates from webhooks', () => {
  it('records only the changed fields; the same update again records nothing', () => {
    const renamed = person(1, { displayName: 'Person One', site: 'Porto' });
    const changed: DirectoryEvent = {
      type: 'DirectoryEmployeeChanged',
      data: { hrId: person(1).hrId, changes: { displayName: 'Person One', site: 'Porto' }, at: T1 },
    };
    spec
      .given([added(person(1))])
      .when(update(renamed))
      .then([changed]);
    spec
      .given([added(person(1)), changed])
      .when(update(renamed))
      .then([]);
  });

  it('an employee who left: one fact, once; unknown people are ignored', () => {
    const leave = (hrId: string): DirectoryCommand => ({
      type: 'RecordEmployeeLeft',
      data: { hrId },
      metadata: { commandId: 'webhook-2', now: T1, actor: 'hibob:webhook' },
    });
    const left: DirectoryEvent = { type: 'DirectoryEmployeeLeft', data: { hrId: person(1).hrId, at: T1 } };
    spec
      .given([added(person(1))])
      .when(leave(person(1).hrId))
      .then([left]);
    spec
      .given([added(person(1)), left])
      .when(leave(person(1).hrId))
      .then([]);
    spec.given([]).when(leave('999')).then([]);
  });

  it('a rehire after leaving is a status change', () => {
    const left: DirectoryEvent = { type: 'DirectoryEmployeeLeft', data: { hrId: person(1).hrId, at: T0 } };
    spec
      .given([added(person(1)), left])
      .when(update(person(1)))
      .then([
        {
          type: 'DirectoryEmployeeChanged',
          data: { hrId: person(1).hrId, changes: { status: 'active' }, at: T1 },
        },
      ]);
  });
});

describe('employee directory: the fold answers who is who', () => {
  const history: DirectoryEvent[] = [
    added(person(0)),
    added(person(1)),
    added(person(11)),
    added(person(21)),
    added(person(31, { status: 'inactive' })),
    {
      type: 'DirectoryEmployeeChanged',
      data: { hrId: person(21).hrId, changes: { email: 'new21@example.org' }, at: T1 },
    },
    { type: 'DirectoryEmployeeLeft', data: { hrId: person(11).hrId, at: T1 } },
  ];
  const state = spec.given(history).state;

  it('employee by email (any case), following email changes', () => {
    expect(employeeByEmail(state, 'PERSON1@example.org')?.hrId).toBe(person(1).hrId);
    expect(employeeByEmail(state, 'new21@example.org')?.hrId).toBe(person(21).hrId);
    expect(employeeByEmail(state, 'person21@example.org')).toBeNull();
    expect(employeeByEmail(state, 'nobody@example.org')).toBeNull();
  });

  it('manager of, team of a manager (active only), teammates, is active', () => {
    expect(managerOf(state, person(21).hrId)?.hrId).toBe(person(1).hrId);
    expect(managerOf(state, person(0).hrId)).toBeNull();
    expect(teamOf(state, person(1).hrId).map((e) => e.hrId)).toEqual([person(21).hrId]);
    expect(teammatesOf(state, person(1).hrId)).toEqual([]);
    expect(isActive(state, person(1).hrId)).toBe(true);
    expect(isActive(state, person(11).hrId)).toBe(false);
    expect(isActive(state, person(31).hrId)).toBe(false);
    expect(isActive(state, 'unknown')).toBe(false);
  });

  it('holds 5,000 people folded one event at a time', () => {
    expect(STATE.size).toBe(5000);
    expect([...directoryEmployees(STATE)]).toHaveLength(5000);
    expect(teamOf(STATE, person(3).hrId)).toHaveLength(499);
  });
});
