import type { AllMiddlewareArgs, App, BlockAction, SlackActionMiddlewareArgs } from '@slack/bolt';
import type { CardRef } from '../../machines/timeOff/events.ts';
import type { SlackInput } from '../../src/application/inbox.ts';
import { ValidationError } from '../../src/core/errors.ts';
import { escapeMrkdwn, type ModalView } from '../../src/slack/blocks/format.ts';
import { denyWithReasonModal } from '../../src/timeOff/blocks/denyModal.ts';
import { requestTimeOffModal } from '../../src/timeOff/blocks/requestModal.ts';
import {
  TIME_OFF_ACTION,
  timeOffIdFromActionsBlockId,
  timeOffIdFromValue,
} from '../../src/timeOff/blocks/timeOffIds.ts';
import { formatRange, formatWorkingDays, personText } from '../../src/timeOff/blocks/timeOffView.ts';
import { slackInputOf } from '../middleware/slackInput.ts';
import { POLICY_BUDGET_MS } from './commands.ts';
import { ephemeral, type PolicyTypes, timeOffCommand } from './common.ts';
import type { TimeOffListenerDeps } from './deps.ts';
import { todayIn } from './parse.ts';

type ActionArgs = SlackActionMiddlewareArgs<BlockAction> & Pick<AllMiddlewareArgs, 'context'>;

export const NOT_A_REQUEST =
  ":warning: That button doesn't name a time-off request Switchboard knows, so nothing was changed. Use the buttons of Switchboard's own DM.";
const NOT_THIS_CARD =
  ":warning: That button doesn't match the message it was clicked on, so nothing was changed. Use the request's own DM.";

const CHANNEL = /^[CDG][A-Z0-9]{2,30}$/;
const TS = /^\d{1,12}\.\d{1,8}$/;

/** The message a click came from, when it is a real (not ephemeral) message: the card it names. */
export const clickedCard = (args: ActionArgs): CardRef | null => {
  const body = args.body as {
    channel?: { id?: unknown } | null;
    container?: { channel_id?: unknown; message_ts?: unknown; is_ephemeral?: unknown } | null;
    message?: { ts?: unknown } | null;
  };
  if (body.container?.is_ephemeral === true) return null;
  const channel = body.channel?.id ?? body.container?.channel_id;
  const ts = body.container?.message_ts ?? body.message?.ts;
  return typeof channel === 'string' && typeof ts === 'string' && CHANNEL.test(channel) && TS.test(ts)
    ? { channel, ts }
    : null;
};

/** A card ref read back from a (hostile) private_metadata, or null. */
export const cardFromMetadata = (raw: string | undefined): CardRef | null => {
  try {
    const card = (JSON.parse(raw ?? '') as { card?: { channel?: unknown; ts?: unknown } }).card;
    return typeof card?.channel === 'string' &&
      typeof card.ts === 'string' &&
      CHANNEL.test(card.channel) &&
      TS.test(card.ts)
      ? { channel: card.channel, ts: card.ts }
      : null;
  } catch {
    return null;
  }
};

/**
 * The buttons of time-off messages: the approver's Approve / Deny / Deny with reason, the
 * requester's Cancel and, after HR refused a submission, Fix and send again. A click is recorded
 * and acknowledged at once; who may act is decided on the request's stream against the clicking
 * user (never a value) and the card clicked (its channel and ts), and a refusal reaches the clicker
 * through `rejectionText`. A request sent to the HR channel is decided by a member Slack vouches
 * for: the module's enrich step asks Slack, the decider judges. A value that is not one of our ids,
 * or that disagrees with the actions block it sits in, is refused here and recorded. Deny with
 * reason asks the decider's rule (through the queries) before it opens its form.
 */
