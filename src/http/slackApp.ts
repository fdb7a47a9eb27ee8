import { App, type ReceiverEvent, ReceiverMultipleAckError } from '@slack/bolt';

/**
 * What the recording middleware reads to know whether a listener already acknowledged.
 * Put on Bolt's `context` under ACK_STATE_KEY for every request.
 */
export type AckState = { acked: boolean };
export const ACK_STATE_KEY = 'ackState';

/**
 * Bolt's App with one change: Events API requests are acknowledged only after the listeners
 * (and so the inbox append) finished, like every other input. Bolt acks events before any
 * middleware runs, which would answer Slack's 2xx for an event not yet recorded: lost on a crash,
 * and never redelivered. Here the event's `ack()` is held and sent when `processEvent` resolves;
 * if processing throws, no ack is sent and the receiver answers 5xx so Slack redelivers
 * (the inbox dedupes the redelivery by event_id).
 *
 * Works for both receivers (HTTP and Socket Mode): both hand requests to `app.processEvent`.
 */
export class SwitchboardBoltApp extends App {
  override async processEvent(event: ReceiverEvent): Promise<void> {
    const state: AckState = { acked: false };
    const isEventsApi = event.body['type'] === 'event_callback';
    let held: { response: unknown } | undefined;
    const ack = async (response?: unknown): Promise<void> => {
      if (state.acked) throw new ReceiverMultipleAckError();
      state.acked = true;
      if (isEventsApi) held = { response };
      else await event.ack(response);
    };
    await super.processEvent({
      ...event,
      ack,
      customProperties: { ...event.customProperties, [ACK_STATE_KEY]: state },
    });
    if (held) await event.ack(held.response);
  }
}
