import { type TimeOffState, timeOffDecider } from '../../machines/timeOff/decider.ts';
import { teammatesOf } from '../../machines/timeOff/directory.ts';
import { isHrChannelApprover, type TimeOffEvent } from '../../machines/timeOff/events.ts';
import { requestIdOfStream, TIME_OFF_STREAM_PREFIX } from '../../machines/timeOff/streams.ts';
import { storedEvent } from '../application/fold.ts';
import { uuidv5 } from '../core/ids.ts';
import type { JsonObject } from '../core/messages.ts';
import type { Logger } from '../logger.ts';
import { type Dispatch, dispatchCommand } from '../processors/dispatchCommand.ts';
import { errorCodeOf } from '../processors/retryPolicy.ts';
import type { Processor, ProcessorContext } from '../processors/runner.ts';
import type { SlackMessage } from '../slack/blocks/format.ts';
import { noticeLedger, type SlackOutbox } from '../slack/outbox.ts';
import type { HiBobClient } from '../upstream/hibob.ts';
import {
  approverGoneDm,
  handedOnCard,
  handedOnRequesterDm,
  hrChannelNote,
  leaverCancelledCard,
  routedRequesterDm,
  skippedApproverDm,
  waitsForAwayDm,
} from './approversBlocks.ts';
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
 * Once each: every message is keyed (the event id and what it is) and sent through the outbox
 * (src/slack/outbox.ts), recorded as `TimeOffNoticeSent` in its own stream `timeoffNotice-<uuid>`,
 * checked before sending, as verification does; after a crash between Slack taking a post and its
 * record, the DM's history is read for it (with `im:history`) instead of posting it again. A redraw
 * that shows what the message already shows is not sent (the outbox remembers, in this process):
 * most facts of a request (HR's lookups while its lag passes, their retries) change nothing people
 * see, and one `chat.update` each kept the sequential processor behind by seconds under load
 * (bench/timeOff.bench.ts). Slack failures that pass are thrown, so the processor retries them;
 * Slack's rate limits are waited out; a DM Slack refuses for good is logged and the others still
 * go; a card or status message Slack says is gone is left alone.
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

/** Where time-off messages are recorded (as they always were: `TimeOffNoticeSent`, one stream per key). */
export const timeOffNoticeLedger = noticeLedger({
  name: 'timeoff-notices',
  streamPrefix: TIME_OFF_NOTICE_STREAM_PREFIX,
  streamSeed: 'timeoff-notice',
  eventSeed: 'timeoff-notice-sent',
  eventType: TIME_OFF_NOTICE_SENT,
});

export type TimeOffNoticesOptions = Readonly<{
  outbox: SlackOutbox;
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

export const timeOffNoticeStreamId = (key: string): string => timeOffNoticeLedger.streamOf(key);

const cardKey = (eventId: string) => `card:${eventId}`;
const statusKey = (timeOffId: string) => `status:${timeOffId}`;

/**
 * Events after which the approver's card is (re)posted: a new version of the request to decide, or
 * (issue 12) the same request handed on to a new approver.
 */
const asksForApproval = (e: TimeOffEvent): boolean =>
  e.type === 'TimeOffRequested' ||
  (e.type === 'TimeOffResubmitted' && e.data.reapproval) ||
  e.type === 'TimeOffHandedOn';

/** Issue 12: a card asked for by `e` is dead before it is posted when a later event asks again. */
const supersededAsk = (events: readonly TimeOffEvent[], e: TimeOffEvent): boolean =>
  events.slice(events.indexOf(e) + 1).some(asksForApproval);

/** Issue 12: who was passed over on the way to the approver this event asked. */
const skippedOf = (e: TimeOffEvent | undefined) =>
  e?.type === 'TimeOffRequested'
    ? (e.data.skipped ?? [])
    : e?.type === 'TimeOffHandedOn'
      ? e.data.skipped
      : [];

/**
 * Issue 12: the approver's card with, when it was sent to the HR channel and waits there, a line
 * saying why it is there and who may decide.
 */
const withRouting = (card: SlackMessage, view: TimeOffView, ask: TimeOffEvent | undefined): SlackMessage => {
  if (
    !isHrChannelApprover(view.approver) ||
    (view.phase !== 'requested' && view.phase !== 'awaitingApproval')
  )
    return card;
  const blocks = [...card.blocks];
  const at = blocks.findIndex((b) => b.type === 'actions');
  blocks.splice(at < 0 ? blocks.length : at, 0, hrChannelNote(view, skippedOf(ask)));
  return { ...card, blocks };
};

export const createTimeOffNoticesReactor = (options: TimeOffNoticesOptions): Processor => {
  const { outbox, readModel, client, logger } = options;
  const ledger = timeOffNoticeLedger;

  /** Posts once per key; the record of the post (found or made), or null when Slack refused it for good. */
  const sendOnce = async (
    ctx: ProcessorContext,
    key: string,
    user: string,
    build: () => Promise<{ message: SlackMessage; extras?: Partial<SentNotice> }>,
  ): Promise<SentNotice | null> => {
    const result = await outbox.post(ctx, {
      ledger,
      key,
      channel: user,
      message: async () => {
        const { message, extras } = await build();
        return { message, ...(extras ? { extras: extras as unknown as JsonObject } : {}) };
      },
    });
    if (result.outcome !== 'refused') return result.record as SentNotice;
    // Slack refused it for good (the person can't be messaged, the blocks are refused): said in
    // the log, and the other messages still go.
    ctx.logger.error(
      { key, user, code: errorCodeOf(result.error), slackError: result.slackError },
      'Slack refused a time-off DM',
    );
    return null;
  };

  /** Redraws what was posted under `key` (nothing posted: nothing to redraw). */
  const update = async (
    ctx: ProcessorContext,
    key: string,
    message: (notice: SentNotice) => Promise<SlackMessage>,
  ) => {
    const updated = await outbox.update(ctx, { ledger, key }, (record) => message(record as SentNotice));
    if (updated.outcome === 'gone') {
      ctx.logger.warn({ key, code: updated.slackError }, 'a time-off message is gone; not updated');
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

  const cardOf = async (view: TimeOffView, notice: SentNotice, ask?: TimeOffEvent): Promise<SlackMessage> =>
    withRouting(
      approvalCard(view, {
        balanceAfter: notice.balanceAfter ?? null,
        teammatesOut: notice.teammatesOut ?? [],
        onCall: await onCallOf(view),
      }),
      view,
      ask,
    );

  /** The approver's card for the version of the request `eventId` asked about: posted once, then recorded on the request. */
  const postCard = async (ctx: ProcessorContext, eventId: string, view: TimeOffView, ask?: TimeOffEvent) => {
    const notice = await sendOnce(ctx, cardKey(eventId), view.approver.slackUserId, async () => {
      const extras = { balanceAfter: await balanceAfter(view), teammatesOut: teammatesOut(view) };
      // The request as it stands by now (it may have moved on while HR answered).
      await readModel.catchUp();
      const now = readModel.view(view.timeOffId) ?? view;
      return {
        message: withRouting(approvalCard(now, { ...extras, onCall: await onCallOf(now) }), now, ask),
        extras,
      };
    });
    // Slack refused the card for good: the approver still finds the request in App Home.
    if (!notice) return;
    const outcome = await dispatchCommand(options.dispatch, {
      type: 'RecordTimeOffApprovalAsked',
      data: {
        timeOffId: view.timeOffId,
        card: { channel: notice.channel, ts: notice.ts },
        postedTo: view.approver.slackUserId,
      },
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
      case 'TimeOffRequested': {
        // Issue 12: a request handed on before its first card went out gets only the newer card.
        const asked = { ...view, approver: e.data.approver };
        if (!supersededAsk(events, e)) await postCard(ctx, eventId, asked, e);
        await sendOnce(ctx, statusKey(view.timeOffId), requester, async () => {
          await readModel.catchUp();
          return { message: requesterStatusDm(readModel.view(view.timeOffId) ?? view) };
        });
        await routingNotices(e, asked, dm);
        return;
      }
      case 'TimeOffApproverGone':
        await dm('approver-gone', requester, approverGoneDm(view, e.data.approver));
        return;
      case 'TimeOffHandedOn': {
        const asked = { ...view, approver: e.data.to };
        if (!supersededAsk(events, e)) await postCard(ctx, eventId, asked, e);
        await dm(
          'handed-on',
          requester,
          handedOnRequesterDm(asked, e.data.from, e.data.reason, e.data.until),
        );
        return;
      }
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
        // Issue 12: the requester left; their approver's card says so (redraw), nobody else is told.
        if (e.data.by === 'left') return;
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

  /** Issue 12: the newest card, or once the requester left, what became of it. */
  const currentCard = async (
    view: TimeOffView,
    notice: SentNotice,
    events: readonly TimeOffEvent[],
    ask: TimeOffEvent | undefined,
  ): Promise<SlackMessage> => {
    const cancelled = events.findLast((x) => x.type === 'TimeOffCancelled');
    if (
      view.phase === 'cancelled' &&
      cancelled?.type === 'TimeOffCancelled' &&
      cancelled.data.by === 'left'
    ) {
      return leaverCancelledCard(view);
    }
    return cardOf(view, notice, ask);
  };

  /** An earlier card: handed on (issue 12), or replaced by a resubmission with new dates. */
  const earlierCard = (view: TimeOffView, next: TimeOffEvent | undefined): SlackMessage =>
    next?.type === 'TimeOffHandedOn'
      ? handedOnCard(view, next.data.to, next.data.reason, next.data.until)
      : replacedCard(view);

  /** Redraws the cards and the status message from the request as it stands now. */
  const redraw = async (
    ctx: ProcessorContext,
    view: TimeOffView,
    cardEvents: readonly string[],
    events: readonly TimeOffEvent[],
    askEvents: readonly TimeOffEvent[],
  ) => {
    for (const [i, eventId] of cardEvents.entries()) {
      const current = i === cardEvents.length - 1;
      await update(ctx, cardKey(eventId), async (notice) =>
        current ? currentCard(view, notice, events, askEvents[i]) : earlierCard(view, askEvents[i + 1]),
      );
    }
    await update(ctx, statusKey(view.timeOffId), async () =>
      requesterStatusDm(view, statusNote(view, events)),
    );
  };

  /**
   * Issue 12: when the approver was found around someone away or gone, the requester is told who
   * and why, and each manager passed over for being away is told it went elsewhere (not when it
   * waits for a manager who is away: those above them were never going to be asked first).
   */
  const routingNotices = async (
    e: Extract<TimeOffEvent, { type: 'TimeOffRequested' }>,
    asked: TimeOffView,
    dm: (key: string, user: string, message: SlackMessage) => Promise<SentNotice | null>,
  ) => {
    const skipped = e.data.skipped ?? [];
    if (e.data.approverAwayUntil) {
      await dm(
        'waits-for-away',
        asked.requester.slackUserId,
        waitsForAwayDm(asked, e.data.approverAwayUntil, skipped),
      );
      return;
    }
    if (skipped.length > 0) {
      await dm('routed', asked.requester.slackUserId, routedRequesterDm(asked, skipped));
    }
    for (const skip of skipped) {
      if (skip.reason !== 'away' || skip.slackUserId === null) continue;
      await dm(`skipped:${skip.hrId}`, skip.slackUserId, skippedApproverDm(asked, skip));
    }
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
      const asking = recordedEvents
        .map((m, i) => ({ id: m.id, e: events[i] as TimeOffEvent }))
        .filter((x) => asksForApproval(x.e));
      await redraw(
        ctx,
        now,
        asking.map((x) => x.id),
        events,
        asking.map((x) => x.e),
      );
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
