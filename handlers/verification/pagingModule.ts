import type { IncomingHttpHeaders } from 'node:http';
import type { PagerCommand, PagerReplyCommand } from '../../machines/verification/paging/commands.ts';
import {
  pageReceiptDecider,
  pagerDecider,
  pagerReplyDecider,
} from '../../machines/verification/paging/decider.ts';
import {
  pagerReceiptStreamId,
  pagerReplyStreamId,
  pagerStreamId,
} from '../../machines/verification/paging/streams.ts';
import type { CommandRoute } from '../../src/application/dispatch.ts';
import type { Command } from '../../src/core/messages.ts';
import type { WebhookVerification, WebhookVerifier } from '../../src/http/webhookRoutes.ts';
import type { LifecycleDeps } from '../../src/lifecycles/lifecycle.ts';
import type { Pager } from '../../src/lifecycles/ports.ts';
import type { Processor } from '../../src/processors/runner.ts';
import type { VonageClient } from '../../src/upstream/vonageContract.ts';
import { sendNoticeOnce } from '../../src/verification/notices.reactor.ts';
import { createPagingAnswersReactor } from '../../src/verification/paging/answers.reactor.ts';
import { createPagingDeliveryReactor } from '../../src/verification/paging/delivery.reactor.ts';
import { createPager } from '../../src/verification/paging/pager.ts';
import { createPagerIndex, type PagerIndex } from '../../src/verification/paging/pagerIndex.ts';
import { createPagingReceiptsReactor } from '../../src/verification/paging/receipts.reactor.ts';
import { createPagingRepliesReactor, pageOfKeys } from '../../src/verification/paging/replies.reactor.ts';
import type { PhoneSealer } from '../../src/verification/phone.ts';
import { pagingWebhookVerifiers } from './pagingWebhooks.ts';

/**
 * Paging, the verification lifecycle's half (issue 10 items 4-6): the `pager` port it offers the
 * incident lifecycle, the processors that send SMS pages and place calls, act on replies and keys
 * pressed, and put receipts on incident timelines, and the `/webhooks/vonage/messages` and
 * `/webhooks/vonage/voice` routes. The verification module spreads this into its instance:
 *
 * @example
 * const paging = createPaging({ deps, client, fromNumber: config.fromNumber, verifySignature });
 * return { routes: { ...routes, ...paging.routes }, processors: [...processors, ...paging.processors],
 *          webhooks: [...webhooks, ...paging.webhooks], provides: { ...paging.provides }, … };
 *
 * Who is paged, when, and what the page says is the incident lifecycle's business
 * (src/incidents/paging.reactor.ts); what was done with a reply goes back through its
 * `incidentResponse` port. Neither reaches into the other.
 */

export type PagingInput = Readonly<{
  deps: LifecycleDeps;
  /** The communications client; its `hangUpCall`, when it has one, ends calls nobody needs any more. */
  client: Pick<VonageClient, 'sendSms' | 'createCall'> & { hangUpCall?(uuid: string): Promise<void> };
  /** Our sending number, E.164 digits without `+` (VONAGE_FROM_NUMBER). */
  fromNumber: string;
  /** The signed-webhook check (HS256 JWT over the raw body). Must not throw. */
  verifySignature(rawBody: Buffer, headers: IncomingHttpHeaders): WebhookVerification;
  /**
   * Absolute URL of our `/webhooks/vonage/voice`, given to each call for its events and keys; when
   * unset, the vendor uses the application's event URL.
   */
  voiceEventUrl?: string;
  /** The keyed hash of a number (`PhoneSealer.key`): names the stream of replies from a number nobody verified. */
  phoneKey(digits: string): string;
  /**
   * How numbers are sealed: a person's under their data key (`sealFor`, `keyFor`), anyone else's
   * under the configured secret; `openAny` gives the digits back (null once the person is forgotten).
   */
  phones: Pick<PhoneSealer, 'seal' | 'sealFor' | 'keyFor' | 'openAny' | 'textKey'>;
  /** Deletes the person's data key (crypto-shredding): every number sealed under it is unreadable. */
  forgetKey(slackUserId: string): Promise<void>;
}>;

export type Paging = Readonly<{
  routes: Readonly<Record<string, CommandRoute>>;
  processors: readonly Processor[];
  webhooks: readonly WebhookVerifier[];
  pager: Pager;
  /** What the verification module offers the others: `{ pager }`. */
  provides: Readonly<{ pager: Pager }>;
  index: PagerIndex;
}>;

const PAGER_COMMANDS: readonly PagerCommand['type'][] = [
  'RequestPage',
  'RequestNotice',
  'RecordPageSmsSent',
  'RecordPageSmsFailed',
  'PlacePageCall',
  'RecordPageCallPlaced',
  'RecordPageCallFailed',
  'RecordPageUpstreamCallFailed',
  'RetryPageUpstreamCall',
  'RecordPageCallHungUp',
  'StopPage',
  'OptOutOfPaging',
];

