import type { App, RespondFn } from '@slack/bolt';
import { DecisionRejected } from '../../machines/shared/machineDecider.ts';
import type { OwnLeave } from '../../machines/timeOff/commands.ts';
import { checkAsk, checkStanding } from '../../machines/timeOff/decider.ts';
import type { ApproverSkip, TimeOffAsk, TimeOffPerson } from '../../machines/timeOff/events.ts';
import type { SlackInput } from '../../src/application/inbox.ts';
import { asError, ChatOpsError, hasCode, ValidationError } from '../../src/core/errors.ts';
import type { SlackMessage } from '../../src/slack/blocks/format.ts';
import { escapeMrkdwn } from '../../src/slack/blocks/format.ts';
import { code, decodeSlackText } from '../../src/slack/text.ts';
import { skipWords } from '../../src/timeOff/approversBlocks.ts';
import { requestAckText, timeOffHelp } from '../../src/timeOff/blocks/answers.ts';
import { requestTimeOffModal } from '../../src/timeOff/blocks/requestModal.ts';
import { shortTimeOffId } from '../../src/timeOff/blocks/timeOffIds.ts';
import { formatDay, formatRange, type TimeOffView } from '../../src/timeOff/blocks/timeOffView.ts';
import type { RoutedRequest } from '../../src/timeOff/people.ts';
import { calendarDayOf, pastAllowedFor, standingRefusalWords } from '../../src/timeOff/standing.ts';
import { slackInputOf } from '../middleware/slackInput.ts';
import { replies } from '../replies.ts';
import {
  type Ephemeral,
  ephemeral,
  type PolicyTypes,
  requestIdOf,
  timeOffCommand,
  within,
} from './common.ts';
import type { TimeOffListenerDeps } from './deps.ts';
import {
  type DayRange,
  findPolicy,
  parseTimeOffText,
  parseWhosOutText,
  TIMEOFF_USAGE,
  todayIn,
  WHOSOUT_USAGE,
} from './parse.ts';

/**
 * How long the edge waits for HR's policy types (when its cache is stale) before answering without
 * them, inside Slack's 3 s: a form still has to be opened after it; a typed request or a form's
 * submission only has its own checks left.
 */
export const POLICY_BUDGET_MS = 1_500;
export const POLICY_BUDGET_LAST_MS = 2_300;
/** How long a query waits before acking "Looking…" and answering through the response_url. */
const ANSWER_BUDGET_MS = 2_000;
/**
 * Longest wait for the asker's Slack zone (`users.info`, cached an hour) before an ack: past it
 * their days are UTC days for this answer, and the answer names the zone it used.
 */
const ZONE_BUDGET_MS = 1_000;

const ENDED = new Set(['denied', 'expired', 'cancelled']);

/** Issue 12: how the approver was found, as `RequestTimeOff` carries it (nothing when it is the manager). */
export const routingOf = (
  people: RoutedRequest,
): Readonly<{ skipped?: ApproverSkip[]; approverAwayUntil?: string }> => ({
  ...(people.skipped.length > 0 ? { skipped: [...people.skipped] } : {}),
  ...(people.approverAwayUntil ? { approverAwayUntil: people.approverAwayUntil } : {}),
});

/**
 * Issue 12: a request that can only wait for an approver who is away (the line ended, no HR
 * channel) is recorded and its requester told; an operator is warned here.
 */
export const routed = (people: RoutedRequest, logger: TimeOffListenerDeps['logger']): RoutedRequest => {
  if (people.approverAwayUntil) {
    logger.warn(
      { approverHrId: people.approver.hrId, until: people.approverAwayUntil, skipped: people.skipped.length },
      'time off: nobody in the reporting line can approve a request now and TIME_OFF_HR_CHANNEL is not set; it waits for an approver on leave',
    );
  }
  return people;
};

