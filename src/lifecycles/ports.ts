import { ChatOpsError } from '../core/errors.ts';

/**
 * What lifecycles offer each other. A module lists the ports it offers in its instance
 * (`provides`); the composition root collects them from every switched-on module into one
 * `PortDirectory` that every module gets as `deps.ports`.
 *
 * | port                | offered by   | used by                                                     |
 * |---------------------|--------------|-------------------------------------------------------------|
 * | `onCall`            | incidents    | time off (conflicts in approval DMs), verification (who to page) |
 * | `scheduleOverrides` | incidents    | time off ("Approve and cover with …")                       |
 * | `absences`          | time off     | incidents (paging and escalation skip people on leave)      |
 * | `pager`             | verification | incidents (page by SMS, then voice; stop when acknowledged) |
 * | `incidentResponse`  | incidents    | verification (acknowledge / resolve from the phone, receipts) |
 * | `phoneStanding`     | verification | incidents (the shift-start DM says whether they can be paged) |
 *
 * Rules:
 * - A module that is switched off offers nothing: its ports are absent, not stubs.
 * - A module that uses a port asks for it when it needs it, `deps.ports.get('onCall')`, and
 *   handles `undefined` (says so, or does without: an approval DM without on-call conflicts). It
 *   does not keep the answer from `create`: ports are looked up once every module exists, and
 *   `get` throws when called before that.
 * - When the module cannot work at all without it, `deps.ports.require('onCall', 'verification')`
 *   throws a ChatOpsError that names the port and the module.
 * - Two modules offering the same port is a start-up error.
 *
 * People are passed as Slack users (`PersonRef`): each port maps them to its own system through
 * the shared people directory, so no lifecycle sees another's user ids.
 *
 * @example
 * const onCall = deps.ports.get('onCall');
 * const shifts = onCall ? await onCall.shiftsOf({ slackUserId }, { since, until }) : undefined;
 */

/** A person, as every lifecycle knows them: their Slack user. */
export type PersonRef = Readonly<{ slackUserId: string }>;

/** `[since, until)`. */
export type TimeRange = Readonly<{ since: Date; until: Date }>;

// ---------------------------------------------------------------- incidents: on-call lookups

export type OnCallShift = Readonly<{
  person: PersonRef;
  escalationPolicy: Readonly<{ id: string; name: string | null }>;
  /** 1 = first to be paged. */
  level: number;
  /** The schedule that puts them on call; null when the escalation policy names them directly. */
  schedule: Readonly<{ id: string; name: string | null }> | null;
  /** null: on call for as far back (`start`) or ahead (`end`) as the service reports. */
  start: Date | null;
  end: Date | null;
}>;

export type OnCallShifts = Readonly<{
  /** Every shift overlapping the range, in start order (unbounded ones first). */
  shifts: readonly OnCallShift[];
  /**
   * How far the answer reaches: the range's end, or earlier when the range goes past what the
   * incident service publishes (90 days ahead); shifts after it are not known yet.
   */
  knownUntil: Date;
}>;

export type OnCallLookups = Readonly<{
  /**
   * The person's on-call shifts overlapping `range`, however long it is. Throws SB_UNMAPPED_USER
   * when the person has no incident-service user, and coded upstream errors when the service
   * cannot be asked.
   */
  shiftsOf(person: PersonRef, range: TimeRange): Promise<OnCallShifts>;
  /**
   * Who could cover `shift` (issue 12): everyone the shift's schedule names (its layers' users)
   * and everyone its escalation policy names at any level (users, and the users of the schedules
   * it names), but the shift's own person; only people with a Slack user. No ranking here.
   */
  colleaguesOf(shift: OnCallShift): Promise<readonly PersonRef[]>;
  /**
   * How many times Switchboard paged the person at night (22:00-07:00 in their time zone as the
   * incident service knows it, UTC when it does not) since `since`: the "fewest recent night
   * pages" ranking. From Switchboard's own paging records (no upstream call).
   */
  nightPagesOf(person: PersonRef, since: Date): Promise<number>;
  /** Escalation policies that name the person directly (a user target), with the level. */
  policiesNaming(person: PersonRef): Promise<readonly EscalationPolicyMention[]>;
  /**
   * The Slack channels subscribed (`/incident subscribe`) to services whose escalation policy is
   * the given one, or names the given schedule: where a change to that rota is announced.
   */
  channelsFor(target: RotaRef): Promise<readonly string[]>;
  /**
   * The open incidents (triggered or acknowledged) assigned to the person, as Switchboard knows
   * them, with the channels subscribed to each incident's service: a leaver's unfinished work.
   */
  openIncidentsOf(person: PersonRef): Promise<readonly AssignedIncident[]>;
}>;

