import type { App } from '@slack/bolt';
import { commandMetadata, type SlackInput } from '../../src/application/inbox.ts';
import { asError, NotFoundError, ValidationError } from '../../src/core/errors.ts';
import { INCIDENT_USAGE, incidentHelp } from '../../src/incidents/blocks/incidentHelp.ts';
import {
  addIncidentNoteModal,
  reassignIncidentModal,
  triggerIncidentModal,
} from '../../src/incidents/blocks/incidentModals.ts';
import { statusUpdateModal } from '../../src/incidents/blocks/statusUpdateModal.ts';
import type { IncidentHandlerDeps, IncidentStanding } from '../../src/incidents/queries.ts';
import { type IncidentSlackCommand, slackAssignee } from '../../src/incidents/slackCommands.ts';
import type { HandlerDeps } from '../../src/lifecycles/lifecycle.ts';
import type { CoverAskAnswer } from '../../src/lifecycles/ports.ts';
import { mrkdwn, type SlackMessage, truncate } from '../../src/slack/blocks/format.ts';
import { code, decodeSlackText, escapeMrkdwn, mrkdwnText } from '../../src/slack/text.ts';
import { formatInZone } from '../../src/slack/time.ts';
import { PAGERDUTY_BULK_UPDATE_MAX } from '../../src/upstream/pagerduty.ts';
import { slackInputOf } from '../middleware/slackInput.ts';
import { replies } from '../replies.ts';
import { withChannel } from './modals.ts';
import { type IncidentRequest, parseIncidentText, parseOnCallText, UNSUBSCRIBE_USAGE } from './parse.ts';
import { answerQuery, ephemeral, type IncidentCommandRequest, slackCommand } from './reply.ts';
import { statusUpdateCommand } from './statusUpdates.ts';
import { incidentChannelCommand } from './workingCommands.ts';

export type IncidentListenerDeps = HandlerDeps & Readonly<{ incidents: IncidentHandlerDeps }>;

