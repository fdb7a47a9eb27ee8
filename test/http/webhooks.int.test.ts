import { createHmac, timingSafeEqual } from 'node:crypto';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  createInbox,
  inboxCommands,
  WEBHOOK_RECEIVED,
  type WebhookReceivedData,
  webhookInboxEventId,
} from '../../src/application/inbox.ts';
import { systemClock } from '../../src/core/clock.ts';
import { ValidationError } from '../../src/core/errors.ts';
import type { EventStore } from '../../src/eventStore/eventStore.ts';
import { openEventStore } from '../../src/eventStore/openEventStore.ts';
import { createHttpServer, type HttpServer } from '../../src/http/server.ts';
import { type WebhookVerifier, webhookRoutes } from '../../src/http/webhookRoutes.ts';
import { createMetrics } from '../../src/metrics.ts';
import { createLogSink } from '../support/logSink.ts';
import { tempDir } from '../support/startApp.ts';

/** A tiny vendor: HMAC-SHA256 hex of the body in `X-Test-Signature`, delivery id in `X-Test-Delivery`. */
const SECRET = 'test-webhook-secret-42';
const sign = (body: string): string => createHmac('sha256', SECRET).update(body).digest('hex');

const testVerifier: WebhookVerifier = {
  source: 'testvendor',
  path: '/webhooks/testvendor',
  keepHeaders: ['x-test-delivery'],
  bodyLimit: 4096,
  verify(raw, headers) {
    const given = headers['x-test-signature'];
    if (typeof given !== 'string') return { ok: false, reason: 'missing signature' };
    const expected = Buffer.from(createHmac('sha256', SECRET).update(raw).digest('hex'));
    const actual = Buffer.from(given);
    return actual.length === expected.length && timingSafeEqual(actual, expected)
      ? { ok: true }
      : { ok: false, reason: 'signature mismatch' };
  },
  parse(raw, headers, context) {
    const deliveryId = headers['x-test-delivery'];
    if (typeof deliveryId !== 'string') return new ValidationError('no delivery id');
    let body: { event?: string; id?: string };
    try {
      body = JSON.parse(raw.toString('utf8')) as typeof body;
    } catch {
      throw new ValidationError('body is not JSON');
    }
    if (body.event !== 'thing.happened') return { deliveryId, commands: [] };
    return {
      deliveryId,
      commands: [
        { type: 'RecordThing', data: { id: body.id ?? '' }, metadata: context.metadata(deliveryId) },
      ],
    };
  },
};

let store: EventStore;
let server: HttpServer;
let url: string;
let cleanup: () => void;
const logs = createLogSink();
const stream = 'inbox-testvendor';
let before: number;

const post = (body: string, headers: Record<string, string>) =>
  fetch(`${url}/webhooks/testvendor`, {
    method: 'POST',
    body,
    headers: { 'content-type': 'application/json', ...headers },
  });

beforeAll(async () => {
  const tmp = tempDir();
  cleanup = tmp.cleanup;
  store = await openEventStore(`sqlite:${join(tmp.dir, 'webhooks.db')}`);
  const logger = logs.logger({ secrets: [SECRET] });
  const metrics = createMetrics();
  const inbox = createInbox({ store, metrics });
  server = createHttpServer({
    routes: webhookRoutes([testVerifier], { inbox, clock: systemClock, logger }),
    logger,
    metrics,
  });
  url = `http://127.0.0.1:${await server.listen(0, '127.0.0.1')}`;
});
afterAll(async () => {
  await server.close(500);
  if (store.isOpen()) await store.close();
  cleanup();
});
beforeEach(async () => {
  before = (await store.readStream(stream)).length;
});

