import { pagerDecider } from '../../../machines/verification/paging/decider.ts';
import type { PagerEventOf } from '../../../machines/verification/paging/events.ts';
import { parsePagerEvent } from '../../../machines/verification/paging/events.ts';
import { PAGER_STREAM_PREFIX, pageCallTimerId } from '../../../machines/verification/paging/streams.ts';
import { foldHistory } from '../../application/fold.ts';
import { asError, hasCode } from '../../core/errors.ts';
import type { EventStore } from '../../eventStore/eventStore.ts';
import type { Dispatch } from '../../processors/dispatchCommand.ts';
import { dispatchCommand } from '../../processors/dispatchCommand.ts';
import { errorCodeOf, errorMessageOf, isPermanentError } from '../../processors/retryPolicy.ts';
import type { Processor, ProcessorContext } from '../../processors/runner.ts';
import { cancelTimer, scheduleTimer } from '../../processors/scheduler.ts';
import type { NccoAction, VonageClient } from '../../upstream/vonageContract.ts';
import { PAGE_FAILURE_CODES, pagerCommand } from './pager.ts';

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
}>;

/**
 * Why a page stops that means nobody needs the phone to ring any more (see
 * src/incidents/paging.reactor.ts), or must not (`left`: the person left, pager.forget).
 */
const HANG_UP_REASONS: ReadonlySet<string> = new Set(['acknowledged', 'resolved', 'left']);

export const readPagerState = async (store: EventStore, streamId: string) =>
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

/**
 * `paging-sms` and `paging-calls`: send what the pager recorded.
 *
 * - `PageRequested`: the call timer is made sure of first (a durable timer, `page-call-<pageId>`,
 *   due at `callDueAt`), then the SMS is sent with `client_ref` = the page id (the vendor's
 *   idempotency key and how its receipts find the page) and `RecordPageSmsSent` recorded. A page
 *   stopped before its SMS went out sends nothing. A refused SMS (bad number, out of credit) is
 *   recorded (paging-receipts puts it on the incident's timeline); a transient failure is retried by
 *   the runner.
 * - `PageCallRequested` (the timer fired and the page was still on): the call is created with an
 *   NCCO that reads the incident and asks for a key, and `RecordPageCallPlaced` recorded. Calls
 *   have no idempotency key: a redelivery finds the call recorded and does not call again; the
 *   window between the vendor creating the call and the record is the one place a crash can call
 *   twice.
 * - `PageStopped`: the call timer is cancelled.
 *
 * Two processors share this code (`which`): `paging-sms` (PageRequested) and `paging-calls`
 * (PageCallRequested, PageStopped), so SMS pages never wait behind calls queued for the call
 * creation budget (3 a second) in a storm.
 */
/** What a page to a number that can no longer be read (forgotten, or its key not openable) records. */
const UNREADABLE = {
  code: PAGE_FAILURE_CODES.unreadable,
  message: 'the number can no longer be read: it must be verified again',
} as const;

/**
 * The failure to record when an attempt failed on the processor's last attempt (issue 18: a page is
 * never parked): transient failures recorded as given up, anything else as refused.
 */
const lastAttemptFailure = (error: unknown, attempts: number) =>
  isPermanentError(error)
    ? { code: errorCodeOf(error).slice(0, 60), message: errorMessageOf(error, 300) }
    : {
        code: PAGE_FAILURE_CODES.gaveUp,
        message: `gave up after ${attempts} attempts: ${errorMessageOf(error, 200)}`,
      };

