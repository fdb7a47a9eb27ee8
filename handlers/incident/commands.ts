import type { App } from '@slack/bolt';
import { commandMetadata, type SlackInput } from '../../src/application/inbox.ts';
import { asError, NotFoundError, ValidationError } from '../../src/core/errors.ts';
import { INCIDENT_USAGE, incidentHelp } from '../../src/incidents/blocks/incidentHelp.ts';
import {
  addIncidentNoteModal,
  reassignIncidentModal,
  triggerIncidentModal,
} from '../../src/incidents/blocks/incidentModals.ts';
import type { IncidentHandlerDeps } from '../../src/incidents/queries.ts';
import { type IncidentSlackCommand, slackAssignee } from '../../src/incidents/slackCommands.ts';
import type { HandlerDeps } from '../../src/lifecycles/lifecycle.ts';
import type { CoverAskAnswer } from '../../src/lifecycles/ports.ts';
import { mrkdwn, type SlackMessage, truncate } from '../../src/slack/blocks/format.ts';
import { code, decodeSlackText, escapeMrkdwn, mrkdwnText } from '../../src/slack/text.ts';
import { formatInZone } from '../../src/slack/time.ts';
import { slackInputOf } from '../middleware/slackInput.ts';
import { replies } from '../replies.ts';
import { withChannel } from './modals.ts';
import { type IncidentRequest, parseIncidentText, parseOnCallText, UNSUBSCRIBE_USAGE } from './parse.ts';
import { answerQuery, ephemeral, type IncidentCommandRequest, slackCommand } from './reply.ts';

export type IncidentListenerDeps = HandlerDeps & Readonly<{ incidents: IncidentHandlerDeps }>;

/** `timeline 42 all` (or `full`, `audit`; `history` too): the request without the last word. */
const TIMELINE_ALL = /^\s*((?:timeline|history)\s+\S+)\s+(?:all|full|audit)\s*$/i;

/**
 * The answer to a move, naming the incident: `label` is `#42 <title>` as stored, the person's
 * words, escaped here where it enters mrkdwn (a title `<!channel>` pings nobody).
 */
const PENDING: Readonly<Record<string, (label: string) => string>> = {
  ack: (l) =>
    `:hourglass_flowing_sand: Acknowledging ${l}… its card updates when the incident service confirms.`,
  resolve: (l) =>
    `:hourglass_flowing_sand: Resolving ${l}… its card updates when the incident service confirms.`,
  escalate: (l) =>
    `:hourglass_flowing_sand: Escalating ${l}… its card updates when the incident service confirms.`,
  note: (l) => `:hourglass_flowing_sand: Adding your note to ${l}…`,
  reassign: (l) =>
    `:hourglass_flowing_sand: Reassigning ${l}… its card updates when the incident service confirms.`,
};
const PENDING_TEXT = Object.fromEntries(
  Object.entries(PENDING).map(([sub, text]) => [sub, (label: string) => text(mrkdwnText(label, 300))]),
) as typeof PENDING;

/**
 * `/incident …` (see `/incident help`). Every input is recorded before the ack; moves become
 * commands that the inbox dispatcher hands to the incident decider after filling in who the user
 * is in the incident service; queries are answered from read models within the 3 s.
 */
