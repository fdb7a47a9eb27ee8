/**
 * Phone verification end to end (issue 10): `npm run bench` runs it with the others; alone:
 * `node scripts/node24.mjs bench/verify.bench.ts [--quick]`.
 *
 * The whole app in process (real HTTP, Bolt with real signatures, the SQLite file store) with the
 * verification lifecycle on, against the communications simulator and the fake Slack: the test
 * harness of test/verification/ (its clock is a manual one, moved 11 minutes between
 * verifications so the per-person and organisation limits never refuse one; latency is measured
 * on `performance.now()`).
 *
 * One verification: `/verify +44 7700 900123` → the DM saying a code was sent (the vendor has
 * started it) → the code read off the simulated phone → "Enter code", the modal, the submission →
 * the DM saying the number is verified. Figures (JSON lines on stdout):
 * - verify.endToEnd.p50 / p99: that whole path, against the same simulator driven directly by the
 *   communications client (start, read the code, check) in the same run: what Slack, the store,
 *   the processors and the DMs add to the two vendor calls the flow needs.
 * - verify.codeToVerified.p50: from the code's submission to the "verified" DM (the part a person
 *   waits through with the modal closed), against the client's check alone.
 */
import { createVonageClient } from '../src/upstream/vonage.ts';
import { waitFor } from '../test/support/waitFor.ts';
import { PHONE_A, startVerificationHarness } from '../test/verification/harness.ts';
import { emit, median, note, percentile } from './support.ts';

const quick = process.argv.includes('--quick');
const RUNS = quick ? 15 : 60;
const WARMUP = quick ? 3 : 8;
const ELEVEN_MINUTES = 11 * 60_000;

note('verify: starting the app and the simulators');
const h = await startVerificationHarness();
note('verify: started');
try {
  const client = createVonageClient({ ...h.sim.clientOptions(), clock: h.clock });
  const endToEnd: number[] = [];
  const codeToVerified: number[] = [];
  const direct: number[] = [];
  const directCheck: number[] = [];

  for (let i = 0; i < RUNS + WARMUP; i++) {
    // The app's way.
    h.clock.advance(ELEVEN_MINUTES);
    const before = h.dms().length;
    /** A DM matching `match` that arrived in this round. */
    const newDm = (match: RegExp) =>
      waitFor(
        () =>
          h
            .dms()
            .slice(before)
            .find((m) => match.test(m.text)),
        {
          what: `a DM matching ${match}`,
          timeoutMs: 15_000,
          intervalMs: 1,
        },
      );
    const t0 = performance.now();
    const typed = await h.verify(PHONE_A.typed);
    if (typed.status !== 200) throw new Error(`/verify answered ${typed.status}`);
    await newDm(/sent a 6-digit code/);
    const code = h.sim.phones.lastCode(PHONE_A.digits);
    if (!code) throw new Error('no code reached the phone');
    const t1 = performance.now();
    const submitted = await h.enterCode(code);
    if (submitted.status !== 200) throw new Error(`the code modal answered ${submitted.status}`);
    await newDm(/is verified/);
    const t2 = performance.now();
    await h.idle();

    // The same simulator through the client alone: start, read the code, check.
    h.clock.advance(ELEVEN_MINUTES);
    const d0 = performance.now();
    const { requestId } = await client.startVerification({
      to: '447700900999',
      brand: 'Switchboard',
      clientRef: `bench${i}`,
    });
    const directCode = h.sim.phones.lastCode('447700900999');
    if (!directCode) throw new Error('no code reached the phone (client alone)');
    const d1 = performance.now();
    await client.checkCode(requestId, directCode);
    const d2 = performance.now();

    if (i >= WARMUP) {
      endToEnd.push(t2 - t0);
      codeToVerified.push(t2 - t1);
      direct.push(d2 - d0);
      directCheck.push(d2 - d1);
    }
  }
  note(
    `verify end to end: p50 ${median(endToEnd).toFixed(1)} ms, p99 ${percentile(endToEnd, 99).toFixed(1)} ms; ` +
      `client alone p50 ${median(direct).toFixed(1)} ms`,
  );
  emit({
    bench: 'verify.endToEnd.p50',
    value: median(endToEnd),
    unit: 'ms',
    baseline: 'the client alone against the same simulator (start, code, check)',
    baselineValue: median(direct),
  });
  emit({
    bench: 'verify.endToEnd.p99',
    value: percentile(endToEnd, 99),
    unit: 'ms',
    baseline: 'the client alone against the same simulator (start, code, check)',
    baselineValue: percentile(direct, 99),
  });
  emit({
    bench: 'verify.codeToVerified.p50',
    value: median(codeToVerified),
    unit: 'ms',
    baseline: "the client's check alone",
    baselineValue: median(directCheck),
  });
  h.sim.assertNoViolations();
} finally {
  await h.stop();
}
