import { type VerificationState, verificationDecider } from '../../machines/verification/decider.ts';
import { verificationStreamId } from '../../machines/verification/streams.ts';
import { foldHistory } from '../application/fold.ts';
import type { EventStore } from '../eventStore/eventStore.ts';

/** A person's verification state, folded from `verification-<slack user id>`. */
export const readVerificationState = async (
  store: EventStore,
  slackUserId: string,
): Promise<VerificationState> =>
  foldHistory(verificationDecider, await store.readStream(verificationStreamId(slackUserId)));

export const readVerificationStream = async (
  store: EventStore,
  streamId: string,
): Promise<VerificationState> => foldHistory(verificationDecider, await store.readStream(streamId));
