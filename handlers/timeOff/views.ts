import type { App, ViewResponseAction } from '@slack/bolt';
import { DecisionRejected } from '../../machines/shared/machineDecider.ts';
import { checkAsk } from '../../machines/timeOff/decider.ts';
import type { SlackInput } from '../../src/application/inbox.ts';
import { asError, ChatOpsError, ValidationError } from '../../src/core/errors.ts';
import { truncate } from '../../src/slack/blocks/format.ts';
import { readDenySubmission, type ViewValues } from '../../src/timeOff/blocks/denyModal.ts';
import {
  readRequestModalMode,
  readRequestSubmission,
  requestErrorBlock,
  requestModalChannel,
  TIME_OFF_REQUEST_FIELD,
  TIME_OFF_REQUEST_VIEW,
} from '../../src/timeOff/blocks/requestModal.ts';
import { TIME_OFF_FIELD, TIME_OFF_VIEW } from '../../src/timeOff/blocks/timeOffIds.ts';
import type { RoutedRequest } from '../../src/timeOff/people.ts';
import { slackInputOf } from '../middleware/slackInput.ts';
import { cardFromMetadata } from './actions.ts';
import {
  askStanding,
  POLICY_BUDGET_LAST_MS,
  routed,
  routingOf,
  unmappedText,
  warnIfNobodyApproves,
} from './commands.ts';
import { type PolicyTypes, requestIdOf, timeOffCommand } from './common.ts';
import type { TimeOffListenerDeps } from './deps.ts';

type Ack = (response?: ViewResponseAction) => Promise<void>;

/**
 * Submissions of the time-off forms: the request form (new, or fixing one HR refused) and Deny
 * with reason. A form with problems is answered with errors on the field that is wrong (recorded
 * as refused); the rules (end before start, a one-day request with two portions, no working days)
 * are the decider's own `checkAsk`, so the form and the rules agree. A good form becomes the
 * command; the request's id is the command id of the submission (a UUID).
 */
