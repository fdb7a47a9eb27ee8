import { type Decider, DecisionRejected } from '../../shared/machineDecider.ts';
import { exhaustive } from '../../shared/messages.ts';
import {
  decideFailure,
  decideRetry,
  FIRST_ATTEMPT,
  type UpstreamAttempts,
  type UpstreamRequest,
  withFailedAttempt,
  withRetry,
} from '../../shared/upstreamRequest.ts';
import {
  type PageReceiptCommand,
  type PagerCommand,
  type PagerReplyCommand,
  pageReceiptCommandDataSchemas,
  pagerCommandDataSchemas,
  pagerReplyCommandDataSchemas,
} from './commands.ts';
import {
  type PageAction,
  type PagerEvent,
  type PagerEventOf,
  parsePagerEvent,
  recordedTextLength,
} from './events.ts';

// Pure deciders of the pager's three kinds of stream (streams.ts). Plain decide / evolve (emmett's
// shape): a page's life is short and linear (requested → SMS sent → call requested → call placed,
// stopped at any point), so a state machine would add nothing a few fields do not say.
//
// Each call a page makes to the phone service (its SMS, its call, hanging up its call) is a
// durable upstream request (machines/shared/upstreamRequest.ts, made by src/processors/upstreamCall.ts):
// pending while the page says it is due, its failed attempts and retries recorded here
// (`PageUpstreamCallFailed`, `PageUpstreamCallRetried`), its outcome the page's own facts.

const HOUR_MS = 3_600_000;

/**
 * Why a page stops that means nobody needs its phone to ring any more (see
 * src/incidents/paging.reactor.ts), or must not (`left`: the person left, pager.forget): a call
 * placed for it is hung up. Not when the person answered in this call (its NCCO is still saying
 * what was recorded).
 */
export const HANG_UP_REASONS: ReadonlySet<string> = new Set(['acknowledged', 'resolved', 'left']);

export type PageView = Readonly<{
  pageId: string;
  /** A plain SMS notice (`NoticeRequested`), not a page: no incident, no call, no reply acts on it. */
  notice: boolean;
  reportTo: string;
  number: number | null;
  label: string;
  phone: string | null;
  /** `requested`: being sent (until stopped); `held_back` / `skipped`: never sent. */
  status: 'requested' | 'held_back' | 'skipped' | 'stopped';
  requestedAt: string;
  callDueAt: string | null;
  messageUuid: string | null;
  smsFailed: boolean;
  callRequested: boolean;
  callUuid: string | null;
  callFailed: boolean;
  /** What the SMS says and the call reads out (null for a page that was never sent). */
  text: string | null;
  spokenText: string | null;
  /** The instant the page is about (an incident's trigger), said in the person's zone when sent; null when not known. */
  since: string | null;
  /** Why the page stopped (null while it is on, or never sent). */
  stopReason: string | null;
  /** Hanging up its call: `wanted` once it stopped for a hang-up reason with a call placed. */
  hangUp: 'none' | 'wanted' | 'done' | 'given_up';
  /** Attempts of each call to the phone service that has failed at least once. */
  attempts: Readonly<Partial<Record<PageAction, UpstreamAttempts>>>;
}>;

/** One of a page's calls to the phone service, while it is pending. */
export type PageRequest = UpstreamRequest<PageAction> & Readonly<{ pageId: string }>;

/** The request id of a page's call: `<pageId>:<action>` (unique per page and call). */
export const pageRequestId = (pageId: string, action: PageAction): string => `${pageId}:${action}`;

const ACTIONS: readonly PageAction[] = ['sms', 'call', 'hang_up'];

/** Whether the page still wants this call made (its SMS not sent, its call not placed, …). */
const wants = (page: PageView, action: PageAction): boolean => {
  switch (action) {
    case 'sms':
      return page.status === 'requested' && page.messageUuid === null && !page.smsFailed;
    case 'call':
      return (
        page.status === 'requested' &&
        page.callRequested &&
        page.callUuid === null &&
        !page.callFailed &&
        page.phone !== null
      );
    case 'hang_up':
      return page.hangUp === 'wanted' && page.callUuid !== null;
  }
};

/**
 * The page's call `requestId` (`pageRequestId`) while it is pending, with its attempts; null once it
 * is done, failed for good, or no longer wanted (a page stopped before its SMS went out sends
 * nothing).
 */