export const registerIncidentCommand = (app: App, deps: IncidentListenerDeps): void => {
  const { inbox, logger } = deps;
  const { queries, openView } = deps.incidents;

  app.command('/incident', async ({ command, ack, respond, context }) => {
    const input: SlackInput = slackInputOf(context);
    // `/incident timeline <id> all`: the full audit. The word is taken off here so the shared
    // parser sees the plain `timeline <id>` it knows.
    // Decoded once, here: what Slack sent (`&amp;`, `<@U1|ana>`) → what the person typed.
    const typed = decodeSlackText(command.text);
    const fullAudit = TIMELINE_ALL.exec(typed);
    const request = parseIncidentText(fullAudit ? (fullAudit[1] ?? '') : typed);
    const channel = command.channel_id;

    const refuse = async (error: Error, text: string) => {
      await inbox.accept({ input, rejection: error });
      await ack(ephemeral(text));
    };
    const record = async (commands: IncidentSlackCommand[], text: string) => {
      await inbox.accept({ input, commands });
      await ack(ephemeral(text));
    };
    const openForm = async (what: string, view: Parameters<typeof openView>[1], fallback: string) => {
      try {
        await openView(command.trigger_id, view);
      } catch (e) {
        logger.warn({ err: asError(e) }, `could not open the ${what} form`);
        await respond(
          ephemeral(`:warning: Slack didn't let Switchboard open the ${what} form in time. ${fallback}`),
        );
      }
    };

    if ('error' in request) {
      await refuse(new ValidationError(request.error), replies.invalid(request.error, request.usage).text);
      return;
    }

    /** The incident a move names; answers and returns null when Switchboard does not know it. */
    const find = async (ref: string, sub: keyof typeof INCIDENT_USAGE) => {
      const found = await queries.findIncident(ref);
      if (!found) {
        const text = `:mag: Switchboard doesn't know incident ${/^\d+$/.test(ref) ? `#${ref}` : escapeMrkdwn(ref)}. Check \`/incident list\`, or the number in the incident service.`;
        await refuse(
          new NotFoundError(`no incident ${ref}`),
          `${text}\nUsage: ${escapeMrkdwn(INCIDENT_USAGE[sub])}`,
        );
      }
      return found;
    };

    const r: IncidentRequest = request;
    switch (r.sub) {
      case 'help':
        await inbox.accept({ input });
        await ack(ephemeral(incidentHelp()));
        return;

      case 'trigger':
        if (r.form) {
          await inbox.accept({ input });
          await ack();
          await openForm(
            'trigger',
            triggerIncidentModal({
              channel,
              ...(queries.triggerServices() ? { services: queries.triggerServices()! } : {}),
            }),
            `Use ${code(INCIDENT_USAGE.trigger)} instead.`,
          );
          return;
        }
        await record(
          [
            slackCommand(input, {
              type: 'TriggerIncident',
              data: {
                service: null,
                serviceQuery: r.serviceQuery,
                serviceAndTitle: r.serviceAndTitle,
                title: r.title,
                urgency: 'high',
                details: null,
                channel,
              },
            }),
          ],
          ':hourglass_flowing_sand: Creating the incident… its card appears in this channel as soon as the incident service has it.',
        );
        return;

      case 'list':
        await inbox.accept({ input });
        await answerQuery({ ack, respond, logger, what: 'the open incidents' }, () =>
          queries.list({ ...(r.service ? { service: r.service } : {}), now: input.receivedAt }),
        );
        return;

      case 'show':
      case 'timeline': {
        const found = await find(r.ref, r.sub);
        if (!found) return;
        await inbox.accept({ input });
        if (r.sub === 'show') {
          await answerQuery(
            { ack, respond, logger, what: 'the incident' },
            async () => (await queries.card(found.streamId)) ?? { text: 'Nothing to show yet.', blocks: [] },
          );
        } else {
          await answerQuery({ ack, respond, logger, what: 'the timeline' }, () =>
            queries.timeline(found.streamId, { full: fullAudit !== null }),
          );
        }
        return;
      }

      case 'ack':
      case 'resolve':
      case 'escalate': {
        const found = await find(r.ref, r.sub);
        if (!found) return;
        const { streamId } = found;
        const request: IncidentCommandRequest =
          r.sub === 'escalate'
            ? { type: 'EscalateIncident', data: { streamId, level: r.level } }
            : r.sub === 'resolve'
              ? { type: 'ResolveIncident', data: { streamId, resolution: r.resolution } }
              : { type: 'AcknowledgeIncident', data: { streamId } };
        await record([slackCommand(input, request)], PENDING_TEXT[r.sub]!(found.label));
        return;
      }

      case 'note': {
        const found = await find(r.ref, 'note');
        if (!found) return;
        if (r.content === null) {
          await inbox.accept({ input });
          await ack();
          await openForm(
            'note',
            withChannel(addIncidentNoteModal({ streamId: found.streamId, label: found.label }), channel),
            `Use ${code(INCIDENT_USAGE.note)} instead.`,
          );
          return;
        }
        await record(
          [
            slackCommand(input, {
              type: 'AddIncidentNote',
              data: { streamId: found.streamId, content: r.content },
            }),
          ],
          PENDING_TEXT.note!(found.label),
        );
        return;
      }

      case 'reassign': {
        const found = await find(r.ref, 'reassign');
        if (!found) return;
        if (r.users.length === 0) {
          await inbox.accept({ input });
          await ack();
          await openForm(
            'reassign',
            withChannel(reassignIncidentModal({ streamId: found.streamId, label: found.label }), channel),
            `Use ${code(INCIDENT_USAGE.reassign)} instead.`,
          );
          return;
        }
        await record(
          [
            slackCommand(input, {
              type: 'ReassignIncident',
              data: { streamId: found.streamId, assignees: r.users.map(slackAssignee) },
            }),
          ],
          PENDING_TEXT.reassign!(found.label),
        );
        return;
      }

      case 'subscribe':
      case 'unsubscribe': {
        if (r.service === null) {
          const usage = r.sub === 'subscribe' ? INCIDENT_USAGE.subscribe : UNSUBSCRIBE_USAGE;
          const current = await queries.subscriptions(channel);
          const now = current.length
            ? `This channel gets the cards of: ${current.map(escapeMrkdwn).join(', ')}.`
            : 'This channel is not subscribed to any service.';
          await refuse(
            new ValidationError('no service named'),
            replies.invalid(`Which service? ${now}`, usage).text,
          );
          return;
        }
        const type =
          r.sub === 'subscribe' ? 'SubscribeChannelToIncidents' : 'UnsubscribeChannelFromIncidents';
        await record(
          [slackCommand(input, { type, data: { serviceQuery: r.service, channel } })],
          r.sub === 'subscribe'
            ? `:hourglass_flowing_sand: Subscribing this channel to incidents of “${escapeMrkdwn(r.service)}”…`
            : `:hourglass_flowing_sand: Unsubscribing this channel from incidents of “${escapeMrkdwn(r.service)}”…`,
        );
        return;
      }
    }
  });
};

