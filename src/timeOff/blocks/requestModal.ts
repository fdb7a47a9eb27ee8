import type { types } from '@slack/bolt';
import type { TimeOffAsk } from '../../../machines/timeOff/events.ts';
import type { DayPortion } from '../../../machines/timeOff/workingDays.ts';
import {
  escapeMrkdwn,
  type ModalView,
  mrkdwn,
  plain,
  SLACK_LIMITS,
  truncate,
} from '../../slack/blocks/format.ts';
import type { Submission, ViewValues } from './denyModal.ts';
import { timeOffIdFromValue } from './timeOffIds.ts';
import { withoutFullStop } from './timeOffView.ts';

/**
 * The time-off request modal (`/timeoff` with no text), and the same form prefilled to fix and
 * send again a request HR refused (the resubmit button on the requester's DM). Policy select from
 * HR's policy types; when HR could not be asked, a text field in its place and a line saying so.
 * Start and end date pickers, the portion of the first and last day, a note for the approver.
 *
 * `private_metadata` says which form it is (`{ mode: 'request' }` or `{ mode: 'resubmit',
 * timeOffId }`); it comes back from Slack and is checked again on submission.
 */

export const TIME_OFF_REQUEST_VIEW = 'timeoff.request';

export const TIME_OFF_REQUEST_FIELD = {
  policy: { blockId: 'timeoff.request.policy', actionId: 'policy' },
  start: { blockId: 'timeoff.request.start', actionId: 'date' },
  startPortion: { blockId: 'timeoff.request.start_portion', actionId: 'portion' },
  end: { blockId: 'timeoff.request.end', actionId: 'date' },
  endPortion: { blockId: 'timeoff.request.end_portion', actionId: 'portion' },
  note: { blockId: 'timeoff.request.note', actionId: 'note' },
} as const;

export const MAX_REQUEST_NOTE = 1000;

export type RequestModalMode =
  | Readonly<{ mode: 'request' }>
  | Readonly<{ mode: 'resubmit'; timeOffId: string }>;

export type RequestModalInput = Readonly<{
  mode: RequestModalMode;
  /** HR's policy types; null when HR could not be asked (a text field instead). */
  policies: readonly string[] | null;
  /** The first date offered: the person's today, in their Slack time zone. */
  today: string;
  /** Prefilled (resubmit): what was asked before. */
  prefill?: TimeOffAsk;
  /** Prefilled (resubmit): why HR refused it, in words. */
  problem?: string | null;
  /** Where the form was opened from (a refusal is said there). */
  channel?: string | undefined;
}>;

const PORTIONS: ReadonlyArray<Readonly<{ value: DayPortion; text: string }>> = [
  { value: 'all_day', text: 'Whole day' },
  { value: 'morning', text: 'Morning only' },
  { value: 'afternoon', text: 'Afternoon only' },
];

const portionOption = (p: DayPortion): types.PlainTextOption => {
  const found = PORTIONS.find((o) => o.value === p) ?? PORTIONS[0]!;
  return { text: plain(found.text), value: found.value };
};

const portionSelect = (
  field: Readonly<{ blockId: string; actionId: string }>,
  label: string,
  hint: string,
  initial: DayPortion,
): types.InputBlock => ({
  type: 'input',
  block_id: field.blockId,
  label: plain(label),
  hint: plain(hint),
  element: {
    type: 'static_select',
    action_id: field.actionId,
    options: PORTIONS.map((p) => portionOption(p.value)),
    initial_option: portionOption(initial),
  },
});

const policyOption = (p: string): types.PlainTextOption => ({
  text: plain(truncate(p, SLACK_LIMITS.optionText)),
  value: truncate(p, 150),
});

