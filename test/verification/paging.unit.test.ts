import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  keysAnswer,
  parseMessagesWebhook,
  parseVoiceWebhook,
  storedMessagesBody,
  storedVoiceBody,
} from '../../handlers/verification/pagingWebhooks.ts';
import { parseReply } from '../../machines/verification/paging/commands.ts';
import {
  latestPage,
  pageReceiptDecider,
  pagerDecider,
  pagerReplyDecider,
} from '../../machines/verification/paging/decider.ts';
import { type PagerEvent, parsePagerEvent } from '../../machines/verification/paging/events.ts';
import { checkCommand } from '../../src/application/dispatch.ts';
import { ValidationError } from '../../src/core/errors.ts';
import type { Command } from '../../src/core/messages.ts';
import { pagingSummary } from '../../src/incidents/blocks/pagingSummary.ts';
import { parseServiceDelays } from '../../src/incidents/pagingConfig.ts';
import { receiptReason } from '../../src/verification/paging/receipts.reactor.ts';

const at = (minute: number) => new Date(Date.UTC(2026, 10, 23, 9, minute)).toISOString();
const meta = (minute: number, id: string) => ({ now: at(minute), commandId: id, actor: 'system:pager' });

const request = (pageId: string, minute: number, extra: Record<string, unknown> = {}) =>
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
      maxPerHour: 2,
      ...extra,
    },
    metadata: meta(minute, `c-${pageId}`),
  }) as Parameters<typeof pagerDecider.decide>[0];

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

describe('the pager decider', () => {
  it('records a page once, with its call due M minutes later', () => {
    const { events } = run([request('p1', 5), request('p1', 6)]);
    expect(events.map((e) => e.type)).toEqual(['PageRequested']);
    expect(events[0]?.data).toMatchObject({ pageId: 'p1', callDueAt: at(8), at: at(5) });
  });

  it('holds back a page over K an hour, and pages again once the hour has passed', () => {
    const { events } = run([request('p1', 0), request('p2', 10), request('p3', 20), request('p4', 61)]);
    expect(events.map((e) => e.type)).toEqual([
      'PageRequested',
      'PageRequested',
      'PageHeldBack',
      'PageRequested',
    ]);
  });

  it('a stopped page places no call; STOP skips pages until the phone is verified again', () => {
    const stop = {
      type: 'StopPage',
      data: { slackUserId: 'U0CHEN', pageId: 'p1', reason: 'acknowledged' },
      metadata: meta(6, 's1'),
    } as Command;
    const call = {
      type: 'PlacePageCall',
      data: { slackUserId: 'U0CHEN', pageId: 'p1' },
      metadata: meta(8, 't1'),
    } as Command;
    const optOut = {
      type: 'OptOutOfPaging',
      data: { slackUserId: 'U0CHEN', phone: '447700900103' },
      metadata: meta(9, 'o1'),
    } as Command;
    const { events, state } = run([
      request('p1', 5),
      stop,
      call,
      optOut,
      request('p2', 10),
      request('p3', 30, { phoneVerifiedAt: at(20) }),
    ]);
    expect(events.map((e) => e.type)).toEqual([
      'PageRequested',
      'PageStopped',
      'PagingOptedOut',
      'PageSkipped',
      'PageRequested',
    ]);
    expect(latestPage(state)?.pageId).toBe('p3');
    expect(latestPage(state, 12)?.pageId).toBe('p3');
    expect(latestPage(state, 13)).toBeNull();
  });

  it('refuses a record about a page it never made', () => {
    const sent = {
      type: 'RecordPageSmsSent',
      data: { slackUserId: 'U0CHEN', pageId: 'nope', messageUuid: 'm1' },
      metadata: meta(1, 'x'),
    };
    expect(() => run([sent as Command])).toThrow(/no page nope/);
  });

  it('records each receipt status once', () => {
    const receipt = (status: string, ts: string) =>
      ({
        type: 'RecordPageReceipt',
        data: {
          vendorId: 'call-1',
          channel: 'voice',
          status,
          reason: null,
          pageId: null,
          vendorTimestamp: ts,
        },
        metadata: meta(1, `${status}${ts}`),
      }) as Parameters<typeof pageReceiptDecider.decide>[0];
    let state = pageReceiptDecider.initialState();
    const types: string[] = [];
    for (const c of [receipt('ringing', 'a'), receipt('ringing', 'a'), receipt('answered', 'b')]) {
      const events = pageReceiptDecider.decide(c, state);
      types.push(...events.map((e) => e.type));
      state = events.reduce(pageReceiptDecider.evolve, state);
    }
    expect(types).toEqual(['PageReceiptReceived', 'PageReceiptReceived']);
  });
});

