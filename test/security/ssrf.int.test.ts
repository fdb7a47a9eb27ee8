import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { slackInputOf } from '../../handlers/middleware/recordSlackInput.ts';
import { startFakeSlack } from '../../sandbox/simulators/slack/fakeSlack.ts';
import { slashCommandBody } from '../../sandbox/simulators/slack/signing.ts';
import { commandMetadata } from '../../src/application/inbox.ts';
import { startTestApp, TEST_BOT_TOKEN, type TestApp } from '../support/startApp.ts';
import { waitFor } from '../support/waitFor.ts';

/**
 * Issue 9 item 1: every post to a URL that came from a request goes through one guard. Signed
 * requests name hostile response_urls that all lead to a loopback listener standing in for the
 * target (instance metadata, an internal service); neither Bolt's `respond()` in a listener nor
 * the processors' reply poster may open a connection to it. The "fake Slack" origin the app
 * allows sits behind a small proxy that answers `/redirect/…` with a 302 to that listener.
 */
const listen = async (server: Server): Promise<number> => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
};

let t: TestApp;
let trap: Server;
let proxy: Server;
let trapPort: number;
let proxyOrigin: string;
let trapConnections = 0;
const outcomes: string[] = [];

beforeAll(async () => {
  trap = createServer((_req, res) => res.writeHead(200).end('ok'));
  trap.on('connection', () => {
    trapConnections += 1;
  });
  trapPort = await listen(trap);
  const fake = await startFakeSlack({ botToken: TEST_BOT_TOKEN });
  const fakeUrl = new URL(fake.apiUrl);
  proxy = createServer((req, res) => {
    if (req.url?.startsWith('/redirect/')) {
      res.writeHead(302, { location: `http://127.0.0.1:${trapPort}/latest/meta-data/` }).end();
      return;
    }
    const upstream = httpRequest(
      { host: fakeUrl.hostname, port: fakeUrl.port, path: req.url, method: req.method, headers: req.headers },
      (up) => {
        res.writeHead(up.statusCode ?? 502, up.headers);
        up.pipe(res);
      },
    );
    req.pipe(upstream);
  });
  const proxyPort = await listen(proxy);
  proxyOrigin = `http://127.0.0.1:${proxyPort}`;
  t = await startTestApp({
    fake,
    env: { SLACK_API_URL: `${proxyOrigin}${fakeUrl.pathname}` },
  });
  // A listener that answers through Bolt's respond(), as the real ones do.
  t.sb.bolt.command('/probe', async ({ ack, respond, context }) => {
    await t.sb.inbox.accept({ input: slackInputOf(context) });
    await ack();
    try {
      await respond({ text: 'probe' });
      outcomes.push('posted');
    } catch {
      outcomes.push('refused');
    }
  });
  // A command no lifecycle handles: its refusal goes back through the processors' poster.
  t.sb.bolt.command('/echo', async ({ command, ack, context }) => {
    const input = slackInputOf(context);
    await t.sb.inbox.accept({
      input,
      commands: [{ type: 'EchoText', data: { text: command.text }, metadata: commandMetadata(input) }],
    });
    await ack();
  });
});
afterAll(async () => {
  await t.stop();
  await t.fake.close();
  await new Promise((resolve) => trap.close(resolve));
  await new Promise((resolve) => proxy.close(resolve));
});

const hostile = (): string[] => [
  `http://127.0.0.1:${trapPort}/latest/meta-data/`,
  `http://2130706433:${trapPort}/latest/meta-data/`,
  `http://0x7f.1:${trapPort}/latest/meta-data/`,
  `http://[::ffff:127.0.0.1]:${trapPort}/latest/meta-data/`,
  `http://hooks.slack.com@127.0.0.1:${trapPort}/commands/x`,
  `${proxyOrigin}@127.0.0.1:${trapPort}/commands/x`,
  `https://hooks.slack.com.evil.tld/commands/x`,
  `http://169.254.169.254/latest/meta-data/`,
  `HTTP://127.0.0.1:${trapPort}/x`,
  `${proxyOrigin}/redirect/commands/x`,
];

describe('hostile response_urls in signed requests', () => {
  it("Bolt's respond() in a listener reaches none of them (and follows no redirect)", async () => {
    trapConnections = 0;
    const urls = hostile();
    for (const url of urls) {
      const res = await t.postSlack(slashCommandBody({ command: '/probe', response_url: url }), 'form');
      expect(res.status).toBe(200);
    }
    await waitFor(() => outcomes.length === urls.length, { what: 'every respond() to finish' });
    expect(outcomes).toEqual(urls.map(() => 'refused'));
    expect(trapConnections).toBe(0);
  });

  it("the processors' reply poster reaches none of them", async () => {
    trapConnections = 0;
    for (const url of hostile()) {
      const res = await t.postSlack(
        slashCommandBody({ command: '/echo', text: 'hi', response_url: url }),
        'form',
      );
      expect(res.status).toBe(200);
    }
    await t.sb.processors.waitForIdle(10_000);
    expect(trapConnections).toBe(0);
  });

  it('still posts to an allowed response_url (control)', async () => {
    const before = outcomes.length;
    const issued = new URL(t.fake.responseUrl({ channel: 'C0INCIDENTS', user: 'U0ALICE' }));
    const url = `${proxyOrigin}${issued.pathname}`;
    const res = await t.postSlack(slashCommandBody({ command: '/probe', response_url: url }), 'form');
    expect(res.status).toBe(200);
    await waitFor(() => outcomes.length > before, { what: 'the control respond()' });
    expect(outcomes.at(-1)).toBe('posted');
  });
});
