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
 * | `pager`             | verification | incidents (page by SMS, then voice)                         |
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
}>;

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
}>;

// ---------------------------------------------------------------- time off: absences

export type Absence = Readonly<{
  person: PersonRef;
  start: Date;
  end: Date;
  /** What HR calls it (`Holiday`, `Sick`), for people to read. */
  kind: string;
  /** Approved leave, or requested and waiting. */
  status: 'approved' | 'requested';
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
  /** What they read (SMS) or hear (voice). */
  text: string;
  /** Stable per reason to page (e.g. the incident stream and escalation level): a repeat pages once. */
  pageId: string;
  /** Stream whose timeline should show the delivery receipts (sent, delivered, answered). */
  reportTo: string;
}>;

export type Pager = Readonly<{
  /**
   * Records a page for the person's verified phone: SMS first, then a call if it is not
   * acknowledged. Delivery happens in the pager's processors, not in this call. Throws
   * SB_NOT_FOUND when the person has no verified phone.
   */
  page(request: PageRequest): Promise<void>;
}>;

// ---------------------------------------------------------------- the directory

export type LifecyclePorts = Readonly<{
  onCall: OnCallLookups;
  scheduleOverrides: ScheduleOverrides;
  absences: Absences;
  pager: Pager;
}>;

export type PortName = keyof LifecyclePorts;

/** Human names, for errors and logs. */
export const PORT_NAMES: Readonly<Record<PortName, string>> = {
  onCall: 'on-call lookups',
  scheduleOverrides: 'schedule overrides',
  absences: 'absences',
  pager: 'a pager',
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
