import { pagerDecider } from '../../../machines/verification/paging/decider.ts';
import { parsePagerEvent } from '../../../machines/verification/paging/events.ts';
import {
  PAGER_RECEIPT_STREAM_PREFIX,
  PAGER_STREAM_PREFIX,
  pagerStreamId,
} from '../../../machines/verification/paging/streams.ts';
import { foldHistory } from '../../application/fold.ts';
import { ChatOpsError } from '../../core/errors.ts';
import { scrubText } from '../../core/scrub.ts';
import type { IncidentResponses, PageFailure, PageReport } from '../../lifecycles/ports.ts';
import type { Processor, ProcessorContext } from '../../processors/runner.ts';
import { PAGE_FAILURE_CODES } from './pager.ts';
import type { PageEntry, PagerIndex } from './pagerIndex.ts';

/** What a vendor status means on the incident's timeline; null: not worth a line. */
export const receiptKind = (channel: 'sms' | 'voice', status: string): PageReport['kind'] | null => {
  if (channel === 'sms') {
    switch (status) {
      case 'delivered':
      case 'read':
        return 'sms_delivered';
      case 'rejected':
      case 'undeliverable':
        return 'sms_rejected';
      default:
        return null; // `submitted` is said when the send is recorded
    }
  }
  switch (status) {
    case 'ringing':
      return 'call_ringing';
    case 'answered':
      return 'call_answered';
    case 'completed':
      return 'call_completed';
    case 'busy':
      return 'call_busy';
    case 'unanswered':
    case 'timeout':
    case 'cancelled':
      return 'call_unanswered';
    case 'failed':
    case 'rejected':
      return 'call_failed';
    default:
      return null; // started, human/machine, disconnected…
  }
};

/**
 * `paging-receipts`: each delivery receipt recorded (`PageReceiptReceived`, once per status), and
 * each SMS handed over or call placed (or refused) as the pager recorded it, goes on the timeline of the incident its page is about, through the incident lifecycle's
 * `incidentResponse` port (recorded once per receipt). The SMS names its page in `client_ref`; a
 * call is found by its uuid, which may be recorded a moment after its first events arrive (tried
 * again a few times; a call that is not a page, such as a verification call, is ignored).
 */
/** What the pager's own records say on the timeline (the SMS handed over, the call placed, or refused). */
const SENT_KINDS: Readonly<Record<string, PageReport['kind']>> = {
  PageSmsSent: 'sms_submitted',
  PageSmsFailed: 'sms_failed',
  PageCallPlaced: 'call_created',
  PageCallFailed: 'call_failed',
};

/**
 * The vendor's reason for a rejected SMS or a failed call, as people may read it: its words without
 * the vendor's error code in front (`1300 Absent subscriber: …` → `Absent subscriber: …`), scrubbed
 * of anything credential-shaped, short. Null when no words are left.
 */
export const receiptReason = (reason: string | null): string | null => {
  if (reason === null) return null;
  let words = scrubText(reason).trim();
  for (let i = 0; i < 3; i++) words = words.replace(/^(?:[A-Za-z-]*[0-9_][A-Za-z0-9_-]*|#\S+)[\s:.-]+/, '');
  words = words.trim().slice(0, 200);
  return /[a-z]/i.test(words) ? words : null;
};

/** What a receipt means for reaching the person: null when it does not say they cannot be reached. */
const RECEIPT_FAILURES: Readonly<Partial<Record<PageReport['kind'], PageFailure>>> = {
  sms_rejected: 'sms_refused',
  call_busy: 'busy',
  call_unanswered: 'unanswered',
  call_failed: 'call_failed',
};

/** What a send the pager recorded as failed means, by its code, and how the timeline says it. */
const sendFailure = (
  kind: 'sms_failed' | 'call_failed',
  code: string,
): Readonly<{ failure: PageFailure; detail: string }> => {
  if (code === PAGE_FAILURE_CODES.unreadable || code === 'phone_forgotten') {
    return { failure: 'must_verify_again', detail: 'the number must be verified again' };
  }
  if (code === PAGE_FAILURE_CODES.gaveUp) {
    return { failure: 'gave_up', detail: 'the phone service could not be reached, Switchboard gave up' };
  }
  return kind === 'sms_failed'
    ? { failure: 'sms_refused', detail: 'the phone service refused it' }
    : { failure: 'call_failed', detail: 'the phone service refused it' };
};

/**
 * Whether a failure still matters: the page is still on (not stopped because someone acknowledged
 * or resolved, which also ends a ringing call: that call's "failed" is no news).
 */
const stillOn = async (ctx: ProcessorContext, page: PageEntry): Promise<boolean> => {
  const state = foldHistory(pagerDecider, await ctx.store.readStream(pagerStreamId(page.slackUserId)));
  return state.pages[page.pageId]?.status === 'requested';
};

export const createPagingReceiptsReactor = (
  deps: Readonly<{ index: PagerIndex; incidentResponse: () => IncidentResponses | undefined }>,
): Processor => ({
  id: 'paging-receipts',
  filter: {
    streamPrefixes: [PAGER_RECEIPT_STREAM_PREFIX, PAGER_STREAM_PREFIX],
    eventTypes: ['PageReceiptReceived', ...Object.keys(SENT_KINDS)],
  },
  async handle(recorded, ctx) {
    const event = parsePagerEvent(recorded);
    const sent = SENT_KINDS[event.type];
    if (sent && recorded.streamId.startsWith(PAGER_STREAM_PREFIX)) {
      const d = event.data as { pageId: string; code?: string; at: string };
      await deps.index.catchUp();
      const page = deps.index.page(d.pageId);
      if (!page) return;
      // A failed send says why in words (never the error's own text); the incident pages someone else.
      const failed = sent === 'sms_failed' || sent === 'call_failed' ? sendFailure(sent, d.code ?? '') : null;
      await deps.incidentResponse()?.report({
        incident: page.reportTo,
        reportId: recorded.id,
        person: { slackUserId: page.slackUserId },
        kind: sent,
        detail: failed?.detail ?? null,
        at: new Date(d.at),
        pageId: page.pageId,
        failure: failed && (await stillOn(ctx, page)) ? failed.failure : null,
      });
      return;
    }
    if (event.type !== 'PageReceiptReceived') return;
    const d = event.data;
    const kind = receiptKind(d.channel, d.status);
    if (!kind) return;
    await deps.index.catchUp();
    const page = d.pageId ? deps.index.page(d.pageId) : deps.index.pageOfCall(d.vendorId);
    if (!page) {
      if (d.channel === 'voice' && ctx.attempt < ctx.maxAttempts) {
        // The call's uuid is recorded when its create call answers; its first events (a busy line)
        // can be quicker. Tried again (a transient code: SB_NOT_FOUND would be parked at once).
        throw new ChatOpsError('SB_CONCURRENCY', `no page for call ${d.vendorId} yet`);
      }
      ctx.logger.info({ vendorId: d.vendorId, status: d.status }, 'a receipt for no page: ignored');
      return;
    }
    const failure = RECEIPT_FAILURES[kind] ?? null;
    await deps.incidentResponse()?.report({
      incident: page.reportTo,
      reportId: recorded.id,
      person: { slackUserId: page.slackUserId },
      kind,
      detail: receiptReason(d.reason),
      at: new Date(d.at),
      pageId: page.pageId,
      failure: failure && (await stillOn(ctx, page)) ? failure : null,
    });
  },
});