export const createPagingDeliveryReactor = (deps: PagingDeliveryDeps, which: 'sms' | 'calls'): Processor => {
  /** Digits as recorded before numbers were sealed are used as they are. */
  const phoneOf = (stored: string): Promise<string | null> =>
    /^[0-9]+$/.test(stored) ? Promise.resolve(stored) : deps.openPhone(stored);
  const sendSms = async (
    e: PagerEventOf<'PageRequested'>['data'],
    slackUserId: string,
    streamId: string,
    ctx: ProcessorContext,
  ): Promise<void> => {
    const { store, now } = ctx;
    if (e.callDueAt !== null) {
      await scheduleTimer(store, {
        timerId: pageCallTimerId(e.pageId),
        dueAt: e.callDueAt,
        command: { type: 'PlacePageCall', data: { slackUserId, pageId: e.pageId } },
        now: now(),
      });
    }
    const state = await readPagerState(store, streamId);
    const page = state.pages[e.pageId];
    if (page?.status !== 'requested' || page.messageUuid !== null || page.smsFailed) return;
    const to = await phoneOf(e.phone);
    if (to === null) {
      await deps.dispatch()(
        pagerCommand(
          'RecordPageSmsFailed',
          { slackUserId, pageId: e.pageId, ...UNREADABLE },
          e.pageId,
          now(),
        ),
      );
      return;
    }
    try {
      const sent = await deps.client.sendSms({
        to,
        from: deps.from,
        text: e.text,
        clientRef: e.pageId,
      });
      await deps.dispatch()(
        pagerCommand(
          'RecordPageSmsSent',
          { slackUserId, pageId: e.pageId, messageUuid: sent.messageUuid },
          e.pageId,
          now(),
        ),
      );
    } catch (error) {
      if (hasCode(error, 'SB_STORE_UNAVAILABLE')) throw error;
      // Transient (the service down, rate limited): the runner tries again, and on its last attempt
      // the page is recorded as given up instead of being parked, so the next person is paged.
      if (!isPermanentError(error) && ctx.attempt < ctx.maxAttempts) throw error;
      if (!isPermanentError(error)) {
        ctx.logger.warn({ err: asError(error), pageId: e.pageId, attempt: ctx.attempt }, 'SMS page given up');
      }
      await deps.dispatch()(
        pagerCommand(
          'RecordPageSmsFailed',
          { slackUserId, pageId: e.pageId, ...lastAttemptFailure(error, ctx.attempt) },
          e.pageId,
          now(),
        ),
      );
    }
  };

  return {
    id: which === 'sms' ? 'paging-sms' : 'paging-calls',
    filter: {
      streamPrefixes: [PAGER_STREAM_PREFIX],
      eventTypes: which === 'sms' ? ['PageRequested'] : ['PageCallRequested', 'PageStopped'],
    },
    async handle(recorded, ctx) {
      const slackUserId = recorded.streamId.slice(PAGER_STREAM_PREFIX.length);
      const event = parsePagerEvent(recorded);
      if (event.type === 'PageRequested') {
        try {
          await sendSms(event.data, slackUserId, recorded.streamId, ctx);
        } catch (error) {
          // Anything else that fails for good (a timer, a record): the page is said to have failed,
          // so the incident pages someone else, rather than parked where only operators look.
          if (hasCode(error, 'SB_STORE_UNAVAILABLE')) throw error;
          if (!isPermanentError(error) && ctx.attempt < ctx.maxAttempts) throw error;
          const saved = await dispatchCommand(
            deps.dispatch(),
            pagerCommand(
              'RecordPageSmsFailed',
              { slackUserId, pageId: event.data.pageId, ...lastAttemptFailure(error, ctx.attempt) },
              event.data.pageId,
              ctx.now(),
            ),
          );
          if (saved.outcome === 'rejected') throw error;
          ctx.logger.error({ err: asError(error), pageId: event.data.pageId }, 'SMS page failed');
        }
        return;
      }
      if (event.type === 'PageStopped') {
        await cancelTimer(ctx.store, pageCallTimerId(event.data.pageId), {
          now: ctx.now(),
          reason: event.data.reason,
        });
        // Acknowledged or resolved elsewhere while the call rings: end it (not when the person
        // answered in this call: its NCCO is still saying what was recorded).
        if (HANG_UP_REASONS.has(event.data.reason) && deps.client.hangUpCall) {
          const page = (await readPagerState(ctx.store, recorded.streamId)).pages[event.data.pageId];
          if (page?.callUuid) {
            await deps.client.hangUpCall(page.callUuid).catch((error: unknown) => {
              ctx.logger.info(
                { err: asError(error), pageId: page.pageId },
                'page call not hung up (ended already?)',
              );
            });
          }
        }
        return;
      }
      if (event.type !== 'PageCallRequested') return;
      const history = await ctx.store.readStream(recorded.streamId);
      const state = foldHistory(pagerDecider, history);
      const page = state.pages[event.data.pageId];
      if (page?.status !== 'requested' || page.callUuid !== null || page.callFailed || !page.phone) {
        return;
      }
      const requested = history
        .filter((m) => m.kind === 'event' && m.type === 'PageRequested' && m.data.pageId === page.pageId)
        .map((m) => parsePagerEvent(m))[0] as PagerEventOf<'PageRequested'> | undefined;
      const spoken = requested?.data.spokenText ?? page.label;
      const to = await phoneOf(page.phone);
      if (to === null) {
        await deps.dispatch()(
          pagerCommand(
            'RecordPageCallFailed',
            { slackUserId, pageId: page.pageId, ...UNREADABLE },
            page.pageId,
            ctx.now(),
          ),
        );
        return;
      }
      try {
        const call = await deps.client.createCall({
          to,
          from: deps.from,
          ncco: pageCallNcco(spoken, deps.voiceEventUrl),
          ...(deps.voiceEventUrl ? { eventUrl: deps.voiceEventUrl } : {}),
          ringingSeconds: deps.ringingSeconds ?? 45,
        });
        await dispatchCommand(
          deps.dispatch(),
          pagerCommand(
            'RecordPageCallPlaced',
            { slackUserId, pageId: page.pageId, callUuid: call.uuid },
            page.pageId,
            ctx.now(),
          ),
        );
      } catch (error) {
        if (hasCode(error, 'SB_STORE_UNAVAILABLE')) throw error;
        // As for the SMS: retried by the runner, recorded as given up on its last attempt, never parked.
        if (!isPermanentError(error) && ctx.attempt < ctx.maxAttempts) throw error;
        ctx.logger.warn(
          { err: asError(error), pageId: page.pageId, attempt: ctx.attempt },
          isPermanentError(error) ? 'page call refused' : 'page call given up',
        );
        await deps.dispatch()(
          pagerCommand(
            'RecordPageCallFailed',
            { slackUserId, pageId: page.pageId, ...lastAttemptFailure(error, ctx.attempt) },
            page.pageId,
            ctx.now(),
          ),
        );
      }
    },
  };
};
