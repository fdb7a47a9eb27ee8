import { latestPage, pagerReplyDecider } from '../../../machines/verification/paging/decider.ts';
import type { ReplyOutcome } from '../../../machines/verification/paging/events.ts';
import { parsePagerEvent } from '../../../machines/verification/paging/events.ts';
import { PAGER_REPLY_STREAM_PREFIX, pagerStreamId } from '../../../machines/verification/paging/streams.ts';
import { foldHistory } from '../../application/fold.ts';
import { hasCode } from '../../core/errors.ts';
import type { IncidentResponses } from '../../lifecycles/ports.ts';
import type { Dispatch } from '../../processors/dispatchCommand.ts';
import type { Processor, ProcessorContext } from '../../processors/runner.ts';
import { truncate } from '../../slack/text.ts';
import { readPagerState } from './delivery.reactor.ts';
import { pagerCommand } from './pager.ts';
import type { PageEntry, PagerIndex } from './pagerIndex.ts';

export type PagingRepliesDeps = Readonly<{
  index: PagerIndex;
  dispatch: () => Dispatch;
  /** The digits of a recorded number; null once its person is forgotten. */
  openPhone(stored: string): Promise<string | null>;
  incidentResponse: () => IncidentResponses | undefined;
  /** Tells the person in Slack (a DM, once per `key`) that their STOP switched paging off. */
  tellInSlack(ctx: ProcessorContext, slackUserId: string, text: string, key: string): Promise<void>;
  /**
   * Forgets the person's verified phone for paging (the people directory's `phone` link), so that
   * verifying it again links it anew and paging resumes.
   */
  forgetPhone(slackUserId: string): Promise<void>;
  /** Counts each reply's outcome (a metric), once per reply handled. */
  counted?(via: 'sms' | 'voice', outcome: Outcome): void;
}>;

export const HOW_TO_REPLY =
  'Reply 4 to acknowledge, 6 to resolve; add the incident number to choose one (4 12).';

type Outcome = ReplyOutcome;

/** The operator log code of keys refused because Switchboard did not place that call for that phone. */
export const UNKNOWN_CALL_LOG_CODE = 'SB_PAGER_REPLY_UNKNOWN_CALL';

/**
 * The page keys pressed in a call act on: the page whose call it is (recorded `PageCallPlaced`),
 * when the number pressing them is that page's person's verified phone. Anything else (a call
 * Switchboard never placed, or a page call whose keys come from another number) acts on nothing.
 * The edge (the NCCO it answers) and the reactor (what is done) ask the same question.
 */
export const pageOfKeys = (
  index: Pick<PagerIndex, 'pageOfCall' | 'personOfPhone'>,
  callUuid: string | null,
  digits: string | null,
): PageEntry | undefined => {
  const page = callUuid ? index.pageOfCall(callUuid) : undefined;
  if (!page || digits === null) return undefined;
  return index.personOfPhone(digits) === page.slackUserId ? page : undefined;
};

/**
 * `paging-replies`: acts on what a phone sent back (`PagerReplyReceived`), once per reply.
 *
 * Who replied: an SMS by its sender's number, the person whose verified phone it is (sender ids
 * can be spoofed: the accepted risk and what limits it are in docs/operations.md, Security). Keys
 * pressed in a call only in a call Switchboard placed for that person's page (`pageOfKeys`): keys
 * in any other call (a signed event for a call it never placed, or from another number) are
 * recorded (`unknown_call`), logged with `SB_PAGER_REPLY_UNKNOWN_CALL`, and act on nothing and
 * tell nobody. `4` / `ACK` acknowledges, `6` resolves the incident of their most recent page (the
 * call's page, for keys), or of the page about the number they named (`4 12`), through the
 * incident lifecycle's `incidentResponse` port: recorded as their own command, so it shows on the
 * card and the timeline, and refused there unless the incident is still open. `STOP` opts the
 * number out (until it is verified again), stops their pages in flight and tells them in Slack.
 * An unknown number, or a person never paged about the incident named, is recorded
 * (`PagerReplyHandled`) and nothing else happens. An SMS reply says what was done, never what
 * was sent (the text is not kept: PagerReplyReceived).
 */
