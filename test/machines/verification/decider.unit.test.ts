import { describe, expect, it } from 'vitest';
import type { VerificationCommand, VerificationCommandOf } from '../../../machines/verification/commands.ts';
import { phaseOf, VERIFICATION_LIMITS, verificationDecider } from '../../../machines/verification/decider.ts';
import type { VerificationEvent } from '../../../machines/verification/events.ts';
import { clientRefFor, slackUserOfClientRef } from '../../../machines/verification/streams.ts';
import { deciderSpec } from '../../support/deciderSpec.ts';

const spec = deciderSpec(verificationDecider);
const ANA = 'U0ANA';
const T0 = '2026-11-22T02:00:00.000Z';
const at = (seconds: number) => new Date(Date.parse(T0) + seconds * 1000).toISOString();
const ATTEMPT = '9b2f0c4e-1d2a-4b3c-8d4e-5f6a7b8c9d0e';
const NUMBER = 'sealed:v1:new-number';
const OLD = 'sealed:v1:old-number';
const KEY = 'a'.repeat(32);
const OLD_KEY = 'b'.repeat(32);
const MASKED = '+44 •••• ••0123';
const OLD_MASKED = '+44 •••• ••0999';

const meta = (commandId: string, seconds = 0, actor = ANA) => ({ commandId, now: at(seconds), actor });

const start = (
  commandId = ATTEMPT,
  seconds = 0,
  extra: Partial<VerificationCommandOf<'StartVerification'>['data']> = {},
): VerificationCommand => ({
  type: 'StartVerification',
  data: {
    slackUserId: ANA,
    number: NUMBER,
    masked: MASKED,
    numberKey: KEY,
    codeLength: 6,
    orgStarts: 0,
    orgLimit: 50,
    ...extra,
  },
  metadata: meta(commandId, seconds),
});

const requested = (
  attemptId = ATTEMPT,
  seconds = 0,
  previous: { number: string; masked: string } | null = null,
): VerificationEvent => ({
  type: 'VerificationRequested',
  data: {
    attemptId,
    slackUserId: ANA,
    clientRef: clientRefFor(ANA, attemptId),
    number: NUMBER,
    masked: MASKED,
    numberKey: KEY,
    previous,
    codeLength: 6,
    expiresAt: at(seconds + VERIFICATION_LIMITS.ttlMs / 1000),
    at: at(seconds),
  },
});
const codeSent = (seconds = 1, requestId = ATTEMPT, vendorRequestId = 'vreq-1'): VerificationEvent => ({
  type: 'VerificationCodeSent',
  data: { attemptId: ATTEMPT, requestId, vendorRequestId, at: at(seconds) },
});
const submitted = (requestId: string, seconds = 40): VerificationEvent => ({
  type: 'VerificationCodeSubmitted',
  data: { attemptId: ATTEMPT, requestId, sealedCode: `vault:v1:${requestId}:xyz`, at: at(seconds) },
});
const check = (commandId: string, seconds = 40): VerificationCommand => ({
  type: 'CheckVerificationCode',
  data: { slackUserId: ANA, attemptId: ATTEMPT, sealedCode: `vault:v1:${commandId}:xyz` },
  metadata: meta(commandId, seconds),
});
const outcome = (
  requestId: string,
  o: 'verified' | 'wrong_code' | 'start_again' | 'code_lost',
  seconds = 41,
): VerificationCommand => ({
  type: 'RecordVerificationCheckOutcome',
  data: { slackUserId: ANA, requestId, outcome: o },
  metadata: meta(`outcome-${requestId}`, seconds, 'system:verification-upstream'),
});
const rejected = (requestId: string, wrongCodes: number, seconds = 41): VerificationEvent => ({
  type: 'VerificationCodeRejected',
  data: { attemptId: ATTEMPT, requestId, wrongCodes, triesLeft: 3 - wrongCodes, at: at(seconds) },
});
const verifiedFact = (
  requestId: string | null,
  seconds = 41,
  previous: { number: string; masked: string } | null = null,
): VerificationEvent => ({
  type: 'VerificationVerified',
  data: {
    attemptId: ATTEMPT,
    requestId,
    number: NUMBER,
    masked: MASKED,
    numberKey: KEY,
    previous,
    at: at(seconds),
  },
});

