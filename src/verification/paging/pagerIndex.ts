import { parsePagerEvent } from '../../../machines/verification/paging/events.ts';
import { PAGER_STREAM_PREFIX } from '../../../machines/verification/paging/streams.ts';
import type { EventFilter, EventStore, RecordedEvent } from '../../eventStore/eventStore.ts';
import {
  PERSON_EVENT_TYPES,
  PERSON_STREAM_PREFIX,
  personStreamId,
  upcastPersonEvent,
} from '../../people/events.ts';
import type { Processor } from '../../processors/runner.ts';
import {
  createResumableState,
  type ReadModelRegistration,
  type ResumableState,
  readModelProcessor,
} from '../../processors/snapshots.ts';

/**
 * What the pager looks up by a vendor's id or a phone number, in memory: verified phone → person
 * (the people directory's `phone` links), page id → whose page about which incident, call uuid →
 * page, incident → its pages. Read-your-writes: `catchUp()` applies whatever it has not seen yet
 * (the same pattern as the incident read models), so a webhook for a call created a moment ago
 * finds it.
 *
 * Resumed from snapshots like every read model (processor and stream `pager-index`, see
 * src/processors/snapshots.ts), and no number is ever in a snapshot, not even sealed: a snapshot
 * holds only who has a verified phone (their Slack id and the revision of their link in their own
 * stream), the pages and the calls. The numbers are derived again after a start, in memory only:
 * on the first `catchUp()`, each person with a phone link has that link read from their own stream
 * (`identity-<slackUserId>`, a handful of events) and its number opened, as the full replay did for
 * every link ever recorded. A link applied while running is opened the same way on the next `catchUp()`, so every
 * query (after `catchUp()`, as all of them are) sees the digits.
 *
 * @example
 * await index.catchUp();
 * index.personOfPhone('447700900123'); // 'U0ANA'
 */

export type PageEntry = Readonly<{
  pageId: string;
  slackUserId: string;
  reportTo: string;
  number: number | null;
  label: string;
}>;

export type PagerIndex = Readonly<{
  catchUp(): Promise<void>;
  /** The Slack user whose verified phone this is (E.164 digits), or null. */
  personOfPhone(digits: string): string | null;
  /**
   * The person's verified phone (digits, in memory only), the link's stored value (`stored`: sealed
   * under their data key, or the digits for a link recorded before keys existed) and when it was
   * verified, or null. `digits` is null for a link whose number can no longer be read (its key
   * cannot be opened): they must verify it again.
   */
  phoneOf(slackUserId: string): Readonly<{ digits: string | null; stored: string; at: string }> | null;
  page(pageId: string): PageEntry | undefined;
  pageOfCall(callUuid: string): PageEntry | undefined;
  /** Pages sent about an incident (its stream), any person. */
  pagesAbout(reportTo: string): readonly PageEntry[];
  /** The read model's processor (resumed from snapshots) and its state, for the runner and the CLI. */
  processor: Processor;
  resumable: ResumableState;
}>;

export const PAGER_INDEX_ID = 'pager-index';
/** Version of the snapshotted state and of `apply`: bump it when either changes (rebuilds from zero). */
export const PAGER_INDEX_VERSION = 1;

const FILTER: EventFilter = {
  streamPrefixes: [PERSON_STREAM_PREFIX, PAGER_STREAM_PREFIX],
  eventTypes: [...PERSON_EVENT_TYPES, 'PageRequested', 'PageCallPlaced'],
};

/** E.164 digits without `+` (what every vendor API takes), from any spelling we stored. */
export const phoneDigits = (phone: string): string => phone.replace(/[^0-9]/g, '');

/** A sealed value (`personal:v1:…`, `sealed:v2:…`); anything else is a number in clear (older records). */
const isSealed = (externalId: string): boolean => /^[a-z]+:v[0-9]+:/.test(externalId);

