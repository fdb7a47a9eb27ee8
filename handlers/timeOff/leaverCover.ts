import type {
  AllMiddlewareArgs,
  App,
  BlockAction,
  SlackActionMiddlewareArgs,
  ViewResponseAction,
} from '@slack/bolt';
import { commandMetadata, type SlackInput } from '../../src/application/inbox.ts';
import { ValidationError } from '../../src/core/errors.ts';
import type { Command } from '../../src/core/messages.ts';
import type { HandlerDeps } from '../../src/lifecycles/lifecycle.ts';
import type { ModalView } from '../../src/slack/blocks/format.ts';
import {
  LEAVER_ACTION,
  LEAVER_FIELD,
  LEAVER_VIEW,
  leaverCoverModal,
  readCoverButtonValue,
} from '../../src/timeOff/blocks/leaverReport.ts';
import { coverIdForAsk } from '../../src/timeOff/coverAskIds.ts';
import type { LeaverReport, LeaverShift } from '../../src/timeOff/leavers.events.ts';
import {
  LEAVERS_ACTOR,
  leaverShiftAskId,
  leaverShiftOpenCommand,
} from '../../src/timeOff/leavers.reactor.ts';
import { slackInputOf } from '../middleware/slackInput.ts';
import { ephemeral } from './common.ts';

/** What the leaver report's listeners get from the time-off module. */
export type LeaverCoverDeps = HandlerDeps &
  Readonly<{
    leavers: Readonly<{
      /** The recorded shift a (hostile) click or form names, posted in `channel`; or why not, in words. */
      shift(
        raw: Readonly<{ hrId: unknown; index: unknown }> | null,
        channel: unknown,
      ): Promise<Readonly<{ report: LeaverReport; shift: LeaverShift; channel: string }> | string>;
      openView(triggerId: string, view: ModalView): Promise<void>;
      /** A Slack user's name for the cover's record (`users.info`); null when Slack does not say. */
      displayName(slackUserId: string): Promise<string | null>;
      /** Issue 20: who the form offers (the schedule's colleagues, never the leaver nor anyone who left). */
      colleagues(
        report: LeaverReport,
        shift: LeaverShift,
      ): Promise<readonly Readonly<{ slackUserId: string; displayName: string }>[]>;
      now(): Date;
    }>;
  }>;

type ActionArgs = SlackActionMiddlewareArgs<BlockAction> & Pick<AllMiddlewareArgs, 'context'>;
type Ack = (response?: ViewResponseAction) => Promise<void>;

const SLACK_USER = /^[UW][A-Z0-9]{2,31}$/;
const NOT_A_SHIFT =
  ":warning: That button doesn't name a shift of a leaver report Switchboard posted here, so nothing was changed. Use the report's own buttons.";

/**
 * The leaver report's **Cover…** buttons (issue 12, capability 3) and their form. Everything in the
 * click and the form is hostile: the report and the shift are looked up in what Switchboard
 * recorded (`LeaverReportPrepared`), never read from the button, and must have been posted in the
 * channel clicked in; the covering person must be a Slack user other than the leaver. A forged or
 * misdirected click or form is refused, said to the clicker, and recorded. A good form becomes the
 * cover slice's `RequestCover` (one slot, reason `leaver`), its id derived from the shift and the
 * person, so a double submit covers once.
 */
