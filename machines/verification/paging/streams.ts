// Where the pager's facts live (the verification lifecycle's paging part).
//
// - `pager-<slackUserId>`: one person's pages: each page requested (or held back, or skipped
//   because they opted out), its SMS and call as sent, and when it stopped; their STOP opt-out.
//   One stream per person, so "at most K pages an hour" and "the most recent page" are decided on
//   one consistent history.
// - `pagerreply-<number key>`: what a phone number sent back (SMS replies, keys pressed in a
//   call), each once, with what was made of it: also for numbers nobody verified (recorded,
//   ignored). The key is a blind index of the number (an HMAC under its owner's data key, or under
//   the configured secret for a number nobody verified), so stream names, which logs, metrics and
//   the event browser show, never carry a number, and a forgotten person's replies are unlinkable.
// - `pagerreceipt-<vendor uuid>`: the delivery receipts of one SMS or call, each status once.

export const PAGER_STREAM_PREFIX = 'pager-';
export const PAGER_REPLY_STREAM_PREFIX = 'pagerreply-';
export const PAGER_RECEIPT_STREAM_PREFIX = 'pagerreceipt-';

const SLACK_USER = /^[UW][A-Z0-9]{2,30}$/;
const NUMBER_KEY = /^[0-9a-f]{32}$/;
const VENDOR_ID = /^[A-Za-z0-9-]{1,64}$/;
/** A page id: `[A-Za-z0-9._:-]`, 1-100 characters (it goes in timer ids and `client_ref`). */
export const PAGE_ID = /^[A-Za-z0-9._:-]{1,100}$/;

export const pagerStreamId = (slackUserId: string): string => {
  if (!SLACK_USER.test(slackUserId)) throw new TypeError(`not a Slack user: ${JSON.stringify(slackUserId)}`);
  return PAGER_STREAM_PREFIX + slackUserId;
};

/** `numberKey`: the keyed hash of the number (`PhoneSealer.key`), never the number. */
export const pagerReplyStreamId = (numberKey: string): string => {
  if (!NUMBER_KEY.test(numberKey)) throw new TypeError('not a phone number key');
  return PAGER_REPLY_STREAM_PREFIX + numberKey;
};

export const pagerReceiptStreamId = (vendorId: string): string => {
  if (!VENDOR_ID.test(vendorId)) throw new TypeError(`not a vendor id: ${JSON.stringify(vendorId)}`);
  return PAGER_RECEIPT_STREAM_PREFIX + vendorId;
};

/** Timer of the call that follows a page's SMS. */
export const pageCallTimerId = (pageId: string): string => `page-call-${pageId}`;
