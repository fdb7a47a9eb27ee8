import { type TimeOffState, timeOffDecider } from '../../machines/timeOff/decider.ts';
import { teammatesOf } from '../../machines/timeOff/directory.ts';
import type { TimeOffEvent } from '../../machines/timeOff/events.ts';
import { requestIdOfStream, TIME_OFF_STREAM_PREFIX } from '../../machines/timeOff/streams.ts';
import { storedEvent } from '../application/fold.ts';
import { ConcurrencyError, isChatOpsError } from '../core/errors.ts';
import { uuidv5 } from '../core/ids.ts';
import type { JsonObject } from '../core/messages.ts';
import type { Logger } from '../logger.ts';
import { abortableSleep } from '../processors/abortableSleep.ts';
import { type Dispatch, dispatchCommand } from '../processors/dispatchCommand.ts';
import { errorCodeOf, isPermanentError, retryAfterMsOf } from '../processors/retryPolicy.ts';
import type { Processor, ProcessorContext } from '../processors/runner.ts';
import type { SlackMessage } from '../slack/blocks/format.ts';
import type { HiBobClient } from '../upstream/hibob.ts';
import { approvalCard, type BalanceAfter, type TeammateOut } from './blocks/approvalCard.ts';
import {
  approvedDm,
  cancelFailedDm,
  cancelledDm,
  confirmedDm,
  deniedDm,
  expiredApproverDm,
  expiredRequesterDm,
  hrFailureWords,
  notShownDm,
  notShownNote,
  reminderDm,
  replacedCard,
  requesterStatusDm,
  submissionFailedDm,
} from './blocks/notices.ts';
import type { TimeOffView } from './blocks/timeOffView.ts';
import type { CardOnCall } from './coverCard.ts';
import type { TimeOffReadModel } from './readModel.projection.ts';

/**
 * `timeoff-notices`: what Switchboard tells people about a time-off request, in DMs.
 *
 * - **The approver's card** on `TimeOffRequested` (and on `TimeOffResubmitted` with `reapproval`):
 *   `approvalCard` with the balance after the request (HR's balance minus its working days; HR
 *   down → "HR could not tell", never a failed card) and who else in the requester's team is out
 *   then (directory + `absences`, HR's entries included). Then `RecordTimeOffApprovalAsked` with
 *   the card (deterministic command id), whose buttons alone decide the request. The balance and
 *   teammates are kept with the card's record, so later redraws show what the approver decided on.
 * - **The requester's status message**: one per request, posted when it is made (to whom, the short
 *   id, Cancel), updated in place at every step.
 * - **New DMs for the steps that deserve a notification** (an update in place notifies nobody):
 *   approved (at once, before HR's lag passes), recorded in HR, denied (with the reason), expired
 *   (both sides), cancelled (by the requester, or in HR), HR refused the submission ("Fix and send
 *   again", `timeoff.resubmit`), HR could not be reached, the cancel failed, and "sent to HR at …
 *   but HR hasn't shown it yet" when the read-back gave up. Reminders go to the approver.
 *
 * In place: on every event the card(s) and the status message are redrawn from the request as
 * folded now (`readModel.view` after `catchUp()`), never from the event alone, so a late event
 * cannot paint an old state; an event that is not the newest of its stream skips the redraw (the
 * newest one redraws everything; every event type of a request stream is delivered here).
 *
 * Once each: every message is keyed (the event id and what it is) and recorded as
 * `TimeOffNoticeSent` in its own stream `timeoffNotice-<uuid>`, checked before sending, as
 * verification does. What remains: a crash after Slack took a post and before it was recorded
 * posts it again on redelivery (a duplicate DM, never a lost one: chat.postMessage has no
 * idempotency key and reading DM history would need `im:history`). Slack failures are thrown, so
 * the processor retries them; a card or status message Slack says is gone is left alone.
 */
export const TIME_OFF_NOTICES_PROCESSOR = 'timeoff-notices';
export const TIME_OFF_NOTICE_STREAM_PREFIX = 'timeoffNotice-';
export const TIME_OFF_NOTICE_SENT = 'TimeOffNoticeSent';
const ACTOR = 'system:timeoff-notices';

/**
 * Codes of a final `submit` failure that mean the submission reached HR but HR never showed it
 * (the request id was never found through the read-after-write lag), as opposed to HR not answering.
 */
export const NOT_SHOWN_CODES: ReadonlySet<string> = new Set(['SB_HR_NOT_VISIBLE']);

/** Waits for Slack's Retry-After within one delivery, and the longest one waited. */
const MAX_RATE_LIMIT_WAITS = 5;
const MAX_RATE_LIMIT_WAIT_MS = 60_000;

