/**
 * Held unauthenticated bodies (issue 18 item 9): `npm run bench` runs it with the others; alone:
 * `node scripts/node24.mjs bench/heldBodies.bench.ts [--quick]`.
 *
 * The real app (`src/main.ts`, a child process on loopback, SQLite store, the incident lifecycle on
 * the incident-service simulator) is sent 400 connections per route that look like Slack's or the
 * incident service's (a timestamp in the window and a well-formed but wrong signature), each
 * declaring a 1 MiB body and sending all of it but its last byte, in 64 KiB pieces round-robin
 * over the connections, then holding the connection open. The child's resident memory (RSS, from
 * /proc) and V8 heap (`/metrics`) are read before, and again once the held connections have
 * settled (all answered, or no more growth for a second); then everything is closed.
 *
 * Figures (JSON lines on stdout, MB = 2^20 bytes):
 * - heldBodies.slack.rssAdded / heldBodies.pagerduty.rssAdded: RSS added by the 400 held
 *   connections on that route, the median of 3 rounds (1 with `--quick`), each in a fresh process;
 *   target ≤ 64 MB. The baseline, measured side by side in the same run (rounds alternate which
 *   goes first), is a bare `node:http` server in a child process that answers every such request
 *   401 from its headers (`Connection: close`, Node's defaults otherwise): what the same
 *   connections cost a Node server that keeps no body at all.
 * Printed on stderr for each round: the RSS and V8 heap added, and how the connections were
 * answered (`held`: still waiting for their body; `closed`: closed before an answer was read).
 */
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { connect, type Socket } from 'node:net';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { startPagerDutySimulator } from '../sandbox/simulators/pagerduty/index.ts';
import { simulatorEnv } from '../sandbox/simulators/simulator.ts';
import { startFakeSlack } from '../sandbox/simulators/slack/fakeSlack.ts';
import { emit, median, note, type Server, startChild, tempDir } from './support.ts';

const ROOT = resolve(import.meta.dirname, '..');
const SIGNING_SECRET = 'bench-signing-secret-held-bodies';
const BOT_TOKEN = 'xoxb-bench-held-bodies';
const MB = 1024 * 1024;

const quick = process.argv.includes('--quick');
const CONNECTIONS = quick ? 100 : 400;
const DECLARED = MB;
const PIECE = 64 * 1024;
const TARGET_MB = 64;
const ROUNDS = quick ? 1 : 3;

// ---------- measuring ----------

/** The child's resident set (VmRSS) in bytes, from /proc. */
function rssOf(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = /^VmRSS:\s+(\d+) kB$/m.exec(status)?.[1];
  if (kb === undefined) throw new Error(`no VmRSS for ${pid}`);
  return Number(kb) * 1024;
}

/** The app's V8 heap in use (`nodejs_heap_used_bytes` on /metrics); NaN for the bare server. */
async function heapOf(url: string): Promise<number> {
  try {
    const text = await (await fetch(`${url}/metrics`)).text();
    const v = /^nodejs_heap_used_bytes(?:\{\})? (\S+)$/m.exec(text)?.[1];
    return v === undefined ? Number.NaN : Number(v);
  } catch {
    return Number.NaN;
  }
}

type Held = { socket: Socket; response: string; closed: boolean };

const headersFor = (route: 'slack' | 'pagerduty', host: string): string[] => {
  const now = Math.floor(Date.now() / 1000);
  return route === 'slack'
    ? [
        'POST /slack/events HTTP/1.1',
        `Host: ${host}`,
        'Content-Type: application/x-www-form-urlencoded',
        `X-Slack-Request-Timestamp: ${now}`,
        `X-Slack-Signature: v0=${'0'.repeat(64)}`,
      ]
    : [
        'POST /webhooks/pagerduty HTTP/1.1',
        `Host: ${host}`,
        'Content-Type: application/json',
        `X-PagerDuty-Signature: v1=${'0'.repeat(64)}`,
        'X-Webhook-Id: 00000000-0000-4000-8000-000000000000',
      ];
};

/** Opens `count` connections to the route, sends the headers and all but the last byte of the body, and holds. */
async function attack(url: string, route: 'slack' | 'pagerduty', count: number): Promise<Held[]> {
  const { hostname, port } = new URL(url);
  const held: Held[] = [];
  for (let i = 0; i < count; i++) {
    const h: Held = {
      socket: connect({ host: hostname, port: Number(port) }),
      response: '',
      closed: false,
    };
    h.socket.on('data', (d: Buffer) => {
      h.response += d.toString('latin1');
    });
    h.socket.on('error', () => undefined);
    h.socket.on('close', () => {
      h.closed = true;
    });
    await new Promise<void>((r) => h.socket.once('connect', () => r()));
    h.socket.write(
      `${[...headersFor(route, `${hostname}:${port}`), `Content-Length: ${DECLARED}`, '', ''].join('\r\n')}`,
    );
    held.push(h);
  }
  // The body, piece by piece, round-robin over the connections, all but its last byte.
  const piece = Buffer.alloc(PIECE, 0x61);
  for (let sent = 0; sent < DECLARED - 1; sent += PIECE) {
    const size = Math.min(PIECE, DECLARED - 1 - sent);
    await Promise.all(
      held.map(
        (h) =>
          new Promise<void>((r) => {
            if (h.closed || h.socket.destroyed) return r();
            // Don't wait for a peer that stopped reading: a full socket is as held as it gets.
            const timer = setTimeout(r, 200);
            h.socket.write(size === PIECE ? piece : piece.subarray(0, size), () => {
              clearTimeout(timer);
              r();
            });
          }),
      ),
    );
  }
  return held;
}

