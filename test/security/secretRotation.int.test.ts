import { createHmac, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { slashCommandBody } from '../../sandbox/simulators/slack/signing.ts';
import { signHiBobWebhook } from '../../src/upstream/hibobSignature.ts';
import { signVonageWebhook } from '../../src/upstream/vonageSignature.ts';
import { type JoinsHarness, PAYMENTS_CHANNEL, startJoinsHarness } from '../joins/harness.ts';
import { postSigned, TEST_SIGNING_SECRET } from '../support/startApp.ts';

/**
 * Issue 18 item 2: every webhook and signing secret rotates without downtime. Each of the four
 * (Slack's signing secret, the incident service's, the communications service's and HR's) is
 * configured as the NEW value with the OLD one in `<NAME>_PREVIOUS`: a request signed with either
 * is taken, one signed with anything else is refused 401 with nothing stored; without
 * `<NAME>_PREVIOUS` the old value is refused. One app (all three lifecycles), restarted between.
 */
let h: JoinsHarness;
const NEW = {
  slack: 'slack-signing-secret-new-2f7c',
  pagerduty: 'pd-webhook-secret-new-81aa',
  vonage: 'vonage-signature-secret-new-4d0e',
  hibob: 'hibob-webhook-secret-new-c3b5',
} as const;
let OLD: Record<keyof typeof NEW, string>;

beforeAll(async () => {
  h = await startJoinsHarness();
  OLD = {
    slack: TEST_SIGNING_SECRET,
    pagerduty: h.pd.env()['PAGERDUTY_WEBHOOK_SECRET'] ?? '',
    vonage: h.vonage.signatureSecret,
    hibob: h.sim.webhookSecret,
  };
});
afterAll(async () => {
  await h.stop();
});

const rotatingEnv = (withPrevious: boolean): Record<string, string> => ({
  SLACK_SIGNING_SECRET: NEW.slack,
  PAGERDUTY_WEBHOOK_SECRET: NEW.pagerduty,
  VONAGE_SIGNATURE_SECRET: NEW.vonage,
  HIBOB_WEBHOOK_SECRET: NEW.hibob,
  ...(withPrevious
    ? {
        SLACK_SIGNING_SECRET_PREVIOUS: OLD.slack,
        PAGERDUTY_WEBHOOK_SECRET_PREVIOUS: OLD.pagerduty,
        VONAGE_SIGNATURE_SECRET_PREVIOUS: OLD.vonage,
        HIBOB_WEBHOOK_SECRET_PREVIOUS: OLD.hibob,
      }
    : {}),
});

type Route = keyof typeof NEW;

/** A delivery to `route` signed with `secret`: the HTTP status, and how many inbox records it added. */
const deliver = async (route: Route, secret: string): Promise<{ status: number; stored: number }> => {
  const inbox = route === 'slack' ? 'inbox-slack' : `inbox-${route}`;
  const before = (await h.sb.store.readStream(inbox)).length;
  const now = h.clock.now();
  let res: Response;
  if (route === 'slack') {
    res = await postSigned(
      `${h.url}/slack/events`,
      slashCommandBody({
        command: '/incident',
        text: 'help',
        user_id: 'U0DANA',
        channel_id: PAYMENTS_CHANNEL,
        trigger_id: h.fake.issueTrigger({ user: 'U0DANA' }),
      }),
      'form',
      { secret, timestamp: Math.floor(now.getTime() / 1000) },
    );
  } else if (route === 'pagerduty') {
    const body = JSON.stringify({
      event: {
        id: randomUUID(),
        event_type: 'pagey.ping',
        resource_type: 'pagey',
        occurred_at: now.toISOString(),
        agent: null,
        client: null,
        data: { message: 'Hello from your friend Pagey!', type: 'ping' },
      },
    });
    res = await fetch(`${h.url}/webhooks/pagerduty`, {
      method: 'POST',
      body,
      headers: {
        'content-type': 'application/json',
        'x-webhook-id': randomUUID(),
        'x-pagerduty-signature': `v1=${createHmac('sha256', secret).update(body).digest('hex')}`,
      },
    });
  } else if (route === 'vonage') {
    const body = JSON.stringify({
      message_uuid: randomUUID(),
      to: '447700900101',
      from: 'Switchboard',
      timestamp: now.toISOString(),
      status: 'delivered',
      channel: 'sms',
    });
    res = await fetch(`${h.url}/webhooks/vonage/messages`, {
      method: 'POST',
      body,
      headers: {
        'content-type': 'application/json',
        authorization: signVonageWebhook(body, secret, {
          now,
          apiKey: h.vonage.env()['VONAGE_API_KEY'] ?? '',
        }),
      },
    });
  } else {
    const body = JSON.stringify({
      companyId: 640_001,
      type: 'payroll.run.completed',
      triggeredBy: 'system',
      triggeredAt: '2026-11-23T09:00:00.000000',
      version: 'v2',
      data: { runId: randomUUID() },
    });
    res = await fetch(`${h.url}/webhooks/hibob`, {
      method: 'POST',
      body,
      headers: { 'content-type': 'application/json', 'bob-signature': signHiBobWebhook(body, secret) },
    });
  }
  await res.arrayBuffer();
  return { status: res.status, stored: (await h.sb.store.readStream(inbox)).length - before };
};

const ROUTES: readonly Route[] = ['slack', 'pagerduty', 'vonage', 'hibob'];

describe('webhook and signing secrets rotate without downtime', () => {
  it('with <NAME>_PREVIOUS set, the old and the new value are both taken, anything else is a 401 with nothing stored', async () => {
    await h.restart(rotatingEnv(true));
    for (const route of ROUTES) {
      const old = await deliver(route, OLD[route]);
      const fresh = await deliver(route, NEW[route]);
      const forged = await deliver(route, `${NEW[route]}-forged`);
      expect({ route, old: old.status < 300, fresh: fresh.status < 300 }).toEqual({
        route,
        old: true,
        fresh: true,
      });
      expect({ route, oldStored: old.stored, freshStored: fresh.stored }).toEqual({
        route,
        oldStored: 1,
        freshStored: 1,
      });
      expect({ route, status: forged.status, stored: forged.stored }).toEqual({
        route,
        status: 401,
        stored: 0,
      });
    }
  });

  it('once <NAME>_PREVIOUS is unset, the old value is refused 401 and the new one taken', async () => {
    await h.restart(rotatingEnv(false));
    for (const route of ROUTES) {
      const old = await deliver(route, OLD[route]);
      const fresh = await deliver(route, NEW[route]);
      expect({ route, status: old.status, stored: old.stored }).toEqual({ route, status: 401, stored: 0 });
      expect({ route, ok: fresh.status < 300 }).toEqual({ route, ok: true });
    }
  });
});
