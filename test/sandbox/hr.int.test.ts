import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type HrPanel, parseHrRequest } from '../../sandbox/console/hr.ts';
import { type Sandbox, startSandbox } from '../../sandbox/sandbox.ts';
import { PEOPLE } from '../../sandbox/world.ts';
import { webhookInboxStream } from '../../src/application/inbox.ts';
import { NODE24, ROOT, tempDir } from '../support/startApp.ts';
import { waitFor } from '../support/waitFor.ts';

// The console's HR tab is the HR service's web app: these tests act there through the console's
// API (as the page does) and read back what the panel lists, against the sandbox's real HR
// simulator, with the bot connected to it (its webhooks reach the bot signed, or the bot refuses
// them). Dates are far in the future except where "today" is the point, which comes from the
// panel itself (so nothing depends on the calendar).

const hrId = (handle: string) => PEOPLE.find((p) => p.handle === handle)!.hr.employeeId;
const BEN = hrId('ben');
const EVE = hrId('eve');
const CHEN = hrId('chen');
const FRANK = hrId('frank');
const DANA = hrId('dana');

type Json = Record<string, unknown>;

let sandbox: Sandbox;
let dataDir: string;
let cleanup: () => void;

const post = async (path: string, body: Json = {}): Promise<{ status: number; json: Json }> => {
  const res = await fetch(`${sandbox.console.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: res.status, json: (await res.json()) as Json };
};
const panel = async (): Promise<HrPanel> =>
  (await (await fetch(`${sandbox.console.url}/api/hr`)).json()) as HrPanel;

beforeAll(async () => {
  const tmp = tempDir('sandbox-hr-');
  dataDir = tmp.dir;
  cleanup = tmp.cleanup;
  sandbox = await startSandbox({
    dataDir,
    reset: true,
    ports: 0,
    seed: false,
    logLevel: 'warn',
    hrLagMs: 1_500,
  });
});
afterAll(async () => {
  await sandbox?.stop();
  cleanup?.();
});

describe('the HR panel', () => {
  it('shows the organisation, the policies and the lag in force, with nobody out yet', async () => {
    const p = await panel();
    expect(p.lagSeconds).toBe(1.5);
    expect(p.zone).toBe('UTC');
    expect(p.today).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    expect(p.week.from <= p.today && p.today <= p.week.to).toBe(true);
    expect(new Date(`${p.week.from}T00:00:00Z`).getUTCDay()).toBe(1);
    expect(p.policies.map((x) => x.name)).toEqual(['Holiday', 'Sick']);
    expect(p.requests).toEqual([]);
    expect(p.outToday).toEqual([]);
    const ben = p.employees.find((e) => e.id === BEN);
    // The headline's organisation: Dana manages Ana and Ben, Frank manages Dana.
    expect(ben).toMatchObject({ name: 'Ben Okafor', status: 'employed', manager: { id: DANA } });
    expect(p.employees.find((e) => e.id === DANA)).toMatchObject({ manager: { id: FRANK } });
    expect(p.employees.find((e) => e.name === 'Gil Former')?.status).toBe('terminated');
  });

  it('the bot is configured for HR, and the HR service knows where to send its webhooks', () => {
    expect(sandbox.sb.lifecycle('timeOff')).toBeDefined();
    expect(sandbox.simulators.map((s) => s.name)).toContain('hibob');
    expect(sandbox.hibob.lagMs()).toBe(1_500);
  });

  it('a request made in the web app is listed as made in HR, waiting for the manager, and reaches the bot as a signed webhook', async () => {
    const before = (await panel()).today;
    const r = await post('/api/hr/requests', {
      employeeId: BEN,
      policyType: 'Holiday',
      startDate: before,
      endDate: before,
      description: '  dentist  ',
    });
    expect(r).toMatchObject({ status: 200, json: { ok: true } });
    const id = r.json['requestId'] as number;
    const p = await panel();
    expect(p.requests).toEqual([
      expect.objectContaining({
        id,
        employee: expect.objectContaining({ id: BEN, name: 'Ben Okafor' }),
        policyType: 'Holiday',
        status: 'pending',
        madeIn: 'hr',
        description: 'dentist',
        approver: expect.objectContaining({ id: DANA, name: 'Dana Kowalski', byManager: true }),
      }),
    ]);
    if (p.today === before) {
      expect(p.outToday).toEqual([expect.objectContaining({ requestId: id, status: 'pending' })]);
      expect(p.outThisWeek.map((a) => a.requestId)).toContain(id);
    }
    // HR tells the bot; the bot's receiver refuses a wrong Bob-Signature, so delivered means signed right.
    const delivered = await waitFor(
      () =>
        sandbox.hibob.webhooks.attempts.find(
          (a) => a.type === 'timeoff.request.requested' && a.outcome === 'delivered',
        ),
      { what: 'the webhook delivered' },
    );
    expect(delivered.url).toBe(`${sandbox.botUrl.replace(/\/$/, '')}/webhooks/hibob`);
    expect(delivered.status).toBeLessThan(300);
  });

  it('the panel shows HR as it is now, while HR’s API shows the request only after the lag', async () => {
    const { client } = sandbox.sb.lifecycle('timeOff')!;
    const r = await post('/api/hr/requests', {
      employeeId: CHEN,
      policyType: 'Sick',
      startDate: '2031-03-03',
      endDate: '2031-03-04',
      startDatePortion: 'afternoon',
    });
    const id = r.json['requestId'] as number;
    expect((await panel()).requests.find((x) => x.id === id)).toMatchObject({ status: 'pending', days: 1.5 });
    await expect(client.getTimeOffRequest(CHEN, id)).rejects.toThrow();
    const read = await waitFor(() => client.getTimeOffRequest(CHEN, id), {
      timeoutMs: 10_000,
      intervalMs: 100,
      what: 'the request visible through the API',
    });
    expect(read.status).toBe('pending');
  });

  it('refuses bad input, naming what was wrong', async () => {
    const ok = { employeeId: BEN, policyType: 'Holiday', startDate: '2031-05-05', endDate: '2031-05-06' };
    const cases: Array<[Json, number, RegExp]> = [
      [{ ...ok, policyType: 'Holidy' }, 400, /policyType must be one of Holiday, Sick/],
      [{ ...ok, policyType: undefined }, 400, /policyType is required/],
      [{ ...ok, startDate: '2031-02-30' }, 400, /startDate .* calendar date/],
      [{ ...ok, endDate: 'tomorrow' }, 400, /endDate .* calendar date/],
      [{ ...ok, endDate: '2031-05-01' }, 400, /before startDate/],
      [{ ...ok, endDatePortion: 'evening' }, 400, /endDatePortion must be all_day, morning or afternoon/],
      [{ ...ok, description: 'x'.repeat(501) }, 400, /at most 500/],
      [{ ...ok, employeeId: 'ben' }, 400, /employeeId must be an HR employee id/],
      [{ ...ok, employeeId: undefined }, 400, /employeeId is required/],
      [{ ...ok, employeeId: '999' }, 404, /no employee 999/],
    ];
    for (const [body, status, error] of cases) {
      const r = await post('/api/hr/requests', body);
      expect({ body, status: r.status }).toEqual({ body, status });
      expect(String(r.json['error'])).toMatch(error);
    }
    const first = await post('/api/hr/requests', ok);
    expect(first.status).toBe(200);
    const overlap = await post('/api/hr/requests', { ...ok, startDate: '2031-05-06', endDate: '2031-05-07' });
    expect(overlap.status).toBe(409);
    expect(String(overlap.json['error'])).toMatch(/^HR refused the request: .*already has time off/);
    expect(parseHrRequest(ok, ['Holiday'])).toEqual({
      ...ok,
      startDatePortion: 'all_day',
      endDatePortion: 'all_day',
    });
  });

  it('cancels a request in the web app; a second cancel, a bad id and an unknown one are refused', async () => {
    const made = await post('/api/hr/requests', {
      employeeId: FRANK,
      policyType: 'Holiday',
      startDate: '2031-07-07',
      endDate: '2031-07-11',
    });
    const id = made.json['requestId'] as number;
    expect(await post(`/api/hr/requests/${id}/cancel`)).toMatchObject({ status: 200 });
    const p = await panel();
    expect(p.requests.find((r) => r.id === id)).toMatchObject({ status: 'canceled', days: 5 });
    expect(p.outThisWeek.map((a) => a.requestId)).not.toContain(id);
    const again = await post(`/api/hr/requests/${id}/cancel`);
    expect(again).toMatchObject({ status: 409, json: { error: `request ${id} is already cancelled` } });
    expect((await post('/api/hr/requests/abc/cancel')).status).toBe(400);
    expect((await post('/api/hr/requests/1/cancel')).status).toBe(404);
    await waitFor(() => sandbox.hibob.webhooks.attempts.find((a) => a.type === 'timeoff.request.cancelled'), {
      what: 'the cancellation sent to the bot',
    });
  });

  it('terminates an employee once; a terminated employee cannot ask for time off', async () => {
    expect(await post(`/api/hr/employees/${EVE}/terminate`)).toMatchObject({ status: 200 });
    expect((await panel()).employees.find((e) => e.id === EVE)?.status).toBe('terminated');
    const again = await post(`/api/hr/employees/${EVE}/terminate`);
    expect(again).toMatchObject({ status: 409, json: { error: 'Eve Martin is already terminated' } });
    const asked = await post('/api/hr/requests', {
      employeeId: EVE,
      policyType: 'Holiday',
      startDate: '2031-09-01',
      endDate: '2031-09-01',
    });
    expect(asked).toMatchObject({
      status: 409,
      json: { error: expect.stringMatching(/has left the company/) },
    });
    expect((await post('/api/hr/employees/12/terminate')).status).toBe(404);
    expect((await post('/api/hr/employees/x/terminate')).status).toBe(400);
    await waitFor(() => sandbox.hibob.webhooks.attempts.find((a) => a.type === 'employee.left'), {
      what: 'employee.left sent to the bot',
    });
  });

  it('the leaver guard waits the sandbox’s HR lag, not the bot’s default 30 s: the re-read of a leaver is due 1.5 s after the webhook arrived', async () => {
    // Eve was terminated above: HR's `employee.left` webhook reached the bot, which records a
    // re-read of her (the guard acts once HR shows it) due when HR's lag has passed.
    const reRead = await waitFor(
      async () => {
        for (const e of await sandbox.store.readStream(webhookInboxStream('hibob'))) {
          const data = e.data as {
            input: { receivedAt: string };
            commands: Array<{ type: string; data: Record<string, unknown> }>;
          };
          const c = data.commands.find(
            (x) => x.type === 'RequestHrReRead' && x.data['id'] === EVE && x.data['expect'] === 'left',
          );
          if (c) return { receivedAt: data.input.receivedAt, notBefore: c.data['notBefore'] as string };
        }
        return undefined;
      },
      { what: 'the leaver webhook recorded with its re-read' },
    );
    expect(Date.parse(reRead.notBefore) - Date.parse(reRead.receivedAt)).toBe(1_500);
  });

  it('tells open pages when HR changes (an `hr` event on the live stream)', async () => {
    const ben = PEOPLE.find((p) => p.handle === 'ben')!;
    const controller = new AbortController();
    const res = await fetch(`${sandbox.console.url}/api/events?user=${ben.slackId}`, {
      signal: controller.signal,
    });
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    let seen = '';
    const read = (async () => {
      while (!seen.includes('event: hr\n')) {
        const { value, done } = await reader.read();
        if (done) break;
        seen += decoder.decode(value);
      }
    })();
    await waitFor(() => seen.includes('event: hello'), { what: 'the stream open' });
    await post('/api/hr/requests', {
      employeeId: BEN,
      policyType: 'Sick',
      startDate: '2031-11-03',
      endDate: '2031-11-03',
    });
    await read;
    controller.abort();
    expect(seen).toContain('event: hr\n');
  });

  it('keeps HR with the world: a restarted sandbox shows the same requests and employees', async () => {
    const before = await panel();
    await sandbox.stop();
    sandbox = await startSandbox({ dataDir, ports: 0, seed: false, logLevel: 'warn', hrLagMs: 1_500 });
    expect(sandbox.restored).toBe(true);
    const after = await panel();
    expect(after.requests).toEqual(before.requests);
    expect(after.employees).toEqual(before.employees);
  });
});

describe('HR’s lag in the sandbox', () => {
  const run = (args: string[]) => {
    const child = spawn(NODE24, [join(ROOT, 'sandbox/main.ts'), ...args], {
      cwd: ROOT,
      env: { PATH: process.env['PATH'] ?? '', HOME: process.env['HOME'] ?? '' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const io = { out: '', err: '' };
    child.stdout.on('data', (c: Buffer) => {
      io.out += c.toString();
    });
    child.stderr.on('data', (c: Buffer) => {
      io.err += c.toString();
    });
    const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
    return { child, io, exited };
  };

  it('`--hr-lag 2.5` reaches the HR service (the panel says 2.5 s); 0 is refused', {
    timeout: 90_000,
  }, async () => {
    const tmp = tempDir('sandbox-hr-lag-');
    const refusedDir = tempDir('sandbox-hr-lag-refused-');
    const started = run(['--port', '0', '--data', tmp.dir, '--reset', '--hr-lag', '2.5']);
    const refused = run(['--data', refusedDir.dir, '--hr-lag', '0']);
    try {
      expect(await refused.exited).toBe(1);
      expect(refused.io.err).toMatch(
        /^--hr-lag must be a number of seconds above 0 .*\nUsage: npm run sandbox/,
      );
      const url = await waitFor(() => /(http:\/\/127\.0\.0\.1:\d+\/)/.exec(started.io.out)?.[1], {
        timeoutMs: 60_000,
        what: `the console URL (stderr: ${started.io.err})`,
      });
      const p = (await (await fetch(`${url}api/hr`)).json()) as HrPanel;
      expect(p.lagSeconds).toBe(2.5);
      started.child.kill('SIGTERM');
      expect(await started.exited).toBe(0);
      await expect(startSandbox({ dataDir: tmp.dir, ports: 0, hrLagMs: 0 })).rejects.toThrow(
        /hrLagMs must be a positive number of ms/,
      );
    } finally {
      if (started.child.exitCode === null) started.child.kill('SIGKILL');
      if (refused.child.exitCode === null) refused.child.kill('SIGKILL');
      tmp.cleanup();
      refusedDir.cleanup();
    }
  });
});