/** Waits until every connection is answered or the RSS stops growing for a second (at most 20 s). */
async function settle(pid: number, held: Held[]): Promise<void> {
  const deadline = Date.now() + 20_000;
  let last = rssOf(pid);
  let stableSince = Date.now();
  while (Date.now() < deadline) {
    await sleep(250);
    const now = rssOf(pid);
    if (now > last + 256 * 1024) stableSince = Date.now();
    last = Math.max(last, now);
    if (held.every((h) => h.response !== '' || h.closed) && Date.now() - stableSince > 1_000) return;
    if (Date.now() - stableSince > 2_000) return;
  }
}

const answers = (held: Held[]): string => {
  const counts = new Map<string, number>();
  for (const h of held) {
    const status = /^HTTP\/1\.1 (\d{3})/.exec(h.response)?.[1] ?? (h.closed ? 'closed' : 'held');
    counts.set(status, (counts.get(status) ?? 0) + 1);
  }
  return [...counts].map(([k, v]) => `${k}×${v}`).join(' ');
};

type Route = 'slack' | 'pagerduty';
type Measured = Readonly<{ rss: number; heap: number; answered: string }>;

async function measure(server: Server, route: Route): Promise<Measured> {
  const pid = server.child.pid!;
  // Warm up: a few refused requests, so code paths and lazily made objects exist before "before".
  await attack(server.url, route, 5).then((h) => {
    for (const c of h) c.socket.destroy();
  });
  await sleep(500);
  const rssBefore = rssOf(pid);
  const heapBefore = await heapOf(server.url);
  const held = await attack(server.url, route, CONNECTIONS);
  await settle(pid, held);
  const rss = rssOf(pid) - rssBefore;
  const heap = (await heapOf(server.url)) - heapBefore;
  const answered = answers(held);
  for (const h of held) h.socket.destroy();
  return { rss, heap, answered };
}

async function main(): Promise<void> {
  const fake = await startFakeSlack({ botToken: BOT_TOKEN, signingSecret: SIGNING_SECRET });
  const sim = await startPagerDutySimulator({ webhookSecret: 'bench-webhook-secret-held-bodies' });
  const dir = tempDir('switchboard-held-bodies');
  const startApp = (name: string) =>
    startChild([join(ROOT, 'src/main.ts')], {
      ...simulatorEnv([fake, sim]),
      SLACK_BOT_TOKEN: BOT_TOKEN,
      SLACK_SIGNING_SECRET: SIGNING_SECRET,
      SLACK_API_URL: fake.apiUrl,
      EVENT_STORE_URL: `sqlite:${join(dir.path, `${name}.db`)}`,
      PORT: '0',
      // "Switchboard is listening" is an info line; each refusal is one warn line more.
      LOG_LEVEL: 'info',
      CI: 'true',
    });
  const startBare = () => startChild([join(ROOT, 'bench/heldBodies.bench.ts'), '--serve-bare'], {});
  /** One measurement in a fresh process: what one route's held connections add, nothing else. */
  const once = async (server: Server, route: Route) => {
    try {
      return await measure(server, route);
    } finally {
      await server.stop();
    }
  };
  try {
    for (const route of ['slack', 'pagerduty'] as const) {
      const app: Measured[] = [];
      const bare: Measured[] = [];
      // Rounds alternate which side goes first (the machine is shared and noisy).
      for (let r = 0; r < ROUNDS; r++) {
        if (r % 2 === 0) {
          app.push(await once(await startApp(`${route}-${r}`), route));
          bare.push(await once(await startBare(), route));
        } else {
          bare.push(await once(await startBare(), route));
          app.push(await once(await startApp(`${route}-${r}`), route));
        }
        note(
          `${route} round ${r + 1}: app +${(app.at(-1)!.rss / MB).toFixed(1)} MB RSS, ` +
            `+${(app.at(-1)!.heap / MB).toFixed(1)} MB heap (answered ${app.at(-1)!.answered}); ` +
            `bare +${(bare.at(-1)!.rss / MB).toFixed(1)} MB RSS (answered ${bare.at(-1)!.answered})`,
        );
      }
      const value = median(app.map((m) => m.rss)) / MB;
      emit({
        bench: `heldBodies.${route}.rssAdded`,
        value,
        unit: `MB of RSS added by ${CONNECTIONS} held 1 MiB bodies (median of ${ROUNDS})`,
        baseline: 'bare node:http server answering 401 from the headers',
        baselineValue: median(bare.map((m) => m.rss)) / MB,
        target: `value <= ${TARGET_MB} MB`,
        met: value <= TARGET_MB,
      });
    }
  } finally {
    await sim.stop();
    await fake.close();
    dir.cleanup();
  }
}

// The baseline server (a child process: `heldBodies.bench.ts --serve-bare`), or the bench.
if (process.argv.includes('--serve-bare')) {
  const server = createServer((_req, res) => {
    res.writeHead(401, { 'content-type': 'application/json', connection: 'close' });
    res.end('{"ok":false}');
  });
  server.listen(0, '127.0.0.1', () => {
    const { port } = server.address() as AddressInfo;
    process.stdout.write(`${JSON.stringify({ msg: 'Switchboard is listening', port })}\n`);
  });
  process.on('SIGTERM', () => process.exit(0));
} else {
  await main();
}
