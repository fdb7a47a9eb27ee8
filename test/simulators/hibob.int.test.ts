import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { request } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { timeOff } from '../../handlers/timeOff/module.ts';
import { type HiBobSimulator, startHiBobSimulator } from '../../sandbox/simulators/hibob/index.ts';
import type { Simulator } from '../../sandbox/simulators/simulator.ts';
import { type ManualClock, manualClock } from '../../src/core/clock.ts';
import { hibobDeliveryId, verifyHiBobSignature } from '../../src/upstream/hibobSignature.ts';
import { waitFor } from '../support/waitFor.ts';

/**
 * The HR simulator on its own, over loopback with raw HTTP: the address block after an
 * authentication storm, the search limit and its headers, the read-after-write lag of the web app's
 * actions, signed v2 webhooks with retries, saved state, and what it records as violations.
 */
const NOW = '2026-11-23T10:00:00.000Z';
const ANA = '3332883804594373011';

let sim: HiBobSimulator;
let clock: ManualClock;
let receiver: Server | undefined;

const start = async (lagMs = 1_000) => {
  clock = manualClock(NOW);
  sim = await startHiBobSimulator({ clock, lagMs });
};

afterEach(async () => {
  await sim.stop();
  await new Promise<void>((resolve) => (receiver ? receiver.close(() => resolve()) : resolve()));
  receiver = undefined;
});

const basic = (id: string, token: string) => `Basic ${Buffer.from(`${id}:${token}`).toString('base64')}`;
const good = () => basic(sim.clientOptions().serviceUserId, sim.clientOptions().token);

const call = async (
  method: 'GET' | 'POST',
  path: string,
  authorization: string | undefined,
  body?: unknown,
) => {
  const res = await request(`${sim.baseUrl}${path}`, {
    method,
    headers: {
      ...(authorization === undefined ? {} : { authorization }),
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.body.text();
  return { status: res.statusCode, headers: res.headers, body: text === '' ? undefined : JSON.parse(text) };
};

describe('authentication', () => {
  it('more than 50 401s from one address in 10 s block it for 5 minutes; 50 do not', async () => {
    await start();
    const bad = basic(sim.clientOptions().serviceUserId, 'wrong');
    for (let i = 0; i < 50; i++) {
      expect((await call('GET', '/timeoff/policy-types', bad)).status).toBe(401);
      clock.advance(100);
    }
    expect((await call('GET', '/timeoff/policy-types', good())).status).toBe(200);
    // The 51st within ten seconds blocks the address, good credentials included.
    expect((await call('GET', '/timeoff/policy-types', bad)).status).toBe(401);
    const blocked = await call('GET', '/timeoff/policy-types', good());
    expect(blocked.status).toBe(403);
    expect(blocked.body.key).toBe('ip_blocked');
    clock.advance(5 * 60_000 - 1);
    expect((await call('GET', '/timeoff/policy-types', good())).status).toBe(403);
    clock.advance(1);
    expect((await call('GET', '/timeoff/policy-types', good())).status).toBe(200);
    sim.assertNoViolations();
  });

  it('a permission group that lacks what a call needs gives 403 naming it', async () => {
    await start();
    sim.setPermissions(sim.clientOptions().serviceUserId, ['Time off: view']);
    const res = await call('POST', '/people/search', good(), {});
    expect(res.status).toBe(403);
    expect(res.body).toMatchObject({ key: 'forbidden', permission: 'People: view' });
    sim.assertNoViolations();
  });
});

describe('people search limit', () => {
  it('50 a minute with X-RateLimit-Limit, -Remaining and -Reset (Unix seconds); the 51st is 429', async () => {
    await start();
    const first = await call('POST', '/people/search', good(), { showInactive: false });
    expect(first.headers['x-ratelimit-limit']).toBe('50');
    expect(first.headers['x-ratelimit-remaining']).toBe('49');
    expect(first.headers['x-ratelimit-reset']).toBe(String(Date.parse(NOW) / 1000 + 60));
    for (let i = 0; i < 49; i++) {
      clock.advance(1_000);
      expect((await call('POST', '/people/search', good(), {})).status).toBe(200);
    }
    const over = await call('POST', '/people/search', good(), {});
    expect(over.status).toBe(429);
    expect(over.headers['x-ratelimit-remaining']).toBe('0');
    expect(over.headers['x-ratelimit-reset']).toBe(String(Date.parse(NOW) / 1000 + 60));
    clock.set(new Date(Date.parse(NOW) + 60_000));
    expect((await call('POST', '/people/search', good(), {})).status).toBe(200);
    sim.assertNoViolations();
  });
});

describe('the HR web app, the lag and webhooks', () => {
  it('every change is a signed v2 webhook, redelivered byte for byte after a failure; reads lag behind', async () => {
    await start();
    const received: Array<{ body: Buffer; signature: string | undefined }> = [];
    let failFirst = true;
    receiver = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        received.push({ body: Buffer.concat(chunks), signature: req.headers['bob-signature'] as string });
        if (req.url !== '/webhooks/hibob' || failFirst) {
          failFirst = false;
          res.writeHead(500).end();
          return;
        }
        res.writeHead(200).end();
      });
    });
    const botUrl = await new Promise<string>((resolve) =>
      receiver!.listen(0, '127.0.0.1', () =>
        resolve(`http://127.0.0.1:${(receiver!.address() as AddressInfo).port}`),
      ),
    );
    sim.connect(botUrl);

    const requestId = sim.webApp.requestTimeOff({
      employeeId: ANA,
      policyType: 'Holiday',
      startDate: '2026-12-14',
      endDate: '2026-12-15',
    });
    sim.webApp.cancel(requestId);
    sim.webApp.terminate(ANA);
    sim.webApp.hire({
      id: '3332883804594373050',
      email: 'new.person@switchboard.example',
      displayName: 'New Person',
      firstName: 'New',
      surname: 'Person',
      title: 'Engineer',
      department: 'Engineering',
      site: 'Lisbon',
      managerId: null,
      startDate: '2026-12-01',
    });
    sim.webApp.update('3332883804594373050', { title: 'Senior Engineer' });
    await waitFor(() => sim.webhooks.attempts.filter((a) => a.outcome === 'delivered').length === 6, {
      what: 'six deliveries',
    });
    await sim.webhooks.idle();

    // The first attempt failed and was retried with the same bytes and signature.
    expect(received[0]!.body.equals(received[1]!.body)).toBe(true);
    expect(received[0]!.signature).toBe(received[1]!.signature);
    const delivered = received.slice(1);
    for (const d of delivered) {
      expect(verifyHiBobSignature(d.body, d.signature, [sim.webhookSecret])).toEqual({
        ok: true,
        deliveryId: hibobDeliveryId(d.body),
      });
      expect(verifyHiBobSignature(d.body, d.signature, ['another']).ok).toBe(false);
    }
    const events = delivered.map((d) => JSON.parse(d.body.toString()));
    expect(events.map((e) => e.type)).toEqual([
      'timeoff.request.requested',
      'timeoff.request.cancelled',
      'employee.left',
      'employee.created',
      'employee.joined',
      'employee.updated',
    ]);
    expect(events[0]).toEqual({
      companyId: 700001,
      type: 'timeoff.request.requested',
      triggeredBy: ANA,
      triggeredAt: '2026-11-23T10:00:00.000000',
      version: 'v2',
      data: {
        timeoffRequestId: requestId,
        employeeId: ANA,
        getApi: `${sim.baseUrl}/timeoff/employees/${ANA}/requests/${requestId}`,
      },
    });
    expect(events[5].data).toEqual({
      employeeId: '3332883804594373050',
      fieldUpdates: [{ fieldId: 'work.title' }],
    });

    // Within the lag the terminated employee is still found, and the newcomer not yet.
    const ids = async () =>
      (
        (await call('POST', '/people/search', good(), { fields: ['root.id'] })).body.employees as unknown[]
      ).map((e) => (e as Record<string, string>)['/root/id']);
    clock.advance(999);
    expect(await ids()).toContain(ANA);
    expect(await ids()).not.toContain('3332883804594373050');
    clock.advance(1);
    expect(await ids()).not.toContain(ANA);
    expect(await ids()).toContain('3332883804594373050');
    sim.assertNoViolations();
  });

  it('the lag is never skipped', async () => {
    await start();
    expect(() => sim.setLagMs(0)).toThrow(/never skipped/);
  });
});