const PAGER_REPLY_COMMANDS: readonly PagerReplyCommand['type'][] = [
  'RecordPagerReply',
  'RecordPagerReplyOutcome',
  'RecordPagerReplyAnswered',
  'RecordPagerReplyAnswerFailed',
  'RetryPagerReplyAnswer',
];

const route = (decider: unknown, streamId: (c: Command) => string): CommandRoute => ({
  decider: decider as CommandRoute['decider'],
  streamId,
});

export const createPaging = (input: PagingInput): Paging => {
  const { deps } = input;
  const openPhone = (sealed: string) => input.phones.openAny(sealed);
  const index = createPagerIndex({ store: deps.store, openPhone });
  const dispatch = () => (command: Command) => deps.dispatch(command);
  const incidentResponse = () => deps.ports.get('incidentResponse');
  const data = (c: Command) => c.data as Record<string, string>;
  /**
   * What someone sent, kept as a keyed hash instead of the text (one small function, so the key
   * behind it can move without touching the edge or the pager).
   */
  const keyedHash = (text: string): string => input.phones.textKey(text);
  const replies = deps.metrics.registry.counter(
    'switchboard_pager_replies_total',
    'Replies from phones (SMS, keys in a call) by what became of them; unknown_call: keys refused',
    ['via', 'outcome'],
  );
  /** The replies stream: the blind index the edge computed, or (older records) a key of the digits. */
  const numberKey = (c: Command): string => {
    const { numberKey: key, phone } = data(c);
    if (key) return key;
    if (!phone || !/^[0-9]{6,15}$/.test(phone)) throw new TypeError('not a phone number');
    return input.phoneKey(phone);
  };
  const pager = createPager({
    index,
    dispatch,
    now: () => deps.clock.now(),
    store: deps.store,
    people: deps.people,
    forgetKey: input.forgetKey,
  });
  /**
   * A number in a webhook, sealed before anything is recorded: under the data key of the person who
   * verified it (so forgetting them shreds it), else under the configured secret.
   */
  const sealInbound = async (digits: string): Promise<Readonly<{ phone: string; numberKey: string }>> => {
    await index.catchUp();
    const owner = index.personOfPhone(digits);
    if (owner) {
      return {
        phone: await input.phones.sealFor(owner, digits),
        numberKey: await input.phones.keyFor(owner, digits),
      };
    }
    return { phone: input.phones.seal(digits), numberKey: input.phoneKey(digits) };
  };
  return {
    routes: {
      ...Object.fromEntries(
        PAGER_COMMANDS.map((type) => [
          type,
          route(pagerDecider, (c) => pagerStreamId(data(c).slackUserId ?? '')),
        ]),
      ),
      ...Object.fromEntries(
        PAGER_REPLY_COMMANDS.map((type) => [
          type,
          route(pagerReplyDecider, (c) => pagerReplyStreamId(numberKey(c))),
        ]),
      ),
      RecordPageReceipt: route(pageReceiptDecider, (c) => pagerReceiptStreamId(data(c).vendorId ?? '')),
    },
    processors: [
      index.processor,
      ...(['sms', 'calls'] as const).map((which) =>
        createPagingDeliveryReactor(
          {
            client: input.client,
            from: input.fromNumber,
            voiceEventUrl: input.voiceEventUrl,
            dispatch,
            openPhone,
            zoneOf: async (slackUserId) => (await deps.readerZones.of(slackUserId)).tz,
          },
          which,
        ),
      ),
      createPagingRepliesReactor({
        index,
        dispatch,
        openPhone,
        incidentResponse,
        tellInSlack: (ctx, slackUserId, text, key) =>
          sendNoticeOnce(deps.outbox, ctx, key, slackUserId, {
            text,
            blocks: [{ type: 'section', text: { type: 'mrkdwn', text } }],
          }),
        forgetPhone: async (slackUserId) => {
          if (await deps.people.linkOf(slackUserId, 'phone')) {
            await deps.people.unlink(slackUserId, 'phone', 'opted_out');
          }
        },
        counted: (via, outcome) => replies.inc({ via, outcome }),
      }),
      createPagingAnswersReactor({ client: input.client, from: input.fromNumber, dispatch, openPhone }),
      createPagingReceiptsReactor({ index, incidentResponse }),
    ],
    webhooks: pagingWebhookVerifiers({
      verify: input.verifySignature,
      fromNumber: input.fromNumber,
      voiceEventUrl: input.voiceEventUrl,
      sealInbound,
      keyedHash,
      pageOfKeys: async (callUuid, digits) => {
        await index.catchUp();
        const page = pageOfKeys(index, callUuid, digits);
        return page ? { label: page.label } : null;
      },
    }),
    pager,
    provides: { pager },
    index,
  };
};