/** Slack answers that mean a message is gone for good: nothing to update, never retried. */
const GONE = new Set([
  'message_not_found',
  'channel_not_found',
  'cant_update_message',
  'edit_window_closed',
  'is_archived',
]);

export type TimeOffNoticesSlack = Readonly<{
  /** `channel` a user id: the app's DM with them. */
  postMessage(channel: string, message: SlackMessage): Promise<{ channel: string; ts: string }>;
  updateMessage(channel: string, ts: string, message: SlackMessage): Promise<void>;
}>;

export type TimeOffNoticesOptions = Readonly<{
  slack: TimeOffNoticesSlack;
  dispatch: Dispatch;
  readModel: TimeOffReadModel;
  /** Balance after the request (HR's balance API) for the approval card. */
  client: HiBobClient;
  holidays: readonly string[];
  logger: Logger;
  /** Issue 12: the card's on-call section for a request as folded now (null: incidents off, no section). */
  onCall?: (state: TimeOffState, approverSlackUserId: string) => Promise<CardOnCall | null>;
}>;

/** What is recorded of a sent message (`TimeOffNoticeSent`). */
type SentNotice = Readonly<{
  key: string;
  channel: string;
  ts: string;
  at: string;
  /** The card's extras, kept for redraws. */
  balanceAfter?: BalanceAfter;
  teammatesOut?: readonly TeammateOut[];
}>;

export const timeOffNoticeStreamId = (key: string): string =>
  `${TIME_OFF_NOTICE_STREAM_PREFIX}${uuidv5(`timeoff-notice:${key}`)}`;

const cardKey = (eventId: string) => `card:${eventId}`;
const statusKey = (timeOffId: string) => `status:${timeOffId}`;

/** Events after which the approver's card is (re)posted: a new version of the request to decide. */
const asksForApproval = (e: TimeOffEvent): boolean =>
  e.type === 'TimeOffRequested' || (e.type === 'TimeOffResubmitted' && e.data.reapproval);

