import { readdirSync, readFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSealer } from '../../src/core/sealed.ts';
import { type IncidentHarness, startIncidentHarness } from '../incidents/harness.ts';
import { waitFor } from '../support/waitFor.ts';

/**
 * Issue 9 item 2: a `response_url` is a credential (whoever holds it can post into the
 * conversation for 30 minutes), so it must not be readable in the store, yet a refusal decided
 * later by a processor must still be answered through it. The inbox stores it sealed and the
 * recorded payload without it; the reply poster opens it.
 */
let h: IncidentHarness;
beforeAll(async () => {
  h = await startIncidentHarness();
});
afterAll(async () => {
  await h.stop();
});

const secretPart = (url: string): string => url.slice(url.lastIndexOf('/') + 1);

describe('response_url at rest', () => {
  it('is stored sealed, never in clear, and a later refusal still answers through it', async () => {
    const { number } = await h.trigger('sealed response urls');
    const first = await h.slash(`ack ${number}`);
    expect(first.status).toBe(200);
    await h.idle();
    // Refused by the decider in a processor, after the ack: answered through the response_url.
    const again = await h.slash(`ack ${number}`);
    const refusal = await waitFor(
      () =>
        h.fake.responsePosts.find(
          (p) =>
            p.responseUrlId === secretPart(again.responseUrl) &&
            /already acknowledged/i.test(JSON.stringify(p)),
        ),
      { what: 'the refusal posted to the stored response_url' },
    );
    expect(JSON.stringify(refusal)).toMatch(/already acknowledged/i);
    await h.idle();

    const inbox = await h.sb.store.readStream('inbox-slack');
    const recorded = JSON.stringify(inbox.map((e) => e.data));
    // Sealed on the data key ring, naming its key.
    expect(recorded).toContain('sealed:v2:test:');
    expect(recorded).not.toContain('response_url');

    const dir = dirname(h.dbPath);
    const files = readdirSync(dir).filter((f) => f.startsWith('switchboard.db'));
    expect(files.length).toBeGreaterThan(0);
    for (const url of [first.responseUrl, again.responseUrl]) {
      for (const f of files) {
        const bytes = readFileSync(`${dir}/${f}`);
        expect(bytes.includes(Buffer.from(secretPart(url))), `${f} holds ${url}`).toBe(false);
      }
    }
  });
});

describe('the sealer', () => {
  it('round-trips, passes old plain values through, and refuses a value sealed under another key', () => {
    const a = createSealer('secret-a', 'response_url');
    const b = createSealer('secret-b', 'response_url');
    const url = 'https://hooks.slack.com/commands/T1/42/abc';
    const sealed = a.seal(url);
    expect(sealed).toMatch(/^sealed:v1:/);
    expect(sealed).not.toContain('hooks.slack.com');
    expect(a.seal(url)).not.toBe(sealed); // a fresh IV every time
    expect(a.open(sealed)).toBe(url);
    expect(a.open(url)).toBe(url); // recorded before sealing existed
    expect(() => b.open(sealed)).toThrow(expect.objectContaining({ code: 'SB_VALIDATION' }));
    expect(() => b.open(sealed)).not.toThrow(/abc|hooks/);
    expect(() => createSealer('secret-a', 'other').open(sealed)).toThrow();
  });
});
