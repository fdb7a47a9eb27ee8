import type { AllMiddlewareArgs, App, BlockAction, SlackActionMiddlewareArgs } from '@slack/bolt';
import { isIncidentStreamId } from '../../machines/incident/streams.ts';
import { commandMetadata, type SlackInput } from '../../src/application/inbox.ts';
import { ValidationError } from '../../src/core/errors.ts';
import { parseKeepButtonValue } from '../../src/incidents/ackReminders.reactor.ts';
import { slackInputOf } from '../middleware/slackInput.ts';
import type { IncidentListenerDeps } from './commands.ts';
import { INCIDENT_ACTION, streamIdFromActionsBlockId } from './ids.ts';
import { ephemeral } from './reply.ts';
import { incidentChannelCommand } from './workingCommands.ts';

type ActionArgs = SlackActionMiddlewareArgs<BlockAction> & Pick<AllMiddlewareArgs, 'context'>;

/**
 * The Slack edge of working an incident (issue 22 items 4 and 7): the acknowledge reminder's
 * "Still working on it" and the card's "Create channel". Like every button, a click is recorded
 * and acknowledged at once and decided later against what was recorded: who clicks comes from the
 * click, never from the value; the value is parsed strictly (an incident stream, an
 * acknowledgement id, a round) and the decider refuses, in words, a reminder that was not sent to
 * the person clicking, or one that was not sent at all.
 */
const NOT_A_REMINDER =
  ":warning: That button doesn't belong to a reminder Switchboard sent, so nothing was changed.";
const NOT_AN_INCIDENT =
  ":warning: That button doesn't belong to an incident Switchboard knows, so nothing was changed.";

export const registerIncidentWorkActions = (app: App, deps: IncidentListenerDeps): void => {
  const { inbox } = deps;

  const refuse = async (args: ActionArgs, input: SlackInput, text: string, why: string) => {
    await inbox.accept({ input, rejection: new ValidationError(why) });
    await args.ack();
    await args.respond(ephemeral(text)).catch(() => undefined);
  };

  app.action(INCIDENT_ACTION.keep, async (raw) => {
    const args = raw as unknown as ActionArgs;
    const input = slackInputOf(args.context);
    const parsed = parseKeepButtonValue((args.action as { value?: unknown }).value);
    if (!parsed) {
      await refuse(args, input, NOT_A_REMINDER, 'the button names no reminder');
      return;
    }
    const metadata = commandMetadata(input, 0);
    await inbox.accept({
      input,
      commands: [{ type: 'KeepIncidentAcknowledged', data: { ...parsed, by: metadata.actor }, metadata }],
    });
    // Decided later against the reminder as recorded: a refusal comes back through the
    // response_url; "noted" comes by DM once it is kept.
    await args.ack();
  });

  app.action(INCIDENT_ACTION.channel, async (raw) => {
    const args = raw as unknown as ActionArgs;
    const input = slackInputOf(args.context);
    const action = args.action as { value?: unknown; block_id?: unknown };
    const streamId = typeof action.value === 'string' ? action.value : null;
    const fromBlock =
      typeof action.block_id === 'string' ? streamIdFromActionsBlockId(action.block_id) : null;
    const body = args.body as {
      container?: { channel_id?: unknown; message_ts?: unknown; is_ephemeral?: unknown } | null;
    };
    const where = body.container;
    const owner =
      typeof where?.channel_id === 'string' &&
      typeof where.message_ts === 'string' &&
      where.is_ephemeral !== true
        ? await deps.incidents.queries.cardOwner(where.channel_id, where.message_ts)
        : null;
    if (
      !streamId ||
      !isIncidentStreamId(streamId) ||
      (fromBlock !== null && fromBlock !== streamId) ||
      (owner !== null && owner !== streamId)
    ) {
      await refuse(args, input, NOT_AN_INCIDENT, 'the button names no incident (or another than its card)');
      return;
    }
    await inbox.accept({ input, commands: [incidentChannelCommand(input, streamId)] });
    await args.ack();
  });
};
