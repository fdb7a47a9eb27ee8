import { uuidv5 } from '../core/ids.ts';
import type { JsonObject } from '../core/messages.ts';
import type { EventStore, RecordedEvent } from '../eventStore/eventStore.ts';
import {
  PERSON_LINKED,
  PERSON_UNLINKED,
  type PersonEvent,
  type PersonLinkedData,
  type PersonSystem,
  type PersonUnlinkedData,
  personStreamId,
  upcastPersonEvent,
} from './events.ts';

/**
 * The directory of people every lifecycle shares: for one Slack user, who they are in the incident
 * service, in HR and on the phone, kept as events in `identity-<slackUserId>` (see events.ts).
 *
 * It only records and reads links. Finding someone in a system (by email, by a verification code)
 * is the business of whoever knows that system: the identity resolver (identity.ts) for lookups by
 * email, the verification lifecycle for phones. The root builds one directory and hands it to every
 * lifecycle module (`deps.people`).
 *
 * @example
 * const people = createPeopleDirectory({ store, now: () => clock.now() });
 * await people.link('U0ANA', { system: 'incidents', externalId: 'PUSR001', email: 'ana@…', name: 'Ana Silva' });
 * (await people.linkOf('U0ANA', 'incidents'))?.externalId; // 'PUSR001'
 */

/** One system's link of a person, as last recorded. */
export type PersonLink = Readonly<{
  system: PersonSystem;
  externalId: string;
  email: string | null;
  name: string | null;
  /** When it was learnt (ISO 8601). */
  at: string;
}>;

export type Person = Readonly<{
  slackUserId: string;
  /** The current link per system; a system the person is not (or no longer) linked to is absent. */
  links: Readonly<Partial<Record<PersonSystem, PersonLink>>>;
}>;

export type PeopleDirectory = Readonly<{
  /** Everything known about a Slack user (no links when nothing is). */
  person(slackUserId: string): Promise<Person>;
  /** The current link of a Slack user in one system, or undefined. Reads only as far back as needed. */
  linkOf(slackUserId: string, system: PersonSystem): Promise<PersonLink | undefined>;
  /** Records that the Slack user is `externalId` in `system`, as of now. Returns the link recorded. */
  link(slackUserId: string, link: Omit<PersonLink, 'at'>): Promise<PersonLink>;
  /** Records that the Slack user is no longer linked in `system` (no-op when they are not). */
  unlink(slackUserId: string, system: PersonSystem, reason: string): Promise<void>;
}>;

export type PeopleDirectoryDeps = Readonly<{ store: EventStore; now(): Date }>;

/** Folds a person's stream (old shapes upcast) into the current link per system. */
export const foldPerson = (slackUserId: string, events: readonly PersonEvent[]): Person => {
  const links: Partial<Record<PersonSystem, PersonLink>> = {};
  for (const e of events) {
    if (e.type === 'PersonLinked') {
      const { system, externalId, email, name, at } = e.data;
      links[system] = { system, externalId, email, name, at };
    } else if (links[e.data.system]?.externalId === e.data.externalId) {
      delete links[e.data.system];
    }
  }
  return { slackUserId, links };
};

const PAGE = 50;

export const createPeopleDirectory = (deps: PeopleDirectoryDeps): PeopleDirectory => {
  const { store } = deps;
  const upcast = (records: readonly RecordedEvent[]): PersonEvent[] =>
    records.flatMap((r) => {
      const e = r.kind === 'event' ? upcastPersonEvent(r) : undefined;
      return e ? [e] : [];
    });

  const append = async (slackUserId: string, event: PersonEvent): Promise<void> => {
    const d = event.data;
    await store.appendToStream(personStreamId(slackUserId), [
      {
        id: uuidv5(`person:${event.type}:${slackUserId}:${d.system}:${d.externalId}:${d.at}`),
        type: event.type,
        data: d as unknown as JsonObject,
      },
    ]);
  };

  const person = async (slackUserId: string): Promise<Person> =>
    foldPerson(slackUserId, upcast(await store.readStream(personStreamId(slackUserId))));

  return {
    person,

    async linkOf(slackUserId, system) {
      // Newest first, page by page: the first fact about this system decides.
      let from: number | undefined;
      for (;;) {
        const page = await store.readStream(personStreamId(slackUserId), {
          direction: 'backwards',
          maxCount: PAGE,
          ...(from === undefined ? {} : { fromRevision: from }),
        });
        for (const e of upcast(page)) {
          if (e.data.system !== system) continue;
          return e.type === 'PersonLinked' ? foldPerson(slackUserId, [e]).links[system] : undefined;
        }
        const oldest = page.at(-1);
        if (page.length < PAGE || !oldest || oldest.revision === 0) return undefined;
        from = oldest.revision - 1;
      }
    },

    async link(slackUserId, link) {
      const data: PersonLinkedData = { slackUserId, ...link, at: deps.now().toISOString() };
      await append(slackUserId, { type: PERSON_LINKED, data });
      return {
        system: data.system,
        externalId: data.externalId,
        email: data.email,
        name: data.name,
        at: data.at,
      };
    },

    async unlink(slackUserId, system, reason) {
      const current = (await person(slackUserId)).links[system];
      if (!current) return;
      const data: PersonUnlinkedData = {
        slackUserId,
        system,
        externalId: current.externalId,
        reason,
        at: deps.now().toISOString(),
      };
      await append(slackUserId, { type: PERSON_UNLINKED, data });
    },
  };
};