describe('the Simulator interface', () => {
  it('names its environment, saves and restores its state', async () => {
    await start();
    const asSimulator: Simulator = sim;
    // The time-off lifecycle's configuration names (src/timeOff/config.ts), so the sandbox can
    // pass them straight to the bot.
    const variables = Object.keys(timeOff.config.variables);
    expect(Object.keys(asSimulator.env()).sort()).toEqual([
      'HIBOB_API_URL',
      'HIBOB_SERVICE_USER_ID',
      'HIBOB_SERVICE_USER_TOKEN',
      'HIBOB_WEBHOOK_SECRET',
    ]);
    for (const name of Object.keys(asSimulator.env())) expect(variables).toContain(name);
    const id = sim.webApp.requestTimeOff({
      employeeId: ANA,
      policyType: 'Sick',
      startDate: '2026-11-24',
      endDate: '2026-11-24',
    });
    const saved = JSON.parse(JSON.stringify(sim.exportState()));
    await sim.stop();
    sim = await startHiBobSimulator({ clock, lagMs: 1_000 });
    sim.importState(saved);
    expect(sim.timeOffRequests().map((r) => [r.requestId, r.status])).toEqual([[id, 'pending']]);
  });

  it('records what breaks the contract: no credentials, unknown endpoints, two filters', async () => {
    await start();
    expect((await call('GET', '/timeoff/policy-types', undefined)).status).toBe(401);
    expect((await call('GET', '/employees', good())).status).toBe(404);
    const two = await call('POST', '/people/search', good(), {
      filters: [
        { fieldPath: 'root.id', operator: 'equals', values: [ANA] },
        { fieldPath: 'root.email', operator: 'equals', values: ['x@y.z'] },
      ],
    });
    expect(two.status).toBe(400);
    expect(two.body.field).toBe('filters');
    expect(sim.contractViolations().map((v) => v.summary)).toEqual([
      expect.stringContaining('no Basic service-user credentials'),
      expect.stringContaining('no such endpoint'),
      expect.stringContaining('at most one filter'),
    ]);
    expect(() => sim.assertNoViolations()).toThrow(/3 violation/);
    sim.clearViolations();
  });
});