export type AssignedIncident = Readonly<{
  number: number | null;
  title: string;
  status: 'triggered' | 'acknowledged';
  serviceId: string;
  /** Channels subscribed to the incident's service (`/incident subscribe`). */
  channels: readonly string[];
  /** Issue 20: the incident (its stream), to hand it over (`IncidentResponses.reassign`); absent from older lookups. */
  incident?: string;
}>;

/** Issue 20 item 5: hand one open incident to someone else (the incidents' own reassign command). */
export type IncidentReassign = Readonly<{
  /** The incident stream (`AssignedIncident.incident`). */
  incident: string;
  /** Whose it was: recorded as the one handing it over. */
  from: PersonRef;
  to: PersonRef;
  /** Deterministic per hand-over: a redelivery reassigns once. */
  reassignId: string;
  at: Date;
}>;

export type EscalationPolicyMention = Readonly<{ id: string; name: string | null; level: number }>;

export type RotaRef = Readonly<{ scheduleId: string }> | Readonly<{ escalationPolicyId: string }>;

// ---------------------------------------------------------------- incidents: schedule overrides

export type ScheduleOverride = Readonly<{
  scheduleId: string;
  /** Who covers the slot. */
  person: PersonRef;
  start: Date;
  end: Date;
}>;

export type ScheduleOverrideResult =
  | Readonly<{ override: ScheduleOverride; ok: true; id: string | null }>
  | Readonly<{ override: ScheduleOverride; ok: false; problem: string }>;

export type ScheduleOverrides = Readonly<{
  /**
   * Creates the overrides; each gets its own result (some may be refused while others land).
   * Throws SB_UNMAPPED_USER for a person with no incident-service user, coded upstream errors when
   * the service cannot be asked.
   */
  create(overrides: readonly ScheduleOverride[]): Promise<readonly ScheduleOverrideResult[]>;
  /**
   * Check first (the service has no idempotency key): whether `person` is already on call on the
   * schedule for the whole slot (an override made by an earlier attempt, or their own turn), from
   * `GET /oncalls` filtered by schedule and user. A retry that finds it creates nothing.
   */
  covered(override: ScheduleOverride): Promise<boolean>;
  /**
   * Removes an override (issue 20: a cover withdrawn or declined): `deleted` (it had not started),
   * `truncated` (in progress: it ends now), `gone` (the service no longer has it: removed by
   * hand). A refusal (a past override) is `ok: false` in the service's words; coded upstream errors
   * when the service cannot be asked.
   */
  remove?(
    ref: Readonly<{ scheduleId: string; overrideId: string }>,
  ): Promise<
    | Readonly<{ ok: true; outcome: 'deleted' | 'truncated' | 'gone' }>
    | Readonly<{ ok: false; problem: string }>
  >;
}>;

// ---------------------------------------------------------------- time off: absences

export type Absence = Readonly<{
  person: PersonRef;
  start: Date;
  end: Date;
  /** What HR calls it (`Holiday`, `Sick`), for people to read. */
  kind: string;
  /**
   * Approved leave, or requested and waiting; `left`: HR says they left the company (terminated or
   * on garden leave), away from `start` with no end (`end` is the far future). Anyone who must not
   * be paged or asked to cover treats `left` like approved leave.
   */
  status: 'approved' | 'requested' | 'left';
  /**
   * Its last calendar day (`YYYY-MM-DD`) as the person counts days, in their zone (issue 19); for
   * "on leave until 3 Dec". Absent (a provider that does not say): the UTC day before `end`.
   */
  lastDay?: string;
}>;

