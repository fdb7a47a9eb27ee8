import { employeeById } from '../../machines/timeOff/directory.ts';
import type { ConflictShift, CoverCandidate } from '../../machines/timeOff/events.ts';
import type {
  Absence,
  Absences,
  OnCallLookups,
  OnCallShift,
  PersonRef,
  TimeRange,
} from '../lifecycles/ports.ts';
import type { ProcessorLogger } from '../processors/ports.ts';
import { escapeMrkdwn } from '../slack/blocks/format.ts';
import type { SwitchboardWebClient } from '../slack/webClient.ts';
import type { TimeOffReadModel } from './readModel.projection.ts';

/**
 * Who could cover a requester's on-call shifts (issue 12, "Approve and cover with …"): the
 * colleagues the incident service names on the same schedules or escalation policies
 * (`onCall.colleaguesOf` each shift), minus anyone away during a slot (this module's own read
 * model: approved requests and HR's who's out, through `absences`), minus anyone already on call
 * during a slot (`onCall.shiftsOf` over the slots), ranked: the fewest night pages over the last
 * 30 days first (`onCall.nightPagesOf`; unknown last), then colleagues of more of the shifts, then
 * by name. Looked up once, with the conflicts, and recorded (`TimeOffConflictsChecked.candidates`).
 */
export const MAX_CANDIDATES = 20;
export const NIGHT_PAGES_WINDOW_MS = 30 * 86_400_000;

/** What is known of one colleague, for the ranking (pure). */
export type CandidateFacts = Readonly<{
  person: PersonRef;
  displayName: string;
  /** How many of the conflicting shifts name them (schedule or policy). */
  shiftsShared: number;
  awayDuring: boolean;
  onCallDuring: boolean;
  nightPages: number | null;
}>;

const firstNameOf = (displayName: string, fallback: string): string =>
  displayName.trim().split(/\s+/)[0] || fallback;

/** The candidates, best first (see above); away or on-call people are left out. */
export const rankCandidates = (facts: readonly CandidateFacts[]): CoverCandidate[] =>
  facts
    .filter((f) => !f.awayDuring && !f.onCallDuring)
    .sort(
      (a, b) =>
        (a.nightPages ?? Number.POSITIVE_INFINITY) - (b.nightPages ?? Number.POSITIVE_INFINITY) ||
        b.shiftsShared - a.shiftsShared ||
        a.displayName.localeCompare(b.displayName) ||
        a.person.slackUserId.localeCompare(b.person.slackUserId),
    )
    .slice(0, MAX_CANDIDATES)
    .map((f) => ({
      slackUserId: f.person.slackUserId,
      displayName: f.displayName.slice(0, 200),
      firstName: firstNameOf(f.displayName, f.person.slackUserId).slice(0, 100),
      nightPages: f.nightPages,
    }));

const overlaps = (a: Readonly<{ start: Date; end: Date }>, b: Readonly<{ start: string; end: string }>) =>
  a.start.getTime() < Date.parse(b.end) && Date.parse(b.start) < a.end.getTime();

/**
 * The absence (approved leave, or having left) that keeps the person from covering any of `slots`,
 * or undefined. The one "away" rule of the ranking and of the click that picks a cover.
 */
export const awayDuring = async (
  absences: Absences,
  person: PersonRef,
  slots: readonly Readonly<{ start: string; end: string }>[],
): Promise<Absence | undefined> => {
  if (slots.length === 0) return undefined;
  const since = new Date(Math.min(...slots.map((s) => Date.parse(s.start))));
  const until = new Date(Math.max(...slots.map((s) => Date.parse(s.end))));
  return (await absences.absencesOf(person, { since, until })).find(
    (a) => a.status !== 'requested' && slots.some((s) => overlaps(a, s)),
  );
};

/**
 * Whether the person picked to cover request `timeOffId` is away during its coverable shifts now
 * (the ranked choice was drawn earlier): who, and why in words, or null.
 */
export const coverAway = async (
  deps: Readonly<{ readModel: TimeOffReadModel; absences: Absences }>,
  timeOffId: string,
  slackUserId: string,
): Promise<Readonly<{ name: string; why: string }> | null> => {
  await deps.readModel.catchUp();
  const conflicts = deps.readModel.state(timeOffId)?.context.conflicts;
  const slots = (conflicts?.shifts ?? []).filter((s) => s.scheduleId !== null);
  const found = await awayDuring(deps.absences, { slackUserId }, slots);
  if (!found) return null;
  const name =
    escapeMrkdwn(conflicts?.candidates.find((c) => c.slackUserId === slackUserId)?.displayName ?? '') ||
    `<@${slackUserId}>`;
  const lastDay = found.lastDay ?? new Date(found.end.getTime() - 1).toISOString().slice(0, 10);
  return {
    name,
    why:
      found.status === 'left'
        ? 'they left the company'
        : `${escapeMrkdwn(found.kind)}, approved, until ${lastDay}`,
  };
};

