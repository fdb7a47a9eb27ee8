/**
 * Communications client benchmark (issue 10): `npm run bench` runs it with the others; alone:
 * `node scripts/node24.mjs bench/vonage.bench.ts [--quick]`.
 *
 * The client against the loopback simulator (real HTTP, the vendor's limits enforced with 429s,
 * the system clock), one process:
 * - vonage.client.pageStorm: 60 pages at once through one client, each an SMS and a voice call
 *   (20 people × 3 incidents): time until every call is created, against the physical floor the
 *   call-creation limit sets (3 a second: the 60th call cannot start before 19 s). Target: ratio
 *   floor / elapsed ≥ 0.9, and no answer 429 (the budgets queue instead; a 429 fails the bench).
 *   A request's second is counted from its answer (see src/upstream/queueingBudget.ts), so each
 *   window of three also carries one round trip: that, not the queue, is the gap to the floor;
 * - vonage.client.verify.p50 / p99: start a verification, read the code off the phone, check it,
 *   against two bare loopback round trips (undici to a `node:http` server that answers `{}`): what
 *   the client and the simulator add to the two requests the flow needs.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { Agent, request } from 'undici';
import { startVonageSimulator } from '../sandbox/simulators/vonage/index.ts';
import { createVonageClient } from '../src/upstream/vonage.ts';
import { emit, median, note, percentile } from './support.ts';

const quick = process.argv.includes('--quick');
const PAGES = quick ? 30 : 60;
const VERIFICATIONS = quick ? 30 : 200;

const number = (i: number) => `4477009${String(10_000 + i).slice(-5)}`;

const pageStorm = async () => {
  const sim = await startVonageSimulator();
  const dispatcher = new Agent({ connections: 64 });
  try {
    const vonage = createVonageClient({ ...sim.clientOptions(), dispatcher });
    // Warm up (the key, the connections), then let the window empty before the clock starts.
    await vonage.sendSms({ to: number(99), from: sim.fromNumber, text: 'warm up', clientRef: 'w' });
    await vonage.createCall({
      to: number(99),
      from: sim.fromNumber,
      ncco: [{ action: 'talk', text: 'warm up' }],
    });
    await sleep(1_100);
    const before = sim.requests.length;
    const started = performance.now();
    let lastCall = 0;
    await Promise.all(
      Array.from({ length: PAGES }, async (_, i) => {
        const to = number(i % 20);
        await vonage.sendSms({
          to,
          from: sim.fromNumber,
          text: `Incident ${i} needs you. Reply 4 to ack.`,
          clientRef: `p${i}`,
        });
        await vonage.createCall({
          to,
          from: sim.fromNumber,
          ncco: [{ action: 'talk', text: `Incident ${i} needs you.` }],
        });
        lastCall = Math.max(lastCall, performance.now());
      }),
    );
    const elapsed = lastCall - started;
    const refused = sim.requests.slice(before).filter((r) => r.status === 429).length;
    const floor = (Math.ceil(PAGES / 3) - 1) * 1000;
    note(
      `page storm: ${PAGES} SMS + ${PAGES} calls in ${Math.round(elapsed)} ms (floor ${floor} ms), ${refused} × 429`,
    );
    const ratio = floor / elapsed;
    emit({
      bench: 'vonage.client.pageStorm',
      value: elapsed,
      unit: 'ms',
      baseline: `floor: ${PAGES} calls at 3/s`,
      baselineValue: floor,
      ratio,
      target: 'ratio >= 0.9 and 0 answers 429',
      met: ratio >= 0.9 && refused === 0,
    });
    sim.assertNoViolations();
    if (refused > 0) throw new Error(`${refused} requests met a 429`);
  } finally {
    await sim.stop();
    await dispatcher.close();
  }
};

const verifyRoundTrips = async () => {
  const sim = await startVonageSimulator();
  const dispatcher = new Agent();
  const bare = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{}');
    });
  });
  const bareUrl = await new Promise<string>((resolve) =>
    bare.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${(bare.address() as AddressInfo).port}`)),
  );
  try {
    const vonage = createVonageClient({ ...sim.clientOptions(), dispatcher });
    const flow: number[] = [];
    const floor: number[] = [];
    const roundTrip = async () => {
      const res = await request(`${bareUrl}/v2/verify`, {
        method: 'POST',
        dispatcher,
        headers: { 'content-type': 'application/json' },
        body: '{"brand":"Switchboard"}',
      });
      await res.body.text();
    };
    for (let i = 0; i < VERIFICATIONS + 20; i++) {
      const to = number(100 + i);
      const t0 = performance.now();
      const { requestId } = await vonage.startVerification({ to, brand: 'Switchboard', clientRef: `b${i}` });
      await vonage.checkCode(requestId, sim.phones.lastCode(to)!);
      const t1 = performance.now();
      await roundTrip();
      await roundTrip();
      const t2 = performance.now();
      if (i >= 20) {
        flow.push(t1 - t0);
        floor.push(t2 - t1);
      }
    }
    note(
      `verify: p50 ${median(flow).toFixed(2)} ms, bare two round trips p50 ${median(floor).toFixed(2)} ms`,
    );
    emit({
      bench: 'vonage.client.verify.p50',
      value: median(flow),
      unit: 'ms',
      baseline: 'two bare loopback round trips',
      baselineValue: median(floor),
    });
    emit({
      bench: 'vonage.client.verify.p99',
      value: percentile(flow, 99),
      unit: 'ms',
      baseline: 'two bare loopback round trips',
      baselineValue: percentile(floor, 99),
    });
    sim.assertNoViolations();
  } finally {
    await sim.stop();
    await dispatcher.close();
    await new Promise<void>((resolve) => bare.close(() => resolve()));
  }
};

await pageStorm();
await verifyRoundTrips();
