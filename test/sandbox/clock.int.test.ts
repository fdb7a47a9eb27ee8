import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PagerDutyPanel } from '../../sandbox/console/panels.ts';
import { type Sandbox, startSandbox } from '../../sandbox/sandbox.ts';
import { INCIDENTS_CHANNEL, PEOPLE } from '../../sandbox/world.ts';
import { SLACK_INBOX_STREAM } from '../../src/application/inbox.ts';
import { tempDir } from '../support/startApp.ts';
import { waitFor } from '../support/waitFor.ts';

// The sandbox world of issue 12's headline, its clock and the incident-service panel's schedules,
// through the console's API against the real sandbox (bot and simulators on one sandbox clock).
// The sandbox starts on a fixed Monday 09:00 UTC, so nothing depends on the calendar; the clock
// then runs with real time, and every assertion is about the week or the hour, never the second.

const START = '2026-11-23T09:00:00.000Z';
/** rotationAnchor(START): the top of the hour two hours before. */
const ANCHOR = Date.parse('2026-11-23T07:00:00Z');
const DAY = 24 * 3600_000;
const WEEK = 7 * DAY;
const who = (handle: string) => PEOPLE.find((p) => p.handle === handle)!;
const [ANA, BEN, DANA, FRANK] = [who('ana'), who('ben'), who('dana'), who('frank')];

type Json = Record<string, unknown>;

let sandbox: Sandbox;
let dataDir: string;
let cleanup: () => void;

const start = (reset: boolean) =>
  startSandbox({ dataDir, reset, ports: 0, seed: false, logLevel: 'warn', hrLagMs: 500, startAt: START });

beforeAll(async () => {
  const tmp = tempDir('sandbox-clock-');
  cleanup = tmp.cleanup;
  dataDir = tmp.dir;
  sandbox = await start(true);
});
afterAll(async () => {
  await sandbox?.stop();
  cleanup?.();
});

