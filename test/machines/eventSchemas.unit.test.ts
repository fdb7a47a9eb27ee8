import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { eventParser, MalformedEvent, upcast } from '../../machines/shared/eventSchemas.ts';
import type { Event } from '../../machines/shared/messages.ts';
import { ticketDecider } from '../support/ticketLifecycle.ts';

type LampEvent = Event<'LampLit', { watts: number; by: string }> | Event<'LampOut', { by: string }>;

const schemas = {
  LampLit: z.object({ watts: z.number().int().min(1), by: z.string().min(1) }),
  LampOut: z.object({ by: z.string().min(1) }),
};

describe('stored events: upcast, then parse with the schema', () => {
  const parse = eventParser<LampEvent>('lamp', {
    schemas,
    upcasters: {
      // v1 stored the power as a string, v0 under another name: each step leaves current shapes alone.
      LampLit: (e) => {
        const d = e.data as { watts?: unknown };
        return typeof d.watts === 'string' ? { type: e.type, data: { ...d, watts: Number(d.watts) } } : e;
      },
      LampSwitchedOn: (e) => ({ type: 'LampLit', data: e.data }),
    },
  });

  it('reads the current shape as it is, dropping fields the schema does not name', () => {
    expect(parse({ type: 'LampLit', data: { watts: 40, by: 'ann', colour: 'red' } })).toEqual({
      type: 'LampLit',
      data: { watts: 40, by: 'ann' },
    });
  });

  it('reads an old shape through its upcaster, and an old name through a chain of them', () => {
    expect(parse({ type: 'LampLit', data: { watts: '60', by: 'ann' } })).toEqual({
      type: 'LampLit',
      data: { watts: 60, by: 'ann' },
    });
    expect(parse({ type: 'LampSwitchedOn', data: { watts: '25', by: 'bob' } })).toEqual({
      type: 'LampLit',
      data: { watts: 25, by: 'bob' },
    });
  });

  it('refuses a malformed event loudly, naming the type and every field that is wrong', () => {
    let thrown: unknown;
    try {
      parse({ type: 'LampLit', data: { watts: 0 } });
    } catch (e) {
      thrown = e;
    }
    expect(thrown).toBeInstanceOf(MalformedEvent);
    expect(thrown).toMatchObject({ code: 'SB_STORE_CORRUPT', eventType: 'LampLit' });
    expect((thrown as MalformedEvent).issues.map((i) => i.path)).toEqual(['data.watts', 'data.by']);
    expect((thrown as Error).message).toMatch(
      /^LampLit does not match its schema: data\.watts: .*; data\.by: /,
    );
  });

  it('refuses an event type the lifecycle does not declare', () => {
    expect(() => parse({ type: 'DoorOpened', data: {} })).toThrow(
      expect.objectContaining({ code: 'SB_STORE_CORRUPT', message: 'DoorOpened is not an event of lamp' }),
    );
  });

  it('stops a cycle of upcasters', () => {
    const cycle = {
      A: (e: { data: unknown }) => ({ type: 'B', data: e.data }),
      B: (e: { data: unknown }) => ({ type: 'A', data: e.data }),
    };
    expect(() => upcast({ type: 'A', data: {} }, cycle)).toThrow(MalformedEvent);
  });

  it("a decider declared with machineDecider parses through its lifecycle's schemas and upcasters", () => {
    // The ticket lifecycle once stored TicketOpened as TicketCreated { name }.
    expect(
      ticketDecider.parseEvent!({ type: 'TicketCreated', data: { ticketId: 't1', name: 'old', by: 'U1' } }),
    ).toEqual({ type: 'TicketOpened', data: { ticketId: 't1', title: 'old', by: 'U1' } });
    expect(() => ticketDecider.parseEvent!({ type: 'TicketOpened', data: { ticketId: 't1' } })).toThrow(
      /TicketOpened does not match its schema: data\.title: .*; data\.by: /,
    );
  });
});
