import { pagerDecider } from '../../../machines/verification/paging/decider.ts';
import type { PagerEvent } from '../../../machines/verification/paging/events.ts';
import { PAGE_ID, pagerStreamId } from '../../../machines/verification/paging/streams.ts';
import { foldHistory } from '../../application/fold.ts';
import { ValidationError } from '../../core/errors.ts';
import { uuidv5 } from '../../core/ids.ts';
import type { Command } from '../../core/messages.ts';
import type { EventStore } from '../../eventStore/eventStore.ts';
import type { NoticeOutcome, PageOutcome, Pager } from '../../lifecycles/ports.ts';
import type { PeopleDirectory } from '../../people/directory.ts';
import type { Dispatch } from '../../processors/dispatchCommand.ts';
import { dispatchCommand } from '../../processors/dispatchCommand.ts';
import { truncate } from '../../slack/text.ts';
import type { PagerIndex } from './pagerIndex.ts';

/**
 * The codes of a page's `PageSmsFailed` / `PageCallFailed` that are not the vendor's refusal:
 * `unreadable` (the number could not be opened when it was sent: it must be verified again) and
 * `gaveUp` (the phone service failed until the processor's last attempt). Older records say
 * `phone_forgotten` for the first.
 */
export const PAGE_FAILURE_CODES = { unreadable: 'phone_unreadable', gaveUp: 'gave_up' } as const;

/** `metadata.actor` of everything the pager records on its own. */
export const PAGER_ACTOR = 'system:pager';

export const pagerCommand = (type: string, data: Command['data'], key: string, now: Date): Command => ({
  type,
  data,
  metadata: { now: now.toISOString(), commandId: uuidv5(`pager:${type}:${key}`), actor: PAGER_ACTOR },
});

const outcomeOf = (events: readonly Readonly<{ type: string }>[]): PageOutcome => {
  const types = new Set(events.map((e) => e.type as PagerEvent['type']));
  if (types.has('PageRequested')) return 'paged';
  if (types.has('PageHeldBack')) return 'held_back';
  if (types.has('PageSkipped')) return 'opted_out';
  return 'already_paged';
};

/**
 * The `pager` port the verification lifecycle offers (src/lifecycles/ports.ts): `page` records a
 * page in the person's stream (`RequestPage`, decided on their history: the per-hour limit and a
 * STOP opt-out), and the delivery processor sends it; `stop` stops every page about an incident.
 * Both are idempotent (deterministic command ids), so a caller's redelivery changes nothing.
 *
 * @example
 * const outcome = await pager.page({ person: { slackUserId: 'U0ANA' }, pageId, reportTo, … });
 */