describe('replies', () => {
  it.each([
    ['4', 'acknowledge', null],
    [' ack ', 'acknowledge', null],
    ['Ack #12', 'acknowledge', 12],
    ['4 12', 'acknowledge', 12],
    ['6', 'resolve', null],
    ['resolve 7', 'resolve', 7],
    ['STOP', 'stop', null],
    ['stop', 'stop', null],
    ['hello there', 'unknown', null],
    ['4 twelve', 'unknown', null],
    ['STOP 12', 'unknown', null],
    ['', 'unknown', null],
  ])('%j → %s %s', (text, action, number) => {
    expect(parseReply(text)).toEqual({ action, number });
  });
});

describe('the paging webhooks', () => {
  const context = {
    receivedAt: at(0),
    metadata: (deliveryId: string) => ({ now: at(0), commandId: deliveryId, actor: 'system:vonage' }),
  };
  const body = (v: unknown) => Buffer.from(JSON.stringify(v));
  /** A keyed hash as the app's (an HMAC, 32 hex), under a test key. */
  const keyedHash = (text: string) =>
    createHmac('sha256', 'test-key').update(text).digest('hex').slice(0, 32);

  it('turns an inbound SMS into a reply and a status into a receipt, each keyed for redeliveries', () => {
    const inbound = parseMessagesWebhook(
      body({
        channel: 'sms',
        message_uuid: 'aaaa-1',
        from: '447700900103',
        to: '447700900999',
        text: '4 12',
      }),
      context,
      keyedHash,
    );
    expect(inbound.deliveryId).toBe('sms-in:aaaa-1');
    expect(inbound.commands[0]).toMatchObject({
      type: 'RecordPagerReply',
      data: { action: 'acknowledge', number: 12, phone: '447700900103' },
    });
    const status = parseMessagesWebhook(
      body({
        message_uuid: 'aaaa-2',
        status: 'rejected',
        client_ref: 'page-1',
        timestamp: '2026-11-23T09:00:01Z',
        error: { title: '1240', detail: 'Illegal Number' },
      }),
      context,
      keyedHash,
    );
    expect(status.deliveryId).toBe('sms-status:aaaa-2:rejected');
    expect(status.commands[0]?.data).toMatchObject({
      status: 'rejected',
      pageId: 'page-1',
      reason: '1240 Illegal Number',
    });
    const call = parseVoiceWebhook(
      body({ uuid: 'call-1', status: 'answered', timestamp: 't1' }),
      context,
      '447700900999',
      keyedHash,
    );
    expect(call.deliveryId).toBe('call:call-1:answered:t1');
    const keys = parseVoiceWebhook(
      body({
        uuid: 'call-1',
        dtmf: { digits: '4' },
        from: '447700900103',
        to: '447700900999',
        timestamp: 't2',
      }),
      context,
      '447700900999',
      keyedHash,
    );
    expect(keys.commands[0]?.data).toMatchObject({
      via: 'voice',
      action: 'acknowledge',
      phone: '447700900103',
      callUuid: 'call-1',
    });
  });

  it('keeps what a reply asks for, and its text only as a length and a keyed hash', () => {
    const stray = parseMessagesWebhook(
      body({ channel: 'sms', message_uuid: 'aaaa-3', from: '447700900103', text: 'my code is 482913' }),
      context,
      keyedHash,
    );
    expect(stray.commands[0]?.data).toMatchObject({
      action: 'unknown',
      textLength: 17,
      textHash: keyedHash('my code is 482913'),
    });
    expect(stray.commands[0]?.data).not.toHaveProperty('text');
    expect(JSON.stringify(stray.commands)).not.toContain('482913');
    // Not even an understood reply is kept as sent: its action and number say all of it.
    const ack = parseMessagesWebhook(
      body({ channel: 'sms', message_uuid: 'aaaa-4', from: '447700900103', text: ' ack #12 ' }),
      context,
      keyedHash,
    );
    expect(ack.commands[0]?.data).toMatchObject({ action: 'acknowledge', number: 12, textLength: 9 });
    expect(ack.commands[0]?.data).not.toHaveProperty('text');
  });

  it('records an inbound SMS in the inbox without its text, its keyword or its numbers', () => {
    const stored = storedMessagesBody(keyedHash)({
      channel: 'sms',
      message_uuid: 'aaaa-5',
      to: '447700900999',
      from: '447700900103',
      timestamp: '2026-11-23T09:00:00Z',
      text: 'my otp 48213907 card 4111111111111111',
      message_type: 'text',
      sms: { num_messages: '1', keyword: 'MY' },
      image: { url: 'https://example.org/private.jpg' },
    });
    expect(stored).toEqual({
      channel: 'sms',
      message_uuid: 'aaaa-5',
      to: '[number]',
      from: '[number]',
      timestamp: '2026-11-23T09:00:00Z',
      message_type: 'text',
      sms: { num_messages: '1' },
      textLength: 37,
      textHash: keyedHash('my otp 48213907 card 4111111111111111'),
    });
    // A status report keeps its fields (numbers masked); a body that is not an object keeps nothing.
    expect(
      storedMessagesBody(keyedHash)({ message_uuid: 'm-1', status: 'rejected', to: '447700900103' }),
    ).toEqual({ message_uuid: 'm-1', status: 'rejected', to: '[number]' });
    expect(storedMessagesBody(keyedHash)('my otp 48213907')).toBe('[not a JSON object]');
  });

  it('records keys pressed in the inbox as a length and a keyed hash, and no speech', () => {
    expect(
      storedVoiceBody(keyedHash)({
        uuid: 'call-1',
        dtmf: { digits: '4111111111111111', timed_out: false },
        speech: { results: [{ text: 'my card number is' }] },
        from: '447700900103',
        to: '447700900999',
      }),
    ).toEqual({
      uuid: 'call-1',
      dtmf: { timed_out: false, digitsLength: 16, digitsHash: keyedHash('4111111111111111') },
      from: '[number]',
      to: '[number]',
    });
    expect(storedVoiceBody(keyedHash)({ uuid: 'call-1', status: 'answered' })).toEqual({
      uuid: 'call-1',
      status: 'answered',
    });
  });

  it('a call’s keys are answered with what they do only in a page call of that person', () => {
    const page = { label: '#12 Checkout 5xx' };
    expect(JSON.stringify(keysAnswer('acknowledge', page, undefined))).toContain(
      'you acknowledge #12 Checkout 5xx',
    );
    const refused = JSON.stringify(keysAnswer('acknowledge', null, undefined));
    expect(refused).toContain('Nothing was done');
    expect(refused).not.toContain('acknowledge');
  });

  it('reads a reply recorded with its text (older releases) as its length, without the text', () => {
    const stored = (text: string) =>
      parsePagerEvent({
        type: 'PagerReplyReceived',
        data: {
          replyId: 'r1',
          via: 'sms',
          phone: '447700900103',
          text,
          action: 'unknown',
          number: null,
          callUuid: null,
          at: at(0),
        },
      });
    expect(stored('4 12').data).toMatchObject({ textLength: 4, textHash: null });
    expect(stored('[17 characters]').data).toMatchObject({ textLength: 17, textHash: null });
    expect(stored('4 12').data).not.toHaveProperty('text');
    // A command an older release recorded in the inbox still decides, keeping no text.
    const command = {
      type: 'RecordPagerReply',
      data: {
        replyId: 'r2',
        via: 'sms',
        phone: '447700900103',
        text: '4',
        action: 'acknowledge',
        number: null,
        callUuid: null,
      },
      metadata: meta(1, 'c-r2'),
    } as Command;
    expect(() => checkCommand(command, pagerReplyDecider.commandSchemas?.RecordPagerReply)).not.toThrow();
    const [event] = pagerReplyDecider.decide(
      command as Parameters<typeof pagerReplyDecider.decide>[0],
      pagerReplyDecider.initialState(),
    );
    expect(event?.data).toMatchObject({ textLength: 1, textHash: null, action: 'acknowledge' });
    expect(event?.data).not.toHaveProperty('text');
    // Neither the text nor its length: refused.
    const { text: _text, ...withoutText } = command.data as Record<string, unknown>;
    expect(() =>
      checkCommand(
        { ...command, data: withoutText } as Command,
        pagerReplyDecider.commandSchemas?.RecordPagerReply,
      ),
    ).toThrow(/textLength/);
  });

  it.each([
    ['not JSON', Buffer.from('{'), /not JSON/],
    [
      'a bad sender',
      body({ message_uuid: 'a-1', from: '+44 7700 <script>', text: '4' }),
      /from is not a phone number/,
    ],
    ['a bad message id', body({ message_uuid: '../../etc', status: 'delivered' }), /message_uuid/],
    ['a bad status', body({ message_uuid: 'a-1', status: 'DELIVERED; DROP' }), /status/],
  ])('refuses %s, naming what was wrong', (_what, raw, message) => {
    expect(() => parseMessagesWebhook(raw, context, keyedHash)).toThrow(ValidationError);
    expect(() => parseMessagesWebhook(raw, context, keyedHash)).toThrow(message);
  });

  it('refuses keys that are not keys', () => {
    expect(() =>
      parseVoiceWebhook(
        body({ uuid: 'call-1', dtmf: { digits: '4; rm' } }),
        context,
        '447700900999',
        keyedHash,
      ),
    ).toThrow(/dtmf.digits/);
  });
});

