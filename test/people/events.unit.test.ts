import { describe, expect, it } from 'vitest';
import { foldPerson } from '../../src/people/directory.ts';
import { type PersonEvent, upcastPersonEvent } from '../../src/people/events.ts';

/** A `SlackUserMapped` exactly as versions before the people directory stored it. */
const STORED_OLD = {
  type: 'SlackUserMapped',
  data: {
    slackUserId: 'U0ANA',
    email: 'ana.silva@example.org',
    pagerDutyUserId: 'PUSR001',
    name: 'Ana Silva',
    at: '2026-11-20T09:15:00.000Z',
  },
};

describe('upcastPersonEvent', () => {
  it('reads a stored SlackUserMapped as PersonLinked to the incident service', () => {
    expect(upcastPersonEvent(STORED_OLD)).toEqual({
      type: 'PersonLinked',
      data: {
        slackUserId: 'U0ANA',
        system: 'incidents',
        externalId: 'PUSR001',
        email: 'ana.silva@example.org',
        name: 'Ana Silva',
        at: '2026-11-20T09:15:00.000Z',
      },
    });
  });

  it('keeps a null name, and passes today’s shapes through', () => {
    const old = upcastPersonEvent({ ...STORED_OLD, data: { ...STORED_OLD.data, name: null } });
    expect(old?.data).toMatchObject({ name: null, externalId: 'PUSR001' });
    const linked = {
      type: 'PersonLinked',
      data: {
        slackUserId: 'U0ANA',
        system: 'hr',
        externalId: 'E-123',
        email: 'ana.silva@example.org',
        name: null,
        at: '2026-11-21T00:00:00.000Z',
      },
    };
    expect(upcastPersonEvent(linked)).toEqual(linked);
    const unlinked = {
      type: 'PersonUnlinked',
      data: { slackUserId: 'U0ANA', system: 'hr', externalId: 'E-123', reason: 'left', at: 'x' },
    };
    expect(upcastPersonEvent(unlinked)).toEqual(unlinked);
  });

  it('skips what is not a person fact or does not parse', () => {
    expect(upcastPersonEvent({ type: 'IncidentTriggered', data: {} })).toBeUndefined();
    expect(upcastPersonEvent({ type: 'SlackUserMapped', data: { slackUserId: 'U0ANA' } })).toBeUndefined();
    expect(
      upcastPersonEvent({
        type: 'PersonLinked',
        data: { ...STORED_OLD.data, system: 'fax', externalId: '1' },
      }),
    ).toBeUndefined();
  });
});

describe('foldPerson', () => {
  const linked = (system: 'incidents' | 'hr' | 'phone', externalId: string, at: string): PersonEvent => ({
    type: 'PersonLinked',
    data: { slackUserId: 'U0ANA', system, externalId, email: null, name: null, at },
  });

  it('keeps the newest link per system, and forgets an unlinked one', () => {
    const person = foldPerson('U0ANA', [
      upcastPersonEvent(STORED_OLD)!,
      linked('phone', '+351910000001', 't1'),
      linked('incidents', 'PUSR009', 't2'),
      {
        type: 'PersonUnlinked',
        data: {
          slackUserId: 'U0ANA',
          system: 'phone',
          externalId: '+351910000001',
          reason: 'forgotten',
          at: 't3',
        },
      },
    ]);
    expect(person.links).toEqual({
      incidents: { system: 'incidents', externalId: 'PUSR009', email: null, name: null, at: 't2' },
    });
  });
});