/** A shift clipped to the request (unbounded ends clipped too), or null when nothing of it is inside. */
export const clipShift = (shift: OnCallShift, range: TimeRange): ConflictShift | null => {
  const start = Math.max(shift.start?.getTime() ?? range.since.getTime(), range.since.getTime());
  const end = Math.min(shift.end?.getTime() ?? range.until.getTime(), range.until.getTime());
  if (end <= start) return null;
  return {
    scheduleId: shift.schedule?.id ?? null,
    scheduleName: shift.schedule?.name ?? null,
    escalationPolicyId: shift.escalationPolicy.id,
    escalationPolicyName: shift.escalationPolicy.name,
    level: shift.level,
    start: new Date(start).toISOString(),
    end: new Date(end).toISOString(),
  };
};

export type CoverCandidatesDeps = Readonly<{
  onCall: OnCallLookups;
  absences: Absences;
  /** A person's name for people to read (the HR directory, else Slack), never throws. */
  nameOf(slackUserId: string): Promise<string>;
  logger: ProcessorLogger;
}>;

/**
 * Gathers the facts and ranks them. `shifts`: the requester's shifts as the service gave them,
 * with their clipped slots; only shifts on a schedule can be covered by an override. A lookup that
 * fails for one colleague leaves them out (or their night pages unknown), never the whole check.
 */
export const coverCandidates = async (
  deps: CoverCandidatesDeps,
  input: Readonly<{
    requester: PersonRef;
    shifts: readonly Readonly<{ shift: OnCallShift; slot: ConflictShift }>[];
    now: Date;
  }>,
): Promise<CoverCandidate[]> => {
  const coverable = input.shifts.filter((s) => s.slot.scheduleId !== null);
  if (coverable.length === 0) return [];
  const shared = new Map<string, number>();
  for (const { shift } of coverable) {
    let colleagues: readonly PersonRef[] = [];
    try {
      colleagues = await deps.onCall.colleaguesOf(shift);
    } catch (error) {
      deps.logger.warn(
        { err: error, scheduleId: shift.schedule?.id },
        'colleagues of an on-call shift unknown',
      );
    }
    for (const c of new Set(colleagues.map((p) => p.slackUserId))) {
      if (c !== input.requester.slackUserId) shared.set(c, (shared.get(c) ?? 0) + 1);
    }
  }
  const slots = coverable.map((s) => s.slot);
  const since = new Date(Math.min(...slots.map((s) => Date.parse(s.start))));
  const until = new Date(Math.max(...slots.map((s) => Date.parse(s.end))));
  const facts: CandidateFacts[] = [];
  for (const [slackUserId, shiftsShared] of shared) {
    const person = { slackUserId };
    const away = (await awayDuring(deps.absences, person, slots)) !== undefined;
    let onCallDuring: boolean;
    try {
      const theirs = await deps.onCall.shiftsOf(person, { since, until });
      onCallDuring = theirs.shifts.some((t) =>
        slots.some((s) => overlaps({ start: t.start ?? new Date(0), end: t.end ?? new Date(8.64e15) }, s)),
      );
    } catch {
      // Not in the incident service (or it could not say): no override could name them anyway.
      continue;
    }
    let nightPages: number | null = null;
    try {
      nightPages = await deps.onCall.nightPagesOf(
        person,
        new Date(input.now.getTime() - NIGHT_PAGES_WINDOW_MS),
      );
    } catch {
      nightPages = null;
    }
    facts.push({
      person,
      displayName: await deps.nameOf(slackUserId),
      shiftsShared,
      awayDuring: away,
      onCallDuring,
      nightPages,
    });
  }
  return rankCandidates(facts);
};

/**
 * A person's name for people to read (candidates, cover messages): the HR directory's, else
 * Slack's real name, else the user id. Never throws.
 */
export const nameOfSlackUser =
  (deps: Readonly<{ readModel: TimeOffReadModel; slack: Pick<SwitchboardWebClient, 'users'> }>) =>
  async (slackUserId: string): Promise<string> => {
    await deps.readModel.catchUp();
    const hrId = deps.readModel.employeeOfSlackUser(slackUserId);
    const e = hrId ? employeeById(deps.readModel.directory(), hrId) : null;
    if (e?.displayName) return e.displayName;
    try {
      const r = await deps.slack.users.info({ user: slackUserId });
      return r.user?.real_name || r.user?.profile?.real_name || slackUserId;
    } catch {
      return slackUserId;
    }
  };
