import { parsePagerEvent } from '../../../machines/verification/paging/events.ts';
import { PAGER_STREAM_PREFIX } from '../../../machines/verification/paging/streams.ts';
import type { EventFilter, EventStore, RecordedEvent } from '../../eventStore/eventStore.ts';
import { PERSON_EVENT_TYPES, PERSON_STREAM_PREFIX, upcastPersonEvent } from '../../people/events.ts';

/**
 * What the pager looks up by a vendor's id or a phone number, folded from the store in memory:
 * verified phone → person (the people directory's `phone` links), page id → whose page about which
 * incident, call uuid → page, incident → its pages. Read-your-writes: `catchUp()` applies whatever
 * it has not seen yet (the same pattern as the incident read models), so a webhook for a call
 * created a moment ago finds it.
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
}>;

const FILTER: EventFilter = {
  streamPrefixes: [PERSON_STREAM_PREFIX, PAGER_STREAM_PREFIX],
  eventTypes: [...PERSON_EVENT_TYPES, 'PageRequested', 'PageCallPlaced'],
};

/** E.164 digits without `+` (what every vendor API takes), from any spelling we stored. */
export const phoneDigits = (phone: string): string => phone.replace(/[^0-9]/g, '');

export const createPagerIndex = (
  deps: Readonly<{
    store: EventStore;
    /** The digits of a sealed number (the person's data key); null when it was forgotten. */
    openPhone?(sealed: string): Promise<string | null>;
  }>,
): PagerIndex => {
  let applied: bigint | undefined;
  const phoneBySlack = new Map<string, { digits: string | null; stored: string; at: string }>();
  const slackByPhone = new Map<string, string>();
  const pages = new Map<string, PageEntry>();
  const byCall = new Map<string, string>();
  const byIncident = new Map<string, Set<string>>();

  /** The digits of a link's number: a sealed one opened, a clear one (older records) as it is. */
  const digitsOf = async (externalId: string): Promise<string | null> => {
    if (!/^[a-z]+:v[0-9]+:/.test(externalId)) return phoneDigits(externalId);
    return deps.openPhone ? deps.openPhone(externalId) : null;
  };

  const apply = async (e: RecordedEvent): Promise<void> => {
    if (e.kind !== 'event') return;
    if (applied !== undefined && e.position <= applied) return;
    applied = e.position;
    if (e.streamId.startsWith(PERSON_STREAM_PREFIX)) {
      const fact = upcastPersonEvent(e);
      if (fact?.data.system !== 'phone') return;
      const { slackUserId } = fact.data;
      const previous = phoneBySlack.get(slackUserId);
      if (previous?.digits && slackByPhone.get(previous.digits) === slackUserId) {
        slackByPhone.delete(previous.digits);
      }
      phoneBySlack.delete(slackUserId);
      if (fact.type === 'PersonLinked') {
        // Null: linked, but the number can no longer be read (its key forgotten or not openable).
        const digits = await digitsOf(fact.data.externalId);
        // A clear link (recorded before numbers were sealed) is kept as digits, as pages record them.
        const sealed = /^[a-z]+:v[0-9]+:/.test(fact.data.externalId);
        phoneBySlack.set(slackUserId, {
          digits,
          stored: sealed || digits === null ? fact.data.externalId : digits,
          at: fact.data.at,
        });
        if (digits !== null) slackByPhone.set(digits, slackUserId);
      }
      return;
    }
    const slackUserId = e.streamId.slice(PAGER_STREAM_PREFIX.length);
    const event = parsePagerEvent(e);
    if (event.type === 'PageRequested') {
      const { pageId, reportTo, number, label } = event.data;
      pages.set(pageId, { pageId, slackUserId, reportTo, number, label });
      const set = byIncident.get(reportTo) ?? new Set<string>();
      set.add(pageId);
      byIncident.set(reportTo, set);
    } else if (event.type === 'PageCallPlaced') {
      byCall.set(event.data.callUuid, event.data.pageId);
    }
  };

  let running: Promise<void> | undefined;
  const catchUp = (): Promise<void> => {
    const run = async () => {
      for (;;) {
        const batch = await deps.store.readAll({
          ...(applied === undefined ? {} : { after: applied }),
          filter: FILTER,
          maxCount: 1_000,
        });
        for (const e of batch) await apply(e);
        if (batch.length < 1_000) return;
      }
    };
    // One read at a time; a caller arriving during a read waits for it, then reads again.
    const next = (running ?? Promise.resolve()).then(run, run);
    running = next.catch(() => undefined);
    return next;
  };

  return {
    catchUp,
    personOfPhone: (digits) => slackByPhone.get(phoneDigits(digits)) ?? null,
    phoneOf: (slackUserId) => phoneBySlack.get(slackUserId) ?? null,
    page: (pageId) => pages.get(pageId),
    pageOfCall: (callUuid) => {
      const pageId = byCall.get(callUuid);
      return pageId === undefined ? undefined : pages.get(pageId);
    },
    pagesAbout: (reportTo) =>
      [...(byIncident.get(reportTo) ?? [])].map((id) => pages.get(id)).filter((p) => p !== undefined),
  };
};
