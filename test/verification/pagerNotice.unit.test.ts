import { describe, expect, it } from 'vitest';
import { latestPage, pagerDecider, pendingPageRequest } from '../../machines/verification/paging/decider.ts';
import type { PagerEvent } from '../../machines/verification/paging/events.ts';
import type { Command } from '../../src/core/messages.ts';

// Issue 20 item 5: a plain SMS notice (`RequestNotice`) is not a page: a reply never acts on it,
// it never counts against the per-hour limit, a STOP holds, and it is recorded once per id.

const at = (minute: number) => new Date(Date.UTC(2026, 10, 23, 9, minute)).toISOString();
const meta = (minute: number, id: string) => ({ now: at(minute), commandId: id, actor: 'system:pager' });

const page = (pageId: string, minute: number) =>
  ({
    type: 'RequestPage',
    data: {
      slackUserId: 'U0CHEN',
      pageId,
      reportTo: 'incident-PINC1',
      number: 12,
      label: '#12 Checkout 5xx',
      phone: '447700900103',
      phoneVerifiedAt: at(0),
      text: '[Switchboard] #12 Checkout 5xx — reply 4 to acknowledge, 6 to resolve',
      spokenText: 'Incident 12',
      callAfterMs: 180_000,
      maxPerHour: 1,
    },
    metadata: meta(minute, `c-${pageId}`),
  }) as Command;

const notice = (pageId: string, minute: number, phoneVerifiedAt = at(0)) =>
  ({
    type: 'RequestNotice',
    data: {
      slackUserId: 'U0CHEN',
      pageId,
      phone: '447700900103',
      phoneVerifiedAt,
      text: 'Switchboard: a colleague is off sick, so you are on call for them.',
    },
    metadata: meta(minute, `n-${pageId}-${minute}`),
  }) as Command;

const run = (commands: readonly Command[]) => {
  let state = pagerDecider.initialState();
  const out: PagerEvent[] = [];
  for (const c of commands) {
    const events = pagerDecider.decide(c as Parameters<typeof pagerDecider.decide>[0], state);
    out.push(...events);
    state = events.reduce(pagerDecider.evolve, state);
  }
  return { state, events: out };
};

describe('a notice from the pager (not a page)', () => {
  it('is recorded once per id, with its SMS pending and no call', () => {
    const { events, state } = run([notice('sick:1', 1), notice('sick:1', 2)]);
    expect(events.map((e) => e.type)).toEqual(['NoticeRequested']);
    expect(pendingPageRequest(state, 'sick:1:sms')).toMatchObject({ action: 'sms', pageId: 'sick:1' });
    expect(pendingPageRequest(state, 'sick:1:call')).toBeNull();
  });

  it('a reply never acts on it: the latest page is the page before it, or none', () => {
    expect(latestPage(run([notice('sick:1', 1)]).state)).toBeNull();
    const { state } = run([page('p1', 1), notice('sick:1', 2)]);
    expect(latestPage(state)?.pageId).toBe('p1');
    expect(latestPage(state, 12)?.pageId).toBe('p1');
  });

  it('does not count against the per-hour limit of pages', () => {
    const { events } = run([notice('sick:1', 1), notice('sick:2', 2), page('p1', 3)]);
    expect(events.map((e) => e.type)).toEqual(['NoticeRequested', 'NoticeRequested', 'PageRequested']);
  });

  it('is skipped after STOP until the phone is verified again', () => {
    const optOut = {
      type: 'OptOutOfPaging',
      data: { slackUserId: 'U0CHEN', phone: '447700900103' },
      metadata: meta(5, 'o1'),
    } as Command;
    const { events } = run([optOut, notice('sick:1', 6), notice('sick:2', 30, at(20))]);
    expect(events.map((e) => e.type)).toEqual(['PagingOptedOut', 'NoticeSkipped', 'NoticeRequested']);
  });
});
