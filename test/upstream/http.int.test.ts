import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Agent } from 'undici';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createUpstreamHttp } from '../../src/upstream/http.ts';
import { caught } from '../support/caught.ts';

type Answer = { status: number; body?: string; headers?: Record<string, string> };

let server: Server;
let baseUrl: string;
let dispatcher: Agent;
let next: Answer;
let seen: Array<{ method: string; url: string; headers: IncomingHttpHeaders; body: string }>;

beforeEach(async () => {
  seen = [];
  next = { status: 200, body: '{}' };
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      seen.push({
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString(),
      });
      res.writeHead(next.status, { 'content-type': 'application/json', ...next.headers });
      res.end(next.body ?? '');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api`;
  dispatcher = new Agent();
});

afterEach(async () => {
  await dispatcher.close();
  await new Promise<void>((r) => {
    server.close(() => r());
    server.closeAllConnections();
  });
});

const http = () =>
  createUpstreamHttp({
    vendor: 'hibob',
    baseUrl,
    dispatcher,
    defaultHeaders: { authorization: 'Basic c2VjcmV0OnNlY3JldA==' },
    parseVendorError: (json) => {
      const j = json as { key?: string; error?: string };
      return j.error ? { code: j.key, message: j.error } : undefined;
    },
  });

describe('createUpstreamHttp', () => {
  it('sends JSON with the default headers and repeated array query keys, and parses with zod', async () => {
    next = { status: 200, body: JSON.stringify({ ok: true, extra: 'kept by passthrough' }) };
    const res = await http().request({
      operation: 'search',
      method: 'POST',
      path: '/people/search',
      query: { 'ids[]': ['a', 'b'], skip: undefined, n: 3 },
      body: { filters: [] },
      schema: z.looseObject({ ok: z.boolean() }),
    });
    expect(res.data).toEqual({ ok: true, extra: 'kept by passthrough' });
    expect(seen[0]).toMatchObject({
      method: 'POST',
      url: '/api/people/search?ids%5B%5D=a&ids%5B%5D=b&n=3',
      body: '{"filters":[]}',
    });
    expect(seen[0]?.headers).toMatchObject({
      authorization: 'Basic c2VjcmV0OnNlY3JldA==',
      'content-type': 'application/json',
    });
  });

  it('accepts an empty 2xx body when the schema allows it', async () => {
    next = { status: 204 };
    const res = await http().request({
      operation: 'cancel',
      method: 'DELETE',
      path: '/x',
      schema: z.undefined(),
    });
    expect(res.status).toBe(204);
  });

  it('turns an unexpected 2xx shape or a non-JSON 2xx into SB_UPSTREAM_REJECTED', async () => {
    next = { status: 200, body: JSON.stringify({ ok: 'yes' }) };
    const shape = await caught(
      http().request({ operation: 'read', method: 'GET', path: '/x', schema: z.object({ ok: z.boolean() }) }),
    );
    expect(shape.code).toBe('SB_UPSTREAM_REJECTED');
    expect(shape.details).toMatchObject({ reason: 'unexpected_response', retryable: false });
    next = { status: 200, body: '<html>' };
    const html = await caught(
      http().request({ operation: 'read', method: 'GET', path: '/x', schema: z.unknown() }),
    );
    expect(html.details.reason).toBe('unexpected_response');
  });

  it('maps vendor errors with the vendor parser, rate limits with the vendor header, and keeps query strings out', async () => {
    next = { status: 400, body: JSON.stringify({ key: 'bad.filter', error: 'Unknown field' }) };
    const bad = await caught(
      http().request({
        operation: 'search',
        method: 'POST',
        path: '/people/search',
        query: { secret: 'q' },
        body: {},
        schema: z.unknown(),
      }),
    );
    expect(bad.code).toBe('SB_VALIDATION');
    expect(bad.details).toMatchObject({
      vendorCode: 'bad.filter',
      vendorMessage: 'Unknown field',
      path: '/people/search',
    });
    expect(JSON.stringify(bad.details)).not.toContain('secret');
    expect(`${bad.message}${JSON.stringify(bad.details)}`).not.toContain('c2VjcmV0');

    next = {
      status: 429,
      body: '',
      headers: { 'x-ratelimit-reset': String(Math.floor(Date.now() / 1000) + 30) },
    };
    const limited = await caught(
      http().request({ operation: 'search', method: 'GET', path: '/x', schema: z.unknown() }),
    );
    expect(limited.code).toBe('SB_UPSTREAM_RATE_LIMITED');
    expect(limited.details.retryAfterMs).toBeGreaterThan(28_000);
    expect(limited.details.retryAfterMs).toBeLessThanOrEqual(30_000);
  });
});