/**
 * A person's phone link: the `PersonLinked` at `revision` of their own stream, with its stored value
 * once known (null: restored from a snapshot, read again from the stream).
 */
type LinkSource = Readonly<{ revision: number; link: Readonly<{ externalId: string; at: string }> | null }>;
type Phone = Readonly<{ digits: string | null; stored: string; at: string }>;

/** The snapshot: who has a phone link (no number), the pages and the calls. */
type SavedState = Readonly<{
  /** Who has a phone link, and its revision in their stream, oldest link first. */
  linked: readonly (readonly [slackUserId: string, revision: number])[];
  pages: readonly (readonly [
    pageId: string,
    slackUserId: string,
    reportTo: string,
    number: number | null,
    label: string,
  ])[];
  calls: readonly (readonly [callUuid: string, pageId: string])[];
}>;

export const createPagerIndex = (
  deps: Readonly<{
    store: EventStore;
    /** The digits of a sealed number (the person's data key); null when it was forgotten. */
    openPhone?(sealed: string): Promise<string | null>;
  }>,
): PagerIndex => {
  // The fold (snapshotted): who has a phone link and where it comes from, the pages, the calls.
  const links = new Map<string, LinkSource>();
  const pages = new Map<string, PageEntry>();
  const byCall = new Map<string, string>();
  const byIncident = new Map<string, Set<string>>();
  // Derived in memory only, never snapshotted: each link's number, and number → person.
  const phones = new Map<string, Readonly<{ source: LinkSource; phone: Phone | null }>>();
  const slackByPhone = new Map<string, string>();
  /** A link changed (or was restored) since the numbers were last opened. */
  let linksChanged = false;

  /** The digits of a link's number: a sealed one opened, a clear one (older records) as it is. */
  const digitsOf = async (externalId: string): Promise<string | null> => {
    if (!isSealed(externalId)) return phoneDigits(externalId);
    return deps.openPhone ? deps.openPhone(externalId) : null;
  };

  /** Forgets what was derived for the person's previous link. */
  const dropPhone = (slackUserId: string): void => {
    const previous = phones.get(slackUserId)?.phone?.digits;
    if (previous && slackByPhone.get(previous) === slackUserId) slackByPhone.delete(previous);
    phones.delete(slackUserId);
  };

  const addPage = (page: PageEntry): void => {
    pages.set(page.pageId, page);
    const set = byIncident.get(page.reportTo) ?? new Set<string>();
    set.add(page.pageId);
    byIncident.set(page.reportTo, set);
  };

  const apply = (e: RecordedEvent): void => {
    if (e.kind !== 'event') return;
    if (e.streamId.startsWith(PERSON_STREAM_PREFIX)) {
      const fact = upcastPersonEvent(e);
      if (fact?.data.system !== 'phone') return;
      const { slackUserId } = fact.data;
      dropPhone(slackUserId);
      linksChanged = true;
      // Deleted then set: the newest link is last, and a number two people verified is the newer one's.
      links.delete(slackUserId);
      if (fact.type === 'PersonLinked') {
        links.set(slackUserId, {
          revision: e.revision,
          link: { externalId: fact.data.externalId, at: fact.data.at },
        });
      }
      return;
    }
    const slackUserId = e.streamId.slice(PAGER_STREAM_PREFIX.length);
    const event = parsePagerEvent(e);
    if (event.type === 'PageRequested') {
      const { pageId, reportTo, number, label } = event.data;
      addPage({ pageId, slackUserId, reportTo, number, label });
    } else if (event.type === 'PageCallPlaced') {
      byCall.set(event.data.callUuid, event.data.pageId);
    }
  };

  const reset = (): void => {
    links.clear();
    pages.clear();
    byCall.clear();
    byIncident.clear();
    phones.clear();
    slackByPhone.clear();
    linksChanged = false;
  };

  const resumable = createResumableState({
    name: PAGER_INDEX_ID,
    version: PAGER_INDEX_VERSION,
    filter: FILTER,
    store: deps.store,
    apply,
    save: (): SavedState => ({
      linked: [...links.entries()].map(([slackUserId, source]) => [slackUserId, source.revision] as const),
      pages: [...pages.values()].map(
        (p) => [p.pageId, p.slackUserId, p.reportTo, p.number, p.label] as const,
      ),
      calls: [...byCall.entries()],
    }),
    load(state) {
      const s = state as SavedState;
      for (const [slackUserId, revision] of s.linked) links.set(slackUserId, { revision, link: null });
      linksChanged = s.linked.length > 0;
      for (const [pageId, slackUserId, reportTo, number, label] of s.pages) {
        addPage({ pageId, slackUserId, reportTo, number, label });
      }
      for (const [callUuid, pageId] of s.calls) byCall.set(callUuid, pageId);
    },
    reset,
  });

  /** The link a snapshot named, read again from the person's own stream (null: not found there). */
  const linkFromStream = async (
    slackUserId: string,
    revision: number,
  ): Promise<Readonly<{ externalId: string; at: string }> | null> => {
    const [e] = await deps.store.readStream(personStreamId(slackUserId), {
      fromRevision: revision,
      maxCount: 1,
    });
    const fact = e?.kind === 'event' && e.revision === revision ? upcastPersonEvent(e) : undefined;
    return fact?.type === 'PersonLinked' && fact.data.system === 'phone'
      ? { externalId: fact.data.externalId, at: fact.data.at }
      : null;
  };

  /**
   * Opens the numbers of links not opened yet, newest link last (so a number two people verified
   * is the newer one's, as the fold says). A link replaced meanwhile is left to the next pass.
   */
  const derivePhones = async (): Promise<void> => {
    if (!linksChanged) return;
    linksChanged = false;
    for (const [slackUserId, source] of [...links.entries()]) {
      if (phones.get(slackUserId)?.source === source) continue;
      const link = source.link ?? (await linkFromStream(slackUserId, source.revision));
      const digits = link ? await digitsOf(link.externalId) : null;
      if (links.get(slackUserId) !== source) continue;
      dropPhone(slackUserId);
      if (!link) {
        phones.set(slackUserId, { source, phone: null });
        continue;
      }
      // A clear link (recorded before numbers were sealed) is kept as digits, as pages record them.
      const stored = isSealed(link.externalId) || digits === null ? link.externalId : digits;
      phones.set(slackUserId, { source, phone: { digits, stored, at: link.at } });
      if (digits !== null) slackByPhone.set(digits, slackUserId);
    }
  };

  // One derivation at a time; a caller arriving during one waits for it, then derives again.
  let deriving: Promise<void> = Promise.resolve();
  const catchUp = async (): Promise<void> => {
    await resumable.catchUp();
    const next = deriving.then(derivePhones, derivePhones);
    deriving = next.catch(() => undefined);
    await next;
  };

  return {
    catchUp,
    personOfPhone: (digits) => slackByPhone.get(phoneDigits(digits)) ?? null,
    phoneOf: (slackUserId) => phones.get(slackUserId)?.phone ?? null,
    page: (pageId) => pages.get(pageId),
    pageOfCall: (callUuid) => {
      const pageId = byCall.get(callUuid);
      return pageId === undefined ? undefined : pages.get(pageId);
    },
    pagesAbout: (reportTo) =>
      [...(byIncident.get(reportTo) ?? [])].map((id) => pages.get(id)).filter((p) => p !== undefined),
    processor: readModelProcessor(PAGER_INDEX_ID, FILTER, resumable),
    resumable,
  };
};

/**
 * Registered by the verification module's declaration (`readModels`). A rebuild needs no key: the
 * snapshot holds no number, and the numbers are opened by the running app.
 */
export const PAGER_INDEX: ReadModelRegistration = {
  name: PAGER_INDEX_ID,
  create: (store) => createPagerIndex({ store }).resumable,
};
