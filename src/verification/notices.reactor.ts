import {
  REMOVED_BY_THEM,
  VERIFICATION_LIMITS,
  type VerificationState,
  verificationDecider,
} from '../../machines/verification/decider.ts';
import type { VerificationEvent } from '../../machines/verification/events.ts';
import { slackUserOfStream, VERIFICATION_STREAM_PREFIX } from '../../machines/verification/streams.ts';
import { storedEvent } from '../application/fold.ts';
import type { EventStore, RecordedEvent } from '../eventStore/eventStore.ts';
import type { Pager } from '../lifecycles/ports.ts';
import type { PeopleDirectory } from '../people/directory.ts';
import type { Processor, ProcessorContext } from '../processors/runner.ts';
import { scheduleTimer } from '../processors/scheduler.ts';
import type { SlackMessage } from '../slack/blocks/format.ts';
import { noticeLedger, type SlackOutbox } from '../slack/outbox.ts';
import {
  cancelledMessage,
  cancelRefusedMessage,
  codeLostMessage,
  codeSentMessage,
  expiredMessage,
  failedMessage,
  movedToVoiceMessage,
  testSentMessage,
  upstreamFailedMessage,
  verifiedMessage,
  wrongCodeMessage,
} from './blocks/messages.ts';
import type { PhoneSealer } from './phone.ts';

/**
 * `verification-notices`: the person's DMs about their verification, once each, through the
 * outbox (recorded as `VerificationNoticeSent` in `verificationNotice-<uuid>`, checked before
 * sending, looked for in the DM's history after a crash): the code is on
 * its way (with "Enter code", "Resend", "Call me instead"), a call is coming, a wrong code
 * ("Wrong code, 2 tries left"), the code must be typed again after a restart, verified (and the old
 * number told, after a change), failed, expired, cancelled, a cancel or resend the vendor refused,
 * the test sent, and any call that failed for good ("Switchboard couldn't …: the communications
 * service could not be reached").
 *
 * `verification-timers`: schedules each attempt's expiry (`ExpireVerification` at `expiresAt`) with
 * the durable scheduler. `verification-people`: links a verified number in the people directory
 * (`system: 'phone'`, the number sealed under the person's data key), which the pager reads.
 */
export const VERIFICATION_NOTICES_PROCESSOR = 'verification-notices';
export const VERIFICATION_TIMERS_PROCESSOR = 'verification-timers';
export const VERIFICATION_PEOPLE_PROCESSOR = 'verification-people';
export const VERIFICATION_REMOVALS_PROCESSOR = 'verification-removals';
export const VERIFICATION_NOTICE_STREAM_PREFIX = 'verificationNotice-';

/** Where verification notices are recorded (as they always were: `VerificationNoticeSent`, one stream per key). */
export const verificationNoticeLedger = noticeLedger({
  name: 'verification-notices',
  streamPrefix: VERIFICATION_NOTICE_STREAM_PREFIX,
  streamSeed: 'verification-notice',
  eventSeed: 'verification-notice-sent',
  eventType: 'VerificationNoticeSent',
});

const VERB: Readonly<Record<string, string>> = {
  start: 'send your code',
  resend: 'send a new code',
  check: 'check your code',
  cancel: 'cancel the verification',
  next: 'switch to a phone call',
  test: 'send the test SMS and call',
  notify_old: 'text your old number about the change',
};

/** Why the last attempt failed, for people. */
export const verificationFailureText = (code: string, message: string): string => {
  switch (code) {
    case 'SB_UPSTREAM_UNAVAILABLE':
    case 'SB_TIMEOUT':
      return 'the communications service could not be reached. Please try again later.';
    case 'SB_UPSTREAM_RATE_LIMITED':
      return 'the communications service kept asking Switchboard to slow down. Please try again later.';
    case 'SB_UPSTREAM_AUTH':
      return "the communications service refused Switchboard's credentials (an admin needs to check the VONAGE_* settings).";
    default:
      return message.endsWith('.') ? message : `${message}.`;
  }
};

/** The person's state just after `event` (what the event's message should say), or just before it. */
const stateAt = async (
  store: EventStore,
  event: RecordedEvent,
  when: 'after' | 'before' = 'after',
): Promise<VerificationState> => {
  let state = verificationDecider.initialState();
  for (const m of await store.readStream(event.streamId)) {
    if (m.kind !== 'event') continue;
    if (m.id === event.id && when === 'before') break;
    state = verificationDecider.evolve(state, storedEvent(verificationDecider, m));
    if (m.id === event.id) break;
  }
  return state;
};

