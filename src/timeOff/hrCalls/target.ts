import type { TimeOffState } from '../../../machines/timeOff/decider.ts';
import { requestIdOfStream } from '../../../machines/timeOff/streams.ts';
import type { EventStore, RecordedEvent } from '../../eventStore/eventStore.ts';
import type { UpstreamCallTarget } from '../../processors/upstreamCall.ts';

/** Which HR call of which request, and which of its attempts, a recorded event asks for. */
export type HrCallTarget = UpstreamCallTarget & Readonly<{ timeOffId: string }>;

/** The request's events that ask for an HR call (the processor's filter). */
export const HR_CALL_EVENTS = [
  'TimeOffApproved',
  'TimeOffResubmitted',
  'TimeOffSubmitted',
  'TimeOffCancelRequested',
  'TimeOffUpstreamCallRetried',
] as const;

/**
 * The HR call an event asks for, or null: an approval (or a resubmission) submits, a cancel of a
 * request HR has cancels it there, a submission reads it back (or, cancelled while the submission
 * was on its way, cancels the new HR request), a retry runs its attempt again.
 */
export const hrCallTargetOf = async (
  event: RecordedEvent,
  store: EventStore,
  readState: (store: EventStore, streamId: string) => Promise<TimeOffState>,
): Promise<HrCallTarget | null> => {
  if (event.kind !== 'event') return null;
  const timeOffId = requestIdOfStream(event.streamId);
  if (timeOffId === null) return null;
  const d = event.data as Record<string, unknown>;
  const at = (requestId: unknown, attempt = 1): HrCallTarget | null =>
    typeof requestId === 'string' ? { streamId: event.streamId, timeOffId, requestId, attempt } : null;
  switch (event.type) {
    case 'TimeOffApproved':
    case 'TimeOffResubmitted':
      return at(d.submitRequestId);
    case 'TimeOffCancelRequested':
      return d.hrRequestId === null ? null : at(d.cancelRequestId);
    case 'TimeOffSubmitted': {
      // Read back, or (cancelled while the submission was on its way) cancel the new HR request.
      const state = await readState(store, event.streamId);
      const cancel = state.context.requests.find(
        (r) => r.action === 'cancel' && r.hrRequestId === d.hrRequestId,
      );
      return at(cancel ? cancel.requestId : d.readBackRequestId);
    }
    case 'TimeOffUpstreamCallRetried':
      return typeof d.attempt === 'number' ? at(d.requestId, d.attempt) : null;
    default:
      return null;
  }
};
