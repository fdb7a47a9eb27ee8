import { asError } from '../core/errors.ts';
import type { RecordedEvent } from '../eventStore/eventStore.ts';
import { errorCodeOf } from '../processors/retryPolicy.ts';
import {
  type ParkedEvent,
  PROCESSOR_STREAM_PREFIX,
  type Processor,
  type ProcessorContext,
  processorStreamId,
} from '../processors/runner.ts';
import { mrkdwn } from './blocks/format.ts';
import { noticeLedger, type SlackOutbox } from './outbox.ts';

/**
 * `parked-notices` (issue 18, "never fail silently"): when any processor gives up on an event and
 * parks it (`ProcessorEventParked` in `processor-<id>`, see src/processors/runner.ts), the people
 * who were waiting on that work are told, in words, where they look; and so are the operators.
 *
 * - **People.** The lifecycle that owns the parked event's stream (by stream prefix, its
 *   `parkedNotices` hook, wired by the composition root: the kernel names no lifecycle) says whom
 *   to tell and what went wrong for them, in their words: the incident's card thread, a DM to the
 *   person who asked. The kernel adds what happens next ("Switchboard's operators have been
 *   told."). No stream, event id, processor, error code or exception text reaches them. One
 *   notice per stream, place and day (of the park): several processors parking the same event,
 *   or every later event of a stream that holds a corrupt one, tell people once that what they see
 *   may be out of date.
 * - **Operators.** With `SWITCHBOARD_OPERATORS_CHANNEL` set, every parked record is also posted
 *   there with what an operator needs: the processor, the event's type, stream, id and position,
 *   the error code, and how to read and replay it.
 * - **Nobody.** When the owner names no place (or no lifecycle owns the stream) and no operators
 *   channel is set, an error line `SB_PARKED_NOBODY_TOLD` says that nobody in Slack was told,
 *   beside the runner's `event parked` line and the `switchboard_processor_parked_events` gauge.
 *
 * Everything goes through the shared outbox, once per key (`parked-notices` ledger, records
 * `ParkedNoticeSent` in `parkedNotice-<uuid>`): a restart, a redelivery or a replay posts nothing
 * again. A notice that cannot be posted is never parked (parking it would park a notice of a
 * notice, forever): Slack's refusal, or a failure that lasts through the runner's in-process
 * attempts, is logged at error level with the stable code `SB_PARKED_NOTICE_UNDELIVERED`, and the
 * processor moves on. A park of this processor itself (it should not happen) is logged
 * (`SB_PARKED_NOTICE_SELF`) and not noticed again, so nothing can loop.
 *
 * @example
 * const notices = createParkedNoticesReactor({ outbox, ownerOf: (streamId) => owners.get(streamId), operatorsChannel });
 */

export const PARKED_NOTICES_PROCESSOR = 'parked-notices';

/** Where people are told, and what, in their words. */
export type ParkedNotice =
  /** In a channel, in the thread of `threadTs` when given (an incident's card). */
  | Readonly<{ channel: string; threadTs?: string | undefined; text: string }>
  /** In the app's DM with a person. */
  | Readonly<{ user: string; text: string }>;

/**
 * A lifecycle's answer to "an event of yours was parked: whom do I tell?" (its instance's
 * `parkedNotices`). `noticesFor` reads what it needs from the store (the stream may hold the
 * corrupt event that caused the park: read it raw, do not fold it through the schemas) and returns
 * the places to tell, or none. A throw is retried, then only operators are told.
 */
export type ParkedNotices = Readonly<{
  /** The streams it owns (`incident-`, `incidentpaging-`): the longest matching prefix wins. */
  streamPrefixes: readonly string[];
  noticesFor(parked: ParkedEvent, ctx: ProcessorContext): Promise<readonly ParkedNotice[]>;
}>;

/** The owner of a stream, as the composition root finds it. */
export type ParkedNoticeOwner = Readonly<{ lifecycle: string; notices: ParkedNotices }>;

export type ParkedNoticesOptions = Readonly<{
  outbox: SlackOutbox;
  /** The lifecycle owning a stream, or undefined (a kernel stream, or a lifecycle switched off). */
  ownerOf(streamId: string): ParkedNoticeOwner | undefined;
  /** SWITCHBOARD_OPERATORS_CHANNEL: every parked record is posted there too. */
  operatorsChannel?: string | undefined;
}>;

export const PARKED_NOTICE_LEDGER = noticeLedger({
  name: 'parked-notices',
  streamPrefix: 'parkedNotice-',
  streamSeed: 'parked-notice',
  eventSeed: 'parked-notice-sent',
  eventType: 'ParkedNoticeSent',
});

const message = (text: string) => ({ text, blocks: [{ type: 'section' as const, text: mrkdwn(text) }] });

const targetOf = (n: ParkedNotice): string => ('user' in n ? n.user : n.channel);
const placeOf = (n: ParkedNotice): string => ('user' in n ? `<@${n.user}>` : `<#${n.channel}>`);

/** What people read: the owner's words, and what happens next. */
export const peopleText = (n: ParkedNotice, operatorsChannel: string | undefined): string =>
  `:warning: ${n.text.trim()} ${
    operatorsChannel
      ? "Switchboard's operators have been told."
      : "This has been logged for Switchboard's operators."
  }`;

