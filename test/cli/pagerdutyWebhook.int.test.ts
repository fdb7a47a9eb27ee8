import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  defaultSeed,
  type PagerDutySimulator,
  startPagerDutySimulator,
} from '../../sandbox/simulators/pagerduty/index.ts';
import { runPagerDutyWebhookCli, SWITCHBOARD_WEBHOOK_EVENTS } from '../../src/cli/pagerdutyWebhook.ts';
import { manualClock } from '../../src/core/clock.ts';
import { verifyPagerDutySignature } from '../../src/upstream/pagerdutySignature.ts';
import { startRecordingReceiver } from '../support/recordingReceiver.ts';

/**
 * `npm run pagerduty:webhook`: creates (or shows) the V3 webhook subscription Switchboard needs,
 * through the REST API of the simulator (validated against the vendored OpenAPI file), which then
 * delivers signed webhooks to it.
 */
let sim: PagerDutySimulator;
let rx: Awaited<ReturnType<typeof startRecordingReceiver>>;

beforeEach(async () => {
  sim = await startPagerDutySimulator({
    clock: manualClock('2026-11-22T10:00:00.000Z'),
    seed: defaultSeed({ rotationStart: '2026-01-05T09:00:00Z' }),
  });
  rx = await startRecordingReceiver();
});
afterEach(async () => {
  try {
    sim.assertNoViolations();
  } finally {
    await sim.stop();
    await rx.stop();
  }
});

const run = async (...argv: string[]) => {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runPagerDutyWebhookCli(argv, {
    env: { PAGERDUTY_TOKEN: sim.token, PAGERDUTY_API_URL: sim.url },
    stdout: (t) => out.push(t),
    stderr: (t) => err.push(t),
  });
  return { code, out: out.join('\n'), err: err.join('\n') };
};

describe('npm run pagerduty:webhook', () => {
  it('creates the account-wide subscription once, prints its secret once, and deliveries verify with it', async () => {
    const first = await run(rx.url);
    expect(first.code).toBe(0);
    const secret = /^PAGERDUTY_WEBHOOK_SECRET=(.+)$/m.exec(first.out)?.[1];
    expect(secret).toBeTruthy();
    const creates = sim.requestsFor('createWebhookSubscription');
    expect(creates).toHaveLength(1);
    expect(creates[0]!.body).toMatchObject({
      webhook_subscription: {
        delivery_method: { type: 'http_delivery_method', url: rx.url },
        events: [...SWITCHBOARD_WEBHOOK_EVENTS],
        filter: { type: 'account_reference' },
      },
    });

    // Run again: shown, not created twice, and no secret (the service no longer returns it).
    const again = await run(rx.url);
    expect(again.code).toBe(0);
    expect(again.out).toContain('already delivers to this URL');
    expect(again.out).not.toContain('PAGERDUTY_WEBHOOK_SECRET=');
    expect(sim.requestsFor('createWebhookSubscription')).toHaveLength(1);

    // The simulator delivers signed webhooks for web-app changes to the subscription it created.
    const inc = sim.webApp.trigger({ serviceId: 'PSVC001', title: 'disk', byEmail: 'ana.silva@example.org' });
    sim.webApp.resolve(inc.id, 'ben.okafor@example.org', 'fixed');
    await rx.waitFor(2);
    for (const got of rx.received) {
      expect(
        verifyPagerDutySignature(got.rawBody, got.headers['x-pagerduty-signature'] as string, [secret!]),
      ).toBe(true);
    }
    expect(rx.received.map((r) => (r.json as { event: { event_type: string } }).event.event_type)).toEqual([
      'incident.triggered',
      'incident.resolved',
    ]);
  });

  it('--service makes one service-scoped subscription per service; --dry-run changes nothing', async () => {
    const dry = await run(rx.url, '--service', 'PSVC001', '--dry-run');
    expect(dry.code).toBe(0);
    expect(dry.out).toContain('Would create a subscription for service_reference PSVC001');
    expect(sim.requestsFor('createWebhookSubscription')).toHaveLength(0);

    const made = await run(rx.url, '--service', 'PSVC001', '--service', 'PSVC002');
    expect(made.code).toBe(0);
    expect(
      sim
        .requestsFor('createWebhookSubscription')
        .map((r) => (r.body as { webhook_subscription: { filter: unknown } }).webhook_subscription.filter),
    ).toEqual([
      { type: 'service_reference', id: 'PSVC001' },
      { type: 'service_reference', id: 'PSVC002' },
    ]);
    const secrets = /^PAGERDUTY_WEBHOOK_SECRET=(.+)$/m.exec(made.out)?.[1]?.split(',');
    expect(secrets).toHaveLength(2);

    // Only the scoped services' incidents are delivered.
    sim.webApp.trigger({ serviceId: 'PSVC003', title: 'elsewhere', byEmail: 'ana.silva@example.org' });
    sim.webApp.trigger({ serviceId: 'PSVC001', title: 'payments', byEmail: 'ana.silva@example.org' });
    await rx.waitFor(1);
    await sim.webhooks.idle();
    expect(rx.received).toHaveLength(1);
  });

  it('lists subscriptions filtered by scope, as the API does', async () => {
    await run(rx.url, '--service', 'PSVC001');
    await run('https://other.example.org/hooks');
    const { createPagerDutyClient } = await import('../../src/upstream/pagerduty.ts');
    const pd = createPagerDutyClient({ apiUrl: sim.url, eventsUrl: sim.eventsUrl, token: sim.token });
    expect((await pd.listWebhookSubscriptions()).items).toHaveLength(2);
    const scoped = await pd.listWebhookSubscriptions({
      filterType: 'service',
      filterId: 'PSVC001',
    });
    expect(scoped.items.map((s) => s.delivery_method.url)).toEqual([rx.url]);
    expect(scoped.items[0]!.delivery_method.secret ?? null).toBeNull();
  });

  it('explains a missing token or URL without calling anything', async () => {
    const noUrl = await run();
    expect(noUrl.code).toBe(2);
    expect(noUrl.err).toContain('usage: npm run pagerduty:webhook');
    const out: string[] = [];
    const code = await runPagerDutyWebhookCli([rx.url], {
      env: {},
      stdout: (t) => out.push(t),
      stderr: (t) => out.push(t),
    });
    expect(code).toBe(2);
    expect(out.join('\n')).toContain('PAGERDUTY_TOKEN is not set');
    expect(sim.requests).toHaveLength(0);
  });
});