describe('webhook route plumbing', () => {
  it('answers 200 after recording the delivery with its commands in inbox-<source>', async () => {
    const body = JSON.stringify({ event: 'thing.happened', id: 'T-1' });
    const res = await post(body, { 'x-test-signature': sign(body), 'x-test-delivery': 'd-1' });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ ok: true });
    const [recorded] = (await store.readStream(stream)).slice(before);
    expect(recorded).toMatchObject({
      id: webhookInboxEventId('testvendor', 'd-1'),
      type: WEBHOOK_RECEIVED,
      kind: 'command',
    });
    const data = recorded?.data as unknown as WebhookReceivedData;
    expect(data.input).toMatchObject({
      source: 'testvendor',
      deliveryId: 'd-1',
      route: '/webhooks/testvendor',
      body: { event: 'thing.happened', id: 'T-1' },
      headers: { 'content-type': 'application/json', 'x-test-delivery': 'd-1' },
    });
    // The signature is not kept with the record.
    expect(JSON.stringify(data)).not.toContain(sign(body));
    expect(inboxCommands(recorded!)).toEqual([
      {
        type: 'RecordThing',
        data: { id: 'T-1' },
        metadata: expect.objectContaining({
          actor: 'testvendor:webhook',
          causationId: webhookInboxEventId('testvendor', 'd-1'),
        }),
      },
    ]);
  });

  it('answers 200 to a redelivery without recording it again', async () => {
    const body = JSON.stringify({ event: 'thing.happened', id: 'T-2' });
    const headers = { 'x-test-signature': sign(body), 'x-test-delivery': 'd-2' };
    expect((await post(body, headers)).status).toBe(200);
    const again = await post(body, headers);
    expect(again.status).toBe(200);
    expect(await again.json()).toEqual({ ok: true, duplicate: true });
    expect(await store.readStream(stream)).toHaveLength(before + 1);
  });

  it('records deliveries nobody handles, with no commands (never a 4xx for a valid delivery)', async () => {
    const body = JSON.stringify({ event: 'thing.ignored' });
    const res = await post(body, { 'x-test-signature': sign(body), 'x-test-delivery': 'd-3' });
    expect(res.status).toBe(200);
    const [recorded] = (await store.readStream(stream)).slice(before);
    expect(inboxCommands(recorded!)).toEqual([]);
  });

  it('answers 401 to a bad or missing signature and stores nothing', async () => {
    const body = JSON.stringify({ event: 'thing.happened', id: 'T-4' });
    expect(
      (await post(body, { 'x-test-signature': sign(`${body} `), 'x-test-delivery': 'd-4' })).status,
    ).toBe(401);
    expect((await post(body, { 'x-test-delivery': 'd-4' })).status).toBe(401);
    expect(await store.readStream(stream)).toHaveLength(before);
    expect(logs.text()).toContain('signature mismatch');
    expect(logs.text()).not.toContain(SECRET);
  });

  it('answers 400 to a signed but malformed delivery (returned or thrown) and stores nothing', async () => {
    const body = JSON.stringify({ event: 'thing.happened' });
    expect((await post(body, { 'x-test-signature': sign(body) })).status).toBe(400);
    const notJson = '{oops';
    expect(
      (await post(notJson, { 'x-test-signature': sign(notJson), 'x-test-delivery': 'd-5' })).status,
    ).toBe(400);
    expect(await store.readStream(stream)).toHaveLength(before);
  });

  it('answers 413 over the body limit', async () => {
    const body = JSON.stringify({ event: 'thing.happened', id: 'x'.repeat(5000) });
    const res = await post(body, { 'x-test-signature': sign(body), 'x-test-delivery': 'd-6' });
    expect(res.status).toBe(413);
    expect(await store.readStream(stream)).toHaveLength(before);
  });

  it('answers 404 for unknown webhook paths and 405 for other methods', async () => {
    expect((await fetch(`${url}/webhooks/nobody`, { method: 'POST', body: '{}' })).status).toBe(404);
    const get = await fetch(`${url}/webhooks/testvendor`);
    expect(get.status).toBe(405);
    expect(get.headers.get('allow')).toBe('POST');
  });

  it('refuses verifiers with clashing paths or bad sources', () => {
    const deps = { inbox: createInbox({ store }), clock: systemClock, logger: logs.logger() };
    expect(() => webhookRoutes([testVerifier, testVerifier], deps)).toThrow(/two webhook verifiers/);
    expect(() => webhookRoutes([{ ...testVerifier, source: 'Bad-Name' }], deps)).toThrow(/lower-case/);
    expect(() => webhookRoutes([{ ...testVerifier, path: '/hooks/x' }], deps)).toThrow(/must start with/);
  });

  // Last: it closes the store.
  it('answers 503 with Retry-After when the store cannot take the write', async () => {
    await store.close();
    const body = JSON.stringify({ event: 'thing.happened', id: 'T-7' });
    const res = await post(body, { 'x-test-signature': sign(body), 'x-test-delivery': 'd-7' });
    expect(res.status).toBe(503);
    expect(res.headers.get('retry-after')).toBe('5');
  });
});
