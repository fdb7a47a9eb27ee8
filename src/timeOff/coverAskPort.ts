import { uuidv5 } from '../core/ids.ts';
import type {
  Absences,
  CoverAskAnswer,
  CoverAsks,
  OnCallLookups,
  OnCallShifts,
} from '../lifecycles/ports.ts';
import { type Dispatch, dispatchCommand } from '../processors/dispatchCommand.ts';
import type { ProcessorLogger } from '../processors/ports.ts';
import { openCoverAskCommand } from './coverAskIds.ts';
import { clipShift, coverCandidates } from './coverRanking.ts';
import type { TimeZones } from './coverText.ts';
import { addDays, dayIn, localInstant } from './localDays.ts';

const DAY_MS = 86_400_000;
/** How far ahead `/oncall cover` with no days looks for the next shift. */
export const NEXT_SHIFT_HORIZON_MS = 14 * DAY_MS;
const ACTOR = 'system:timeoff-cover-asks';

export type CoverAskPortDeps = Readonly<{
  onCall(): OnCallLookups | undefined;
  absences: Absences;
  nameOf(slackUserId: string): Promise<string>;
  hasLeft(slackUserId: string): Promise<boolean>;
  dispatch: Dispatch;
  timeZones: TimeZones;
  now(): Date;
  logger: ProcessorLogger;
}>;

/**
 * The `coverAsks` port (issue 20): `/oncall cover [day [to day]]` (the incident lifecycle's command)
 * asks colleagues to cover the typist's own shifts then, without taking time off. Days are in the
 * person's zone; none: their next shift (14 days ahead). One ask per shift on a schedule, asked to
 * the ranked colleagues (src/timeOff/coverRanking.ts: never the person, nobody away or on call then,
 * and here nobody who left); nobody free: the shift is posted as a hole in its schedule's channels.
 * The person is told by DM when it is taken or when nobody took it before the shift.
 */
export const createCoverAskPort = (deps: CoverAskPortDeps): CoverAsks => ({
  async askForCover(request): Promise<CoverAskAnswer> {
    const onCall = deps.onCall();
    if (!onCall)
      return { kind: 'problem', text: 'Incidents are switched off in Switchboard: no shifts to cover.' };
    const tz = await deps.timeZones.of(request.person.slackUserId);
    const now = deps.now();
    const window = request.window;
    const since = window
      ? new Date(Math.max(window.start.getTime(), now.getTime()))
      : request.from === null
        ? now
        : new Date(Math.max(localInstant(request.from, 0, tz).getTime(), now.getTime()));
    const until = window
      ? window.end
      : request.to === null
        ? new Date(now.getTime() + NEXT_SHIFT_HORIZON_MS)
        : localInstant(addDays(request.to, 1), 0, tz);
    if (window && until <= since) {
      return { kind: 'problem', text: 'That shift is over.' };
    }
    if (until <= since) {
      return { kind: 'problem', text: `Those days are over (today is ${dayIn(now, tz)} for you).` };
    }
    if (until.getTime() - since.getTime() > 90 * DAY_MS) {
      return { kind: 'problem', text: 'Ask for at most 90 days at a time.' };
    }
    let found: OnCallShifts;
    try {
      found = await onCall.shiftsOf(request.person, { since, until });
    } catch (e) {
      if ((e as { code?: unknown }).code === 'SB_UNMAPPED_USER') {
        return { kind: 'problem', text: 'You have no user in the incident service, so no shifts to cover.' };
      }
      throw e;
    }
    const seen = new Set<string>();
    let shifts = found.shifts.flatMap((shift) => {
      const slot = clipShift(shift, { since, until });
      if (!slot || slot.scheduleId === null) return [];
      const key = `${slot.scheduleId}|${slot.start}|${slot.end}`;
      if (seen.has(key)) return [];
      seen.add(key);
      return [{ shift, slot: { ...slot, scheduleId: slot.scheduleId } }];
    });
    if (request.from === null && !window) shifts = shifts.slice(0, 1);
    if (shifts.length === 0) return { kind: 'none', tz };
    const absent = {
      slackUserId: request.person.slackUserId,
      displayName: await deps.nameOf(request.person.slackUserId),
    };
    const answer: { scheduleName: string; start: string; end: string; asked: string[] }[] = [];
    for (const [i, { shift, slot }] of shifts.slice(0, 20).entries()) {
      const ranked = await coverCandidates(
        { onCall, absences: deps.absences, nameOf: deps.nameOf, logger: deps.logger },
        { requester: request.person, shifts: [{ shift, slot }], now },
      );
      const asked = [];
      for (const c of ranked) {
        if (!(await deps.hasLeft(c.slackUserId)))
          asked.push({ slackUserId: c.slackUserId, displayName: c.displayName });
      }
      const { command } = openCoverAskCommand(
        {
          slot,
          absent,
          asked,
          anyone: asked.length === 0,
          announce: asked.length === 0,
          openedBy: request.person.slackUserId,
          notify: [request.person.slackUserId],
          reason: { kind: 'on_call' },
          now,
        },
        {
          now: now.toISOString(),
          commandId: uuidv5(`oncall-cover:${request.requestId}:${i}`),
          actor: ACTOR,
        },
      );
      const outcome = await dispatchCommand(deps.dispatch, command);
      if (outcome.outcome === 'rejected') {
        deps.logger.warn({ code: outcome.code }, `an /oncall cover ask was refused: ${outcome.message}`);
        return { kind: 'problem', text: outcome.message };
      }
      answer.push({
        scheduleName: slot.scheduleName ?? slot.scheduleId,
        start: slot.start,
        end: slot.end,
        asked: asked.map((a) => a.displayName),
      });
    }
    return { kind: 'asked', shifts: answer, tz };
  },
});
