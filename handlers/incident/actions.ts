import type { AllMiddlewareArgs, App, BlockAction, SlackActionMiddlewareArgs } from '@slack/bolt';
import { isIncidentStreamId } from '../../machines/incident/streams.ts';
import { commandMetadata } from '../../src/application/inbox.ts';
import { ValidationError } from '../../src/core/errors.ts';
import { addIncidentNoteModal } from '../../src/incidents/blocks/incidentModals.ts';
import {
  askCoverModal,
  askingForCoverText,
  parseAskCoverValue,
} from '../../src/incidents/blocks/myShifts.ts';
import { slackAssignee } from '../../src/incidents/slackCommands.ts';
import { slackInputOf } from '../middleware/slackInput.ts';
import { coverAskAnswerText, type IncidentListenerDeps } from './commands.ts';
import { INCIDENT_ACTION, streamIdFromActionsBlockId } from './ids.ts';
import { withChannel } from './modals.ts';
import { ephemeral, type IncidentCommandRequest, slackCommand } from './reply.ts';

type ActionArgs = SlackActionMiddlewareArgs<BlockAction> & Pick<AllMiddlewareArgs, 'context'>;

const NOT_AN_INCIDENT =
  ":warning: That button doesn't belong to an incident Switchboard knows, so nothing was changed.";
const NOT_THIS_CARD =
  ":warning: That button doesn't match the card it was clicked on, so nothing was changed. Use the card's own buttons, or `/incident` with the incident's number.";

/**
 * The buttons on incident cards. A click is recorded and acknowledged at once; the move is decided
 * later against the incident's stream (inbox → enrichment → decider), so a double click, a second
 * user's click on a stale card and a Slack retry each end in one upstream write, and the refused
 * ones are told why ("Already acknowledged by <@U1> at 02:04 UTC") through the response_url.
 *
 * Button values carry only the stream id; who acts comes from the click's user, never from the
 * payload (the enrichment step maps them to their incident-service user). The incident a button
 * names must be the one of the card it was clicked on: its actions block id, and the card recorded
 * for the click's channel and message ts, if any, must name the same stream. A click that
 * disagrees is recorded as refused and changes nothing (a message that is no recorded card, such as
 * an ephemeral `/incident show`, is judged by the value alone).
 */
