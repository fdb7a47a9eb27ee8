import {
  HANG_UP_REASONS,
  type PageRequest,
  type PagerState,
  pageRequestId,
  pagerDecider,
  pendingPageRequest,
} from '../../../machines/verification/paging/decider.ts';
import { type PageAction, parsePagerEvent } from '../../../machines/verification/paging/events.ts';
import { PAGER_STREAM_PREFIX, pageCallTimerId } from '../../../machines/verification/paging/streams.ts';
import { foldHistory } from '../../application/fold.ts';
import { asError, ChatOpsError, hasCode, isChatOpsError } from '../../core/errors.ts';
import type { JsonObject } from '../../core/messages.ts';
import type { EventStore, RecordedEvent } from '../../eventStore/eventStore.ts';
import type { Dispatch } from '../../processors/dispatchCommand.ts';
import { dispatchCommand } from '../../processors/dispatchCommand.ts';
import {
  errorCodeOf,
  errorMessageOf,
  isPermanentError,
  type RetryRules,
} from '../../processors/retryPolicy.ts';
import type { Processor, ProcessorContext } from '../../processors/runner.ts';
import { cancelTimer, scheduleTimer } from '../../processors/scheduler.ts';
import {
  type OutcomeCommand,
  runUpstreamCall,
  type UpstreamCallSpec,
  type UpstreamCallTarget,
} from '../../processors/upstreamCall.ts';
import { formatInZone, spokenInZone } from '../../slack/time.ts';
import type { NccoAction, VonageClient } from '../../upstream/vonageContract.ts';
import { PAGE_FAILURE_CODES, PAGER_ACTOR, pagerCommand } from './pager.ts';

/**
 * How the page's calls to the phone service are retried (durable, on the scheduler), by operation
 * and kind of failure (src/processors/retryPolicy.ts):
 * - the SMS and the call: 5 attempts, 0.5 s doubling to 4 s (about 8 s in all, with the
 *   scheduler's tick), so a page the service cannot take is given up within seconds and the next
 *   person is paged; a rate limit waits for the reset the service named; a refusal (a bad number,
 *   out of credit) and a refused credential are final at once;
 * - hanging up: 3 attempts (a call rings 45 s: later is no use).
 */
export const PAGE_RETRY: RetryRules<PageAction> = {
  base: { maxAttempts: 5, baseMs: 500, maxMs: 4_000, jitter: 0.2 },
  byAction: { hang_up: { maxAttempts: 3 } },
};

export type PagingDeliveryDeps = Readonly<{
  /** `hangUpCall` (the real client has it): a call still ringing when someone else acknowledged is ended. */
  client: Pick<VonageClient, 'sendSms' | 'createCall'> & { hangUpCall?(uuid: string): Promise<void> };
  /** Our sending number (E.164 digits). */
  from: string;
  /**
   * Where the call's events and keys pressed go (`…/webhooks/vonage/voice`); undefined: the
   * application's event URL (set in the vendor's dashboard) is used.
   */
  voiceEventUrl: string | undefined;
  dispatch: () => Dispatch;
  /** The digits of a recorded number (sealed under the person's key); null once they are forgotten. */
  openPhone(stored: string): Promise<string | null>;
  /** Seconds a page call rings before it counts as unanswered. */
  ringingSeconds?: number;
  /** Durable retries of the page's calls (default PAGE_RETRY). */
  retry?: RetryRules<PageAction>;
  /** The person's Slack time zone (cached): the page's `{since}` is said in it (issue 19). */
  zoneOf?(slackUserId: string): Promise<string>;
}>;

/** Where a page's text says when what it is about started: filled in at send time, in the reader's zone. */
export const PAGE_SINCE = '{since}';

/**
 * The page's words with `{since}` said in the person's zone, named (`today, 21:58 Asia/Singapore`;
 * for the call `today at 21:58 Singapore time`): formatted here, at the surface, never recorded.
 */