/**
 * `/oncall [service, schedule or @user]`: who is on call now and next, from the incident service
 * (answered within Slack's 3 s, or shortly after through the response_url when it is slow).
 */
export const registerOnCallCommand = (app: App, deps: IncidentListenerDeps): void => {
  const { inbox, logger, clock } = deps;
  const { queries } = deps.incidents;
  app.command('/oncall', async ({ command, ack, respond, context }) => {
    const input = slackInputOf(context);
    const request = parseOnCallText(decodeSlackText(command.text));
    if ('error' in request) {
      await inbox.accept({ input, rejection: new ValidationError(request.error) });
      await ack(replies.invalid(request.error, request.usage));
      return;
    }
    await inbox.accept({ input });
    if (request.kind === 'help') {
      await ack(ephemeral(incidentHelp()));
      return;
    }
    if (request.kind === 'cover') {
      // Issue 20: colleagues asked to cover the typist's own shifts (the time-off lifecycle's asks).
      const asks = deps.incidents.coverAsks?.();
      if (!asks) {
        await ack(
          ephemeral(
            ':information_source: Asking for cover needs time off switched on in Switchboard. Ask a colleague, then cover the shift in the incident service.',
          ),
        );
        return;
      }
      await answerQuery({ ack, respond, logger, what: 'your shifts to cover' }, async () =>
        coverAskReply(
          await asks.askForCover({
            person: { slackUserId: command.user_id },
            from: request.from,
            to: request.to,
            requestId: commandMetadata(input, 0).commandId,
          }),
        ),
      );
      return;
    }
    await answerQuery({ ack, respond, logger, what: 'who is on call' }, () =>
      queries.onCall({ target: request, now: clock.now() }),
    );
  });
};

/** What `/oncall cover` answers (times in the typist's zone; names and schedules escaped). */
const coverAskReply = (answer: CoverAskAnswer): SlackMessage => {
  const text =
    answer.kind === 'problem'
      ? `:warning: ${answer.text}`
      : answer.kind === 'none'
        ? ':white_check_mark: You have no on-call shift to cover then.'
        : [
            ':raising_hand: Asked for cover. The first to accept gets the override; you get a DM either way.',
            ...answer.shifts.map(
              (s) =>
                `• *${escapeMrkdwn(s.scheduleName)}*, ${formatInZone(s.start, answer.tz)} → ${formatInZone(s.end, answer.tz)}: ${
                  s.asked.length > 0
                    ? `asked ${s.asked.map((n) => escapeMrkdwn(n)).join(', ')}`
                    : 'nobody is free then: posted in its channel for anyone to take'
                }`,
            ),
          ].join('\n');
  return {
    text: truncate(text.replace(/\*/g, ''), 3000),
    blocks: [{ type: 'section', text: mrkdwn(truncate(text, 3000)) }],
  };
};
