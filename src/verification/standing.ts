import { pagerDecider } from '../../machines/verification/paging/decider.ts';
import { pagerStreamId } from '../../machines/verification/paging/streams.ts';
import { foldHistory } from '../application/fold.ts';
import type { EventStore } from '../eventStore/eventStore.ts';
import type { PagerIndex } from './paging/pagerIndex.ts';
import { maskPhone } from './phone.ts';
import { readVerificationState } from './state.ts';

/**
 * Where a person's phone stands for paging (issue 18: `/verify status` and App Home tell the
 * truth), from what the pager would do, not only from the last verification:
 *
 * - `pageable`: a verified number the pager can read (masked, and since when);
 * - `opted_out`: they replied STOP to a page after verifying it (the pager skips them);
 * - `must_verify_again`: a number was verified, but it can no longer be read (its data key was
 *   lost or cannot be opened) or is no longer linked: nothing can be sent to it;
 * - `none`: no verified number (never, or removed, or forgotten as a leaver's).
 *
 * @example
 * const standing = await phoneStanding({ store, index }, 'U0ANA'); // { kind: 'pageable', masked: '+44 •••• ••0123', since: '…' }
 */
export type PhoneStanding =
  | Readonly<{ kind: 'pageable'; masked: string; since: string }>
  | Readonly<{ kind: 'opted_out'; masked: string | null }>
  | Readonly<{ kind: 'must_verify_again'; masked: string | null }>
  | Readonly<{ kind: 'none' }>;

export const phoneStanding = async (
  deps: Readonly<{ store: EventStore; index: PagerIndex }>,
  slackUserId: string,
): Promise<PhoneStanding> => {
  const verified = (await readVerificationState(deps.store, slackUserId)).context.verified;
  await deps.index.catchUp();
  const link = deps.index.phoneOf(slackUserId);
  if (link?.digits) {
    return {
      kind: 'pageable',
      masked: verified?.masked ?? maskPhone(`+${link.digits}`),
      since: verified?.at ?? link.at,
    };
  }
  if (link) return { kind: 'must_verify_again', masked: verified?.masked ?? null };
  if (!verified) return { kind: 'none' };
  // Verified, not linked: a STOP since (the pager's opt-out), else a number it cannot use.
  const optedOut = foldHistory(
    pagerDecider,
    await deps.store.readStream(pagerStreamId(slackUserId)),
  ).optedOut;
  if (optedOut && Date.parse(optedOut.at) >= Date.parse(verified.at)) {
    return { kind: 'opted_out', masked: verified.masked };
  }
  return { kind: 'must_verify_again', masked: verified.masked };
};