/**
 * Sends a DM once per key through the outbox (recorded as `VerificationNoticeSent`). Slack
 * refusing it is thrown, so the processor retries it and then parks it, as before.
 */
export const sendNoticeOnce = async (
  outbox: SlackOutbox,
  ctx: ProcessorContext,
  key: string,
  user: string,
  message: SlackMessage,
  since?: Date,
): Promise<void> => {
  const result = await outbox.post(ctx, {
    ledger: verificationNoticeLedger,
    key,
    channel: user,
    message,
    since,
  });
  if (result.outcome === 'refused') throw result.error;
};

export const createVerificationNoticesReactor = (options: Readonly<{ outbox: SlackOutbox }>): Processor => {
  const messageFor = (e: VerificationEvent, state: VerificationState): SlackMessage | null => {
    const attempt = state.context.attempt;
    const masked = attempt?.masked ?? 'your phone';
    const value = attempt ? { attemptId: attempt.attemptId, codeLength: attempt.codeLength } : null;
    switch (e.type) {
      case 'VerificationCodeSent':
        return value && attempt
          ? codeSentMessage(
              masked,
              value,
              new Date(Date.parse(e.data.at) + VERIFICATION_LIMITS.smsStepMs).toISOString(),
              VERIFICATION_LIMITS.smsStepMs / 60_000,
            )
          : null;
      case 'VerificationMovedToVoice':
        return value && attempt ? movedToVoiceMessage(masked, value, attempt.expiresAt) : null;
      case 'VerificationCodeRejected':
        return value && e.data.triesLeft > 0 ? wrongCodeMessage(e.data.triesLeft, value) : null;
      case 'VerificationCodeLost':
        return value ? codeLostMessage(value) : null;
      case 'VerificationVerified':
        return verifiedMessage(e.data.masked, e.data.previous?.masked ?? null);
      case 'VerificationFailed':
        // A start that failed for good is told with its failure's reason (below).
        return e.data.reason === 'not_started' ? null : failedMessage(e.data.reason, e.data.message);
      case 'VerificationExpired':
        return expiredMessage(masked);
      case 'VerificationCancelled':
        return cancelledMessage(masked);
      case 'VerificationCancelRefused':
        return cancelRefusedMessage(e.data.action, e.data.reason, {
          allowedFrom: attempt
            ? new Date(
                Date.parse(attempt.codeSentAt ?? attempt.requestedAt) + VERIFICATION_LIMITS.cancelAfterMs,
              ).toISOString()
            : null,
          expiresAt: attempt?.expiresAt ?? null,
        });
      case 'VerificationTestSent':
        return testSentMessage(
          state.context.verified?.masked ?? 'your number',
          e.data.messageId !== null,
          e.data.callId !== null,
        );
      case 'VerificationUpstreamCallFailed':
        if (!e.data.final) return null;
        if (e.data.action === 'start') {
          return failedMessage('not_started', verificationFailureText(e.data.code, e.data.message));
        }
        return upstreamFailedMessage(
          VERB[e.data.action] ?? 'finish',
          verificationFailureText(e.data.code, e.data.message),
        );
      default:
        return null;
    }
  };

  return {
    id: VERIFICATION_NOTICES_PROCESSOR,
    filter: {
      streamPrefixes: [VERIFICATION_STREAM_PREFIX],
      eventTypes: [
        'VerificationCodeSent',
        'VerificationMovedToVoice',
        'VerificationCodeRejected',
        'VerificationCodeLost',
        'VerificationVerified',
        'VerificationFailed',
        'VerificationExpired',
        'VerificationCancelled',
        'VerificationCancelRefused',
        'VerificationTestSent',
        'VerificationUpstreamCallFailed',
      ],
    },
    async handle(event, ctx) {
      const user = slackUserOfStream(event.streamId);
      if (!user || event.kind !== 'event') return;
      const parsed = storedEvent(verificationDecider, event);
      const message = messageFor(parsed, await stateAt(ctx.store, event));
      if (message) await sendNoticeOnce(options.outbox, ctx, event.id, user, message, event.recordedAt);
    },
  };
};

/**
 * `verification-removals`: `/verify remove` (the person's `VerificationPhoneForgotten`, reason
 * `removed`) forgets the number the way a leaver's is (the pager's `forget`: pages stopped, the
 * phone unlinked, the person's data key deleted, so every sealed copy is unreadable), then tells
 * them in a DM, once. A crash between the two finishes both on redelivery (`forget` is idempotent).
 */