export const createTimeOffNoticesReactor = (options: TimeOffNoticesOptions): Processor => {
  const { slack, readModel, client, logger } = options;

  const recorded = async (ctx: ProcessorContext, key: string): Promise<SentNotice | null> => {
    const [first] = await ctx.store.readStream(timeOffNoticeStreamId(key), { maxCount: 1 });
    return first ? (first.data as unknown as SentNotice) : null;
  };

  const record = async (ctx: ProcessorContext, notice: SentNotice) => {
    try {
      await ctx.store.appendToStream(
        timeOffNoticeStreamId(notice.key),
        [
          {
            id: uuidv5(`timeoff-notice-sent:${notice.key}`),
            type: TIME_OFF_NOTICE_SENT,
            data: notice as unknown as JsonObject,
          },
        ],
        { expectedRevision: 'no_stream' },
      );
    } catch (error) {
      if (!(error instanceof ConcurrencyError)) throw error;
    }
  };

  /**
   * A Slack call that waits out Slack's rate limit (its Retry-After, abortable when the runner
   * stops) a few times before failing, so a burst of requests is slowed down, never parked.
   */
  const slackCall = async <T>(ctx: ProcessorContext, call: () => Promise<T>): Promise<T> => {
    for (let waited = 0; ; waited++) {
      try {
        return await call();
      } catch (error) {
        const waitMs = retryAfterMsOf(error);
        if (waitMs === undefined || waited >= MAX_RATE_LIMIT_WAITS) throw error;
        ctx.logger.warn({ waitMs }, 'Slack asked to slow down; waiting before the time-off DM');
        await abortableSleep(Math.min(waitMs, MAX_RATE_LIMIT_WAIT_MS), ctx.signal);
      }
    }
  };

  /** Posts once per key; the record of the post (found or made). */
  /**
   * What each message last showed (by channel and ts), in this process: a redraw that would show
   * the same is not sent. Most facts of a request (HR's lookups while its lag passes, their retries)
   * change nothing people see, and one `chat.update` each kept the sequential processor behind by
   * seconds under load (bench/timeOff.bench.ts). After a restart the first redraw is sent again.
   */
  const shown = new Map<string, string>();
  const remember = (where: string, message: SlackMessage) => {
    shown.delete(where);
    shown.set(where, JSON.stringify(message));
    // Bounded: the oldest messages are forgotten first (and redrawn once more if they change).
    if (shown.size > 10_000) shown.delete(shown.keys().next().value as string);
  };

  const sendOnce = async (
    ctx: ProcessorContext,
    key: string,
    user: string,
    build: () => Promise<{ message: SlackMessage; extras?: Partial<SentNotice> }>,
  ): Promise<SentNotice | null> => {
    const found = await recorded(ctx, key);
    if (found) return found;
    const { message, extras } = await build();
    let sent: { channel: string; ts: string };
    try {
      sent = await slackCall(ctx, () => slack.postMessage(user, message));
      remember(`${sent.channel}:${sent.ts}`, message);
    } catch (error) {
      // Slack refused it for good (the person can't be messaged, the blocks are refused): said in
      // the log, and the other messages still go. Anything transient is thrown: the processor retries.
      if (!isPermanentError(error)) throw error;
      const slackError = isChatOpsError(error) ? error.details.slackError : undefined;
      ctx.logger.error({ key, user, code: errorCodeOf(error), slackError }, 'Slack refused a time-off DM');
      return null;
    }
    const notice: SentNotice = {
      key,
      channel: sent.channel,
      ts: sent.ts,
      at: ctx.now().toISOString(),
      ...extras,
    };
    await record(ctx, notice);
    return notice;
  };

  const update = async (ctx: ProcessorContext, notice: SentNotice, message: SlackMessage) => {
    const where = `${notice.channel}:${notice.ts}`;
    const rendered = JSON.stringify(message);
    if (shown.get(where) === rendered) return;
    try {
      await slackCall(ctx, () => slack.updateMessage(notice.channel, notice.ts, message));
      remember(where, message);
    } catch (error) {
      const slackError = isChatOpsError(error) ? error.details.slackError : undefined;
      const code = typeof slackError === 'string' ? slackError : errorCodeOf(error);
      if (GONE.has(code)) {
        ctx.logger.warn({ key: notice.key, code }, 'a time-off message is gone; not updated');
        return;
      }
      throw error;
    }
  };

  const balanceAfter = async (view: TimeOffView): Promise<BalanceAfter> => {
    try {
      const b = await client.balance(view.requester.hrId, view.policyType, view.startDate);
      return { policyType: view.policyType, days: b.totalBalanceAsOfDate - view.workingDays };
    } catch (error) {
      logger.warn({ code: errorCodeOf(error), timeOffId: view.timeOffId }, 'HR could not tell the balance');
      return null;
    }
  };

  const teammatesOut = (view: TimeOffView): TeammateOut[] => {
    const team = new Set(teammatesOf(readModel.directory(), view.requester.hrId).map((e) => e.hrId));
    const seen = new Set<string>();
    const out: TeammateOut[] = [];
    for (const a of readModel.absences({ from: view.startDate, to: view.endDate })) {
      if (!team.has(a.employeeHrId) || a.timeOffId === view.timeOffId) continue;
      const k = `${a.employeeHrId}:${a.startDate}:${a.endDate}`;
      if (seen.has(k)) continue;
      seen.add(k);
      out.push({
        slackUserId: a.slackUserId,
        displayName: a.displayName,
        startDate: a.startDate,
        endDate: a.endDate,
      });
    }
    return out;
  };

  /** The card's on-call section, from the request as folded now (issue 12). */
  const onCallOf = async (view: TimeOffView): Promise<CardOnCall | null> => {
    const state = readModel.state(view.timeOffId);
    return state && options.onCall ? options.onCall(state, view.approver.slackUserId) : null;
  };

  const cardOf = async (view: TimeOffView, notice: SentNotice): Promise<SlackMessage> =>
    approvalCard(view, {
      balanceAfter: notice.balanceAfter ?? null,
      teammatesOut: notice.teammatesOut ?? [],
      onCall: await onCallOf(view),
    });

  /** The approver's card for the version of the request `eventId` asked about: posted once, then recorded on the request. */
  const postCard = async (ctx: ProcessorContext, eventId: string, view: TimeOffView) => {
    const notice = await sendOnce(ctx, cardKey(eventId), view.approver.slackUserId, async () => {
      const extras = { balanceAfter: await balanceAfter(view), teammatesOut: teammatesOut(view) };
      // The request as it stands by now (it may have moved on while HR answered).
      await readModel.catchUp();
      const now = readModel.view(view.timeOffId) ?? view;
      return { message: approvalCard(now, { ...extras, onCall: await onCallOf(now) }), extras };
    });
    // Slack refused the card for good: the approver still finds the request in App Home.
    if (!notice) return;
    const outcome = await dispatchCommand(options.dispatch, {
      type: 'RecordTimeOffApprovalAsked',
      data: { timeOffId: view.timeOffId, card: { channel: notice.channel, ts: notice.ts } },
      metadata: {
        now: ctx.now().toISOString(),
        commandId: uuidv5(`timeoff-approval-asked:${eventId}`),
        actor: ACTOR,
        causationId: eventId,
      },
    });
    if (outcome.outcome === 'rejected') {
      ctx.logger.warn({ code: outcome.code, message: outcome.message }, 'the approval card was not recorded');
    }
  };

  /** The DMs this event deserves (each once). */
  const notify = async (
    ctx: ProcessorContext,
    e: TimeOffEvent,
    eventId: string,
    view: TimeOffView,
    state: TimeOffState,
    events: readonly TimeOffEvent[],
  ) => {
    const requester = view.requester.slackUserId;
    const approver = view.approver.slackUserId;
    const dm = (key: string, user: string, message: SlackMessage) =>
      sendOnce(ctx, `${eventId}:${key}`, user, async () => ({ message }));
    switch (e.type) {
      case 'TimeOffRequested':
        await postCard(ctx, eventId, view);
        await sendOnce(ctx, statusKey(view.timeOffId), requester, async () => {
          await readModel.catchUp();
          return { message: requesterStatusDm(readModel.view(view.timeOffId) ?? view) };
        });
        return;
      case 'TimeOffResubmitted':
        if (e.data.reapproval) await postCard(ctx, eventId, view);
        return;
      case 'TimeOffApproved':
        await dm('approved', requester, approvedDm(view, e.data.by));
        return;
      case 'TimeOffConfirmed':
        await dm('confirmed', requester, confirmedDm(view));
        return;
      case 'TimeOffDenied':
        await dm('denied', requester, deniedDm(view, e.data.reason));
        return;
      case 'TimeOffExpired':
        await dm('expired', requester, expiredRequesterDm(view));
        await dm('expired-approver', approver, expiredApproverDm(view));
        return;
      case 'TimeOffCancelled':
        await dm('cancelled', requester, cancelledDm(view, e.data.by, e.data.cancelRequestId !== null));
        return;
      case 'TimeOffApproverReminded':
        await dm('reminder', approver, reminderDm(view, e.data.reminder));
        return;
      case 'TimeOffSubmissionFailed': {
        // A final transport failure comes with it (same decision): said in words, never HR's text.
        const code = finalFailureOf(events, 'submit', e.data.submitRequestId);
        if (code !== null && NOT_SHOWN_CODES.has(code)) {
          await dm('not-shown', requester, notShownDm(view, sentAt(events, e.data.submitRequestId)));
          return;
        }
        await dm(
          'submission-failed',
          requester,
          submissionFailedDm(
            view,
            code === null ? { kind: 'refusal', reason: e.data.reason } : { kind: 'unreachable', code },
          ),
        );
        return;
      }
      case 'TimeOffCancelFailed': {
        const code = finalFailureOf(events, 'cancel', e.data.cancelRequestId);
        const words = code !== null ? hrFailureWords(code) : `HR said: ${e.data.reason}`;
        await dm('cancel-failed', requester, cancelFailedDm(view, words));
        return;
      }
      case 'TimeOffUpstreamCallFailed': {
        if (!e.data.final) return;
        // A submission HR took (its POST answered) but never showed within the lag policy, or a
        // read-back that gave up: still approved, HR's webhooks or the changes poll can confirm it.
        // Other final submit and cancel failures are told with their outcome (above).
        const sent = events.some(
          (x) => x.type === 'TimeOffSubmissionSent' && x.data.submitRequestId === e.data.requestId,
        );
        const notShown =
          (e.data.action === 'submit' && (sent || NOT_SHOWN_CODES.has(e.data.code))) ||
          e.data.action === 'read_back';
        if (notShown && state.context.confirmedAt === null && view.phase !== 'submissionFailed') {
          const submitRequestId = e.data.action === 'submit' ? e.data.requestId : null;
          await dm('not-shown', requester, notShownDm(view, sentAt(events, submitRequestId)));
        }
        return;
      }
      default:
        return;
    }
  };

  /** Redraws the cards and the status message from the request as it stands now. */
  const redraw = async (
    ctx: ProcessorContext,
    view: TimeOffView,
    cardEvents: readonly string[],
    events: readonly TimeOffEvent[],
  ) => {
    for (const [i, eventId] of cardEvents.entries()) {
      const notice = await recorded(ctx, cardKey(eventId));
      if (!notice) continue;
      const current = i === cardEvents.length - 1;
      await update(ctx, notice, current ? await cardOf(view, notice) : replacedCard(view));
    }
    const status = await recorded(ctx, statusKey(view.timeOffId));
    if (status) await update(ctx, status, requesterStatusDm(view, statusNote(view, events)));
  };

  return {
    id: TIME_OFF_NOTICES_PROCESSOR,
    filter: { streamPrefixes: [TIME_OFF_STREAM_PREFIX] },
    async handle(event, ctx) {
      const timeOffId = requestIdOfStream(event.streamId);
      if (timeOffId === null || event.kind !== 'event') return;
      const recordedEvents = (await ctx.store.readStream(event.streamId)).filter((m) => m.kind === 'event');
      const events = recordedEvents.map((m) => storedEvent(timeOffDecider, m));
      const index = recordedEvents.findIndex((m) => m.id === event.id);
      const e = events[index];
      if (!e) return;
      await readModel.catchUp();
      const state = readModel.state(timeOffId);
      const folded = readModel.view(timeOffId);
      if (!state || !folded) return;
      const view = shownView(folded, events);
      await notify(ctx, e, event.id, view, state, events);
      // Only the newest event of the stream redraws (the later ones are on their way here).
      const latest = (await ctx.store.readStream(event.streamId)).filter((m) => m.kind === 'event').at(-1);
      if (latest && latest.id !== event.id) return;
      await readModel.catchUp();
      const latestView = readModel.view(timeOffId);
      const now = latestView ? shownView(latestView, events) : view;
      const cardEvents = recordedEvents
        .filter((_, i) => asksForApproval(events[i] as TimeOffEvent))
        .map((m) => m.id);
      await redraw(ctx, now, cardEvents, events);
    },
  };
};

