import { App, type AppOptions, type ReceiverEvent, ReceiverMultipleAckError } from '@slack/bolt';
import { guardedResponseFetch, responseUrlGuard } from './responseUrlGuard.ts';

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
 *
 * And `respond()` (which posts to the request's `response_url`) goes through the one
 * response_url guard (responseUrlGuard.ts) with no redirects followed: Bolt builds `respond` from
 * its own fetch function, which is replaced here (the Web API client keeps its own).
 */
export class SwitchboardBoltApp extends App {
  constructor(options: AppOptions & Readonly<{ responseUrlOrigins: readonly string[] }>) {
    const { responseUrlOrigins, ...appOptions } = options;
    super(appOptions);
    const self = this as unknown as { fetchFn?: unknown };
    // Bolt keeps the fetch for `respond` in `fetchFn` (App.js); fail loudly if an upgrade moves it.
    if (typeof self.fetchFn !== 'function')
      throw new Error('Bolt no longer builds respond() from App.fetchFn: re-check the response_url guard');
    self.fetchFn = guardedResponseFetch(responseUrlGuard(responseUrlOrigins));
  }

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
