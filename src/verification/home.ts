import { phaseOf } from '../../machines/verification/decider.ts';
import type { EventStore } from '../eventStore/eventStore.ts';
import type { HomeSection } from '../lifecycles/lifecycle.ts';
import { type KnownBlock, mrkdwn } from '../slack/blocks/format.ts';
import type { PhoneStanding } from './standing.ts';
import { readVerificationState } from './state.ts';

const PHASE_TEXT: Readonly<Record<string, string>> = {
  none: '',
  requested: 'A code is on its way',
  codeSent: 'Waiting for you to enter the code',
  verified: 'Verified',
  failed: 'The last verification failed',
  expired: 'The last code expired',
  cancelled: 'The last verification was cancelled',
};

/**
 * The App Home section: the verified number, masked, whether Switchboard can page it (`standing`,
 * as `/verify status` says it: opted out, must be verified again), and where the latest
 * verification stands.
 */
export const createVerificationHomeSection = (
  deps: Readonly<{ store: EventStore; standing?(slackUserId: string): Promise<PhoneStanding> }>,
): HomeSection => ({
  async render(user) {
    const state = await readVerificationState(deps.store, user);
    const phase = phaseOf(state);
    const verified = state.context.verified;
    const standing = deps.standing ? await deps.standing(user) : null;
    const none =
      ':iphone: No verified number yet: `/verify &lt;your phone number&gt;` lets Switchboard page you by SMS and call.';
    const lines = [
      '*Phone*',
      standing?.kind === 'opted_out'
        ? `:no_bell: Your number *${standing.masked ?? 'on file'}* is opted out of paging (replied STOP): \`/verify &lt;your phone number&gt;\` opts you back in.`
        : standing?.kind === 'must_verify_again'
          ? `:warning: Your number *${standing.masked ?? 'on file'}* must be verified again: \`/verify &lt;your phone number&gt;\`.`
          : standing?.kind === 'none'
            ? none
            : verified
              ? `:iphone: Your on-call number: *${verified.masked}* (verified ${verified.at.slice(0, 10)}).`
              : standing?.kind === 'pageable'
                ? `:iphone: Your on-call number: *${standing.masked}*.`
                : none,
    ];
    if (phase !== 'verified' && phase !== 'none') {
      const masked = state.context.attempt?.masked;
      lines.push(`${PHASE_TEXT[phase] ?? phase}${masked ? ` (${masked})` : ''}.`);
    }
    return [{ type: 'section', text: mrkdwn(lines.join('\n')) } as KnownBlock];
  },
});