/** The final transport failure that ended a submission or a cancel (told in words, never HR's text). */
const finalFailureOf = (
  events: readonly TimeOffEvent[],
  action: 'submit' | 'cancel',
  requestId: string,
): string | null => {
  const found = events.find(
    (x) =>
      x.type === 'TimeOffUpstreamCallFailed' &&
      x.data.final &&
      x.data.action === action &&
      x.data.requestId === requestId,
  );
  return found?.type === 'TimeOffUpstreamCallFailed' ? found.data.code : null;
};

/**
 * The view as people are shown it: when the last failure came from HR not answering (rather than
 * HR refusing), its reason is said in words instead of the recorded error text.
 */
export const shownView = (view: TimeOffView, events: readonly TimeOffEvent[]): TimeOffView => {
  if (view.failure === null) return view;
  const last = [...events]
    .reverse()
    .find((x) => x.type === 'TimeOffSubmissionFailed' || x.type === 'TimeOffCancelFailed');
  if (!last) return view;
  const code =
    last.type === 'TimeOffSubmissionFailed'
      ? finalFailureOf(events, 'submit', last.data.submitRequestId)
      : last.type === 'TimeOffCancelFailed'
        ? finalFailureOf(events, 'cancel', last.data.cancelRequestId)
        : null;
  return code === null ? view : { ...view, failure: hrFailureWords(code) };
};

