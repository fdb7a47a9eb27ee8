import {
  PAGER_RECEIPT_STREAM_PREFIX,
  PAGER_REPLY_STREAM_PREFIX,
  PAGER_STREAM_PREFIX,
} from '../../machines/verification/paging/streams.ts';
import {
  isSlackUserId,
  slackUserOfStream,
  VERIFICATION_STREAM_PREFIX,
} from '../../machines/verification/streams.ts';
import type { ParkedNotices } from '../slack/parkedNotices.reactor.ts';
import { VERIFICATION_NOTICE_STREAM_PREFIX } from './notices.reactor.ts';

/**
 * Whom the verification lifecycle tells when a processor parks an event of one of its streams
 * (issue 18): the person, by DM, for their verification stream and their pages. Replies and
 * receipts are known by number only (sealed), and notice bookkeeping names nobody: operators only.
 */
export const verificationParkedNotices: ParkedNotices = {
  streamPrefixes: [
    VERIFICATION_STREAM_PREFIX,
    VERIFICATION_NOTICE_STREAM_PREFIX,
    PAGER_STREAM_PREFIX,
    PAGER_REPLY_STREAM_PREFIX,
    PAGER_RECEIPT_STREAM_PREFIX,
  ],
  async noticesFor(parked) {
    const verifying = slackUserOfStream(parked.streamId);
    if (verifying) {
      return [
        {
          user: verifying,
          text: 'Switchboard could not finish handling your phone verification; what it shows about your phone may be out of date. `/verify status` says where it stands.',
        },
      ];
    }
    if (parked.streamId.startsWith(PAGER_STREAM_PREFIX)) {
      const paged = parked.streamId.slice(PAGER_STREAM_PREFIX.length);
      if (isSlackUserId(paged)) {
        return [
          {
            user: paged,
            text: 'Switchboard could not finish handling a page to your phone: you may not get it by SMS or call. Look at your incident channels for what is open.',
          },
        ];
      }
    }
    return [];
  },
};