export const pageWords = (
  text: string,
  since: string | null,
  zone: string,
  now: Date,
  spoken: boolean,
): string => {
  if (!text.includes(PAGE_SINCE)) return text;
  const when = since
    ? spoken
      ? spokenInZone(since, zone, now)
      : formatInZone(since, zone, { now })
    : 'at a time not known';
  return text.replaceAll(PAGE_SINCE, when);
};

export const readPagerState = async (store: EventStore, streamId: string): Promise<PagerState> =>
  foldHistory(pagerDecider, await store.readStream(streamId));

/** The call: the incident read out, then one key (4 acknowledges, 6 resolves). */
export const pageCallNcco = (spokenText: string, eventUrl: string | undefined): NccoAction[] => [
  {
    action: 'talk',
    text: `${spokenText}. Press 4 to acknowledge, or 6 to resolve.`,
    bargeIn: true,
    loop: 2,
  },
  {
    action: 'input',
    type: ['dtmf'],
    dtmf: { maxDigits: 1, timeOut: 10 },
    ...(eventUrl ? { eventUrl: [eventUrl], eventMethod: 'POST' as const } : {}),
  },
];

/** What a page to a number that can no longer be read (forgotten, or its key not openable) records. */
const UNREADABLE = {
  code: PAGE_FAILURE_CODES.unreadable,
  message: 'the number can no longer be read: it must be verified again',
} as const;

/** The number could not be opened: nothing is sent, and no retry opens it (a permanent refusal). */
const unreadable = () =>
  new ChatOpsError('SB_VALIDATION', UNREADABLE.message, { details: { reason: 'phone_unreadable' } });

/**
 * What a final failure of the SMS or the call records (issue 18: a page is never parked): a number
 * that could not be opened as such; a refusal (a bad number, out of credit, a refused credential)
 * with its code; a failure that outlasted the attempts as given up.
 */
const finalFailure = (error: unknown, attempts: number): Readonly<{ code: string; message: string }> => {
  if (isChatOpsError(error) && error.details.reason === 'phone_unreadable') return UNREADABLE;
  return isPermanentError(error)
    ? { code: errorCodeOf(error).slice(0, 60), message: errorMessageOf(error, 299) }
    : {
        code: PAGE_FAILURE_CODES.gaveUp,
        message: `gave up after ${attempts} attempts: ${errorMessageOf(error, 200)}`,
      };
};

type Target = UpstreamCallTarget & Readonly<{ slackUserId: string; pageId: string }>;

/**
 * `paging-sms` and `paging-calls`: make the calls the pager recorded, each on the durable
 * upstream-call mechanism (src/processors/upstreamCall.ts): the page's stream is folded right
 * before each attempt and a call is made only while the page still wants it; a failed attempt is
 * recorded (`PageUpstreamCallFailed`) with its retry, a durable timer (`RetryPageUpstreamCall`),
 * on PAGE_RETRY; the outcome is recorded once.
 *
 * - `PageRequested`: the call timer is made sure of first (`page-call-<pageId>`, due at
 *   `callDueAt`), then the SMS is sent with `client_ref` = the page id (the vendor's idempotency
 *   key and how its receipts find the page) → `RecordPageSmsSent`. A page stopped before its SMS
 *   went out sends nothing, also on a retry.
 * - `PageCallRequested` (the timer fired and the page was still on): the call is created with an
 *   NCCO that reads the incident and asks for a key → `RecordPageCallPlaced`. Calls have no
 *   idempotency key: a redelivery finds the call recorded and does not call again; the window
 *   between the vendor creating the call and the record is the one place a crash can call twice.
 * - `PageStopped`: the call timer is cancelled; a call placed for a page stopped because someone
 *   acknowledged or resolved elsewhere, or the person left, is hung up → `RecordPageCallHungUp`
 *   (a call already over counts as hung up).
 *
 * Never parked (issue 18): a final failure of the SMS or the call (a refusal at once, a transient
 * failure after its last attempt: `gave_up`, a number that cannot be opened: `phone_unreadable`)
 * is recorded as `PageSmsFailed` / `PageCallFailed`, and paging-receipts tells the incident, which
 * pages the next person. Anything else that fails for good here (a timer, a record) is recorded the
 * same way on the runner's last attempt; a hang-up that cannot be recorded is logged and dropped.
 *
 * - `NoticeRequested` (a plain notice, `pager.notify`): its SMS only, as a page's (client_ref =
 *   the notice id); no call. Its receipts and outcome name no incident (the pager index does not
 *   hold notices), so paging-receipts ignores them.
 *
 * Two processors share this code (`which`): `paging-sms` (PageRequested, and its SMS retries) and
 * `paging-calls` (PageCallRequested, PageStopped, and their retries), so SMS pages never wait behind
 * calls queued for the call creation budget (3 a second) in a storm.
 */