export type Absences = Readonly<{
  /** The person's absences overlapping the range. */
  absencesOf(person: PersonRef, range: TimeRange): Promise<readonly Absence[]>;
  /** Everyone out during the range (`/whosout`). */
  whoIsOut(range: TimeRange): Promise<readonly Absence[]>;
}>;

// ---------------------------------------------------------------- verification: pager

export type PageRequest = Readonly<{
  person: PersonRef;
  /** What they read in the SMS (one segment or two: keep it short). */
  text: string;
  /** What the call says before asking for a key (default `text`). */
  spokenText?: string;
  /**
   * The instant the page is about (an incident's trigger, ISO): the SMS and the call say it in the
   * person's own Slack time zone, named, when they go out (issue 19).
   */
  since?: string | null;
  /**
   * Stable per reason to page (the incident stream, its escalation level and the person): a repeat
   * pages once. 1-100 characters from `[A-Za-z0-9._:-]`.
   */
  pageId: string;
  /**
   * The incident stream the page is about: its timeline gets the receipts (sent, delivered,
   * answered), replies act on it, and `stop(reportTo)` ends the page.
   */
  reportTo: string;
  /** The incident's number, so a reply `4 12` can name it; null when not known. */
  number: number | null;
  /** How replies name it back to the person: `#12 Checkout 5xx`. */
  label: string;
  /** Call after this long when nobody acknowledged (null: SMS only). */
  callAfterMs: number | null;
  /** At most this many pages per person in any hour; a page over it is held back (recorded). */
  maxPerHour: number;
}>;

/**
 * What became of a page request:
 * - `paged`: recorded; the SMS goes out from the pager's processors, the call later;
 * - `already_paged`: that pageId was recorded before (nothing new);
 * - `no_verified_phone`: the person has no verified phone (nothing recorded by the pager);
 * - `must_verify_again`: they verified a number, but it can no longer be read (its data key cannot
 *   be opened): they must verify it again (nothing recorded by the pager);
 * - `opted_out`: they replied STOP and have not verified again since (recorded);
 * - `held_back`: over `maxPerHour` (recorded).
 *
 * Every outcome but `paged` and `already_paged` means nobody was reached: the caller pages someone
 * else (issue 18).
 */
export type PageOutcome =
  | 'paged'
  | 'already_paged'
  | 'no_verified_phone'
  | 'must_verify_again'
  | 'opted_out'
  | 'held_back';

/**
 * Why a page that was sent (recorded `paged`) did not reach its person after all, as the pager
 * found out: the number could not be read when the SMS or call went (`must_verify_again`), the
 * SMS was refused (by the service or the network), the call failed, the line was busy, nobody
 * answered, or the phone service kept failing until the pager gave up (`gave_up`; never parked).
 */
export type PageFailure =
  | 'must_verify_again'
  | 'sms_refused'
  | 'call_failed'
  | 'busy'
  | 'unanswered'
  | 'gave_up';

export type Pager = Readonly<{
  /**
   * Records a page for the person's verified phone: SMS first, then a call after `callAfterMs` if it
   * is not stopped. Delivery happens in the pager's processors, not in this call.
   */
  page(request: PageRequest): Promise<PageOutcome>;
  /**
   * Stops every page about `reportTo` (the incident was acknowledged or resolved): calls not yet
   * placed are cancelled. Idempotent.
   */
  stop(input: Readonly<{ reportTo: string; reason: string; at: Date }>): Promise<void>;
  /**
   * The person left (HR's employee left): their verified phone is forgotten, so the number
   * becomes unreadable in the store (not merely hidden), every page to them stops (calls not yet
   * placed are cancelled), and `page` answers `no_verified_phone` for them until they verify a
   * phone again. Idempotent.
   */
  forget(input: Readonly<{ person: PersonRef; reason: string; at: Date }>): Promise<void>;
  /**
   * A plain SMS notice to the person's verified phone (issue 20 item 5: told they cover a sick
   * colleague), not a page: no call, no incident, not counted in the per-hour limit, and a reply
   * never acts on it. Once per `noticeId` (1-40 characters from `[A-Za-z0-9._:-]`, the SMS's
   * client_ref; `already_sent` after); a STOP opt-out holds. `text` is
   * Switchboard's own words (never a user's, nothing internal). Sent by the pager's processor.
   */
  notify?(input: Readonly<{ person: PersonRef; text: string; noticeId: string }>): Promise<NoticeOutcome>;
}>;