export const registerLeaverCoverListeners = (app: App, deps: LeaverCoverDeps): void => {
  const { inbox, logger } = deps;
  const l = deps.leavers;

  const refuseClick = async (args: ActionArgs, input: SlackInput, why: string) => {
    logger.warn({ input: input.name, actor: input.actor, why }, 'a leaver cover click was refused');
    await inbox.accept({
      input,
      rejection: new ValidationError(why, { details: { reason: 'not_a_leaver_shift' } }),
    });
    await args.ack();
    await args.respond({ ...ephemeral(NOT_A_SHIFT), replace_original: false }).catch(() => undefined);
  };

  app.action(LEAVER_ACTION.cover, async (raw) => {
    const args = raw as unknown as ActionArgs;
    const input = slackInputOf(args.context);
    const action = args.action as { value?: unknown };
    const body = args.body as { channel?: { id?: unknown }; container?: { channel_id?: unknown } };
    const found = await l.shift(
      readCoverButtonValue(action.value),
      body.channel?.id ?? body.container?.channel_id,
    );
    if (typeof found === 'string') {
      await refuseClick(args, input, found);
      return;
    }
    await inbox.accept({ input });
    await args.ack();
    try {
      const colleagues = await l.colleagues(found.report, found.shift).catch((e: unknown) => {
        logger.warn({ err: e }, 'colleagues of a leaver shift unknown: the form offers anyone but them');
        return [];
      });
      await l.openView(
        args.body.trigger_id,
        leaverCoverModal(found.report, found.shift, found.channel, colleagues),
      );
    } catch (e) {
      logger.warn({ err: e }, 'could not open the leaver cover form');
      await args
        .respond({
          ...ephemeral(":warning: Slack didn't let Switchboard open the form in time. Click *Cover…* again."),
          replace_original: false,
        })
        .catch(() => undefined);
    }
  });

  app.view(LEAVER_VIEW.cover, async ({ ack, view, body, context }) => {
    const input = slackInputOf(context);
    const a = ack as Ack;
    const refuse = async (why: string, text: string) => {
      logger.warn({ input: input.name, actor: input.actor, why }, 'a leaver cover form was refused');
      await inbox.accept({
        input,
        rejection: new ValidationError(why, { details: { reason: 'leaver_cover' } }),
      });
      await a({ response_action: 'errors', errors: { [LEAVER_FIELD.block]: text } });
    };
    let meta: { hrId: unknown; index: unknown; channel: unknown } | null = null;
    try {
      meta = JSON.parse(view.private_metadata) as { hrId: unknown; index: unknown; channel: unknown };
    } catch {
      meta = null;
    }
    const found = await l.shift(meta, meta?.channel);
    if (typeof found === 'string') {
      await refuse(
        found,
        'This form does not match a leaver report Switchboard posted. Use the report’s Cover… button.',
      );
      return;
    }
    const values = view.state.values as Record<
      string,
      Record<string, { selected_user?: unknown; selected_option?: { value?: unknown } | null }>
    >;
    const picked = values[LEAVER_FIELD.block]?.[LEAVER_FIELD.action];
    // A select of colleagues (issue 20), or a users_select when none were known.
    const who = picked?.selected_option?.value ?? picked?.selected_user;
    if (typeof who !== 'string' || !SLACK_USER.test(who)) {
      await refuse('no person picked', 'Pick who covers the shift.');
      return;
    }
    const { report, shift } = found;
    if (who === report.slackUserId) {
      await refuse('the leaver picked to cover their own shift', 'They have left: pick someone else.');
      return;
    }
    const now = l.now();
    if (Date.parse(shift.end) <= now.getTime()) {
      await refuse('the shift is over', 'This shift is over: nothing to cover.');
      return;
    }
    const clicker = body.user.id;
    // Issue 20: the shift's ask (opened with the report) is taken: the first cover wins, a second
    // is refused naming the first (said in the channel), and the report is redrawn in place.
    const askId = leaverShiftAskId(report.hrId, shift);
    const command: Command = {
      type: 'AcceptCoverAsk',
      data: {
        askId,
        cover: {
          slackUserId: who,
          displayName: ((await l.displayName(who).catch(() => null)) ?? '').slice(0, 200),
        },
        by: clicker,
        coverId: coverIdForAsk(askId),
      },
      metadata: commandMetadata(input, 0, { channelId: found.channel }),
    };
    // The shift's ask opened first (nothing new when the report's processor opened it already;
    // a report posted before asks existed gets it now), in the report's name as that processor would.
    const open = leaverShiftOpenCommand(report, shift, {
      ...commandMetadata(input, 1, { channelId: found.channel }),
      actor: LEAVERS_ACTOR,
    });
    await inbox.accept({ input, commands: open ? [open, command] : [command] });
    await a();
  });
};