const post = async (path: string, body: unknown, contentType = 'application/json') => {
  const res = await fetch(`${sandbox.console.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': contentType },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  return { status: res.status, json: (await res.json()) as Json };
};
const panel = async (): Promise<PagerDutyPanel> =>
  (await (await fetch(`${sandbox.console.url}/api/pagerduty`)).json()) as PagerDutyPanel;
const payments = async () => (await panel()).schedules.find((s) => s.name === 'Payments primary')!;
const at = (ms: number) => new Date(ms).toISOString();

describe('the headline world', () => {
  it('Dana manages Ana and Ben, Frank manages Dana (in HR, where approvals come from)', () => {
    const manager = (email: string) => {
      const e = sandbox.hibob.employee(email);
      return e?.managerId ? sandbox.hibob.employee(e.managerId)?.email : null;
    };
    expect(manager(ANA.email)).toBe(DANA.email);
    expect(manager(BEN.email)).toBe(DANA.email);
    expect(manager(DANA.email)).toBe(FRANK.email);
    expect(manager(FRANK.email)).toBeNull();
  });

  it('Payments primary: Ben this week, Ana next week, Ben the week after, anchored on the sandbox clock', async () => {
    const s = await payments();
    // The first shift is shown from now (the sandbox clock runs on from START).
    expect(s.upcoming.slice(0, 3).map((e) => [e.user?.name, e.start.slice(0, 13), e.end])).toEqual([
      ['Ben Okafor', START.slice(0, 13), at(ANCHOR + WEEK)],
      ['Ana Silva', at(ANCHOR + WEEK).slice(0, 13), at(ANCHOR + 2 * WEEK)],
      ['Ben Okafor', at(ANCHOR + 2 * WEEK).slice(0, 13), at(ANCHOR + 3 * WEEK)],
    ]);
    expect(s.overrides).toEqual([]);
    const policy = (await panel()).onCall.find((p) => p.name === 'Payments')!;
    expect(policy.levels[0]?.targets[0]).toMatchObject({ kind: 'schedule', now: { name: 'Ben Okafor' } });
    // Ana is on no other rotation, so her week off conflicts with Payments primary only.
    const others = (await panel()).schedules.filter((x) => x.name !== 'Payments primary');
    expect(others.flatMap((x) => x.upcoming.map((e) => e.user?.name))).not.toContain('Ana Silva');
  });
});

describe('the incident-service panel', () => {
  it('lists a schedule override made through the REST API, and the final schedule follows it', async () => {
    const res = await fetch(`${sandbox.sim.url}/schedules/PSCHPAY/overrides`, {
      method: 'POST',
      headers: {
        authorization: `Token token=${sandbox.sim.token}`,
        accept: 'application/vnd.pagerduty+json;version=2',
        'content-type': 'application/json',
      },
      body: JSON.stringify({
        overrides: [
          {
            start: at(ANCHOR + WEEK + DAY),
            end: at(ANCHOR + WEEK + 3 * DAY),
            user: { id: BEN.pagerdutyId, type: 'user_reference' },
          },
        ],
      }),
    });
    expect(res.status).toBe(201);
    const s = await payments();
    expect(s.overrides).toEqual([
      {
        id: expect.any(String),
        start: at(ANCHOR + WEEK + DAY).replace('.000Z', 'Z'),
        end: at(ANCHOR + WEEK + 3 * DAY).replace('.000Z', 'Z'),
        user: { id: BEN.pagerdutyId, name: 'Ben Okafor', email: BEN.email },
      },
    ]);
    expect(s.upcoming.slice(1, 4).map((e) => [e.user?.name, e.start])).toEqual([
      ['Ana Silva', at(ANCHOR + WEEK)],
      ['Ben Okafor', at(ANCHOR + WEEK + DAY)],
      ['Ana Silva', at(ANCHOR + WEEK + 3 * DAY)],
    ]);
  });
});

describe('the sandbox clock', () => {
  it('GET /api/clock says the sandbox time; refused advances leave it where it was', async () => {
    const c = (await (await fetch(`${sandbox.console.url}/api/clock`)).json()) as Json;
    expect(c['movable']).toBe(true);
    expect(Date.parse(String(c['now'])) - Date.parse(START)).toBeLessThan(DAY);
    const before = sandbox.clock.offsetMs();
    expect(await post('/api/clock/advance', { minutes: 0 })).toMatchObject({
      status: 400,
      json: { error: expect.stringMatching(/whole number from 1 to 44640/) },
    });
    expect(await post('/api/clock/advance', { minutes: -60 })).toMatchObject({ status: 400 });
    // Not JSON (what a form on another site could send without asking): refused.
    expect(await post('/api/clock/advance', '{"minutes":60}', 'text/plain')).toMatchObject({
      status: 403,
      json: { error: 'the console takes JSON only (content-type: application/json)' },
    });
    expect(sandbox.clock.offsetMs()).toBe(before);
  });

  it('+1 week: everything reads the moved clock (Ana on call in the panel; a slash command still signed right)', async () => {
    const r = await post('/api/clock/advance', { minutes: 7 * 24 * 60 });
    expect(r.status).toBe(200);
    const now = Date.parse(String(r.json['now']));
    expect(now - Date.parse(START)).toBeGreaterThanOrEqual(WEEK);
    expect(now - Date.parse(START)).toBeLessThan(WEEK + DAY);
    // The incident service's clock moved with it: Ana is on call now.
    const policy = (await panel()).onCall.find((p) => p.name === 'Payments')!;
    expect(policy.levels[0]?.targets[0]).toMatchObject({ now: { name: 'Ana Silva' } });
    expect((await payments()).upcoming[0]).toMatchObject({ user: { name: 'Ana Silva' } });
    // The Slack surface signs with the sandbox clock, which the bot's receiver judges by: accepted.
    const slash = await post('/api/slash', {
      user: ANA.slackId,
      channel: INCIDENTS_CHANNEL,
      text: '/oncall',
    });
    expect(slash.status).toBe(200);
    expect(slash.json['ok']).toBe(true);
    const recorded = await waitFor(
      async () =>
        (await sandbox.store.readStream(SLACK_INBOX_STREAM))
          .filter((e) => e.type === 'SlackInputReceived')
          .at(-1),
      { what: 'the /oncall recorded' },
    );
    // The store stamps it with the sandbox clock (so "recorded 10 minutes ago" means sandbox time).
    expect(recorded.recordedAt.getTime()).toBeGreaterThanOrEqual(Date.parse(START) + WEEK);
    // The bot's clock is the sandbox's.
    expect(sandbox.sb.clock.now().getTime() - Date.parse(START)).toBeGreaterThanOrEqual(WEEK);
  });

  it('a restarted sandbox keeps its clock (saved with the world), and --reset starts it over', async () => {
    const offset = sandbox.clock.offsetMs();
    sandbox.save();
    const saved = JSON.parse(readFileSync(join(dataDir, 'sandbox-world.json'), 'utf8')) as Json;
    expect(saved['clockOffsetMs']).toBe(offset);
    await sandbox.stop();
    sandbox = await start(false);
    expect(sandbox.restored).toBe(true);
    expect(sandbox.clock.offsetMs()).toBe(offset);
    expect((await payments()).upcoming[0]).toMatchObject({ user: { name: 'Ana Silva' } });
    await sandbox.stop();
    sandbox = await start(true);
    expect(sandbox.clock.now().getTime() - Date.parse(START)).toBeLessThan(DAY);
    expect((await payments()).overrides).toEqual([]);
  });
});