export type NoticeOutcome = 'sent' | 'already_sent' | 'no_verified_phone' | 'must_verify_again' | 'opted_out';

// ---------------------------------------------------------------- incidents: responses from a phone

/** A person answering a page from their phone: a reply to the SMS or a key pressed in the call. */
export type PhoneResponse = Readonly<{
  person: PersonRef;
  /** The incident stream (the page's `reportTo`). */
  incident: string;
  action: 'acknowledge' | 'resolve';
  via: 'sms' | 'voice';
  /** Deterministic per reply (from the vendor's message or call id): a redelivery acts once. */
  responseId: string;
  at: Date;
}>;

export type PhoneResponseOutcome =
  /** Recorded as the person's command; the incident service is called on the normal durable path. */
  | Readonly<{ ok: true; label: string }>
  /** Refused (already acknowledged or resolved, not theirs to act on): `reason` reads as a sentence. */
  | Readonly<{ ok: false; label: string; reason: string }>;

/** What the pager tells an incident's timeline about a page (a receipt, a skip, a hold-back). */
export type PageReport = Readonly<{
  incident: string;
  /** Deterministic per fact (the receipt's delivery): recorded once. */
  reportId: string;
  person: PersonRef;
  kind:
    | 'sms_submitted'
    | 'sms_delivered'
    | 'sms_rejected'
    | 'sms_failed'
    | 'call_created'
    | 'call_ringing'
    | 'call_answered'
    | 'call_completed'
    | 'call_busy'
    | 'call_failed'
    | 'call_unanswered'
    | 'no_verified_phone'
    | 'opted_out'
    | 'held_back'
    | 'reply_ignored';
  /** The vendor's reason (a rejection), or what was ignored; null when there is nothing to add. */
  detail: string | null;
  at: Date;
  /** The page it is about (`PageRequest.pageId`), when it is about one. */
  pageId?: string | null;
  /**
   * Set when this report means the page cannot reach its person (issue 18): the incident side
   * says so and pages the next person at once. Null or absent: a receipt like any other.
   */
  failure?: PageFailure | null;
}>;

export type IncidentResponses = Readonly<{
  /** Acknowledges or resolves the incident as the person, recorded as their command. */
  respond(response: PhoneResponse): Promise<PhoneResponseOutcome>;
  /** Records a page's receipt on the incident's timeline. */
  report(report: PageReport): Promise<void>;
  /**
   * Issue 20 item 5 (someone off sick while on call): reassigns the incident to `to`, recorded as
   * `from`'s command (the incident service is called on the normal durable path). Refused (not
   * open, or `to` unknown to the incident service): `ok` false with the reason as a sentence.
   */
  reassign?(input: IncidentReassign): Promise<PhoneResponseOutcome>;
}>;

// ---------------------------------------------------------------- verification: phone standing

/**
 * Whether the person can be paged by phone (issue 20 item 4), as the pager would judge it:
 * `pageable` (a verified number it can read), `opted_out` (STOP since verifying),
 * `must_verify_again` (a number verified but no longer readable or linked), `none` (never verified,
 * removed, or forgotten as a leaver's). Nothing about the number itself crosses the port.
 */
export type PhoneStandingKind = 'pageable' | 'opted_out' | 'must_verify_again' | 'none';

export type PhoneStandings = Readonly<{
  standingOf(person: PersonRef): Promise<PhoneStandingKind>;
}>;

// ---------------------------------------------------------------- cover asks (issue 20)

/** `/oncall cover`: the on-call person asks for cover of their own shifts in a range (no time off). */
export type CoverAskRequest = Readonly<{
  person: PersonRef;
  /** Days in the person's own zone (YYYY-MM-DD, inclusive); null: their next shift (14 days ahead). */
  from: string | null;
  to: string | null;
  /**
   * Exactly one shift (App Home's "Ask for cover" on a row of My shifts): only the person's shifts
   * within these instants are asked for, and `from`/`to` are ignored. None found: `none`.
   */
  window?: Readonly<{ start: Date; end: Date }>;
  /** Unique per typed command (its input's id): asked twice, nothing is opened twice. */
  requestId: string;
}>;

