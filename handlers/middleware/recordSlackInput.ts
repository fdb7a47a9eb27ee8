import type { AnyMiddlewareArgs, Middleware } from '@slack/bolt';
import type { Inbox } from '../../src/application/inbox.ts';
import type { Clock } from '../../src/core/clock.ts';
import { asError, hasCode } from '../../src/core/errors.ts';
import { ACK_STATE_KEY, type AckState } from '../../src/http/slackApp.ts';
import type { CommandOwner } from '../../src/lifecycles/compose.ts';
import type { Logger } from '../../src/logger.ts';
import { replies } from '../replies.ts';
import { buildSlackInput, SLACK_INPUT_KEY } from './slackInput.ts';

export { SLACK_INPUT_KEY, slackInputOf } from './slackInput.ts';

export type RecordSlackInputsDeps = Readonly<{
  inbox: Inbox;
  clock: Clock;
  logger: Logger;
  /** Slash command → the lifecycle that owns it (built or planned) and whether it is on. */
  commandOwners: ReadonlyMap<string, CommandOwner>;
  /** Each lifecycle's main command (`/incident`), suggested to someone who typed an unknown one. */
  helpCommands?: readonly string[];
  /** action_ids whose values are secrets (one-time codes): stored as `[Redacted]`. */
  sensitiveActionIds?: ReadonlySet<string>;
  /** Slash commands whose text is personal data: stored as `[Redacted]`. */
  sensitiveSlashCommands?: ReadonlySet<string>;
}>;

type AckFn = (response?: unknown) => Promise<void>;
const ackOf = (args: AnyMiddlewareArgs): AckFn | undefined =>
  'ack' in args && typeof args.ack === 'function' ? (args.ack as AckFn) : undefined;

/**
 * Global Bolt middleware, registered first. It
 * 1. builds the SlackInput of every request and puts it on `context.slackInput`;
 * 2. lets the listeners run (they parse, call `deps.inbox.accept(...)`, then `ack()`);
 * 3. afterwards, records any input no listener accepted (unknown commands and actions are
 *    recorded too) and acks it: slash commands get a helpful ephemeral answer (unknown command,
 *    or the owning lifecycle is switched off);
 * 4. if recording failed (store unavailable) and nothing was acked, acks slash commands with
 *    "nothing happened, try again" and rethrows, so events get a 5xx and Slack redelivers.
 */
export const recordSlackInputs = (deps: RecordSlackInputsDeps): Middleware<AnyMiddlewareArgs> => {
  const { inbox, clock, logger, commandOwners } = deps;
  return async (args) => {
    const { body, context, next } = args;
    const input = buildSlackInput(body as Record<string, unknown>, {
      receivedAt: clock.now(),
      retryNum: context.retryNum,
      retryReason: context.retryReason,
      ...(deps.sensitiveActionIds ? { sensitiveActionIds: deps.sensitiveActionIds } : {}),
      ...(deps.sensitiveSlashCommands ? { sensitiveSlashCommands: deps.sensitiveSlashCommands } : {}),
    });
    if (!input) {
      await next();
      return;
    }
    context[SLACK_INPUT_KEY] = input;
    const ackState = context[ACK_STATE_KEY] as AckState | undefined;
    const ack = ackOf(args);
    const needsAck = () => ack !== undefined && ackState?.acked !== true;

    try {
      await next();
      if (inbox.wasAccepted(input)) {
        if (needsAck()) {
          logger.warn(
            { input: input.name, kind: input.inputKind },
            'a listener recorded an input but did not ack it',
          );
          await ack?.();
        }
        return;
      }
      const owner = input.inputKind === 'slash_command' ? commandOwners.get(input.name) : undefined;
      const off = owner !== undefined && !owner.on;
      const rejection = off
        ? { code: 'SB_UNHANDLED' as const, message: `${owner.lifecycle} lifecycle is switched off` }
        : { code: 'SB_UNHANDLED' as const, message: `no listener handles ${input.inputKind} ${input.name}` };
      const receipt = await inbox.accept({ input, rejection });
      if (!receipt.deduplicated) {
        logger.debug({ input: input.name, kind: input.inputKind }, 'recorded an input no listener handled');
      }
      if (!needsAck()) return;
      if (input.inputKind === 'slash_command') {
        await ack?.(
          owner !== undefined && off
            ? replies.lifecycleOff(input.name, owner)
            : replies.unknownCommand(input.name, deps.helpCommands),
        );
      } else if (input.inputKind === 'options') {
        await ack?.({ options: [] });
      } else {
        await ack?.();
      }
    } catch (e) {
      if (needsAck()) {
        const unavailable = hasCode(e, 'SB_STORE_UNAVAILABLE');
        logger.error(
          { err: asError(e), input: input.name, kind: input.inputKind },
          'could not record a Slack input',
        );
        if (input.inputKind === 'slash_command' && unavailable) {
          await ack?.(replies.notRecorded());
          return;
        }
      }
      throw e;
    }
  };
};
