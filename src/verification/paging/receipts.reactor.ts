import { parsePagerEvent } from '../../../machines/verification/paging/events.ts';
import {
  PAGER_RECEIPT_STREAM_PREFIX,
  PAGER_STREAM_PREFIX,
} from '../../../machines/verification/paging/streams.ts';
import { ChatOpsError } from '../../core/errors.ts';
import type { IncidentResponses, PageReport } from '../../lifecycles/ports.ts';
import type { Processor } from '../../processors/runner.ts';
import type { PagerIndex } from './pagerIndex.ts';

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
      const d = event.data as { pageId: string; message?: string; at: string };
      await deps.index.catchUp();
      const page = deps.index.page(d.pageId);
      if (!page) return;
      await deps.incidentResponse()?.report({
        incident: page.reportTo,
        reportId: recorded.id,
        person: { slackUserId: page.slackUserId },
        kind: sent,
        detail: d.message?.slice(0, 300) ?? null,
        at: new Date(d.at),
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
      if (d.channel === 'voice' && ctx.attempt < 4) {
        // The call's uuid is recorded when its create call answers; its first events can be quicker.
        throw new ChatOpsError('SB_NOT_FOUND', `no page for call ${d.vendorId} yet`);
      }
      ctx.logger.info({ vendorId: d.vendorId, status: d.status }, 'a receipt for no page: ignored');
      return;
    }
    await deps.incidentResponse()?.report({
      incident: page.reportTo,
      reportId: recorded.id,
      person: { slackUserId: page.slackUserId },
      kind,
      detail: d.reason,
      at: new Date(d.at),
    });
  },
});