/** Issue 12: why the request goes to someone other than the manager, under the ack ('' when it does not). */
export const routingAckLine = (people: RoutedRequest): string => {
  const skipped = people.skipped.map(skipWords);
  if (people.approverAwayUntil) {
    return `\n:hourglass_flowing_sand: ${escapeMrkdwn(people.approver.displayName)} is on leave until ${formatDay(people.approverAwayUntil)} and nobody else can approve it now, so it waits for them.`;
  }
  return skipped.length === 0 ? '' : `\n:twisted_rightwards_arrows: ${skipped.join('; ')}.`;
};

/**
 * Issue 12: nobody at all can approve the person's time off (no manager, or everyone up the line
 * left) and no HR channel is set: the person is told why; an operator is warned here.
 */
export const warnIfNobodyApproves = (e: unknown, logger: TimeOffListenerDeps['logger']): void => {
  const reason = e instanceof ChatOpsError && e.code === 'SB_UNMAPPED_USER' ? e.details['reason'] : undefined;
  if (reason === 'no_manager' || reason === 'no_approver') {
    logger.warn(
      { reason },
      'time off: nobody can approve a request (no manager in HR, or everyone up the line left) and TIME_OFF_HR_CHANNEL is not set; it was refused',
    );
  }
};

/** The person's problem (not in HR, no manager…) in words, or null for any other failure. */
export const unmappedText = (e: unknown): string | null =>
  hasCode(e, 'SB_UNMAPPED_USER') ? `:bust_in_silhouette: ${e.message}` : null;

const LOOKUP_FAILED =
  ":warning: Switchboard couldn't look you up in HR's directory just now, so nothing was asked. Please try again in a minute.";

type AckFn = (body?: Ephemeral) => Promise<void>;

/** What `RequestTimeOff` / `ResubmitTimeOff` carry for the decider's `checkStanding` (issue 20). */
export type AskStanding = Readonly<{
  overlapping: OwnLeave[];
  calendarDay: ReturnType<typeof calendarDayOf>;
  pastAllowed: boolean;
}>;

/**
 * Issue 20: the ask judged at the edge by the decider's own rule (`checkStanding`) against the
 * requester's own leave and their day in `zone`: the fields the command carries, or the refusal in
 * words and its reason. The enrich step finds the same again right before the decider.
 */
export const askStanding = async (
  t: TimeOffListenerDeps['timeOff'],
  employeeHrId: string,
  ask: TimeOffAsk,
  zone: string,
  exclude?: string,
): Promise<
  Readonly<{ ok: true; value: AskStanding }> | Readonly<{ ok: false; words: string; reason: string }>
> => {
  const value: AskStanding = {
    overlapping: await t.queries.ownLeave(employeeHrId, ask, exclude),
    calendarDay: calendarDayOf(ask, zone, t.clock.now()),
    pastAllowed: pastAllowedFor(ask.policyType, t.pastPolicies),
  };
  try {
    checkStanding(ask, value);
    return { ok: true, value };
  } catch (e) {
    if (!(e instanceof DecisionRejected)) throw e;
    return {
      ok: false,
      words: standingRefusalWords(e.details, t.pastPolicies) ?? `:calendar: ${e.message}`,
      reason: String(e.details.reason),
    };
  }
};

/**
 * Answers within Slack's 3 s: with the answer in the ack when it is ready within the budget, else
 * "Looking…" and the answer through the response_url when it comes. Failures are answered in words.
 */
const answer = async (
  args: Readonly<{ ack: AckFn; respond: RespondFn; logger: TimeOffListenerDeps['logger']; what: string }>,
  work: () => Promise<SlackMessage | string>,
): Promise<void> => {
  const failed = (e: unknown): Ephemeral => {
    const person = unmappedText(e);
    if (person) return ephemeral(person);
    args.logger.error({ err: asError(e), query: args.what }, 'time-off query failed');
    return ephemeral(
      `:warning: Switchboard couldn't get ${args.what} just now. Please try again in a minute.`,
    );
  };
  const pending = work().then(
    (v) => ({ ok: true as const, v }),
    (e: unknown) => ({ ok: false as const, e }),
  );
  const first = await within(ANSWER_BUDGET_MS, pending, null);
  if (first === null) {
    await args.ack(ephemeral(`:hourglass_flowing_sand: Looking up ${args.what}…`));
    const r = await pending;
    await args.respond(r.ok ? ephemeral(r.v) : failed(r.e)).catch(() => undefined);
    return;
  }
  await args.ack(first.ok ? ephemeral(first.v) : failed(first.e));
};