export const createPagingRepliesReactor = (deps: PagingRepliesDeps): Processor => ({
  id: 'paging-replies',
  filter: { streamPrefixes: [PAGER_REPLY_STREAM_PREFIX], eventTypes: ['PagerReplyReceived'] },
  async handle(recorded, ctx) {
    const event = parsePagerEvent(recorded);
    if (event.type !== 'PagerReplyReceived') return;
    const reply = event.data;
    const replyState = foldHistory(pagerReplyDecider, await ctx.store.readStream(recorded.streamId));
    if (replyState.handled.includes(reply.replyId)) return;

    // Digits as recorded before numbers were sealed are used as they are.
    const digits = /^[0-9]+$/.test(reply.phone) ? reply.phone : await deps.openPhone(reply.phone);
    /** What the SMS answer says (paging-answers sends it); none for keys in a call (the call said it). */
    let answerText: string | null = null;
    const answer = (text: string) => {
      if (reply.via !== 'sms' || digits === null) return;
      answerText = truncate(`[Switchboard] ${text}`, 320);
    };
    const record = async (
      outcome: Outcome,
      slackUserId: string | null,
      pageId: string | null,
      detail: string | null,
    ) => {
      await deps.dispatch()(
        pagerCommand(
          'RecordPagerReplyOutcome',
          {
            phone: reply.phone,
            numberKey: recorded.streamId.slice(PAGER_REPLY_STREAM_PREFIX.length),
            replyId: reply.replyId,
            outcome,
            slackUserId,
            pageId,
            detail: detail?.slice(0, 300) ?? null,
            answer: answerText,
          },
          reply.replyId,
          ctx.now(),
        ),
      );
      deps.counted?.(reply.via, outcome);
    };
    await deps.index.catchUp();
    const inCall = reply.via === 'voice' || reply.callUuid !== null;
    const byCall = inCall ? pageOfKeys(deps.index, reply.callUuid, digits) : undefined;
    if (inCall && !byCall) {
      const placed = reply.callUuid ? deps.index.pageOfCall(reply.callUuid) !== undefined : false;
      ctx.logger.warn(
        { code: UNKNOWN_CALL_LOG_CODE, replyId: reply.replyId, callPlacedBySwitchboard: placed },
        placed
          ? 'keys pressed in a page call from a number that is not the paged person’s: refused, nothing done'
          : 'keys pressed in a call Switchboard did not place: refused, nothing done',
      );
      await record(
        'unknown_call',
        null,
        null,
        placed
          ? 'keys from a number that is not the paged person’s verified phone'
          : 'keys pressed in a call Switchboard did not place',
      );
      return;
    }
    const slackUserId = byCall?.slackUserId ?? (digits === null ? null : deps.index.personOfPhone(digits));
    if (!slackUserId) {
      ctx.logger.info({ replyId: reply.replyId }, 'a reply from a number nobody verified: ignored');
      await record('unknown_number', null, null, null);
      return;
    }

    if (reply.action === 'stop') {
      // The opt-out names the verified phone as recorded (the link's sealed value): the pager
      // compares it with each page's.
      const phone = deps.index.phoneOf(slackUserId)?.stored ?? reply.phone;
      await deps.dispatch()(pagerCommand('OptOutOfPaging', { slackUserId, phone }, reply.replyId, ctx.now()));
      const state = await readPagerState(ctx.store, pagerStreamId(slackUserId));
      for (const pageId of state.order) {
        if (state.pages[pageId]?.status !== 'requested') continue;
        await deps.dispatch()(
          pagerCommand('StopPage', { slackUserId, pageId, reason: 'opted out (STOP)' }, pageId, ctx.now()),
        );
      }
      await deps.forgetPhone(slackUserId);
      await deps.tellInSlack(
        ctx,
        slackUserId,
        ':no_bell: You replied STOP to a page, so Switchboard will not page your phone any more. ' +
          'Verify your number again with `/verify` to be paged by SMS and voice again.',
        `opted-out:${reply.replyId}`,
      );
      await record('opted_out', slackUserId, null, null);
      return;
    }
    if (reply.action === 'unknown') {
      answer(`Not understood. ${HOW_TO_REPLY}`);
      await record('not_understood', slackUserId, null, null);
      return;
    }

    const state = await readPagerState(ctx.store, pagerStreamId(slackUserId));
    const page = byCall ? (state.pages[byCall.pageId] ?? null) : latestPage(state, reply.number);
    if (!page) {
      answer(
        reply.number === null
          ? 'You have not been paged about an incident.'
          : `You were not paged about #${reply.number}. ${HOW_TO_REPLY}`,
      );
      await record('not_paged', slackUserId, null, reply.number === null ? null : `#${reply.number}`);
      return;
    }
    const port = deps.incidentResponse();
    if (!port) {
      answer(`Incidents are switched off: nothing was done about ${page.label}.`);
      await record('refused', slackUserId, page.pageId, 'incidents are switched off');
      return;
    }
    const action = reply.action;
    let result: Awaited<ReturnType<IncidentResponses['respond']>>;
    try {
      result = await port.respond({
        person: { slackUserId },
        incident: page.reportTo,
        action,
        via: reply.via,
        responseId: reply.replyId,
        at: new Date(reply.at),
      });
    } catch (error) {
      if (!hasCode(error, 'SB_UNMAPPED_USER')) throw error;
      result = { ok: false, label: page.label, reason: (error as Error).message };
    }
    if (!result.ok) {
      answer(`${result.label}: ${result.reason}`);
      await record('refused', slackUserId, page.pageId, result.reason);
      return;
    }
    await deps.dispatch()(
      pagerCommand(
        'StopPage',
        {
          slackUserId,
          pageId: page.pageId,
          reason: action === 'acknowledge' ? 'acknowledged by phone' : 'resolved by phone',
        },
        page.pageId,
        ctx.now(),
      ),
    );
    const more =
      reply.number === null &&
      state.order.filter((id) => state.pages[id]?.status === 'requested' && !state.pages[id]?.notice).length >
        1;
    answer(
      `${action === 'acknowledge' ? 'Acknowledged' : 'Resolved'} ${result.label}.` +
        (more ? ' Other incidents paged you too: reply 4 with the number to acknowledge one (4 12).' : ''),
    );
    await record(action === 'acknowledge' ? 'acknowledged' : 'resolved', slackUserId, page.pageId, null);
  },
});
