import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../src/core/ids.ts';
import { INCIDENT_THREAD_STREAM_PREFIX } from '../../src/incidents/thread.reactor.ts';
import { PARKED_NOTICES_PROCESSOR } from '../../src/slack/parkedNotices.reactor.ts';
import { internalWords } from '../joins/pageFailureSupport.ts';
import { type IncidentHarness, OPS, startIncidentHarness } from './harness.ts';

/**
 * Issue 18 on a real lifecycle: a corrupt event in an incident's stream makes the incident's own
 * processors give up (SB_STORE_CORRUPT parks at once), and the people looking at its card are told
 * in the card's thread, once, in words, also after a restart that delivers every park again.
 */
let h: IncidentHarness;
beforeAll(async () => {
  h = await startIncidentHarness({ incidentRetryBaseMs: 30 });
});
afterAll(async () => {
  await h.stop();
});

/** Replies in a card's thread, less the story lines the thread gets anyway (issue 22, src/incidents/thread.reactor.ts). */
const repliesTo = (ts: string) =>
  h.fake
    .messages(OPS)
    .filter(
      (m) =>
        m.thread_ts === ts &&
        m.ts !== ts &&
        !String(m.metadata?.event_payload.record ?? '').startsWith(INCIDENT_THREAD_STREAM_PREFIX),
    );

describe("a parked incident event is said in its card's thread", () => {
  it('tells the channel once, in words, and not again after a restart', async () => {
    const { streamId, card } = await h.trigger('Corrupted on purpose');
    await h.sb.store.appendToStream(streamId, [
      { id: newId(), type: 'IncidentAcknowledged', data: { not: 'what an acknowledgement holds' } },
    ]);
    await h.idle();

    const parked = (await h.sb.processors.listParked()).filter((p) => p.streamId === streamId);
    expect(parked.length).toBeGreaterThan(0);
    const replies = repliesTo(card.ts);
    expect(replies.map((m) => m.text)).toEqual([
      ":warning: Switchboard could not finish updating this incident; what you see here may be out of date. This has been logged for Switchboard's operators.",
    ]);
    expect(internalWords(replies.map((m) => m.text))).toEqual([]);
    for (const p of parked) {
      for (const internal of [p.streamId, p.eventId, p.processorId, p.errorCode]) {
        expect(replies[0]?.text).not.toContain(internal);
      }
    }

    await h.restart({ replay: [PARKED_NOTICES_PROCESSOR] });
    await h.idle();
    expect(repliesTo(card.ts)).toHaveLength(1);
  });
});