export const registerTimeOffViews = (app: App, deps: TimeOffListenerDeps, policies: PolicyTypes): void => {
  const { inbox, logger } = deps;
  const t = deps.timeOff;

  const formErrors = async (input: SlackInput, ack: Ack, errors: Record<string, string>) => {
    await inbox.accept({
      input,
      rejection: new ValidationError(`form problems: ${Object.values(errors).join(' ')}`),
    });
    await ack({ response_action: 'errors', errors });
  };

  app.view(TIME_OFF_REQUEST_VIEW, async ({ ack, view, body, context }) => {
    const input = slackInputOf(context);
    const a = ack as Ack;
    const mode = readRequestModalMode(view.private_metadata);
    const F = TIME_OFF_REQUEST_FIELD;
    if (!mode) {
      await formErrors(input, a, {
        [F.policy.blockId]: 'This form is out of date: start again with /timeoff.',
      });
      return;
    }
    const names = await policies.get(POLICY_BUDGET_LAST_MS);
    const submission = readRequestSubmission(view.state.values as ViewValues, names);
    if (!submission.ok) {
      await formErrors(input, a, submission.errors);
      return;
    }
    const ask = submission.value;
    try {
      checkAsk(ask, t.holidays);
    } catch (e) {
      if (!(e instanceof DecisionRejected)) throw e;
      await formErrors(input, a, { [requestErrorBlock(e.details.reason, e.message)]: e.message });
      return;
    }
    const channel = requestModalChannel(view.private_metadata);
    const overrides = channel ? { channelId: channel } : {};
    /** Issue 20: own leave overlapping, or past days: said on the start date, where the days are picked. */
    const refusedStanding = async (words: string, reason: string) => {
      await inbox.accept({ input, rejection: new ValidationError(words, { details: { reason } }) });
      await a({
        response_action: 'errors',
        errors: { [F.start.blockId]: truncate(words.replace(/^:[a-z_]+: /, '').replace(/[*`]/g, ''), 300) },
      });
    };
    if (mode.mode === 'resubmit') {
      const fixing = await t.queries.view(mode.timeOffId);
      let standing = {};
      // Only new days are judged again (the decider's rule: the same days keep their approval).
      const sameDays =
        fixing !== null &&
        fixing.startDate === ask.startDate &&
        fixing.endDate === ask.endDate &&
        fixing.startPortion === ask.startPortion &&
        fixing.endPortion === ask.endPortion;
      if (fixing && !sameDays) {
        const s = await askStanding(t, fixing.requester.hrId, ask, fixing.zone ?? 'UTC', mode.timeOffId);
        if (!s.ok) {
          await refusedStanding(s.words, s.reason);
          return;
        }
        standing = s.value;
      }
      await inbox.accept({
        input,
        commands: [
          timeOffCommand(
            input,
            {
              type: 'ResubmitTimeOff',
              data: {
                timeOffId: mode.timeOffId,
                ...ask,
                holidays: [...t.holidays],
                approvalRules: t.approvalRules,
                ...standing,
              },
            },
            overrides,
          ),
        ],
      });
      await a();
      return;
    }
    let people: RoutedRequest;
    try {
      people = routed(await t.queries.route(body.user.id, ask.startDate), logger);
    } catch (e) {
      warnIfNobodyApproves(e, logger);
      const words = unmappedText(e);
      if (!words) logger.error({ err: asError(e) }, 'could not look up a time-off requester');
      await inbox.accept({
        input,
        rejection: e instanceof ChatOpsError ? e : new ValidationError('directory lookup failed'),
      });
      await a({
        response_action: 'errors',
        errors: {
          [F.policy.blockId]: truncate(
            (
              words ?? "Switchboard couldn't look you up in HR's directory just now. Try again in a minute."
            ).replace(/^:[a-z_]+: /, ''),
            300,
          ),
        },
      });
      return;
    }
    const zone = await t.zoneOf(body.user.id);
    const standing = await askStanding(t, people.requester.hrId, ask, zone);
    if (!standing.ok) {
      await refusedStanding(standing.words, standing.reason);
      return;
    }
    await inbox.accept({
      input,
      commands: [
        timeOffCommand(
          input,
          {
            type: 'RequestTimeOff',
            data: {
              timeOffId: requestIdOf(input),
              ...ask,
              requester: people.requester,
              approver: people.approver,
              holidays: [...t.holidays],
              approvalRules: t.approvalRules,
              ...routingOf(people),
              zone,
              ...standing.value,
            },
          },
          overrides,
        ),
      ],
    });
    await a();
  });

  app.view(TIME_OFF_VIEW.deny, async ({ ack, view, body, context }) => {
    const input = slackInputOf(context);
    const a = ack as Ack;
    const submission = readDenySubmission(view.state.values as ViewValues, view.private_metadata ?? '');
    if (!submission.ok) {
      await formErrors(input, a, submission.errors);
      return;
    }
    const card = cardFromMetadata(view.private_metadata);
    // Issue 12: a request in the HR channel: the member is checked again at submission, so a forged
    // form is answered in the form (the enrich step vouches for the member on the command itself).
    const hr = await t.queries.hrChannelCheck(submission.value.timeOffId, body.user.id);
    if (hr.kind === 'refused') {
      await inbox.accept({
        input,
        rejection: new ValidationError(hr.why, { details: { reason: hr.reason } }),
      });
      await a({
        response_action: 'errors',
        errors: { [TIME_OFF_FIELD.denyReason.blockId]: truncate(hr.text.replace(/^:[a-z_]+: /, ''), 300) },
      });
      return;
    }
    await inbox.accept({
      input,
      commands: [
        timeOffCommand(
          input,
          {
            type: 'DenyTimeOff',
            data: {
              timeOffId: submission.value.timeOffId,
              card,
              reason: submission.value.reason,
            },
          },
          // A refusal is said in the DM the form was opened from.
          card ? { channelId: card.channel } : {},
        ),
      ],
    });
    await a();
  });
};