export const pendingPageRequest = (state: PagerState, requestId: string): PageRequest | null => {
  const cut = requestId.lastIndexOf(':');
  const pageId = requestId.slice(0, cut);
  const action = ACTIONS.find((a) => a === requestId.slice(cut + 1));
  const page = state.pages[pageId];
  if (!page || !action || !wants(page, action)) return null;
  return { ...(page.attempts[action] ?? FIRST_ATTEMPT), requestId, action, pageId };
};

export type PagerState = Readonly<{
  pages: Readonly<Record<string, PageView>>;
  /** Page ids in the order they were recorded. */
  order: readonly string[];
  /** Times of the pages actually sent (for the per-hour limit). */
  sentAt: readonly string[];
  optedOut: Readonly<{ phone: string; at: string }> | null;
}>;

const initialPagerState = (): PagerState => ({ pages: {}, order: [], sentAt: [], optedOut: null });

const withPage = (state: PagerState, page: PageView): PagerState => ({
  ...state,
  pages: { ...state.pages, [page.pageId]: page },
  order: state.pages[page.pageId] ? state.order : [...state.order, page.pageId],
});

const patch = (state: PagerState, pageId: string, change: Partial<PageView>): PagerState => {
  const page = state.pages[pageId];
  return page ? withPage(state, { ...page, ...change }) : state;
};

const newPage = (
  d: Readonly<{ pageId: string; reportTo: string; number: number | null; label: string; at: string }>,
  status: PageView['status'],
): PageView => ({
  pageId: d.pageId,
  notice: false,
  reportTo: d.reportTo,
  number: d.number,
  label: d.label,
  phone: null,
  status,
  requestedAt: d.at,
  callDueAt: null,
  messageUuid: null,
  smsFailed: false,
  callRequested: false,
  callUuid: null,
  callFailed: false,
  text: null,
  spokenText: null,
  since: null,
  stopReason: null,
  hangUp: 'none',
  attempts: {},
});

const withAttempts = (page: PageView, action: PageAction, attempts: UpstreamAttempts): PageView => ({
  ...page,
  attempts: { ...page.attempts, [action]: attempts },
});

const evolvePager = (state: PagerState, event: PagerEvent): PagerState => {
  switch (event.type) {
    case 'PageRequested': {
      const d = event.data;
      return {
        ...withPage(state, {
          ...newPage(d, 'requested'),
          phone: d.phone,
          callDueAt: d.callDueAt,
          text: d.text,
          spokenText: d.spokenText,
          since: d.since ?? null,
        }),
        sentAt: [...state.sentAt, d.at],
      };
    }
    case 'NoticeRequested': {
      const d = event.data;
      const subject = { pageId: d.pageId, reportTo: '', number: null, label: 'notice', at: d.at };
      // Not in `sentAt`: a notice never counts against the per-hour limit of pages.
      return withPage(state, {
        ...newPage(subject, 'requested'),
        notice: true,
        phone: d.phone,
        text: d.text,
      });
    }
    case 'NoticeSkipped': {
      const subject = {
        pageId: event.data.pageId,
        reportTo: '',
        number: null,
        label: 'notice',
        at: event.data.at,
      };
      return withPage(state, { ...newPage(subject, 'skipped'), notice: true });
    }
    case 'PageHeldBack':
      return withPage(state, newPage(event.data, 'held_back'));
    case 'PageSkipped':
      return withPage(state, newPage(event.data, 'skipped'));
    case 'PageSmsSent':
      return patch(state, event.data.pageId, { messageUuid: event.data.messageUuid });
    case 'PageSmsFailed':
      return patch(state, event.data.pageId, { smsFailed: true });
    case 'PageCallRequested':
      return patch(state, event.data.pageId, { callRequested: true });
    case 'PageCallPlaced': {
      // Placed while the page was being stopped for a hang-up reason: hang it up.
      const page = state.pages[event.data.pageId];
      const stoppedForHangUp =
        page?.status === 'stopped' && page.stopReason !== null && HANG_UP_REASONS.has(page.stopReason);
      return patch(state, event.data.pageId, {
        callUuid: event.data.callUuid,
        ...(stoppedForHangUp && page.hangUp === 'none' ? { hangUp: 'wanted' as const } : {}),
      });
    }
    case 'PageCallFailed':
      return patch(state, event.data.pageId, { callFailed: true });
    case 'PageUpstreamCallFailed': {
      const d = event.data;
      const page = state.pages[d.pageId];
      if (!page) return state;
      const failed = withFailedAttempt(page.attempts[d.action] ?? FIRST_ATTEMPT, d);
      return withPage(state, {
        ...withAttempts(page, d.action, failed),
        ...(d.final && d.action === 'hang_up' ? { hangUp: 'given_up' as const } : {}),
      });
    }
    case 'PageUpstreamCallRetried': {
      const d = event.data;
      const page = state.pages[d.pageId];
      if (!page) return state;
      return withPage(
        state,
        withAttempts(page, d.action, withRetry(page.attempts[d.action] ?? FIRST_ATTEMPT, d)),
      );
    }
    case 'PageCallHungUp':
      return patch(state, event.data.pageId, { hangUp: 'done' });
    case 'PageStopped': {
      const page = state.pages[event.data.pageId];
      const hangUp = page?.callUuid != null && HANG_UP_REASONS.has(event.data.reason);
      return patch(state, event.data.pageId, {
        status: 'stopped',
        stopReason: event.data.reason,
        ...(hangUp && page?.hangUp === 'none' ? { hangUp: 'wanted' as const } : {}),
      });
    }
    case 'PagingOptedOut':
      return { ...state, optedOut: { phone: event.data.phone, at: event.data.at } };
    default:
      return state;
  }
};