export const createPager = (
  deps: Readonly<{
    index: PagerIndex;
    dispatch: () => Dispatch;
    now: () => Date;
    store: EventStore;
    people: Pick<PeopleDirectory, 'linkOf' | 'unlink'>;
    /** Deletes the person's data key: every copy of their number becomes unreadable. */
    forgetKey(slackUserId: string): Promise<void>;
  }>,
): Pager => ({
  async page(request) {
    if (!PAGE_ID.test(request.pageId) || request.pageId.length > 40) {
      throw new ValidationError(`a page id is 1-40 characters from [A-Za-z0-9._:-]: ${request.pageId}`);
    }
    await deps.index.catchUp();
    const phone = deps.index.phoneOf(request.person.slackUserId);
    if (!phone) {
      // A STOP forgets the phone (until it is verified again): say so rather than "no phone".
      const state = foldHistory(
        pagerDecider,
        await deps.store.readStream(pagerStreamId(request.person.slackUserId)),
      );
      return state.optedOut ? 'opted_out' : 'no_verified_phone';
    }
    // Linked, but the number can no longer be read: nothing could be sent to it.
    if (phone.digits === null) return 'must_verify_again';
    const command = pagerCommand(
      'RequestPage',
      {
        slackUserId: request.person.slackUserId,
        pageId: request.pageId,
        reportTo: request.reportTo,
        number: request.number,
        label: truncate(request.label, 200),
        // As the link holds it: sealed under the person's data key, never the digits.
        phone: phone.stored,
        phoneVerifiedAt: phone.at,
        text: truncate(request.text, 1000),
        spokenText: truncate(request.spokenText ?? request.text, 1500),
        since: request.since ?? null,
        callAfterMs: request.callAfterMs,
        maxPerHour: request.maxPerHour,
      },
      request.pageId,
      deps.now(),
    );
    const result = (await deps.dispatch()(command)) as { events: readonly { type: string }[] };
    return outcomeOf(result.events);
  },

  async notify(request): Promise<NoticeOutcome> {
    // It is the SMS's client_ref, as a page id is: at most 40 characters.
    if (!PAGE_ID.test(request.noticeId) || request.noticeId.length > 40) {
      throw new ValidationError(`a notice id is 1-40 characters from [A-Za-z0-9._:-]: ${request.noticeId}`);
    }
    await deps.index.catchUp();
    const phone = deps.index.phoneOf(request.person.slackUserId);
    if (!phone) {
      const state = foldHistory(
        pagerDecider,
        await deps.store.readStream(pagerStreamId(request.person.slackUserId)),
      );
      return state.optedOut ? 'opted_out' : 'no_verified_phone';
    }
    if (phone.digits === null) return 'must_verify_again';
    const command = pagerCommand(
      'RequestNotice',
      {
        slackUserId: request.person.slackUserId,
        pageId: request.noticeId,
        // As the link holds it: sealed under the person's data key, never the digits.
        phone: phone.stored,
        phoneVerifiedAt: phone.at,
        text: truncate(request.text, 320),
      },
      request.noticeId,
      deps.now(),
    );
    const result = (await deps.dispatch()(command)) as { events: readonly { type: string }[] };
    const types = new Set(result.events.map((e) => e.type));
    if (types.has('NoticeRequested')) return 'sent';
    if (types.has('NoticeSkipped')) return 'opted_out';
    return 'already_sent';
  },

  async stop(input) {
    await deps.index.catchUp();
    for (const page of deps.index.pagesAbout(input.reportTo)) {
      const outcome = await dispatchCommand(
        deps.dispatch(),
        pagerCommand(
          'StopPage',
          { slackUserId: page.slackUserId, pageId: page.pageId, reason: input.reason.slice(0, 200) },
          page.pageId,
          input.at,
        ),
      );
      if (outcome.outcome === 'rejected' && outcome.code !== 'SB_ILLEGAL_STATE') {
        throw new ValidationError(`stopping page ${page.pageId}: ${outcome.message}`);
      }
    }
  },

  /**
   * The person left: every page of theirs still on is stopped (its call, if not placed yet, is
   * cancelled by the delivery processor), their phone link is removed (`PersonUnlinked`, reason
   * given), and their data key deleted, so the number sealed in the link, the verification
   * stream, the pages and the replies can no longer be read. Each step is idempotent, and a
   * crash between them is finished by calling again.
   */
  async forget(input) {
    const slackUserId = input.person.slackUserId;
    const state = foldHistory(pagerDecider, await deps.store.readStream(pagerStreamId(slackUserId)));
    for (const pageId of state.order) {
      if (state.pages[pageId]?.status !== 'requested') continue;
      const outcome = await dispatchCommand(
        deps.dispatch(),
        pagerCommand(
          'StopPage',
          { slackUserId, pageId, reason: input.reason.slice(0, 200) },
          `${pageId}:forget`,
          input.at,
        ),
      );
      if (outcome.outcome === 'rejected' && outcome.code !== 'SB_ILLEGAL_STATE') {
        throw new ValidationError(`stopping page ${pageId}: ${outcome.message}`);
      }
    }
    // The verification stream forgets its verified number too (status, App Home, a later /verify).
    const forgotten = await dispatchCommand(
      deps.dispatch(),
      pagerCommand(
        'ForgetVerifiedPhone',
        { slackUserId, reason: input.reason.slice(0, 60) || 'left' },
        `${slackUserId}:forget:${input.at.toISOString()}`,
        input.at,
      ),
    );
    if (forgotten.outcome === 'rejected' && forgotten.code !== 'SB_ILLEGAL_STATE') {
      throw new ValidationError(`forgetting the verified phone of ${slackUserId}: ${forgotten.message}`);
    }
    if (await deps.people.linkOf(slackUserId, 'phone')) {
      await deps.people.unlink(slackUserId, 'phone', input.reason.slice(0, 60) || 'left');
    }
    await deps.forgetKey(slackUserId);
    await deps.index.catchUp();
  },
});

export { pagerStreamId };