/** Incidents one bulk call takes at most (the vendor's `PUT /incidents` limit). */
const BULK_MAX = PAGERDUTY_BULK_UPDATE_MAX;
/** Incidents named one per line in a bulk move's answer (the rest are counted). */
const BULK_LINES = 30;

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
            async () => (await queries.show(found.streamId)) ?? { text: 'Nothing to show yet.', blocks: [] },
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

      case 'priority':
      case 'urgency': {
        const found = await find(r.ref, r.sub);
        if (!found) return;
        const { streamId } = found;
        const label = mrkdwnText(found.label, 300);
        if (r.sub === 'priority') {
          await record(
            [
              slackCommand(input, {
                type: 'SetIncidentPriority',
                data: { streamId, priorityQuery: r.priority },
              }),
            ],
            `:hourglass_flowing_sand: Setting the priority of ${label} to ${escapeMrkdwn(r.priority)}… its card updates when the incident service confirms.`,
          );
        } else {
          await record(
            [slackCommand(input, { type: 'SetIncidentUrgency', data: { streamId, urgency: r.urgency } })],
            `:hourglass_flowing_sand: Setting the urgency of ${label} to ${r.urgency}… its card updates when the incident service confirms.`,
          );
        }
        return;
      }

      case 'ackMine':
      case 'resolveMany': {
        const ack = r.sub === 'ackMine';
        const verb = ack ? 'acknowledge' : 'resolve';
        const take: IncidentStanding[] = [];
        const skipped: string[] = [];
        const skip = (label: string, why: string) => skipped.push(`• ${mrkdwnText(label, 200)}: ${why}`);
        if (ack) {
          for (const s of await queries.assignedTo(command.user_id)) {
            if (s.status !== 'triggered') continue; // acknowledged ones are not asked about
            if (s.statusInFlight) skip(s.label, `a ${s.statusInFlight} is already in progress`);
            else take.push(s);
          }
        } else {
          for (const ref of r.refs) {
            const found = await queries.findIncident(ref);
            const s = found ? await queries.standing(found.streamId) : null;
            if (!s) skip(`#${ref}`, "Switchboard doesn't know it");
            else if (s.status === 'resolved') skip(s.label, 'already resolved');
            else if (s.status === null) skip(s.label, 'not in the incident service yet');
            else if (s.statusInFlight === 'resolve') skip(s.label, 'a resolve is already in progress');
            else take.push(s);
          }
        }
        if (take.length === 0) {
          const none = ack
            ? ':white_check_mark: Nothing to acknowledge: no triggered incident is assigned to you.'
            : ':warning: None of those can be resolved now.';
          await refuse(
            new ValidationError(`nothing to ${verb}`),
            [none, ...skipped.slice(0, BULK_LINES)].join('\n'),
          );
          return;
        }
        // One command per incident (each decided, refused and answered on its own), chunked so
        // that each chunk goes upstream in one bulk call within the vendor's per-call limit.
        const limit = Math.max(1, Math.min(deps.incidents.bulkLimit ?? BULK_MAX, BULK_MAX));
        const ids = take.map((_, index) => commandMetadata(input, index).commandId);
        const commands: IncidentSlackCommand[] = take.map((s, index) => {
          const first = index - (index % limit);
          const chunk = take.slice(first, first + limit);
          const bulk = {
            batchId: ids[first]!,
            members: chunk.map((c, k) => ({ streamId: c.streamId, requestId: ids[first + k]! })),
          };
          const request: IncidentCommandRequest = ack
            ? { type: 'AcknowledgeIncident', data: { streamId: s.streamId, bulk } }
            : { type: 'ResolveIncident', data: { streamId: s.streamId, resolution: null, bulk } };
          return slackCommand(input, request, { commandId: ids[index]! });
        });
        const lines = take.map((s) => `• ${mrkdwnText(s.label, 200)}`);
        const text = [
          `:hourglass_flowing_sand: ${ack ? 'Acknowledging' : 'Resolving'} ${take.length} incident${take.length === 1 ? '' : 's'}… each card updates when the incident service confirms:`,
          ...lines.slice(0, BULK_LINES),
          ...(lines.length > BULK_LINES ? [`…and ${lines.length - BULK_LINES} more`] : []),
          ...(skipped.length
            ? [`Not ${ack ? 'acknowledged' : 'resolved'}:`, ...skipped.slice(0, BULK_LINES)]
            : []),
          ...(skipped.length > BULK_LINES ? [`…and ${skipped.length - BULK_LINES} more`] : []),
        ].join('\n');
        await record(commands, text);
        return;
      }

      case 'channel': {
        // Issue 22 item 7: the incident's own channel, once (src/incidents/incidentChannel.reactor.ts).
        const found = await find(r.ref, 'channel');
        if (!found) return;
        await inbox.accept({ input, commands: [incidentChannelCommand(input, found.streamId)] });
        await ack(
          ephemeral(
            `:hourglass_flowing_sand: Creating a channel for ${mrkdwnText(found.label, 300)}… everyone on the incident is invited, and its card is posted there.`,
          ),
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
        // Issue 22 item 3: `… stakeholders` is about the service's status updates, not its cards.
        const what = r.stakeholders ? 'the status updates of ' : '';
        await record(
          [
            slackCommand(input, {
              type,
              data: { serviceQuery: r.service, channel, ...(r.stakeholders ? { kind: 'stakeholders' } : {}) },
            }),
          ],
          r.sub === 'subscribe'
            ? `:hourglass_flowing_sand: Subscribing this channel to ${what}incidents of “${escapeMrkdwn(r.service)}”…`
            : `:hourglass_flowing_sand: Unsubscribing this channel from ${what}incidents of “${escapeMrkdwn(r.service)}”…`,
        );
        return;
      }

      // Issue 22 item 3: a status update for stakeholders (no text: the form).
      case 'update': {
        const found = await find(r.ref, 'update');
        if (!found) return;
        if (r.text === null) {
          await inbox.accept({ input });
          await ack();
          await openForm(
            'status update',
            withChannel(statusUpdateModal({ streamId: found.streamId, label: found.label }), channel),
            `Use ${code(INCIDENT_USAGE.update)} instead.`,
          );
          return;
        }
        await inbox.accept({ input, commands: [statusUpdateCommand(input, found.streamId, r.text)] });
        await ack(
          ephemeral(
            `:hourglass_flowing_sand: Posting your update on ${mrkdwnText(found.label, 300)} to its channels and stakeholders…`,
          ),
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
  const text = coverAskAnswerText(answer);
  return {
    text: truncate(text.replace(/\*/g, ''), 3000),
    blocks: [{ type: 'section', text: mrkdwn(truncate(text, 3000)) }],
  };
};

/** The words of a cover ask's answer (mrkdwn), for `/oncall cover` and App Home's "Ask for cover". */
export const coverAskAnswerText = (answer: CoverAskAnswer): string => {
  return answer.kind === 'problem'
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
};