export type CoverAskAnswer =
  /** Asks opened: each shift, who was asked (names), or `posted` when nobody was free (a hole in its channels). */
  | Readonly<{
      kind: 'asked';
      shifts: readonly Readonly<{
        scheduleName: string;
        start: string;
        end: string;
        asked: readonly string[];
      }>[];
      /** The person's zone, for the answer's times. */
      tz: string;
    }>
  | Readonly<{ kind: 'none'; tz: string }>
  | Readonly<{ kind: 'problem'; text: string }>;

export type CoverAsks = Readonly<{ askForCover(request: CoverAskRequest): Promise<CoverAskAnswer> }>;

// ---------------------------------------------------------------- the directory

export type LifecyclePorts = Readonly<{
  onCall: OnCallLookups;
  scheduleOverrides: ScheduleOverrides;
  absences: Absences;
  pager: Pager;
  incidentResponse: IncidentResponses;
  phoneStanding: PhoneStandings;
  coverAsks: CoverAsks;
}>;

export type PortName = keyof LifecyclePorts;

/** Human names, for errors and logs. */
export const PORT_NAMES: Readonly<Record<PortName, string>> = {
  onCall: 'on-call lookups',
  scheduleOverrides: 'schedule overrides',
  absences: 'absences',
  pager: 'a pager',
  incidentResponse: 'incident responses from a phone',
  phoneStanding: "where a person's phone stands for paging",
  coverAsks: 'cover asks',
};

export type PortDirectory = Readonly<{
  /** The port, when a switched-on module offers it. Throws if called before every module exists. */
  get<K extends PortName>(name: K): LifecyclePorts[K] | undefined;
  /** The port, or a ChatOpsError (SB_NOT_FOUND) naming it and who needed it. */
  require<K extends PortName>(name: K, neededBy: string): LifecyclePorts[K];
}>;

export type PortOffer = Readonly<{ lifecycle: string; provides: Partial<LifecyclePorts> }>;

/**
 * The directory of the given offers. Two offers of one port are refused. `ready` is false until
 * every module has been created (the root flips it), so a lookup from inside `create` fails loudly
 * instead of missing a port offered by a module listed later.
 */
export const createPortDirectory = (
  offers: () => readonly PortOffer[] | undefined,
): PortDirectory & Readonly<{ check(): void }> => {
  const byName = (): Partial<Record<PortName, { lifecycle: string; port: unknown }>> => {
    const list = offers();
    if (!list) {
      throw new Error('lifecycle ports are looked up once every module is created: ask when you use one');
    }
    const found: Partial<Record<PortName, { lifecycle: string; port: unknown }>> = {};
    for (const offer of list) {
      for (const [name, port] of Object.entries(offer.provides) as [PortName, unknown][]) {
        if (port === undefined) continue;
        const previous = found[name];
        if (previous) {
          throw new ChatOpsError(
            'SB_CONFIG',
            `${PORT_NAMES[name]} (${name}) are offered by two lifecycles: ${previous.lifecycle} and ${offer.lifecycle}`,
          );
        }
        found[name] = { lifecycle: offer.lifecycle, port };
      }
    }
    return found;
  };
  let cache: ReturnType<typeof byName> | undefined;
  const all = () => {
    cache ??= byName();
    return cache;
  };
  return {
    get: <K extends PortName>(name: K) => all()[name]?.port as LifecyclePorts[K] | undefined,
    require<K extends PortName>(name: K, neededBy: string) {
      const port = all()[name]?.port as LifecyclePorts[K] | undefined;
      if (!port) {
        throw new ChatOpsError(
          'SB_NOT_FOUND',
          `${neededBy} needs ${PORT_NAMES[name]}, which no switched-on lifecycle offers`,
          { details: { port: name, neededBy } },
        );
      }
      return port;
    },
    check() {
      all();
    },
  };
};