export const requestTimeOffModal = (input: RequestModalInput): ModalView => {
  const { policies, prefill } = input;
  const metadata = JSON.stringify({ ...input.mode, ...(input.channel ? { channel: input.channel } : {}) });
  const F = TIME_OFF_REQUEST_FIELD;
  const blocks: types.KnownBlock[] = [];
  if (input.mode.mode === 'resubmit') {
    blocks.push({
      type: 'section',
      text: mrkdwn(
        `:warning: HR refused this request${input.problem ? `: *${escapeMrkdwn(withoutFullStop(truncate(input.problem, 500)))}*.` : '.'} Fix it and send it again.`,
      ),
    });
  }
  if (policies === null) {
    blocks.push({
      type: 'context',
      elements: [
        mrkdwn(
          ":warning: HR isn't answering just now, so Switchboard can't list its policy types. Type the policy as HR names it (e.g. Holiday); HR checks it when the request is recorded.",
        ),
      ],
    });
  }
  const initialPolicy =
    prefill && policies
      ? policies.find((p) => p.toLowerCase() === prefill.policyType.toLowerCase())
      : undefined;
  blocks.push({
    type: 'input',
    block_id: F.policy.blockId,
    label: plain('Type of time off'),
    element:
      policies === null
        ? {
            type: 'plain_text_input',
            action_id: F.policy.actionId,
            max_length: 100,
            ...(prefill ? { initial_value: prefill.policyType } : {}),
            placeholder: plain('e.g. Holiday'),
          }
        : {
            type: 'static_select',
            action_id: F.policy.actionId,
            placeholder: plain('Choose a policy'),
            options: policies.slice(0, SLACK_LIMITS.staticSelectOptions).map(policyOption),
            ...(initialPolicy ? { initial_option: policyOption(initialPolicy) } : {}),
          },
  });
  blocks.push({
    type: 'input',
    block_id: F.start.blockId,
    label: plain('First day'),
    element: {
      type: 'datepicker',
      action_id: F.start.actionId,
      initial_date: prefill?.startDate ?? input.today,
    },
  });
  blocks.push(
    portionSelect(
      F.startPortion,
      'On the first day',
      'Over several days, start with a whole day or an afternoon.',
      prefill?.startPortion ?? 'all_day',
    ),
  );
  blocks.push({
    type: 'input',
    block_id: F.end.blockId,
    label: plain('Last day'),
    optional: true,
    hint: plain('Leave it empty for one day.'),
    element: {
      type: 'datepicker',
      action_id: F.end.actionId,
      ...(prefill && prefill.endDate !== prefill.startDate ? { initial_date: prefill.endDate } : {}),
    },
  });
  blocks.push(
    portionSelect(
      F.endPortion,
      'On the last day',
      'Over several days, end with a whole day or a morning. One day: the same as the first.',
      prefill?.endPortion ?? 'all_day',
    ),
  );
  blocks.push({
    type: 'input',
    block_id: F.note.blockId,
    label: plain('Note for your approver'),
    optional: true,
    element: {
      type: 'plain_text_input',
      action_id: F.note.actionId,
      multiline: true,
      max_length: MAX_REQUEST_NOTE,
      ...(prefill?.description ? { initial_value: prefill.description } : {}),
    },
  });
  blocks.push({
    type: 'context',
    elements: [
      mrkdwn('Dates are calendar days. Your manager in HR approves; Switchboard DMs you at each step.'),
    ],
  });
  return {
    type: 'modal',
    callback_id: TIME_OFF_REQUEST_VIEW,
    private_metadata: metadata,
    title: plain(input.mode.mode === 'resubmit' ? 'Fix time off request' : 'Request time off'),
    submit: plain(input.mode.mode === 'resubmit' ? 'Send again' : 'Ask'),
    close: plain('Cancel'),
    blocks,
  };
};

/** The channel the form was opened from, from its (hostile) private_metadata, or undefined. */
export const requestModalChannel = (privateMetadata: string | undefined): string | undefined => {
  try {
    const c = (JSON.parse(privateMetadata ?? '') as { channel?: unknown }).channel;
    return typeof c === 'string' && /^[CDG][A-Z0-9]{2,30}$/.test(c) ? c : undefined;
  } catch {
    return undefined;
  }
};