export const registerIncidentActions = (app: App, deps: IncidentListenerDeps): void => {
  const { inbox, logger } = deps;
  const { queries, openView } = deps.incidents;

  const streamOf = (args: ActionArgs): string | null => {
    const action = args.action as { value?: unknown; block_id?: string };
    const fromValue = typeof action.value === 'string' ? action.value : null;
    const id = fromValue ?? streamIdFromActionsBlockId(action.block_id);
    return id && isIncidentStreamId(id) ? id : null;
  };

  /** Does the card the click came from name another incident than `streamId`? */
  const cardDisagrees = async (args: ActionArgs, streamId: string): Promise<boolean> => {
    const action = args.action as { block_id?: unknown };
    const fromBlock =
      typeof action.block_id === 'string' ? streamIdFromActionsBlockId(action.block_id) : null;
    if (fromBlock && fromBlock !== streamId) return true;
    const body = args.body as {
      channel?: { id?: unknown } | null;
      container?: { channel_id?: unknown; message_ts?: unknown; is_ephemeral?: unknown } | null;
      message?: { ts?: unknown } | null;
    };
    const channel = body.channel?.id ?? body.container?.channel_id;
    const ts = body.container?.message_ts ?? body.message?.ts;
    if (typeof channel !== 'string' || typeof ts !== 'string' || body.container?.is_ephemeral === true)
      return false;
    const owner = await queries.cardOwner(channel, ts);
    return owner !== null && owner !== streamId;
  };

  const refuseMismatch = async (args: ActionArgs, input: ReturnType<typeof slackInputOf>) => {
    logger.warn({ input: input.name }, 'a button click names another incident than its card: refused');
    await inbox.accept({
      input,
      rejection: new ValidationError('the button names another incident than the card it is on'),
    });
    await args.ack();
    await args.respond(ephemeral(NOT_THIS_CARD)).catch(() => undefined);
  };

  /**
   * Records the click as the command `toCommand` builds for the incident the button names (or as
   * refused, when it names none or the click is incomplete) and acks.
   */
  const move =
    (toCommand: (streamId: string, args: ActionArgs) => IncidentCommandRequest | null) =>
    async (args: ActionArgs) => {
      const input = slackInputOf(args.context);
      const streamId = streamOf(args);
      if (streamId && (await cardDisagrees(args, streamId))) {
        await refuseMismatch(args, input);
        return;
      }
      const request = streamId ? toCommand(streamId, args) : null;
      if (!request) {
        await inbox.accept({ input, rejection: new ValidationError('action names no incident') });
        await args.ack();
        await args.respond(ephemeral(NOT_AN_INCIDENT)).catch(() => undefined);
        return;
      }
      await inbox.accept({ input, commands: [slackCommand(input, request)] });
      await args.ack();
    };

  app.action(
    INCIDENT_ACTION.acknowledge,
    move((streamId) => ({ type: 'AcknowledgeIncident', data: { streamId } })),
  );
  app.action(
    INCIDENT_ACTION.resolve,
    move((streamId) => ({ type: 'ResolveIncident', data: { streamId, resolution: null } })),
  );
  app.action(
    INCIDENT_ACTION.escalate,
    move((streamId) => ({ type: 'EscalateIncident', data: { streamId, level: null } })),
  );
  app.action(
    INCIDENT_ACTION.reassign,
    move((streamId, args) => {
      const picked = (args.action as { selected_user?: unknown }).selected_user;
      return typeof picked === 'string' && picked !== ''
        ? { type: 'ReassignIncident', data: { streamId, assignees: [slackAssignee(picked)] } }
        : null;
    }),
  );

  // The card's selects: the picked option is a request, checked later against the recorded list
  // (a priority id the incident service does not list is refused in words by the enricher).
  const picked = (args: ActionArgs): string | null => {
    const v = (args.action as { selected_option?: { value?: unknown } | null }).selected_option?.value;
    return typeof v === 'string' && v !== '' && v.length <= 150 ? v : null;
  };
  app.action(
    INCIDENT_ACTION.priority,
    move((streamId, args) => {
      const value = picked(args);
      return value ? { type: 'SetIncidentPriority', data: { streamId, priorityQuery: value } } : null;
    }),
  );
  app.action(
    INCIDENT_ACTION.urgency,
    move((streamId, args) => {
      const value = picked(args);
      return value === 'high' || value === 'low'
        ? { type: 'SetIncidentUrgency', data: { streamId, urgency: value } }
        : null;
    }),
  );

  // Add note: open the form inside the trigger window; the submission becomes the command.
  app.action(INCIDENT_ACTION.note, async (args) => {
    const a = args as unknown as ActionArgs;
    const input = slackInputOf(a.context);
    const streamId = streamOf(a);
    if (streamId && (await cardDisagrees(a, streamId))) {
      await refuseMismatch(a, input);
      return;
    }
    await inbox.accept({
      input,
      ...(streamId ? {} : { rejection: new ValidationError('action names no incident') }),
    });
    await a.ack();
    if (!streamId) {
      await a.respond(ephemeral(NOT_AN_INCIDENT)).catch(() => undefined);
      return;
    }
    const found = await queries.findIncident(streamId);
    try {
      await openView(
        a.body.trigger_id,
        withChannel(addIncidentNoteModal({ streamId, label: found?.label ?? 'Incident' }), input.channelId),
      );
    } catch (e) {
      logger.warn({ err: e }, 'could not open the note form');
      await a
        .respond(
          ephemeral(
            ":warning: Slack didn't let Switchboard open the note form in time. Use `/incident note &lt;number&gt; &lt;text&gt;` instead.",
          ),
        )
        .catch(() => undefined);
    }
  });

  // "Show" on a list row: the incident's card, ephemerally.
  app.action(INCIDENT_ACTION.show, async (args) => {
    const a = args as unknown as ActionArgs;
    const input = slackInputOf(a.context);
    const streamId = streamOf(a);
    await inbox.accept({ input });
    await a.ack();
    if (!streamId) {
      await a.respond(ephemeral(NOT_AN_INCIDENT)).catch(() => undefined);
      return;
    }
    const card = await queries.card(streamId);
    await a.respond(ephemeral(card ?? 'Nothing to show yet.'));
  });

  // "Ask for cover" on a shift in App Home (issue 20 item 4): asks colleagues to cover that shift,
  // the same ask `/oncall cover` opens (the time-off lifecycle's `coverAsks` port), limited to the
  // button's instants and to shifts the clicker really has then (the port reads the rota: a forged
  // or stale value finds none). App Home has no response_url: the answer is a modal, opened at once
  // and updated with who was asked. The click's input id makes the ask's ids: a redelivered click
  // opens nothing twice.
  app.action(INCIDENT_ACTION.askCover, async (args) => {
    const a = args as unknown as ActionArgs;
    const input = slackInputOf(a.context);
    const value = parseAskCoverValue((a.action as { value?: unknown }).value);
    await inbox.accept({
      input,
      ...(value ? {} : { rejection: new ValidationError('ask-for-cover button names no shift') }),
    });
    await a.ack();
    const show = async (text: string): Promise<string | undefined> => {
      try {
        return (await openView(a.body.trigger_id, askCoverModal(text))) ?? undefined;
      } catch (e) {
        logger.warn({ err: e }, 'could not open the ask-for-cover view');
        return undefined;
      }
    };
    if (!value) {
      await show(
        ":warning: That button doesn't name a shift Switchboard showed you. Open App Home again, or type `/oncall cover &lt;first day&gt; &lt;last day&gt;`.",
      );
      return;
    }
    const asks = deps.incidents.coverAsks?.();
    if (!asks) {
      await show(
        ':information_source: Asking for cover needs time off switched on in Switchboard. Ask a colleague, then cover the shift in the incident service.',
      );
      return;
    }
    const viewId = await show(askingForCoverText(value));
    let text: string;
    try {
      const answer = await asks.askForCover({
        person: { slackUserId: a.body.user.id },
        from: value.firstDay,
        to: value.lastDay,
        window: { start: value.start, end: value.end },
        requestId: commandMetadata(input, 0).commandId,
      });
      text =
        answer.kind === 'none'
          ? ":information_source: You aren't on call then any more (the rota changed), so nobody was asked. Open App Home again to see your shifts."
          : coverAskAnswerText(answer);
    } catch (e) {
      logger.warn({ err: e }, 'could not ask for cover from App Home');
      text =
        ':warning: Switchboard could not ask for cover just now (the incident service did not answer). Try again in a minute, or type `/oncall cover` with the days.';
    }
    if (viewId && deps.incidents.updateView) {
      try {
        await deps.incidents.updateView(viewId, askCoverModal(text));
      } catch (e) {
        logger.warn({ err: e }, 'could not update the ask-for-cover view');
      }
    }
  });
};