export const createPagingDeliveryReactor = (deps: PagingDeliveryDeps, which: 'sms' | 'calls'): Processor => {
  const processorId = which === 'sms' ? 'paging-sms' : 'paging-calls';
  const mine: ReadonlySet<PageAction> = new Set(which === 'sms' ? ['sms'] : ['call', 'hang_up']);
  const hangUpCall = deps.client.hangUpCall?.bind(deps.client);

  /** Digits as recorded before numbers were sealed are used as they are. */
  const phoneOf = async (stored: string | null): Promise<string> => {
    if (stored === null) throw unreadable();
    const digits = /^[0-9]+$/.test(stored) ? stored : await deps.openPhone(stored);
    if (digits === null) throw unreadable();
    return digits;
  };
  const json = (d: object): JsonObject => d as JsonObject;
  const byPage = (target: Target) => ({ slackUserId: target.slackUserId, pageId: target.pageId });

  const spec: UpstreamCallSpec<PagerState, PageRequest, Target, OutcomeCommand> = {
    processorId,
    actor: PAGER_ACTOR,
    policy: deps.retry ?? PAGE_RETRY,
    messageMaxLength: 299,
    readState: readPagerState,
    pendingRequest: pendingPageRequest,
    async call({ request, state, target, ctx }) {
      const page = state.pages[request.pageId];
      if (!page) throw new ChatOpsError('SB_ILLEGAL_STATE', `no page ${request.pageId}`);
      const words = async (text: string, spoken: boolean) =>
        text.includes(PAGE_SINCE)
          ? pageWords(text, page.since, (await deps.zoneOf?.(target.slackUserId)) ?? 'UTC', ctx.now(), spoken)
          : text;
      switch (request.action) {
        case 'sms': {
          const sent = await deps.client.sendSms({
            to: await phoneOf(page.phone),
            from: deps.from,
            text: await words(page.text ?? page.label, false),
            clientRef: page.pageId,
          });
          return {
            type: 'RecordPageSmsSent',
            data: json({ ...byPage(target), messageUuid: sent.messageUuid }),
          };
        }
        case 'call': {
          const call = await deps.client.createCall({
            to: await phoneOf(page.phone),
            from: deps.from,
            ncco: pageCallNcco(await words(page.spokenText ?? page.label, true), deps.voiceEventUrl),
            ...(deps.voiceEventUrl ? { eventUrl: deps.voiceEventUrl } : {}),
            ringingSeconds: deps.ringingSeconds ?? 45,
          });
          return { type: 'RecordPageCallPlaced', data: json({ ...byPage(target), callUuid: call.uuid }) };
        }
        case 'hang_up': {
          if (!hangUpCall || page.callUuid === null) {
            throw new ChatOpsError('SB_ILLEGAL_STATE', 'no call to hang up');
          }
          await hangUpCall(page.callUuid);
          return { type: 'RecordPageCallHungUp', data: json(byPage(target)) };
        }
      }
    },
    succeeded: ({ result }) => result,
    failed: ({ request, failure, target }) => {
      const words =
        failure.final && request.action !== 'hang_up'
          ? finalFailure(failure.error, failure.attempt)
          : { code: failure.code.slice(0, 60), message: failure.message };
      return {
        type: 'RecordPageUpstreamCallFailed',
        data: json({
          ...byPage(target),
          requestId: request.requestId,
          action: request.action,
          attempt: failure.attempt,
          maxAttempts: failure.maxAttempts,
          ...words,
          nextAttemptAt: failure.nextAttemptAt,
        }),
      };
    },
    retry: ({ request, attempt, target }) => ({
      type: 'RetryPageUpstreamCall',
      data: json({ ...byPage(target), requestId: request.requestId, action: request.action, attempt }),
    }),
    retryTimerId: (request, failedAttempt) => `page-retry-${request.requestId}-${failedAttempt}`,
    record: (command) => deps.dispatch()(command),
  };

  /**
   * Runs one attempt; on the runner's last attempt, a failure the mechanism could not record (a
   * timer, a record) is recorded as a failed send, so the incident pages someone else rather than
   * the event being parked where only operators look.
   */
  const attempt = async (event: RecordedEvent, ctx: ProcessorContext, target: Target, action: PageAction) => {
    try {
      await runUpstreamCall(spec, ctx, event, target);
    } catch (error) {
      if (hasCode(error, 'SB_STORE_UNAVAILABLE') || ctx.signal.aborted) throw error;
      if (!isPermanentError(error) && ctx.attempt < ctx.maxAttempts) throw error;
      if (action === 'hang_up') {
        ctx.logger.warn({ err: asError(error), pageId: target.pageId }, 'page call hang-up not recorded');
        return;
      }
      const saved = await dispatchCommand(
        deps.dispatch(),
        pagerCommand(
          action === 'sms' ? 'RecordPageSmsFailed' : 'RecordPageCallFailed',
          { ...byPage(target), ...finalFailure(error, ctx.attempt) },
          target.pageId,
          ctx.now(),
        ),
      );
      if (saved.outcome === 'rejected') throw error;
      ctx.logger.error({ err: asError(error), pageId: target.pageId, action }, 'page send failed');
    }
  };

  return {
    id: processorId,
    filter: {
      streamPrefixes: [PAGER_STREAM_PREFIX],
      eventTypes:
        which === 'sms'
          ? ['PageRequested', 'NoticeRequested', 'PageUpstreamCallRetried']
          : ['PageCallRequested', 'PageStopped', 'PageUpstreamCallRetried'],
    },
    async handle(recorded, ctx) {
      const slackUserId = recorded.streamId.slice(PAGER_STREAM_PREFIX.length);
      const event = parsePagerEvent(recorded);
      const target = (pageId: string, action: PageAction, n = 1): Target => ({
        streamId: recorded.streamId,
        requestId: pageRequestId(pageId, action),
        attempt: n,
        slackUserId,
        pageId,
      });
      switch (event.type) {
        case 'PageRequested': {
          const { pageId, callDueAt } = event.data;
          if (callDueAt !== null) {
            await scheduleTimer(ctx.store, {
              timerId: pageCallTimerId(pageId),
              dueAt: callDueAt,
              command: { type: 'PlacePageCall', data: { slackUserId, pageId } },
              now: ctx.now(),
            });
          }
          await attempt(recorded, ctx, target(pageId, 'sms'), 'sms');
          return;
        }
        case 'NoticeRequested':
          // A plain notice: its SMS only (client_ref = the notice id), on the same retry rules.
          await attempt(recorded, ctx, target(event.data.pageId, 'sms'), 'sms');
          return;
        case 'PageCallRequested':
          await attempt(recorded, ctx, target(event.data.pageId, 'call'), 'call');
          return;
        case 'PageStopped':
          await cancelTimer(ctx.store, pageCallTimerId(event.data.pageId), {
            now: ctx.now(),
            reason: event.data.reason,
          });
          // Acknowledged or resolved elsewhere while the call rings: end it (not when the person
          // answered in this call: its NCCO is still saying what was recorded).
          if (HANG_UP_REASONS.has(event.data.reason) && hangUpCall) {
            await attempt(recorded, ctx, target(event.data.pageId, 'hang_up'), 'hang_up');
          }
          return;
        case 'PageUpstreamCallRetried': {
          const { pageId, action, attempt: n } = event.data;
          if (!mine.has(action) || (action === 'hang_up' && !hangUpCall)) return;
          await attempt(recorded, ctx, target(pageId, action, n), action);
          return;
        }
        default:
          return;
      }
    },
  };
};
