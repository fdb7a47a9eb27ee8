import { z } from 'zod';

/**
 * The facts the people directory keeps: who a Slack user is in each system Switchboard works
 * with. One stream per Slack user, `identity-<slackUserId>`, holds every system's links in the
 * order they were learnt; the newest fact per system wins.
 *
 * - `PersonLinked`: the Slack user is `externalId` in `system` (`incidents`: an incident-service
 *   user id; `hr`: an HR employee id; `phone`: a verified number, sealed under the person's data
 *   key, `personal:v1:…`, see personKeys.ts; links recorded before hold `+<digits>`), with the email and name
 *   the system gave (the email is what goes in `From` on incident-service writes).
 * - `PersonUnlinked`: the link is gone (the employee left, the phone was forgotten).
 *
 * The stream keeps the `identity-` name it had before people were shared: a person's stream holds
 * their old events too, and renaming it would mean reading two streams per lookup forever.
 *
 * Stored events are never rewritten. `SlackUserMapped` (the incident-service mapping written
 * before this directory existed) is read through `upcastPersonEvent` as a `PersonLinked` with
 * `system: 'incidents'`; nothing writes it any more.
 *
 * @example
 * const e = upcastPersonEvent({ type: 'SlackUserMapped', data: { slackUserId: 'U1', email, pagerDutyUserId: 'P1', name, at } });
 * // { type: 'PersonLinked', data: { slackUserId: 'U1', system: 'incidents', externalId: 'P1', email, name, at } }
 */

export const PERSON_STREAM_PREFIX = 'identity-';
export const personStreamId = (slackUserId: string): string => `${PERSON_STREAM_PREFIX}${slackUserId}`;

/** The systems a person is linked to. */
export const PERSON_SYSTEMS = ['incidents', 'hr', 'phone'] as const;
export type PersonSystem = (typeof PERSON_SYSTEMS)[number];

const nonEmpty = z.string().min(1);

export const personLinkedSchema = z.object({
  slackUserId: nonEmpty,
  system: z.enum(PERSON_SYSTEMS),
  /** The person's id in `system`: incident-service user id, HR employee id, E.164 phone number. */
  externalId: nonEmpty,
  email: z.string().nullable(),
  name: z.string().nullable(),
  /** When it was learnt (ISO 8601); lookups older than the caller's refresh interval are redone. */
  at: nonEmpty,
});
export type PersonLinkedData = z.infer<typeof personLinkedSchema>;

export const personUnlinkedSchema = z.object({
  slackUserId: nonEmpty,
  system: z.enum(PERSON_SYSTEMS),
  externalId: nonEmpty,
  /** Why, in a word or two (`left`, `forgotten`, `number_changed`). */
  reason: nonEmpty,
  at: nonEmpty,
});
export type PersonUnlinkedData = z.infer<typeof personUnlinkedSchema>;

/** The shape stored before people were shared (incident-service mapping only). Read, never written. */
export const slackUserMappedSchema = z.object({
  slackUserId: nonEmpty,
  email: nonEmpty,
  pagerDutyUserId: nonEmpty,
  name: z.string().nullable(),
  at: nonEmpty,
});

export const PERSON_LINKED = 'PersonLinked';
export const PERSON_UNLINKED = 'PersonUnlinked';
/** @deprecated Stored by older versions; read through `upcastPersonEvent`, never appended. */
export const SLACK_USER_MAPPED = 'SlackUserMapped';

/** Every event type a person's stream may hold, old shapes included (for subscription filters). */
export const PERSON_EVENT_TYPES: readonly string[] = [PERSON_LINKED, PERSON_UNLINKED, SLACK_USER_MAPPED];

export type PersonEvent =
  | Readonly<{ type: 'PersonLinked'; data: PersonLinkedData }>
  | Readonly<{ type: 'PersonUnlinked'; data: PersonUnlinkedData }>;

/**
 * A stored event of a person's stream in today's shape, or undefined for an event that is not a
 * person fact or does not parse (it is skipped: the person is looked up again, which records a
 * fresh link, rather than every command of theirs failing on one bad record).
 */
export const upcastPersonEvent = (
  event: Readonly<{ type: string; data: unknown }>,
): PersonEvent | undefined => {
  switch (event.type) {
    case PERSON_LINKED: {
      const parsed = personLinkedSchema.safeParse(event.data);
      return parsed.success ? { type: 'PersonLinked', data: parsed.data } : undefined;
    }
    case PERSON_UNLINKED: {
      const parsed = personUnlinkedSchema.safeParse(event.data);
      return parsed.success ? { type: 'PersonUnlinked', data: parsed.data } : undefined;
    }
    case SLACK_USER_MAPPED: {
      const parsed = slackUserMappedSchema.safeParse(event.data);
      if (!parsed.success) return undefined;
      const old = parsed.data;
      return {
        type: 'PersonLinked',
        data: {
          slackUserId: old.slackUserId,
          system: 'incidents',
          externalId: old.pagerDutyUserId,
          email: old.email,
          name: old.name,
          at: old.at,
        },
      };
    }
    default:
      return undefined;
  }
};