export const registerTimeOffActions = (app: App, deps: TimeOffListenerDeps, policies: PolicyTypes): void => {
  const { inbox, logger } = deps;
  const t = deps.timeOff;

  /** The request the button names, 'mismatch' when its block names another, null when none. */
  const idOf = (args: ActionArgs): string | 'mismatch' | null => {
    const action = args.action as { value?: unknown; block_id?: unknown };
    const id = timeOffIdFromValue(action.value);
    if (id === null) return null;
    const fromBlock =
      typeof action.block_id === 'string' ? timeOffIdFromActionsBlockId(action.block_id) : null;
    return fromBlock !== null && fromBlock !== id ? 'mismatch' : id;
  };

  /** Refused at the edge: recorded with what was wrong, the clicker told. */
  const refuse = async (args: ActionArgs, input: SlackInput, why: string, text: string, reason: string) => {
    logger.warn({ input: input.name, actor: input.actor, reason }, 'a time-off click was refused');
    await inbox.accept({ input, rejection: new ValidationError(why, { details: { reason } }) });
    await args.ack();
    await args.respond({ ...ephemeral(text), replace_original: false }).catch(() => undefined);
  };

  /** Opens a form within the click's trigger; if Slack refuses (the trigger expired), says so to the clicker. */
  const openForm = async (args: ActionArgs, view: ModalView, what: string, again: string) => {
    try {
      await t.openView(args.body.trigger_id, view);
    } catch (e) {
      logger.warn({ err: e }, `could not open the ${what} form`);
      await args
        .respond({
          ...ephemeral(`:warning: Slack didn't let Switchboard open the form in time. ${again}`),
          replace_original: false,
        })
        .catch(() => undefined);
    }
  };

  const refuseId = (args: ActionArgs, input: SlackInput, id: 'mismatch' | null) =>
    id === 'mismatch'
      ? refuse(args, input, 'the button names another request than its message', NOT_THIS_CARD, 'other_card')
      : refuse(args, input, 'the button names no time-off request', NOT_A_REQUEST, 'unknown_request');

  const decide =
    (kind: 'approve' | 'deny' | 'cancel') =>
    async (raw: unknown): Promise<void> => {
      const args = raw as ActionArgs;
      const input = slackInputOf(args.context);
      const id = idOf(args);
      if (id === null || id === 'mismatch') {
        await refuseId(args, input, id);
        return;
      }
      const card = clickedCard(args);
      const command =
        kind === 'approve'
          ? timeOffCommand(input, { type: 'ApproveTimeOff', data: { timeOffId: id, card } })
          : kind === 'deny'
            ? timeOffCommand(input, { type: 'DenyTimeOff', data: { timeOffId: id, card, reason: null } })
            : timeOffCommand(input, { type: 'CancelTimeOff', data: { timeOffId: id } });
      await inbox.accept({ input, commands: [command] });
      await args.ack();
    };

  app.action(TIME_OFF_ACTION.approve, decide('approve'));
  app.action(TIME_OFF_ACTION.deny, decide('deny'));
  app.action(TIME_OFF_ACTION.cancel, decide('cancel'));

  // Deny with reason: the form opens within the trigger's 3 s; its submission is the command.
  app.action(TIME_OFF_ACTION.denyWithReason, async (raw) => {
    const args = raw as unknown as ActionArgs;
    const input = slackInputOf(args.context);
    const id = idOf(args);
    if (id === null || id === 'mismatch') {
      await refuseId(args, input, id);
      return;
    }
    // Who may deny is the decider's rule (and, for a request sent to HR, Slack's word on membership).
    const check = await t.queries.mayDecide(id, args.body.user.id);
    if (check.kind === 'unknown') {
      await refuse(args, input, 'the button names no time-off request', NOT_A_REQUEST, 'unknown_request');
      return;
    }
    if (check.kind === 'refused') {
      await refuse(args, input, check.why, check.text, check.reason);
      return;
    }
    const view = check.request;
    await inbox.accept({ input });
    await args.ack();
    const card = clickedCard(args);
    const modal = denyWithReasonModal({
      timeOffId: id,
      label: `Deny ${personText(view.requester)}'s *${escapeMrkdwn(view.policyType)}*, ${formatRange(view)} (${formatWorkingDays(view.workingDays)})?`,
    });
    // The card clicked travels with the form, so the decider checks it as for a click.
    await openForm(
      args,
      {
        ...modal,
        private_metadata: JSON.stringify({ timeOffId: id, ...(card ? { card } : {}) }),
      },
      'deny',
      'Click *Deny with reason* again.',
    );
  });

  // After HR refused the submission: the requester fixes the request in the form, prefilled.
  app.action(TIME_OFF_ACTION.resubmit, async (raw) => {
    const args = raw as unknown as ActionArgs;
    const input = slackInputOf(args.context);
    const id = idOf(args);
    if (id === null || id === 'mismatch') {
      await refuseId(args, input, id);
      return;
    }
    const names = policies.get(POLICY_BUDGET_MS);
    // Who may send it again, and when, is the decider's rule; the words are the button's.
    const check = await t.queries.mayResubmit(id, args.body.user.id);
    if (check.kind === 'unknown') {
      await refuse(args, input, 'the button names no time-off request', NOT_A_REQUEST, 'unknown_request');
      return;
    }
    if (check.kind === 'refused') {
      await (check.reason === 'not_requester'
        ? refuse(
            args,
            input,
            'someone other than the requester tried to resubmit',
            ':no_entry: Only the person who asked for this time off can send it again.',
            'not_requester',
          )
        : refuse(
            args,
            input,
            `the request is ${check.phase}, nothing to resubmit`,
            ':information_source: There is nothing to fix on this request any more: `/timeoff status` says where it stands.',
            'nothing_to_resubmit',
          ));
      return;
    }
    const view = check.request;
    await inbox.accept({ input });
    await args.ack();
    await openForm(
      args,
      requestTimeOffModal({
        mode: { mode: 'resubmit', timeOffId: id },
        policies: await names,
        today: todayIn(t.clock.now(), await t.zoneOf(args.body.user.id)),
        prefill: view,
        problem: view.failure,
      }),
      'resubmit',
      'Click the button again.',
    );
  });
};