describe('paging settings and the card line', () => {
  it('reads per-service delays', () => {
    expect(parseServiceDelays('PSVC001=2, PSVC002 = 10')).toEqual({ PSVC001: 120_000, PSVC002: 600_000 });
    expect(parseServiceDelays(undefined)).toEqual({});
  });

  it('sums up where each person’s page stands', () => {
    const activity = (kind: string, slackUserId: string | null) => ({
      type: 'RecordIncidentPageActivity',
      kind: 'command' as const,
      data: { kind, slackUserId, name: null },
    });
    expect(
      pagingSummary([
        activity('sms_submitted', 'U0CHEN'),
        activity('no_verified_phone', 'U0FRANK'),
        activity('phone_acknowledged', 'U0CHEN'),
        activity('call_completed', 'U0CHEN'),
      ]),
    ).toBe(
      ':iphone: *Paging* <@U0CHEN> acknowledged by phone · <@U0FRANK> could not be paged: no verified phone',
    );
    expect(pagingSummary([])).toBeNull();
  });

  it('keeps “could not be paged” until the page reaches them, who stood in, and “nobody could be paged” first (issue 18)', () => {
    const activity = (kind: string, slackUserId: string | null, more: Record<string, unknown> = {}) => ({
      type: 'RecordIncidentPageActivity',
      kind: 'command' as const,
      data: { kind, slackUserId, name: null, ...more },
    });
    expect(
      pagingSummary([
        activity('sms_submitted', 'U0ANA'),
        activity('sms_rejected', 'U0ANA'),
        activity('undeliverable', 'U0ANA', { reason: 'sms_refused' }),
        activity('call_busy', 'U0ANA'),
        activity('stand_in', 'U0BEN', { standsInFor: 'U0ANA' }),
        activity('sms_delivered', 'U0BEN'),
      ]),
    ).toBe(
      ':iphone: *Paging* <@U0ANA> could not be paged: the SMS was refused · <@U0BEN> SMS delivered (paged instead of <@U0ANA>)',
    );
    expect(
      pagingSummary([
        activity('undeliverable', 'U0ANA', { reason: 'must_verify_again' }),
        activity('level_unreachable', null, { level: 1, toLevel: 2 }),
        activity('opted_out', 'U0DANA'),
        activity('nobody_paged', null),
      ]),
    ).toBe(
      ':iphone: *Paging* *nobody could be paged* · nobody at level 1 could be paged: paging level 2 · <@U0ANA> could not be paged: their number must be verified again · <@U0DANA> could not be paged: opted out of paging (replied STOP)',
    );
    // Answered after all (the SMS refused, the call picked up): the later receipt says so.
    expect(
      pagingSummary([
        activity('undeliverable', 'U0ANA', { reason: 'sms_refused' }),
        activity('call_answered', 'U0ANA'),
      ]),
    ).toBe(':iphone: *Paging* <@U0ANA> call answered');
  });
});

describe('what a receipt says on the timeline (issue 18)', () => {
  it('keeps the vendor’s words without its error code in front', () => {
    expect(receiptReason('1300 Absent subscriber: the handset is switched off or out of coverage.')).toBe(
      'Absent subscriber: the handset is switched off or out of coverage.',
    );
    expect(receiptReason('ERR_42: Number barred')).toBe('Number barred');
    expect(receiptReason('Unroutable')).toBe('Unroutable');
    expect(receiptReason('1300')).toBeNull();
    expect(receiptReason(null)).toBeNull();
  });
});