const pageOf = (state: PagerState, pageId: string, command: string): PageView => {
  const page = state.pages[pageId];
  if (!page) throw new DecisionRejected(`${command}: no page ${pageId}`, { reason: 'unknown_page', pageId });
  return page;
};

const decidePager = (command: PagerCommand, state: PagerState): PagerEvent[] => {
  const at = command.metadata.now;
  switch (command.type) {
    case 'RequestPage': {
      const d = command.data;
      if (state.pages[d.pageId]) return [];
      const subject = { pageId: d.pageId, reportTo: d.reportTo, number: d.number, label: d.label, at };
      const opt = state.optedOut;
      if (opt && opt.phone === d.phone && Date.parse(opt.at) >= Date.parse(d.phoneVerifiedAt)) {
        return [{ type: 'PageSkipped', data: { ...subject, reason: 'opted_out' } }];
      }
      const now = Date.parse(at);
      const inLastHour = state.sentAt.filter((t) => now - Date.parse(t) < HOUR_MS).length;
      if (inLastHour >= d.maxPerHour) {
        return [
          {
            type: 'PageHeldBack',
            data: { ...subject, pagesInLastHour: inLastHour, maxPerHour: d.maxPerHour },
          },
        ];
      }
      return [
        {
          type: 'PageRequested',
          data: {
            ...subject,
            phone: d.phone,
            text: d.text,
            spokenText: d.spokenText,
            ...(d.since ? { since: d.since } : {}),
            callDueAt: d.callAfterMs === null ? null : new Date(now + d.callAfterMs).toISOString(),
          },
        },
      ];
    }
    case 'RequestNotice': {
      const d = command.data;
      if (state.pages[d.pageId]) return [];
      const opt = state.optedOut;
      if (opt && opt.phone === d.phone && Date.parse(opt.at) >= Date.parse(d.phoneVerifiedAt)) {
        return [{ type: 'NoticeSkipped', data: { pageId: d.pageId, reason: 'opted_out', at } }];
      }
      return [{ type: 'NoticeRequested', data: { pageId: d.pageId, phone: d.phone, text: d.text, at } }];
    }
    case 'RecordPageSmsSent': {
      const page = pageOf(state, command.data.pageId, command.type);
      if (page.messageUuid !== null || page.smsFailed) return [];
      return [
        { type: 'PageSmsSent', data: { pageId: page.pageId, messageUuid: command.data.messageUuid, at } },
      ];
    }
    case 'RecordPageSmsFailed': {
      const page = pageOf(state, command.data.pageId, command.type);
      if (page.messageUuid !== null || page.smsFailed) return [];
      const { code, message } = command.data;
      return [{ type: 'PageSmsFailed', data: { pageId: page.pageId, code, message, at } }];
    }
    case 'PlacePageCall': {
      const page = pageOf(state, command.data.pageId, command.type);
      // A page stopped (acknowledged) before its call was due: no call, and nothing to refuse.
      if (page.status !== 'requested' || page.callRequested || page.callDueAt === null) return [];
      return [{ type: 'PageCallRequested', data: { pageId: page.pageId, at } }];
    }
    case 'RecordPageCallPlaced': {
      const page = pageOf(state, command.data.pageId, command.type);
      if (page.callUuid !== null || page.callFailed) return [];
      return [{ type: 'PageCallPlaced', data: { pageId: page.pageId, callUuid: command.data.callUuid, at } }];
    }
    case 'RecordPageCallFailed': {
      const page = pageOf(state, command.data.pageId, command.type);
      if (page.callUuid !== null || page.callFailed) return [];
      const { code, message } = command.data;
      return [{ type: 'PageCallFailed', data: { pageId: page.pageId, code, message, at } }];
    }
    case 'RecordPageUpstreamCallFailed': {
      const { slackUserId: _user, pageId, ...report } = command.data;
      pageOf(state, pageId, command.type);
      const fact = decideFailure(pendingPageRequest(state, report.requestId), report, at);
      if (!fact) return [];
      // A final failure of the SMS or the call is what it means for the page (the incident pages
      // someone else): the page's own fact, as a refusal is.
      if (fact.final && fact.action === 'sms') {
        return [{ type: 'PageSmsFailed', data: { pageId, code: fact.code, message: fact.message, at } }];
      }
      if (fact.final && fact.action === 'call') {
        return [{ type: 'PageCallFailed', data: { pageId, code: fact.code, message: fact.message, at } }];
      }
      return [{ type: 'PageUpstreamCallFailed', data: { ...fact, pageId } }];
    }
    case 'RetryPageUpstreamCall': {
      const { slackUserId: _user, pageId, ...retry } = command.data;
      pageOf(state, pageId, command.type);
      const fact = decideRetry(pendingPageRequest(state, retry.requestId), retry, at);
      return fact ? [{ type: 'PageUpstreamCallRetried', data: { ...fact, pageId } }] : [];
    }
    case 'RecordPageCallHungUp': {
      const page = pageOf(state, command.data.pageId, command.type);
      if (!wants(page, 'hang_up') || page.callUuid === null) return [];
      return [{ type: 'PageCallHungUp', data: { pageId: page.pageId, callUuid: page.callUuid, at } }];
    }
    case 'StopPage': {
      const page = pageOf(state, command.data.pageId, command.type);
      if (page.status !== 'requested') return [];
      return [{ type: 'PageStopped', data: { pageId: page.pageId, reason: command.data.reason, at } }];
    }
    case 'OptOutOfPaging':
      return [{ type: 'PagingOptedOut', data: { phone: command.data.phone, at } }];
    default:
      return exhaustive(command, 'pager command');
  }
};

