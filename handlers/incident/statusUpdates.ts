import type { App } from '@slack/bolt';
import {
  type RecordIncidentStatusUpdate,
  type RecordIncidentThreadNote,
  slackTsTime,
} from '../../machines/incident/statusUpdates.ts';
import { isIncidentStreamId } from '../../machines/incident/streams.ts';
import { commandMetadata, type SlackInput } from '../../src/application/inbox.ts';
import { asError, ValidationError } from '../../src/core/errors.ts';
import { uuidv5 } from '../../src/core/ids.ts';
import type { CommandMetadata } from '../../src/core/messages.ts';
import { MAX_NOTE, type ViewValues } from '../../src/incidents/blocks/incidentModals.ts';
import {
  readStatusUpdateSubmission,
  statusUpdateModal,
} from '../../src/incidents/blocks/statusUpdateModal.ts';
import type { IncidentHandlerDeps } from '../../src/incidents/queries.ts';
import type { HandlerDeps } from '../../src/lifecycles/lifecycle.ts';
import { mention } from '../../src/slack/blocks/format.ts';
import { decodeSlackText, mrkdwnText, truncate } from '../../src/slack/text.ts';
import { slackInputOf } from '../middleware/slackInput.ts';
import { INCIDENT_ACTION, INCIDENT_SHORTCUT, INCIDENT_VIEW } from './ids.ts';
import { channelOf, withChannel } from './modals.ts';
import { ephemeral } from './reply.ts';

/**
 * Issue 22 items 2 and 3 at the Slack edge: the status update (`/incident update` is in
 * commands.ts; the card's "Post update" button and its form are here) and the message shortcut
 * "Add to timeline".
 *
 * Everything in a payload is hostile: a button's incident must be the card's; the shortcut's
 * message must be a reply in the thread of a card Switchboard posted (checked against the recorded
 * cards, never the payload's word), typed by a person (not a bot, not Switchboard's own lines).
 * Whether its author and the person using the shortcut are known in the incident service is
 * checked by the enricher (src/incidents/enrich.ts), which refuses in words.
 */

/** `/incident update <n> <text>` and the form's submission, as recorded. */
export const statusUpdateCommand = (
  input: SlackInput,
  streamId: string,
  text: string,
  overrides: Partial<CommandMetadata> = {},
): RecordIncidentStatusUpdate => {
  const metadata = commandMetadata(input, 0, overrides);
  return { type: 'RecordIncidentStatusUpdate', data: { streamId, by: metadata.actor, text }, metadata };
};

/** The same message added twice is one note: the command id is the message's. */
export const threadNoteCommandId = (channel: string, ts: string): string =>
  uuidv5(`incident-thread-note:${channel}:${ts}`);

const NOT_IN_A_CARD_THREAD =
  ':warning: “Add to timeline” works on replies in the thread of an incident card Switchboard posted; this message isn’t one, so nothing was added.';
const NOT_A_PERSON =
  ':warning: Only replies people typed can be added to an incident’s timeline (not Switchboard’s own lines or other apps’ messages).';
const NOTHING_TO_ADD = ':warning: That message has no text to add to the timeline.';

type ShortcutBody = Readonly<{
  user?: { id?: unknown } | null;
  channel?: { id?: unknown } | null;
  message_ts?: unknown;
  message?: {
    ts?: unknown;
    thread_ts?: unknown;
    user?: unknown;
    bot_id?: unknown;
    subtype?: unknown;
    text?: unknown;
  } | null;
}>;

/** What commands.ts calls IncidentListenerDeps (not imported from there: commands.ts imports this file). */
type IncidentListenerDeps = HandlerDeps & Readonly<{ incidents: IncidentHandlerDeps }>;

const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);