/** The form's mode from its (hostile) private_metadata, or null when it is not one of ours. */
export const readRequestModalMode = (privateMetadata: string | undefined): RequestModalMode | null => {
  let parsed: unknown;
  try {
    parsed = JSON.parse(privateMetadata ?? '');
  } catch {
    return null;
  }
  if (typeof parsed !== 'object' || parsed === null) return null;
  const o = parsed as Record<string, unknown>;
  if (o.mode === 'request') return { mode: 'request' };
  if (o.mode === 'resubmit') {
    const timeOffId = timeOffIdFromValue(o.timeOffId);
    return timeOffId ? { mode: 'resubmit', timeOffId } : null;
  }
  return null;
};

type StateValue = Readonly<{
  value?: string | null;
  selected_date?: string | null;
  selected_option?: Readonly<{ value?: unknown }> | null;
}>;

const field = (
  values: ViewValues,
  f: Readonly<{ blockId: string; actionId: string }>,
): StateValue | undefined => values[f.blockId]?.[f.actionId] as StateValue | undefined;

const portionOf = (v: StateValue | undefined): DayPortion | null => {
  const raw = v?.selected_option?.value ?? 'all_day';
  return raw === 'all_day' || raw === 'morning' || raw === 'afternoon' ? raw : null;
};

const DATE = /^\d{4}-\d{2}-\d{2}$/;

/**
 * What the form asks for, with errors on the field that is wrong. The policy must be one of HR's
 * (any case; `policies` null: HR could not be asked, the typed name is taken). The rules the
 * decider applies (end before start, portions, working days) are checked by the caller with the
 * decider's own `checkAsk`, so the form and the rules agree.
 */
export const readRequestSubmission = (
  values: ViewValues,
  policies: readonly string[] | null,
): Submission<TimeOffAsk> => {
  const F = TIME_OFF_REQUEST_FIELD;
  const errors: Record<string, string> = {};
  const p = field(values, F.policy);
  const rawPolicy = String(p?.selected_option?.value ?? p?.value ?? '').trim();
  let policyType = rawPolicy;
  if (rawPolicy === '') errors[F.policy.blockId] = 'Choose the type of time off.';
  else if (rawPolicy.length > 100) errors[F.policy.blockId] = 'At most 100 characters.';
  else if (policies) {
    const found = policies.find((x) => x.toLowerCase() === rawPolicy.toLowerCase());
    if (found) policyType = found;
    else
      errors[F.policy.blockId] = truncate(
        `HR has no policy “${rawPolicy}”. It knows: ${policies.join(', ')}.`,
        150,
      );
  }
  const start = field(values, F.start)?.selected_date ?? '';
  if (!DATE.test(start)) errors[F.start.blockId] = 'Pick the first day.';
  const rawEnd = field(values, F.end)?.selected_date ?? '';
  if (rawEnd !== '' && !DATE.test(rawEnd)) errors[F.end.blockId] = 'Pick the last day, or leave it empty.';
  const startPortion = portionOf(field(values, F.startPortion));
  if (!startPortion) errors[F.startPortion.blockId] = 'Choose whole day, morning or afternoon.';
  const endPortion = portionOf(field(values, F.endPortion));
  if (!endPortion) errors[F.endPortion.blockId] = 'Choose whole day, morning or afternoon.';
  const note = (field(values, F.note)?.value ?? '').trim();
  if (note.length > MAX_REQUEST_NOTE) errors[F.note.blockId] = `At most ${MAX_REQUEST_NOTE} characters.`;
  if (Object.keys(errors).length > 0) return { ok: false, errors };
  const endDate = rawEnd === '' ? start : rawEnd;
  const oneDay = endDate === start;
  return {
    ok: true,
    value: {
      policyType,
      startDate: start,
      endDate,
      startPortion: startPortion!,
      // One day with the last day's portion left at "Whole day": the first day's portion is the day's.
      endPortion: oneDay && endPortion === 'all_day' ? startPortion! : endPortion!,
      description: note,
    },
  };
};

/** Which field of the form a refusal of `checkAsk` belongs on. */
export const requestErrorBlock = (reason: unknown, message: string): string => {
  const F = TIME_OFF_REQUEST_FIELD;
  if (reason === 'invalid_portion') {
    return /starts|first/.test(message) ? F.startPortion.blockId : F.endPortion.blockId;
  }
  if (reason === 'invalid_dates' && /end date|at most/.test(message)) return F.end.blockId;
  return F.start.blockId;
};