/** What operators read: everything they need to find, understand and replay the parked event. */
export const operatorsText = (
  parked: ParkedEvent,
  told: readonly ParkedNotice[],
  ownerLifecycle: string | undefined,
): string =>
  [
    `:rotating_light: Processor \`${parked.processorId}\` gave up on an event and parked it.`,
    `• Event: \`${parked.type}\` in \`${parked.streamId}\` (event id \`${parked.eventId}\`, position ${parked.position})`,
    `• Error: \`${parked.errorCode}\` after ${parked.attempts} attempt${parked.attempts === 1 ? '' : 's'} (the message is in the log line \`event parked\`)`,
    `• People told: ${
      told.length > 0
        ? told.map(placeOf).join(', ')
        : ownerLifecycle
          ? `nobody (${ownerLifecycle} names no one to tell)`
          : 'nobody (no lifecycle owns this stream)'
    }`,
    `• Read it: \`npm run events -- read ${processorStreamId(parked.processorId)}\`; once the cause is fixed, replay it with \`ProcessorRunner.replayParked('${parked.processorId}', '${parked.eventId}')\` (no CLI command yet).`,
  ].join('\n');

export const createParkedNoticesReactor = (options: ParkedNoticesOptions): Processor => {
  const { outbox, operatorsChannel } = options;

  /** Posts once under `key`; false (logged) when it cannot, never thrown at the last attempt. */
  const send = async (
    ctx: ProcessorContext,
    event: RecordedEvent,
    post: Readonly<{ key: string; channel: string; threadTs?: string | undefined; text: string }>,
    about: Readonly<Record<string, unknown>>,
  ): Promise<boolean> => {
    try {
      const result = await outbox.post(ctx, {
        ledger: PARKED_NOTICE_LEDGER,
        key: post.key,
        channel: post.channel,
        threadTs: post.threadTs,
        message: message(post.text),
        since: event.recordedAt,
      });
      if (result.outcome !== 'refused') return true;
      ctx.logger.error(
        {
          code: 'SB_PARKED_NOTICE_UNDELIVERED',
          ...about,
          channel: post.channel,
          slackError: result.slackError,
        },
        'Slack refused the notice of a parked event; it is not parked (see the event parked line)',
      );
      return false;
    } catch (error) {
      if (ctx.attempt < ctx.maxAttempts && !ctx.signal.aborted) throw error;
      ctx.logger.error(
        { code: 'SB_PARKED_NOTICE_UNDELIVERED', ...about, channel: post.channel, err: asError(error) },
        'the notice of a parked event could not be posted; it is not parked (see the event parked line)',
      );
      return false;
    }
  };

  return {
    id: PARKED_NOTICES_PROCESSOR,
    filter: { streamPrefixes: [PROCESSOR_STREAM_PREFIX], eventTypes: ['ProcessorEventParked'] },
    async handle(event, ctx) {
      const parked = event.data as unknown as ParkedEvent;
      const about = {
        parkedProcessor: parked.processorId,
        parkedStreamId: parked.streamId,
        parkedEventId: parked.eventId,
        parkedEventType: parked.type,
        parkedErrorCode: parked.errorCode,
      };
      if (parked.processorId === PARKED_NOTICES_PROCESSOR) {
        ctx.logger.error(
          { code: 'SB_PARKED_NOTICE_SELF', ...about },
          'a notice of a parked event was itself parked; it is not noticed again, and nobody in Slack was told',
        );
        return;
      }
      const owner = options.ownerOf(parked.streamId);
      let notices: readonly ParkedNotice[] = [];
      if (owner) {
        try {
          notices = await owner.notices.noticesFor(parked, ctx);
        } catch (error) {
          if (ctx.attempt < ctx.maxAttempts && !ctx.signal.aborted) throw error;
          ctx.logger.error(
            {
              code: 'SB_PARKED_NOTICE_UNDELIVERED',
              ...about,
              lifecycle: owner.lifecycle,
              errorCode: errorCodeOf(error),
              err: asError(error),
            },
            'who to tell about a parked event could not be found; only operators are told',
          );
        }
      }
      const told: ParkedNotice[] = [];
      for (const n of notices) {
        const target = targetOf(n);
        const sent = await send(
          ctx,
          event,
          {
            // Per stream, place and day: several processors parking one event, or every later
            // event of a stream holding a corrupt one, tell people once ("may be out of date").
            key: `people:${parked.streamId}:${target}:${parked.parkedAt.slice(0, 10)}`,
            channel: target,
            threadTs: 'user' in n ? undefined : n.threadTs,
            text: peopleText(n, operatorsChannel),
          },
          about,
        );
        if (sent) told.push(n);
      }
      let operatorsTold = false;
      if (operatorsChannel) {
        operatorsTold = await send(
          ctx,
          event,
          {
            // Per parked record: operators see each processor that gave up.
            key: `operators:${event.id}`,
            channel: operatorsChannel,
            text: operatorsText(parked, told, owner?.lifecycle),
          },
          about,
        );
      }
      if (told.length === 0 && !operatorsTold) {
        ctx.logger.error(
          { code: 'SB_PARKED_NOBODY_TOLD', ...about, lifecycle: owner?.lifecycle ?? null },
          `a parked event: nobody in Slack was told (${
            owner ? `${owner.lifecycle} names no one to tell` : 'no lifecycle owns its stream'
          }${operatorsChannel ? '' : '; set SWITCHBOARD_OPERATORS_CHANNEL to tell operators in Slack'})`,
        );
      } else {
        ctx.logger.info(
          { ...about, told: told.map(targetOf), operatorsTold },
          'people told about a parked event',
        );
      }
    },
  };
};