/** One person's pages (`pager-<slackUserId>`). */
export const pagerDecider: Decider<PagerState, PagerCommand, PagerEvent> = {
  decide: decidePager,
  evolve: evolvePager,
  initialState: initialPagerState,
  parseEvent: parsePagerEvent,
  commandSchemas: pagerCommandDataSchemas,
};

/**
 * The page the person most recently got (sent, not held back), optionally the one about incident
 * `number`. Never a notice (`NoticeRequested`).
 */
export const latestPage = (state: PagerState, number: number | null = null): PageView | null => {
  for (let i = state.order.length - 1; i >= 0; i--) {
    const page = state.pages[state.order[i]!]!;
    if (page.notice) continue; // a notice is about no incident: a reply never acts on it
    if (page.status !== 'requested' && page.status !== 'stopped') continue;
    if (number === null || page.number === number) return page;
  }
  return null;
};

// ---------------------------------------------------------------- replies

/** The SMS answering a reply, while it is to be sent or after (its request id is the reply's id). */
export type ReplyAnswer = UpstreamAttempts &
  Readonly<{ text: string; status: 'pending' | 'sent' | 'given_up' }>;

export type PagerReplyState = Readonly<{
  received: Readonly<Record<string, PagerEventOf<'PagerReplyReceived'>['data']>>;
  handled: readonly string[];
  answers: Readonly<Record<string, ReplyAnswer>>;
}>;

/** The answer to reply `replyId` while it is to be sent, as an upstream request; null otherwise. */
export const pendingReplyAnswer = (
  state: PagerReplyState,
  replyId: string,
): (UpstreamRequest<'answer'> & Readonly<{ text: string }>) | null => {
  const a = state.answers[replyId];
  if (a?.status !== 'pending') return null;
  return {
    requestId: replyId,
    action: 'answer',
    attempt: a.attempt,
    failedAttempts: a.failedAttempts,
    nextAttemptAt: a.nextAttemptAt,
    text: a.text,
  };
};