describe('verification decider', () => {
  it('starts: the attempt is requested with a sealed number, its client ref and its expiry', () => {
    const state = spec.given([]).when(start()).then([requested()]);
    expect(phaseOf(state)).toBe('requested');
    expect(slackUserOfClientRef(clientRefFor(ANA, ATTEMPT))).toBe(ANA);
    expect(clientRefFor(ANA, ATTEMPT)).toMatch(/^[A-Za-z0-9]{1,40}$/);
  });

  it('refuses a start by someone else and a second start while one runs; the same number may be verified again', () => {
    spec
      .given([])
      .when({ ...start(), metadata: meta(ATTEMPT, 0, 'U0MALLORY') })
      .then({
        code: 'SB_ILLEGAL_STATE',
        details: { reason: 'not_yours' },
      });
    spec
      .given([requested()])
      .when(start('other'))
      .then({ code: 'SB_ILLEGAL_STATE', details: { reason: 'already_running' } });
    spec
      .given([requested(), codeSent()])
      .when(start('other'))
      .then({ code: 'SB_ILLEGAL_STATE', details: { reason: 'already_running' } });
    // The same number again is no change of number (no old number to tell).
    spec
      .given([requested(), codeSent(), submitted('c1'), verifiedFact('c1')])
      .when(start('00000000-0000-4000-8000-0000000000bb', 100))
      .then([requested('00000000-0000-4000-8000-0000000000bb', 100)]);
  });

  it('allows 5 starts per person per 10 minutes, and names when the next one is possible', () => {
    const expiring: VerificationEvent[] = [];
    for (let i = 0; i < 5; i++) {
      const id = `00000000-0000-4000-8000-00000000000${i}`;
      expiring.push(requested(id, i * 60), {
        type: 'VerificationExpired',
        data: { attemptId: id, at: at(i * 60 + 1) },
      });
    }
    spec
      .given(expiring)
      .when(start('sixth', 300))
      .then({
        code: 'SB_ILLEGAL_STATE',
        details: { reason: 'person_limit', retryAt: at(600) },
      });
    const { events } = spec.given(expiring).when(start('sixth', 601)).events();
    expect(events.map((e) => e.type)).toEqual(['VerificationRequested']);
  });

  it('refuses a start over the organisation-wide cap the enrich step counted', () => {
    spec
      .given([])
      .when(start(ATTEMPT, 0, { orgStarts: 50, orgLimit: 50 }))
      .then({
        code: 'SB_ILLEGAL_STATE',
        details: { reason: 'org_limit', orgLimit: 50 },
      });
    spec
      .given([])
      .when(start(ATTEMPT, 0, { orgStarts: 49, orgLimit: 50 }))
      .then([requested()]);
  });

  it('records the code sent once; a late or repeated answer changes nothing', () => {
    const sent: VerificationCommand = {
      type: 'RecordVerificationCodeSent',
      data: { slackUserId: ANA, requestId: ATTEMPT, vendorRequestId: 'vreq-1' },
      metadata: meta('sent', 1, 'system:verification-upstream'),
    };
    const state = spec.given([requested()]).when(sent).then([codeSent()]);
    expect(phaseOf(state)).toBe('codeSent');
    spec.given([requested(), codeSent()]).when(sent).then([]);
  });

  it('checks a code: 2 wrong codes leave 1 try, the third fails the attempt', () => {
    spec
      .given([requested(), codeSent()])
      .when(check('c1'))
      .then([submitted('c1')]);
    spec
      .given([requested(), codeSent(), submitted('c1')])
      .when(check('c2'))
      .then({ code: 'SB_ILLEGAL_STATE', details: { reason: 'busy' } });
    spec
      .given([requested(), codeSent(), submitted('c1')])
      .when(outcome('c1', 'wrong_code'))
      .then([rejected('c1', 1)]);
    const two = [
      requested(),
      codeSent(),
      submitted('c1'),
      rejected('c1', 1),
      submitted('c2'),
      rejected('c2', 2),
      submitted('c3'),
    ];
    const state = spec
      .given(two)
      .when(outcome('c3', 'wrong_code'))
      .then([
        rejected('c3', 3),
        {
          type: 'VerificationFailed',
          data: { attemptId: ATTEMPT, reason: 'too_many_wrong_codes', message: '3 wrong codes.', at: at(41) },
        },
      ]);
    expect(phaseOf(state)).toBe('failed');
    expect(state.context.requests).toEqual([]);
  });

  it("fails on the vendor's 410 (start again), and asks again for a code lost to a restart", () => {
    spec
      .given([requested(), codeSent(), submitted('c1')])
      .when(outcome('c1', 'start_again'))
      .then([
        {
          type: 'VerificationFailed',
          data: {
            attemptId: ATTEMPT,
            reason: 'start_again',
            message: 'The communications service ended this verification (expired, or too many tries).',
            at: at(41),
          },
        },
      ]);
    const state = spec
      .given([requested(), codeSent(), submitted('c1')])
      .when(outcome('c1', 'code_lost'))
      .then([{ type: 'VerificationCodeLost', data: { attemptId: ATTEMPT, requestId: 'c1', at: at(41) } }]);
    expect(phaseOf(state)).toBe('codeSent');
  });

  it('verifies; a change of number also texts the old number', () => {
    const state = spec
      .given([requested(), codeSent(), submitted('c1')])
      .when(outcome('c1', 'verified'))
      .then([verifiedFact('c1')]);
    expect(state.context.verified?.masked).toBe(MASKED);

    const oldVerified: VerificationEvent[] = [
      {
        type: 'VerificationRequested',
        data: {
          ...(requested('00000000-0000-4000-8000-0000000000aa').data as object),
          number: OLD,
          masked: OLD_MASKED,
          numberKey: OLD_KEY,
        } as never,
      },
    ];
    const first = oldVerified[0]!;
    const history: VerificationEvent[] = [
      first,
      {
        type: 'VerificationCodeSent',
        data: {
          attemptId: '00000000-0000-4000-8000-0000000000aa',
          requestId: '00000000-0000-4000-8000-0000000000aa',
          vendorRequestId: 'v0',
          at: at(1),
        },
      },
      {
        type: 'VerificationCodeSubmitted',
        data: {
          attemptId: '00000000-0000-4000-8000-0000000000aa',
          requestId: 'c0',
          sealedCode: 'vault:v1:c0:x',
          at: at(2),
        },
      },
      {
        type: 'VerificationVerified',
        data: {
          attemptId: '00000000-0000-4000-8000-0000000000aa',
          requestId: 'c0',
          number: OLD,
          masked: OLD_MASKED,
          numberKey: OLD_KEY,
          previous: null,
          at: at(3),
        },
      },
    ];
    const changed = spec.given(history).when(start(ATTEMPT, 0)).events();
    const previous = { number: OLD, masked: OLD_MASKED };
    expect(changed.events).toEqual([requested(ATTEMPT, 0, previous)]);
    spec
      .given([...history, requested(ATTEMPT, 0, previous), codeSent(), submitted('c1')])
      .when(outcome('c1', 'verified'))
      .then([
        verifiedFact('c1', 41, previous),
        {
          type: 'VerificationOldNumberNoticeRequested',
          data: {
            requestId: `${ATTEMPT}:old`,
            number: OLD,
            masked: OLD_MASKED,
            newMasked: MASKED,
            at: at(41),
          },
        },
      ]);
  });

  it('resends only 30 s after the code, counts it as a start, and not once the call has begun', () => {
    const resend = (seconds: number): VerificationCommand => ({
      type: 'ResendVerificationCode',
      data: { slackUserId: ANA, attemptId: ATTEMPT, orgStarts: 0, orgLimit: 50 },
      metadata: meta(`r${seconds}`, seconds),
    });
    spec
      .given([requested(), codeSent(1)])
      .when(resend(20))
      .then({ code: 'SB_ILLEGAL_STATE', details: { reason: 'too_early' } });
    const state = spec
      .given([requested(), codeSent(1)])
      .when(resend(40))
      .then([
        { type: 'VerificationResendRequested', data: { attemptId: ATTEMPT, requestId: 'r40', at: at(40) } },
      ]);
    expect(state.context.starts).toHaveLength(2);
    spec
      .given([
        requested(),
        codeSent(1),
        { type: 'VerificationMovedToVoice', data: { attemptId: ATTEMPT, requestId: null, at: at(30) } },
      ])
      .when(resend(40))
      .then({ code: 'SB_ILLEGAL_STATE', details: { reason: 'too_late' } });
  });

  it('switches to voice once', () => {
    const voice: VerificationCommand = {
      type: 'SwitchVerificationToVoice',
      data: { slackUserId: ANA, attemptId: ATTEMPT },
      metadata: meta('v1', 10),
    };
    spec
      .given([requested(), codeSent()])
      .when(voice)
      .then([
        { type: 'VerificationVoiceRequested', data: { attemptId: ATTEMPT, requestId: 'v1', at: at(10) } },
      ]);
    spec
      .given([
        requested(),
        codeSent(),
        { type: 'VerificationVoiceRequested', data: { attemptId: ATTEMPT, requestId: 'v1', at: at(10) } },
      ])
      .when({ ...voice, metadata: meta('v2', 11) })
      .then({ code: 'SB_ILLEGAL_STATE', details: { reason: 'already_voice' } });
    spec
      .given([requested()])
      .when(voice)
      .then({ code: 'SB_ILLEGAL_STATE', details: { reason: 'no_code_expected' } });
  });

  it('cancels from 30 s after the code until the call; the vendor may still refuse', () => {
    const cancel = (seconds: number): VerificationCommand => ({
      type: 'CancelVerification',
      data: { slackUserId: ANA },
      metadata: meta(`x${seconds}`, seconds),
    });
    spec
      .given([])
      .when(cancel(5))
      .then({ code: 'SB_ILLEGAL_STATE', details: { reason: 'nothing_to_cancel' } });
    spec
      .given([requested()])
      .when(cancel(5))
      .then({ code: 'SB_ILLEGAL_STATE', details: { reason: 'too_early' } });
    spec
      .given([requested(), codeSent(1)])
      .when(cancel(10))
      .then({ code: 'SB_ILLEGAL_STATE', details: { reason: 'too_early', retryAt: at(31) } });
    spec
      .given([
        requested(),
        codeSent(1),
        { type: 'VerificationMovedToVoice', data: { attemptId: ATTEMPT, requestId: null, at: at(20) } },
      ])
      .when(cancel(40))
      .then({ code: 'SB_ILLEGAL_STATE', details: { reason: 'too_late' } });
    const asked: VerificationEvent = {
      type: 'VerificationCancelRequested',
      data: { attemptId: ATTEMPT, requestId: 'x40', at: at(40) },
    };
    spec
      .given([requested(), codeSent(1)])
      .when(cancel(40))
      .then([asked]);
    const answer = (o: 'cancelled' | 'too_late'): VerificationCommand => ({
      type: 'RecordVerificationCancelOutcome',
      data: { slackUserId: ANA, requestId: 'x40', outcome: o },
      metadata: meta('co', 41, 'system:verification-upstream'),
    });
    expect(
      phaseOf(
        spec
          .given([requested(), codeSent(1), asked])
          .when(answer('cancelled'))
          .then([
            { type: 'VerificationCancelled', data: { attemptId: ATTEMPT, requestId: 'x40', at: at(41) } },
          ]),
      ),
    ).toBe('cancelled');
    spec
      .given([requested(), codeSent(1), asked])
      .when(answer('too_late'))
      .then([
        {
          type: 'VerificationCancelRefused',
          data: { attemptId: ATTEMPT, requestId: 'x40', action: 'cancel', reason: 'too_late', at: at(41) },
        },
      ]);
  });

  it('expires an attempt on its timer only while it runs', () => {
    const expire: VerificationCommand = {
      type: 'ExpireVerification',
      data: { slackUserId: ANA, attemptId: ATTEMPT },
      metadata: meta('e', 600, 'system:scheduler'),
    };
    spec
      .given([requested(), codeSent()])
      .when(expire)
      .then([{ type: 'VerificationExpired', data: { attemptId: ATTEMPT, at: at(600) } }]);
    spec
      .given([requested(), codeSent(), submitted('c1'), verifiedFact('c1')])
      .when(expire)
      .then([]);
  });

  it('a start that failed for good fails the attempt; retries follow the shared rules', () => {
    const failed = (attempt: number, nextAttemptAt: string | null): VerificationCommand => ({
      type: 'RecordVerificationUpstreamCallFailed',
      data: {
        slackUserId: ANA,
        requestId: ATTEMPT,
        action: 'start',
        attempt,
        maxAttempts: 2,
        code: 'SB_UPSTREAM_UNAVAILABLE',
        message: 'down',
        nextAttemptAt,
      },
      metadata: meta(`f${attempt}`, attempt, 'system:verification-upstream'),
    });
    const { events, state } = spec
      .given([requested()])
      .when(failed(1, at(10)))
      .events();
    expect(events.map((e) => e.type)).toEqual(['VerificationUpstreamCallFailed']);
    expect(state.context.requests[0]).toMatchObject({ failedAttempts: 1, nextAttemptAt: at(10) });
    const final = spec.given([requested()]).when(failed(1, null)).events();
    expect(final.events.map((e) => e.type)).toEqual(['VerificationUpstreamCallFailed', 'VerificationFailed']);
    expect(phaseOf(final.state)).toBe('failed');
  });

  it('records vendor webhooks of its own attempt only, once', () => {
    const hook = (
      status: string,
      kind: 'summary' | 'event' = 'summary',
      channel: string | null = null,
      clientRef = clientRefFor(ANA, ATTEMPT),
    ): VerificationCommand => ({
      type: 'RecordVerificationWebhook',
      data: { slackUserId: ANA, clientRef, vendorRequestId: 'vreq-1', kind, status, channel },
      metadata: meta(`w-${status}-${kind}`, 50, 'vonage:webhook'),
    });
    spec
      .given([requested(), codeSent()])
      .when(hook('expired'))
      .then([{ type: 'VerificationExpired', data: { attemptId: ATTEMPT, at: at(50) } }]);
    spec
      .given([requested(), codeSent()])
      .when(hook('completed', 'event', 'voice'))
      .then([
        { type: 'VerificationMovedToVoice', data: { attemptId: ATTEMPT, requestId: null, at: at(50) } },
      ]);
    spec
      .given([requested(), codeSent()])
      .when(hook('expired', 'summary', null, 'U0ANAzdeadbeef'))
      .then([]);
    spec
      .given([
        requested(),
        codeSent(),
        { type: 'VerificationExpired', data: { attemptId: ATTEMPT, at: at(49) } },
      ])
      .when(hook('expired'))
      .then([]);
  });

  it('tests the verified number only', () => {
    const test: VerificationCommand = {
      type: 'TestVerifiedPhone',
      data: { slackUserId: ANA },
      metadata: meta('t1', 100),
    };
    spec
      .given([])
      .when(test)
      .then({ code: 'SB_ILLEGAL_STATE', details: { reason: 'not_verified' } });
    spec
      .given([requested(), codeSent(), submitted('c1'), verifiedFact('c1')])
      .when(test)
      .then([
        {
          type: 'VerificationTestRequested',
          data: { requestId: 't1', number: NUMBER, masked: MASKED, at: at(100) },
        },
      ]);
  });

  it('forgets the verified number (a leaver): once; verifying again after it is no change of number', () => {
    const forget: VerificationCommand = {
      type: 'ForgetVerifiedPhone',
      data: { slackUserId: ANA, reason: 'left' },
      metadata: meta('forget-1', 200, 'system:pager'),
    };
    const history = [requested(), codeSent(), submitted('c1'), verifiedFact('c1')];
    const forgotten: VerificationEvent = {
      type: 'VerificationPhoneForgotten',
      data: { reason: 'left', at: at(200) },
    };
    const state = spec.given(history).when(forget).then([forgotten]);
    expect(state.context.verified).toBeNull();
    spec
      .given([...history, forgotten])
      .when(forget)
      .then([]);
    spec.given([]).when(forget).then([]);
    // A new verification afterwards names no previous number (nothing to tell by SMS).
    const { events } = spec
      .given([...history, forgotten])
      .when(start('again-1', 300, { numberKey: OLD_KEY }))
      .events();
    expect(events[0]).toMatchObject({ type: 'VerificationRequested', data: { previous: null } });
  });

  it('removes their own verified number (/verify remove, issue 18): forgotten at once; refused when there is none, or for someone else', () => {
    const remove = (commandId: string, actor = ANA): VerificationCommand => ({
      type: 'RemoveVerifiedPhone',
      data: { slackUserId: ANA },
      metadata: meta(commandId, 200, actor),
    });
    const history = [requested(), codeSent(), submitted('c1'), verifiedFact('c1')];
    const removed: VerificationEvent = {
      type: 'VerificationPhoneForgotten',
      data: { reason: 'removed', at: at(200) },
    };
    const state = spec.given(history).when(remove('rm-1')).then([removed]);
    expect(state.context.verified).toBeNull();
    spec
      .given([...history, removed])
      .when(remove('rm-2'))
      .then({ code: 'SB_ILLEGAL_STATE', details: { reason: 'not_verified' } });
    spec
      .given([])
      .when(remove('rm-3'))
      .then({ code: 'SB_ILLEGAL_STATE', details: { reason: 'not_verified' } });
    spec
      .given(history)
      .when(remove('rm-4', 'U0BEN'))
      .then({ code: 'SB_ILLEGAL_STATE', details: { reason: 'not_yours' } });
  });
});
