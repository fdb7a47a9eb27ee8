import type { App } from '@slack/bolt';
import { ValidationError } from '../../src/core/errors.ts';
import { incidentHelp } from '../../src/slack/blocks/help.ts';
import { parseOnCallText } from '../incident/parse.ts';
import { answerQuery, ephemeral } from '../incident/reply.ts';
import { slackInputOf } from '../middleware/recordSlackInput.ts';
import { replies } from '../replies.ts';
import type { IncidentListenerDeps } from './incident.ts';

/**
 * `/oncall [service, schedule or @user]`: who is on call now and next, from the incident service
 * (answered within Slack's 3 s, or shortly after through the response_url when it is slow).
 */
export const registerOnCallCommand = (app: App, deps: IncidentListenerDeps): void => {
  const { inbox, logger, clock } = deps;
  const { queries } = deps.incidents;
  app.command('/oncall', async ({ command, ack, respond, context }) => {
    const input = slackInputOf(context);
    const request = parseOnCallText(command.text);
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
    await answerQuery({ ack, respond, logger, what: 'who is on call' }, () =>
      queries.onCall({ target: request, now: clock.now() }),
    );
  });
};