export const registerStatusUpdateListeners = (app: App, deps: IncidentListenerDeps): void => {
  const { inbox, logger } = deps;
  const { queries, openView } = deps.incidents;

  // The card's "Post update": the form, for the incident the card is about.
  app.action(INCIDENT_ACTION.update, async (args) => {
    const input = slackInputOf(args.context);
    const action = args.action as { value?: unknown };
    const value = str(action.value);
    const body = args.body as {
      channel?: { id?: unknown };
      container?: { message_ts?: unknown; is_ephemeral?: unknown };
    };
    const channel = str(body.channel?.id);
    const ts = str(body.container?.message_ts);
    const owner =
      channel && ts && body.container?.is_ephemeral !== true ? await queries.cardOwner(channel, ts) : null;
    const streamId = value && isIncidentStreamId(value) && (owner === null || owner === value) ? value : null;
    await inbox.accept({
      input,
      ...(streamId ? {} : { rejection: new ValidationError('the button names no incident of its card') }),
    });
    await args.ack();
    if (!streamId) {
      await args
        .respond(
          ephemeral(
            ":warning: That button doesn't belong to an incident Switchboard knows, so nothing was posted.",
          ),
        )
        .catch(() => undefined);
      return;
    }
    const found = await queries.findIncident(streamId);
    try {
      await openView(
        (args.body as { trigger_id: string }).trigger_id,
        withChannel(statusUpdateModal({ streamId, label: found?.label ?? 'Incident' }), input.channelId),
      );
    } catch (e) {
      logger.warn({ err: asError(e) }, 'could not open the status update form');
      await args
        .respond(
          ephemeral(
            ":warning: Slack didn't let Switchboard open the status update form in time. Use `/incident update &lt;number&gt; &lt;text&gt;` instead.",
          ),
        )
        .catch(() => undefined);
    }
  });

  app.view(INCIDENT_VIEW.update, async ({ ack, view, context }) => {
    const input = slackInputOf(context);
    const submission = readStatusUpdateSubmission(
      view.state.values as ViewValues,
      view.private_metadata ?? '',
    );
    if (!submission.ok) {
      await inbox.accept({
        input,
        rejection: new ValidationError(`form problems: ${Object.values(submission.errors).join(' ')}`),
      });
      await ack({ response_action: 'errors', errors: submission.errors });
      return;
    }
    if (!isIncidentStreamId(submission.value.streamId)) {
      await inbox.accept({ input, rejection: new ValidationError('form names no incident') });
      await ack();
      return;
    }
    const channel = channelOf(view.private_metadata);
    await inbox.accept({
      input,
      commands: [
        statusUpdateCommand(
          input,
          submission.value.streamId,
          submission.value.text,
          channel ? { channelId: channel } : {},
        ),
      ],
    });
    await ack();
  });

  // "Add to timeline" on a reply in a card's thread.
  app.shortcut(
    { callback_id: INCIDENT_SHORTCUT.addToTimeline, type: 'message_action' },
    async ({ ack, body, respond, context }) => {
      const input = slackInputOf(context);
      const b = body as unknown as ShortcutBody;
      const channel = str(b.channel?.id);
      const ts = str(b.message?.ts) ?? str(b.message_ts);
      const threadTs = str(b.message?.thread_ts);
      const author = str(b.message?.user);
      const refuse = async (why: string, text: string) => {
        await inbox.accept({ input, rejection: new ValidationError(why) });
        await ack();
        await respond(ephemeral(text)).catch(() => undefined);
      };
      const streamId =
        channel && ts && threadTs && threadTs !== ts ? await queries.cardOwner(channel, threadTs) : null;
      if (!channel || !ts || !streamId) {
        await refuse('the message is not a reply in a card thread', NOT_IN_A_CARD_THREAD);
        return;
      }
      if (!author || !/^[UW][A-Z0-9]{2,}$/.test(author) || b.message?.bot_id || b.message?.subtype) {
        await refuse('the message was not typed by a person', NOT_A_PERSON);
        return;
      }
      const content = truncate(decodeSlackText(String(b.message?.text ?? '')).trim(), MAX_NOTE);
      const at = slackTsTime(ts);
      if (content === '' || !at) {
        await refuse('the message has no text', NOTHING_TO_ADD);
        return;
      }
      const metadata = commandMetadata(input, 0, { commandId: threadNoteCommandId(channel, ts) });
      const command: RecordIncidentThreadNote = {
        type: 'RecordIncidentThreadNote',
        data: { streamId, by: author, addedBy: metadata.actor, content, channel, messageTs: ts, at },
        metadata,
      };
      await inbox.accept({ input, commands: [command] });
      await ack();
      const found = await queries.findIncident(streamId);
      await respond(
        ephemeral(
          `:memo: Adding ${mention(author)}'s reply to the timeline of ${mrkdwnText(found?.label ?? 'the incident', 300)}, at the time it was written.`,
        ),
      ).catch(() => undefined);
    },
  );
};