/** A line under the status while HR has not shown a submission it took (its lookups gave up). */
export const statusNote = (view: TimeOffView, events: readonly TimeOffEvent[]): string | null => {
  if (view.phase !== 'approved' && view.phase !== 'submitted') return null;
  const last = [...events]
    .reverse()
    .find(
      (x) =>
        x.type === 'TimeOffApproved' ||
        x.type === 'TimeOffResubmitted' ||
        x.type === 'TimeOffSubmitted' ||
        (x.type === 'TimeOffUpstreamCallFailed' && x.data.final && x.data.action !== 'cancel'),
    );
  if (last?.type !== 'TimeOffUpstreamCallFailed') return null;
  const sent = events.some(
    (x) => x.type === 'TimeOffSubmissionSent' && x.data.submitRequestId === last.data.requestId,
  );
  if (last.data.action === 'submit' && !sent && !NOT_SHOWN_CODES.has(last.data.code)) return null;
  return notShownNote(sentAt(events, last.data.action === 'submit' ? last.data.requestId : null));
};

/** When the submission went to HR: its `TimeOffSubmissionSent` (HR took the POST), else `TimeOffSubmitted`, else its approval. */
const sentAt = (events: readonly TimeOffEvent[], submitRequestId: string | null): string => {
  const newestFirst = [...events].reverse();
  const matches = (id: string) => submitRequestId === null || id === submitRequestId;
  const sent = newestFirst.find((x) => x.type === 'TimeOffSubmissionSent' && matches(x.data.submitRequestId));
  if (sent) return sent.data.at;
  const submitted = newestFirst.find((x) => x.type === 'TimeOffSubmitted' && matches(x.data.submitRequestId));
  if (submitted) return submitted.data.at;
  const approved = newestFirst.find((x) => x.type === 'TimeOffApproved' || x.type === 'TimeOffResubmitted');
  return approved?.data.at ?? '';
};