/**
 * `/timeoff …` and `/whosout …`. Every input is recorded before its ack: the command parsed from
 * it, or the refusal with what was wrong; the acting person is the command's user, never a value
 * typed. A request's id is the command id of the input (a UUID).
 */
export const registerTimeOffCommands = (app: App, deps: TimeOffListenerDeps, policies: PolicyTypes): void => {
  const { inbox, logger } = deps;
  const t = deps.timeOff;
  /** The person's today, in their Slack time zone (and that zone, for the words that name it). */
  const dayOf = async (slackUserId: string): Promise<Readonly<{ today: string; zone: string }>> => {
    const zone = await within(
      ZONE_BUDGET_MS,
      t.zoneOf(slackUserId).catch(() => 'UTC'),
      'UTC',
    );
    return { today: todayIn(t.clock.now(), zone), zone };
  };
  const today = async (slackUserId: string): Promise<string> => (await dayOf(slackUserId)).today;

  const refuse = async (input: SlackInput, ack: AckFn, problem: string, error?: Error) => {
    await inbox.accept({ input, rejection: error ?? new ValidationError(problem) });
    await ack(replies.invalid(`:pencil2: ${problem}`, TIMEOFF_USAGE));
  };

  /**
   * The requester and approver of a request starting `firstDay` (around managers away or gone,
   * issue 12), or the words saying why not (the input is then recorded as refused).
   */
  const whoAsks = async (
    input: SlackInput,
    ack: AckFn,
    slackUserId: string,
    firstDay: string,
    /** False when only opening the form: nothing is asked yet, so no operator warning. */
    warn = true,
  ): Promise<RoutedRequest | null> => {
    try {
      const people = await t.queries.route(slackUserId, firstDay);
      return warn ? routed(people, logger) : people;
    } catch (e) {
      if (warn) warnIfNobodyApproves(e, logger);
      const words = unmappedText(e);
      if (!words) logger.error({ err: asError(e) }, 'could not look up a time-off requester');
      await inbox.accept({
        input,
        rejection:
          e instanceof ChatOpsError
            ? e
            : new ChatOpsError('SB_UPSTREAM_UNAVAILABLE', 'directory lookup failed'),
      });
      await ack(ephemeral(words ?? LOOKUP_FAILED));
      return null;
    }
  };

  const openForm = async (
    input: SlackInput,
    ack: AckFn,
    respond: RespondFn,
    slackUserId: string,
    triggerId: string,
  ) => {
    const names = policies.get(POLICY_BUDGET_MS);
    const day = await today(slackUserId);
    const people = await whoAsks(input, ack, slackUserId, day, false);
    if (!people) return;
    await inbox.accept({ input });
    await ack();
    try {
      await t.openView(
        triggerId,
        requestTimeOffModal({
          mode: { mode: 'request' },
          policies: await names,
          today: day,
          channel: input.channelId,
        }),
      );
    } catch (e) {
      logger.warn({ err: e }, 'could not open the time-off form');
      await respond(
        ephemeral(
          ":warning: Slack didn't let Switchboard open the form in time. Try `/timeoff` again, or type it: `/timeoff holiday 2026-12-03`.",
        ),
      ).catch(() => undefined);
    }
  };

  const request = async (input: SlackInput, ack: AckFn, slackUserId: string, text: string) => {
    // Both looked up at once: the ack's 3 s are shared.
    const asker = dayOf(slackUserId);
    const names = await policies.get(POLICY_BUDGET_LAST_MS);
    const { today: day, zone } = await asker;
    const parsed = parseTimeOffText(text, names, day);
    if (!parsed.ok) {
      await refuse(input, ack, parsed.problem);
      return;
    }
    const ask: TimeOffAsk = parsed.value.ask;
    let workingDays: number;
    try {
      workingDays = checkAsk(ask, t.holidays);
    } catch (e) {
      if (!(e instanceof DecisionRejected)) throw e;
      await inbox.accept({
        input,
        rejection: new ValidationError(e.message, { details: { reason: String(e.details.reason) } }),
      });
      await ack(ephemeral(`:calendar: ${e.message}`));
      return;
    }
    const people = await whoAsks(input, ack, slackUserId, ask.startDate);
    if (!people) return;
    const standing = await askStanding(t, people.requester.hrId, ask, zone);
    if (!standing.ok) {
      await inbox.accept({
        input,
        rejection: new ValidationError(standing.words, { details: { reason: standing.reason } }),
      });
      await ack(ephemeral(standing.words));
      return;
    }
    const timeOffId = requestIdOf(input);
    await inbox.accept({
      input,
      commands: [
        timeOffCommand(input, {
          type: 'RequestTimeOff',
          data: {
            timeOffId,
            ...ask,
            requester: people.requester,
            approver: people.approver,
            holidays: [...t.holidays],
            approvalRules: t.approvalRules,
            ...routingOf(people),
            zone,
            ...standing.value,
          },
        }),
      ],
    });
    await ack(
      ephemeral(
        requestAckText({
          approverName: people.approver.displayName,
          ...ask,
          workingDays,
          timeOffId,
          policyUnchecked: names === null,
        }) + routingAckLine(people),
      ),
    );
  };

  const cancel = async (input: SlackInput, ack: AckFn, slackUserId: string, idText: string) => {
    if (idText === '') {
      await refuse(
        input,
        ack,
        `Say which request: ${code('/timeoff cancel <id>')}, with the short id \`/timeoff status\` shows.`,
      );
      return;
    }
    const prefix = idText.toLowerCase();
    // The short id (`/timeoff status` shows 6 characters), or more of the id to tell two apart.
    const matches: TimeOffView[] = !/^[0-9a-f-]{4,36}$/.test(prefix)
      ? []
      : await t.queries.ownRequests(slackUserId, prefix);
    const shown = `\`${escapeMrkdwn(idText.slice(0, 40))}\``;
    if (matches.length === 0) {
      await inbox.accept({
        input,
        rejection: new ValidationError(`no request of yours with id ${idText.slice(0, 40)}`),
      });
      await ack(
        ephemeral(
          `:mag: You have no time-off request with the id ${shown}. \`/timeoff status\` lists yours with their ids.`,
        ),
      );
      return;
    }
    const open = matches.filter((v) => !ENDED.has(v.phase));
    if (open.length === 0) {
      const v = matches[0]!;
      await inbox.accept({
        input,
        rejection: new ValidationError(`request ${shortTimeOffId(v.timeOffId)} is ${v.phase}`),
      });
      await ack(
        ephemeral(
          `:information_source: Your ${escapeMrkdwn(v.policyType)} request for ${formatRange(v)} (\`${shortTimeOffId(v.timeOffId)}\`) is already ${v.phase}: nothing to cancel.`,
        ),
      );
      return;
    }
    if (open.length > 1) {
      await inbox.accept({
        input,
        rejection: new ValidationError(`id ${idText.slice(0, 40)} names ${open.length} requests`),
      });
      const list = open
        .map((v) => `• \`${v.timeOffId}\` ${escapeMrkdwn(v.policyType)}, ${formatRange(v)}`)
        .join('\n');
      await ack(
        ephemeral(
          `:twisted_rightwards_arrows: ${shown} starts more than one of your requests; say which with more of its id:\n${list}`,
        ),
      );
      return;
    }
    const v = open[0]!;
    await inbox.accept({
      input,
      commands: [timeOffCommand(input, { type: 'CancelTimeOff', data: { timeOffId: v.timeOffId } })],
    });
    await ack(
      ephemeral(
        `:hourglass_flowing_sand: Cancelling your *${escapeMrkdwn(v.policyType)}* request for ${formatRange(v)} (\`${shortTimeOffId(v.timeOffId)}\`)…${['approved', 'submitted', 'confirmed'].includes(v.phase) ? ' It was approved, so Switchboard cancels it in HR too and DMs you when HR has.' : ''}`,
      ),
    );
  };

  const balance = async (
    input: SlackInput,
    ack: AckFn,
    respond: RespondFn,
    slackUserId: string,
    named: string,
  ) => {
    let person: TimeOffPerson;
    try {
      person = await t.queries.employee(slackUserId);
    } catch (e) {
      const words = unmappedText(e);
      if (!words) logger.error({ err: asError(e) }, 'could not look up a time-off requester');
      await inbox.accept({
        input,
        rejection: e instanceof ChatOpsError ? e : new ValidationError('directory lookup failed'),
      });
      await ack(ephemeral(words ?? LOOKUP_FAILED));
      return;
    }
    const names = await policies.get(POLICY_BUDGET_MS);
    let asked: readonly string[];
    if (named !== '') {
      const found = names ? findPolicy(named, names) : named.slice(0, 100);
      if (!found) {
        await refuse(
          input,
          ack,
          `\`${escapeMrkdwn(named.slice(0, 40))}\` is not a time-off policy in HR. HR knows: ${names!.map((p) => `\`${escapeMrkdwn(p)}\``).join(', ')}.`,
        );
        return;
      }
      asked = [found];
    } else if (names === null) {
      await inbox.accept({
        input,
        rejection: new ChatOpsError('SB_UPSTREAM_UNAVAILABLE', 'HR policy types unavailable'),
      });
      await ack(
        ephemeral(
          ":warning: HR isn't answering just now, so Switchboard can't list your balances. Try again in a minute, or name the policy: `/timeoff balance holiday`.",
        ),
      );
      return;
    } else {
      asked = names;
    }
    await inbox.accept({ input });
    const { today: date, zone } = await dayOf(slackUserId);
    await answer({ ack, respond, logger, what: 'your balance in HR' }, () =>
      t.queries.balance(person, asked, date, zone),
    );
  };

  app.command('/timeoff', async ({ command, ack, respond, context }) => {
    const input = slackInputOf(context);
    const slackUserId = command.user_id;
    // Decoded once, here: `&amp;` and friends → what the person typed (the note is their words).
    const text = decodeSlackText(command.text).trim();
    const [first = '', ...restWords] = text.split(/\s+/);
    const word = first.toLowerCase();
    const rest = restWords.join(' ').trim();
    const a = ack as AckFn;
    if (text === '') {
      await openForm(input, a, respond, slackUserId, command.trigger_id);
      return;
    }
    if (word === 'help' && rest === '') {
      await inbox.accept({ input });
      await a(ephemeral(timeOffHelp()));
      return;
    }
    if (word === 'status' && rest === '') {
      await inbox.accept({ input });
      await a(ephemeral(await t.queries.status(slackUserId)));
      return;
    }
    if (word === 'cancel') {
      await cancel(input, a, slackUserId, rest);
      return;
    }
    if (word === 'balance') {
      await balance(input, a, respond, slackUserId, rest);
      return;
    }
    await request(input, a, slackUserId, text);
  });

  app.command('/whosout', async ({ command, ack, respond, context }) => {
    const input = slackInputOf(context);
    const a = ack as AckFn;
    const typed = decodeSlackText(command.text);
    if (typed.trim().toLowerCase() === 'help') {
      await inbox.accept({ input });
      await a(ephemeral(timeOffHelp()));
      return;
    }
    const { today: day, zone } = await dayOf(command.user_id);
    const parsed = parseWhosOutText(typed, day);
    if (!parsed.ok) {
      await inbox.accept({ input, rejection: new ValidationError(parsed.problem) });
      await a(replies.invalid(`:pencil2: ${parsed.problem}`, WHOSOUT_USAGE));
      return;
    }
    await inbox.accept({ input });
    const range: DayRange = parsed.value;
    await answer({ ack: a, respond, logger, what: "who's out" }, () =>
      t.queries.whosOut({ ...range, zone }, command.user_id),
    );
  });
};