const decideReply = (command: PagerReplyCommand, state: PagerReplyState): PagerEvent[] => {
  const at = command.metadata.now;
  switch (command.type) {
    case 'RecordPagerReply': {
      if (state.received[command.data.replyId]) return [];
      const { numberKey: _key, text, textLength, textHash, ...reply } = command.data;
      return [
        {
          type: 'PagerReplyReceived',
          data: {
            ...reply,
            textLength: textLength ?? recordedTextLength(text ?? ''),
            textHash: textHash ?? null,
            at,
          },
        },
      ];
    }
    case 'RecordPagerReplyOutcome': {
      const { phone: _phone, numberKey: _key, answer, ...d } = command.data;
      if (!state.received[d.replyId]) {
        throw new DecisionRejected(`no reply ${d.replyId}`, { reason: 'unknown_reply' });
      }
      if (state.handled.includes(d.replyId)) return [];
      return [{ type: 'PagerReplyHandled', data: { ...d, answer: answer ?? null, at } }];
    }
    case 'RecordPagerReplyAnswered': {
      if (!pendingReplyAnswer(state, command.data.replyId)) return [];
      const { replyId, messageUuid } = command.data;
      return [{ type: 'PagerReplyAnswered', data: { replyId, messageUuid, at } }];
    }
    case 'RecordPagerReplyAnswerFailed': {
      const { numberKey: _key, replyId: _reply, ...report } = command.data;
      const fact = decideFailure(pendingReplyAnswer(state, report.requestId), report, at);
      return fact ? [{ type: 'PagerReplyAnswerFailed', data: fact }] : [];
    }
    case 'RetryPagerReplyAnswer': {
      const { numberKey: _key, replyId: _reply, ...retry } = command.data;
      const fact = decideRetry(pendingReplyAnswer(state, retry.requestId), retry, at);
      return fact ? [{ type: 'PagerReplyAnswerRetried', data: fact }] : [];
    }
    default:
      return exhaustive(command, 'pager reply command');
  }
};

const withAnswer = (
  state: PagerReplyState,
  replyId: string,
  change: Partial<ReplyAnswer>,
): PagerReplyState => {
  const answer = state.answers[replyId];
  return answer ? { ...state, answers: { ...state.answers, [replyId]: { ...answer, ...change } } } : state;
};

const evolveReply = (state: PagerReplyState, event: PagerEvent): PagerReplyState => {
  switch (event.type) {
    case 'PagerReplyReceived':
      return { ...state, received: { ...state.received, [event.data.replyId]: event.data } };
    case 'PagerReplyHandled': {
      const { replyId, answer } = event.data;
      const handled = { ...state, handled: [...state.handled, replyId] };
      return answer === null
        ? handled
        : {
            ...handled,
            answers: { ...state.answers, [replyId]: { ...FIRST_ATTEMPT, text: answer, status: 'pending' } },
          };
    }
    case 'PagerReplyAnswered':
      return withAnswer(state, event.data.replyId, { status: 'sent' });
    case 'PagerReplyAnswerFailed': {
      const answer = state.answers[event.data.requestId];
      if (!answer) return state;
      return withAnswer(state, event.data.requestId, {
        ...withFailedAttempt(answer, event.data),
        ...(event.data.final ? { status: 'given_up' as const } : {}),
      });
    }
    case 'PagerReplyAnswerRetried': {
      const answer = state.answers[event.data.requestId];
      return answer ? withAnswer(state, event.data.requestId, withRetry(answer, event.data)) : state;
    }
    default:
      return state;
  }
};

/** What one phone number sent back (`pagerreply-<number key>`), and the SMS answers to it. */
export const pagerReplyDecider: Decider<PagerReplyState, PagerReplyCommand, PagerEvent> = {
  decide: decideReply,
  evolve: evolveReply,
  initialState: () => ({ received: {}, handled: [], answers: {} }),
  parseEvent: parsePagerEvent,
  commandSchemas: pagerReplyCommandDataSchemas,
};

// ---------------------------------------------------------------- receipts

/** Statuses already recorded, as `status|vendorTimestamp`. */
export type PageReceiptState = Readonly<{ seen: readonly string[] }>;

const receiptKey = (d: Readonly<{ status: string; vendorTimestamp: string | null }>): string =>
  `${d.status}|${d.vendorTimestamp ?? ''}`;

/** The receipts of one SMS or call (`pagerreceipt-<uuid>`): each status (and time) once. */
export const pageReceiptDecider: Decider<PageReceiptState, PageReceiptCommand, PagerEvent> = {
  decide: (command, state) => {
    if (state.seen.includes(receiptKey(command.data))) return [];
    return [{ type: 'PageReceiptReceived', data: { ...command.data, at: command.metadata.now } }];
  },
  evolve: (state, event) =>
    event.type === 'PageReceiptReceived' ? { seen: [...state.seen, receiptKey(event.data)] } : state,
  initialState: () => ({ seen: [] }),
  parseEvent: parsePagerEvent,
  commandSchemas: pageReceiptCommandDataSchemas,
};