export const createVerificationRemovalsReactor = (
  options: Readonly<{ pager: Pick<Pager, 'forget'>; outbox: SlackOutbox }>,
): Processor => ({
  id: VERIFICATION_REMOVALS_PROCESSOR,
  filter: { streamPrefixes: [VERIFICATION_STREAM_PREFIX], eventTypes: ['VerificationPhoneForgotten'] },
  async handle(event, ctx) {
    const user = slackUserOfStream(event.streamId);
    if (!user || event.kind !== 'event') return;
    const e = storedEvent(verificationDecider, event);
    if (e.type !== 'VerificationPhoneForgotten' || e.data.reason !== REMOVED_BY_THEM) return;
    await options.pager.forget({
      person: { slackUserId: user },
      reason: REMOVED_BY_THEM,
      at: new Date(e.data.at),
    });
    const masked = (await stateAt(ctx.store, event, 'before')).context.verified?.masked ?? null;
    const text =
      `:wastebasket: Switchboard forgot your number${masked ? ` ${masked}` : ''}: it can no longer be read by anyone, ` +
      'and you will not be paged by SMS or call. Use `/verify &lt;your phone number&gt;` to be paged again.';
    await sendNoticeOnce(
      options.outbox,
      ctx,
      `removed:${event.id}`,
      user,
      { text, blocks: [{ type: 'section', text: { type: 'mrkdwn', text } }] },
      event.recordedAt,
    );
  },
});

export const verificationExpiryTimerId = (attemptId: string): string => `verification-expiry-${attemptId}`;

export const createVerificationTimersReactor = (): Processor => ({
  id: VERIFICATION_TIMERS_PROCESSOR,
  filter: { streamPrefixes: [VERIFICATION_STREAM_PREFIX], eventTypes: ['VerificationRequested'] },
  async handle(event, ctx) {
    const user = slackUserOfStream(event.streamId);
    const d = event.data as { attemptId?: unknown; expiresAt?: unknown };
    if (!user || typeof d.attemptId !== 'string' || typeof d.expiresAt !== 'string') return;
    await scheduleTimer(ctx.store, {
      timerId: verificationExpiryTimerId(d.attemptId),
      dueAt: d.expiresAt,
      now: ctx.now(),
      command: {
        type: 'ExpireVerification',
        data: { slackUserId: user, attemptId: d.attemptId },
        metadata: { actor: 'system:verification-timers', causationId: event.id },
      },
    });
  },
});

export const createVerificationPeopleReactor = (
  options: Readonly<{ people: PeopleDirectory; phones: PhoneSealer }>,
): Processor => ({
  id: VERIFICATION_PEOPLE_PROCESSOR,
  filter: { streamPrefixes: [VERIFICATION_STREAM_PREFIX], eventTypes: ['VerificationVerified'] },
  async handle(event, ctx) {
    const user = slackUserOfStream(event.streamId);
    if (!user || event.kind !== 'event') return;
    const e = storedEvent(verificationDecider, event);
    if (e.type !== 'VerificationVerified') return;
    // Only the person's latest verified number is linked (a redelivery of an older fact is not).
    const state = await stateAt(ctx.store, event);
    const latest = (await ctx.store.readStream(event.streamId))
      .filter((m) => m.type === 'VerificationVerified')
      .at(-1);
    if (latest && latest.id !== event.id) return;
    // Linked again when the same number is verified again (a new fact the pager can read: the end
    // of an opt-out), but once per verification: a redelivery finds the link as recent.
    // The link holds the number sealed under the person's data key (never in clear), so
    // forgetting them makes it unreadable. A number sealed the older way is sealed again.
    const number = e.data.number.startsWith('personal:v1:')
      ? e.data.number
      : await options.phones.sealFor(user, options.phones.open(e.data.number));
    const digits = await options.phones.openAny(number);
    if (digits === null) return; // forgotten since
    const current = await options.people.linkOf(user, 'phone');
    const linked = current ? await options.phones.openAny(current.externalId).catch(() => null) : null;
    const same = linked !== null && linked.replace(/\D/g, '') === digits;
    if (current && same && Date.parse(current.at) >= Date.parse(e.data.at)) return;
    await options.people.link(user, {
      system: 'phone',
      externalId: number,
      email: null,
      name: state.context.verified?.masked ?? null,
    });
  },
});
