import { EventEmitter } from 'node:events';
import { readFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { extname, join, normalize } from 'node:path';
import type { EventStore, Subscription } from '../../src/eventStore/eventStore.ts';
import { ClockInputError, parseAdvance, type SandboxClock } from '../clock.ts';
import type { SlackAppSettings } from '../manifest.ts';
import type { PagerDutySimulator } from '../simulators/pagerduty/index.ts';
import type {
  FakeChange,
  FakeEphemeral,
  FakeMessage,
  FakeSlack,
  FakeView,
} from '../simulators/slack/fakeSlack.ts';
import { type RawValues, type SlackSurface, type Surface, SurfaceError } from '../slackSurface.ts';
import type { Person } from '../world.ts';
import { HrInputError, parseEmployeeId, parseHrRequest, parseRequestId, type SandboxHr } from './hr.ts';
import {
  listStreamRows,
  pagerDutyPanel,
  readStreamRows,
  recentEventRows,
  type StoreEventRow,
  storeEventRow,
} from './panels.ts';
import {
  PhoneInputError,
  type PhoneView,
  parseCallAction,
  parseDigits,
  parseSmsText,
  type SandboxPhones,
} from './phones.ts';

/**
 * The sandbox console's HTTP server (its own port): the page and its static files, a JSON API the
 * page calls for everything a person does, and one server-sent-events stream per open page that
 * carries every change live (Slack messages and their updates, ephemerals, modals, App Home, the
 * incident service, the event store's tail).
 *
 * Routes:
 * - `GET /` the page; `GET /static/<file>` its modules and CSS
 * - `GET /api/state?user=U…` what that person sees in Slack; `GET /api/events?user=U…` the live stream
 * - `POST /api/slash`, `/api/message`, `/api/action`, `/api/views/submit`, `/api/views/close`,
 *   `/api/home/open` what a person does in Slack (forwarded to the bot, signed)
 * - `GET /api/pagerduty`; `POST /api/pagerduty/incidents/<id>/{acknowledge,resolve}`,
 *   `POST /api/pagerduty/enqueue` the incident service's web app and Events API
 * - `GET /api/store/streams`, `GET /api/store/stream?id=…`, `GET /api/store/recent` the event store
 * - `GET /api/slack/calls` the bot's Web API calls; `POST /hooks/pagerduty` the console's own
 *   webhook subscription (how it hears of incident-service changes)
 * - `GET /api/phone?user=U…` that person's phone (number, SMS, calls; live as `phone` events);
 *   `POST /api/phone/sms` `{ user, text }` texts Switchboard from it; `POST /api/phone/call`
 *   `{ user, callId, action: answer | reject | hangup | press, digits? }` acts on a call to it
 * - `GET /api/hr` the HR service as its web app shows it (requests, who is out, employees; live as
 *   `hr` events); `POST /api/hr/requests` `{ employeeId, policyType, startDate, endDate,
 *   startDatePortion?, endDatePortion?, description? }` asks for time off there as that employee;
 *   `POST /api/hr/requests/<id>/cancel` cancels a request; `POST /api/hr/employees/<id>/terminate`
 *   terminates an employee (each answered 400/404/409 with what was wrong)
 * - `GET /api/clock` the sandbox's time (`{ now, offsetMs }`; live as `clock` events);
 *   `POST /api/clock/advance` `{ minutes }` moves it forward
 *
 * Only the console's own page drives it (`ownRequest`): every request must name the console's own
 * host (`Host: 127.0.0.1:<port>` or `localhost:<port>`: a DNS-rebinding page names its own), and
 * every POST must come from loopback, be `application/json` (a page of another site can send a form
 * or text/plain without asking the browser first, never JSON) and carry no `Origin` but the
 * console's own. Anything else is answered 403 with the reason, before its body is read.
 */

export type ConsoleServerOptions = Readonly<{
  fake: FakeSlack;
  sim: PagerDutySimulator;
  store: EventStore;
  surface: SlackSurface;
  people: readonly Person[];
  /** Milliseconds clock for on-call lookups. */
  now: () => number;
  /** Called when the incident service reports a change (after open pages are told). */
  onPagerDutyChange?: () => void;
  /** The app's Home and Messages tabs, from its manifest. */
  app: Pick<SlackAppSettings, 'homeTab' | 'messagesTab' | 'messagesTabReadOnly'>;
  /** Everyone's phone on the communications simulator; without it the Phone tab says there is none. */
  phones?: SandboxPhones;
  /** Each person's phone number (E.164) by Slack user id. */
  phoneBook?: Readonly<Record<string, string>>;
  /** The HR service's web app; without it the HR tab says there is none. */
  hr?: SandboxHr;
  /** The sandbox clock; without it the console shows real time and cannot move it. */
  clock?: SandboxClock;
}>;

export type ConsoleServer = Readonly<{
  url: string;
  port: number;
  /** Tells open pages the incident service changed. */
  pagerDutyChanged(): void;
  close(): Promise<void>;
}>;

/** A console listening before its world exists (its URL goes into the world: incident links). */
export type ListeningConsole = Readonly<{
  url: string;
  port: number;
  /** Starts serving; until then every request is answered 503. */
  serve(options: ConsoleServerOptions): ConsoleServer;
  close(): Promise<void>;
}>;

const PUBLIC = join(import.meta.dirname, 'public');
const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
};

type Json = Record<string, unknown>;

class HttpError extends Error {
  readonly status: number;
  constructor(status: number, message: string) {
    super(message);
    this.status = status;
  }
}

const sendJson = (res: ServerResponse, status: number, body: unknown) => {
  const text = JSON.stringify(body, (_k, v: unknown) => (typeof v === 'bigint' ? String(v) : v));
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' });
  res.end(text);
};

const readJson = async (req: IncomingMessage): Promise<Json> => {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > 1024 * 1024) throw new HttpError(413, 'body too large');
    chunks.push(chunk as Buffer);
  }
  const text = Buffer.concat(chunks).toString('utf8');
  if (text === '') return {};
  try {
    const parsed = JSON.parse(text) as unknown;
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
      throw new Error('not an object');
    return parsed as Json;
  } catch {
    throw new HttpError(400, 'body must be a JSON object');
  }
};

const isLoopback = (address: string | undefined): boolean =>
  address === '127.0.0.1' || address === '::1' || address === '::ffff:127.0.0.1';

/**
 * Why a request may not drive the console listening on `port` (null: it may). A browser sends
 * another site's `Origin` on every cross-origin POST, `null` from sandboxed frames and files, and
 * its own host name in `Host` after DNS rebinding; only a JSON body needs a CORS preflight, which
 * this server never answers.
 */
export const refusedRequest = (req: IncomingMessage, port: number): string | null => {
  const hosts = [
    `127.0.0.1:${port}`,
    `localhost:${port}`,
    ...(port === 80 ? ['127.0.0.1', 'localhost'] : []),
  ];
  if (!hosts.includes((req.headers.host ?? '').toLowerCase()))
    return 'the console answers its own host only (Host)';
  if (req.method === 'GET' || req.method === 'HEAD') return null;
  if (!isLoopback(req.socket.remoteAddress)) return 'the console answers this machine only';
  const origin = req.headers.origin;
  if (origin !== undefined && !hosts.some((h) => origin.toLowerCase() === `http://${h}`))
    return 'the console answers its own page only (Origin)';
  if (!/^application\/json\s*(;|$)/i.test(req.headers['content-type'] ?? ''))
    return 'the console takes JSON only (content-type: application/json)';
  return null;
};

const field = (body: Json, name: string): string => {
  const v = body[name];
  if (typeof v !== 'string' || v === '') throw new HttpError(400, `${name} is required`);
  return v;
};

export const messageJson = (m: FakeMessage) => ({
  channel: m.channel,
  ts: m.ts,
  user: m.user,
  botId: m.bot_id,
  /** A reply's parent (Slack's `thread_ts`); null for a message in the channel itself. */
  threadTs: m.thread_ts !== undefined && m.thread_ts !== m.ts ? m.thread_ts : null,
  text: m.text,
  blocks: m.blocks ?? null,
  edits: m.edits,
  deleted: m.deleted,
  via: m.via,
});

export const ephemeralJson = (e: FakeEphemeral) => ({
  channel: e.channel,
  ts: e.message_ts,
  user: e.user,
  text: e.text,
  blocks: e.blocks ?? null,
  via: e.via,
  edits: e.edits ?? 0,
});

export const viewJson = (v: FakeView | undefined) =>
  v ? { id: v.id, kind: v.kind, hash: v.hash, view: v.view, updates: v.updates } : null;

/** Binds the console's port on loopback (0: any free port). */
export const listenConsole = async (port = 0): Promise<ListeningConsole> => {
  let handler: ((req: IncomingMessage, res: ServerResponse) => void) | undefined;
  const server: Server = createServer((req, res) => {
    if (handler) return handler(req, res);
    sendJson(res, 503, { ok: false, error: 'the sandbox is starting' });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve());
  });
  const bound = (server.address() as AddressInfo).port;
  const url = `http://127.0.0.1:${bound}`;
  const closeServer = async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  return {
    url,
    port: bound,
    serve(options) {
      const c = createConsole(options, bound);
      handler = c.handler;
      return {
        url,
        port: bound,
        pagerDutyChanged: c.pagerDutyChanged,
        async close() {
          await c.close();
          await closeServer();
        },
      };
    },
    close: closeServer,
  };
};

const createConsole = (options: ConsoleServerOptions, port: number) => {
  const { fake, sim, store, surface } = options;
  const hub = new EventEmitter();
  hub.setMaxListeners(200);
  const clients = new Set<ServerResponse>();

  // One live tail of the store for every open page.
  const tail: Subscription = store.subscribe({
    from: 'end',
    onEvent: async (e) => {
      hub.emit('store', storeEventRow(e));
    },
  });
  tail.done.catch(() => undefined);

  const channelsFor = (user: string) => {
    fake.dmChannel(user); // the app's Messages tab always exists
    return [...fake.channels.values()]
      .filter((c) => !c.is_im || c.user === user)
      .map((c) => ({ id: c.id, name: c.name, isIm: c.is_im, user: c.user ?? null }));
  };
  const canSee = (user: string, channel: string) => {
    const c = fake.channels.get(channel);
    return c !== undefined && (!c.is_im || c.user === user);
  };
  const requirePerson = (user: string | null | undefined): string => {
    const u = user ? fake.users.get(user) : undefined;
    if (!u || u.is_bot) throw new HttpError(400, 'pick a person (user=U…)');
    return u.id;
  };

  const phoneOf = (user: string): string | null => options.phoneBook?.[user] ?? null;
  const phoneJson = (user: string): { number: string | null } & PhoneView => {
    const number = phoneOf(user);
    if (!number || !options.phones) return { number, sms: [], calls: [] };
    return { number, ...options.phones.view(number) };
  };
  const requirePhone = (user: string): { number: string; phones: SandboxPhones } => {
    const number = phoneOf(user);
    if (!number || !options.phones) throw new HttpError(404, 'this person has no phone in the sandbox');
    return { number, phones: options.phones };
  };

  const clockJson = () => ({
    now: new Date(options.now()).toISOString(),
    offsetMs: options.clock?.offsetMs() ?? 0,
    movable: options.clock !== undefined,
  });
  const offClock = options.clock?.onAdvance(() => {
    hub.emit('clock', clockJson());
    hub.emit('pagerduty');
  });

  const requireHr = (): SandboxHr => {
    if (!options.hr) throw new HttpError(404, 'there is no HR service in this sandbox');
    return options.hr;
  };

  const peopleJson = () =>
    options.people.map((p) => ({
      id: p.slackId,
      handle: p.handle,
      realName: p.realName,
      email: p.email,
      title: p.title,
      tz: p.tz,
      phone: phoneOf(p.slackId),
    }));

  const state = (user: string) => {
    const channels = channelsFor(user);
    const messages: Record<string, ReturnType<typeof messageJson>[]> = {};
    for (const c of channels)
      messages[c.id] = fake
        .messages(c.id)
        .filter((m) => !m.deleted)
        .map(messageJson);
    return {
      team: { id: fake.teamId, name: fake.teamName },
      bot: { id: fake.botUserId, name: 'Switchboard' },
      app: {
        homeTab: options.app.homeTab,
        messagesTab: options.app.messagesTab,
        messagesTabReadOnly: options.app.messagesTabReadOnly,
      },
      me: user,
      people: peopleJson(),
      users: Object.fromEntries(
        [...fake.users.values()].map((u) => [
          u.id,
          { name: u.is_bot ? 'Switchboard' : u.name, realName: u.real_name, isBot: u.is_bot === true },
        ]),
      ),
      channels,
      messages,
      ephemerals: fake.ephemerals.filter((e) => e.user === user).map(ephemeralJson),
      modal: viewJson(surface.modalOf(user)),
      home: viewJson(fake.homes.get(user)),
    };
  };

  const openStream = (req: IncomingMessage, res: ServerResponse, user: string) => {
    res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-store',
      connection: 'keep-alive',
      'x-accel-buffering': 'no',
    });
    const send = (event: string, data: unknown) => {
      res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
    };
    send('hello', { user });
    const onFake = (change: FakeChange) => {
      switch (change.kind) {
        case 'message.posted':
        case 'message.updated':
        case 'message.deleted':
          if (canSee(user, change.message.channel)) {
            if (
              change.kind === 'message.posted' &&
              !channelsFor(user).some((c) => c.id === change.message.channel)
            ) {
              send('channels', channelsFor(user));
            }
            send('message', { change: change.kind, message: messageJson(change.message) });
          }
          return;
        case 'ephemeral.posted':
          if (change.ephemeral.user === user) send('ephemeral', ephemeralJson(change.ephemeral));
          return;
        case 'ephemeral.updated':
          if (change.ephemeral.user === user) send('ephemeral-updated', ephemeralJson(change.ephemeral));
          return;
        case 'home.published':
          if (change.view.user === user) send('home', viewJson(change.view));
          return;
        case 'view.opened':
        case 'view.updated':
          return; // modals arrive through the surface's stack events
        case 'call':
          send('call', {
            method: change.call.method,
            status: change.call.status,
            error: change.call.error ?? null,
            at: change.call.at,
          });
          if (change.call.method === 'conversations.open') send('channels', channelsFor(user));
          return;
      }
    };
    const onModal = (e: { user: string; view: FakeView | undefined }) => {
      if (e.user === user) send('modal', viewJson(e.view));
    };
    const onStore = (row: StoreEventRow) => send('store', row);
    const onPagerDuty = () => send('pagerduty', {});
    const onClock = (c: ReturnType<typeof clockJson>) => send('clock', c);
    const myPhone = phoneOf(user);
    const offPhone = options.phones?.onChange((number) => {
      if (number === myPhone) send('phone', phoneJson(user));
    });
    // HR changes come in bursts (a request and its change record): one `hr` event per burst.
    let hrSoon: NodeJS.Timeout | undefined;
    const offHr = options.hr?.onChange(() => {
      hrSoon ??= setTimeout(() => {
        hrSoon = undefined;
        send('hr', {});
      }, 50);
    });
    fake.events.on('change', onFake);
    surface.events.on('modal', onModal);
    hub.on('store', onStore);
    hub.on('pagerduty', onPagerDuty);
    hub.on('clock', onClock);
    const heartbeat = setInterval(() => res.write(': keep-alive\n\n'), 15_000);
    clients.add(res);
    const cleanup = () => {
      clearInterval(heartbeat);
      fake.events.off('change', onFake);
      surface.events.off('modal', onModal);
      hub.off('store', onStore);
      hub.off('pagerduty', onPagerDuty);
      hub.off('clock', onClock);
      offPhone?.();
      offHr?.();
      if (hrSoon) clearTimeout(hrSoon);
      clients.delete(res);
    };
    req.on('close', cleanup);
    res.on('close', cleanup);
  };

  const serveStatic = async (res: ServerResponse, file: string) => {
    const path = normalize(join(PUBLIC, file));
    if (!path.startsWith(PUBLIC) || !TYPES[extname(path)]) throw new HttpError(404, 'not found');
    let content: Buffer;
    try {
      content = await readFile(path);
    } catch {
      throw new HttpError(404, 'not found');
    }
    res.writeHead(200, {
      'content-type': TYPES[extname(path)] ?? 'application/octet-stream',
      'cache-control': 'no-cache',
    });
    res.end(content);
  };

  const surfaceOf = (body: Json): Surface => {
    const s = (body['surface'] ?? {}) as Json;
    if (s['kind'] === 'view') return { kind: 'view', viewId: field(s, 'viewId') };
    if (s['kind'] === 'message' || s['kind'] === 'ephemeral') {
      return { kind: s['kind'], channel: field(s, 'channel'), ts: field(s, 'ts') };
    }
    throw new HttpError(400, 'surface must be a message, an ephemeral message or a view');
  };

  const pagerDutyAction = (id: string, action: string, body: Json) => {
    const email = field(body, 'email');
    if (action === 'acknowledge') sim.webApp.acknowledge(id, email);
    else if (action === 'resolve')
      sim.webApp.resolve(id, email, typeof body['resolution'] === 'string' ? body['resolution'] : undefined);
    else throw new HttpError(404, `no action ${action}`);
  };

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', 'http://console');
    const path = url.pathname;
    const method = req.method ?? 'GET';
    const refused = refusedRequest(req, port);
    if (refused) {
      res.setHeader('connection', 'close');
      throw new HttpError(403, refused);
    }
    if (method === 'GET' && (path === '/' || path === '/index.html')) return serveStatic(res, 'index.html');
    if (method === 'GET' && path.startsWith('/static/'))
      return serveStatic(res, path.slice('/static/'.length));
    if (method === 'GET' && path === '/favicon.ico') {
      res.writeHead(204);
      res.end();
      return;
    }
    // html_url links of the incident service point here: show that incident in the side panel.
    if (method === 'GET' && path.startsWith('/vendor/')) {
      const incident = /^\/vendor\/incidents\/([^/]+)$/.exec(path)?.[1];
      res.writeHead(302, { location: incident ? `/#incident=${encodeURIComponent(incident)}` : '/' });
      res.end();
      return;
    }
    if (method === 'POST' && path === '/hooks/pagerduty') {
      await readJson(req).catch(() => ({}));
      hub.emit('pagerduty');
      options.onPagerDutyChange?.();
      return sendJson(res, 200, { ok: true });
    }
    if (method === 'GET' && path === '/api/people') return sendJson(res, 200, peopleJson());
    if (method === 'GET' && path === '/api/clock') return sendJson(res, 200, clockJson());
    if (method === 'POST' && path === '/api/clock/advance') {
      // Moving time is the sandbox's alone: like every POST, only from its own page (`refusedRequest`).
      if (!options.clock) throw new HttpError(404, 'this console has no sandbox clock to move');
      options.clock.advance(parseAdvance(await readJson(req)));
      return sendJson(res, 200, { ok: true, ...clockJson() });
    }
    if (method === 'GET' && path === '/api/state')
      return sendJson(res, 200, state(requirePerson(url.searchParams.get('user'))));
    if (method === 'GET' && path === '/api/events')
      return openStream(req, res, requirePerson(url.searchParams.get('user')));
    if (method === 'GET' && path === '/api/pagerduty')
      return sendJson(res, 200, pagerDutyPanel(sim, options.now()));
    if (method === 'GET' && path === '/api/hr') return sendJson(res, 200, requireHr().panel(options.now()));
    if (method === 'GET' && path === '/api/phone')
      return sendJson(res, 200, phoneJson(requirePerson(url.searchParams.get('user'))));
    if (method === 'GET' && path === '/api/store/streams') {
      return sendJson(res, 200, await listStreamRows(store, url.searchParams.get('prefix') ?? undefined));
    }
    if (method === 'GET' && path === '/api/store/recent')
      return sendJson(res, 200, await recentEventRows(store));
    if (method === 'GET' && path === '/api/store/stream') {
      const id = url.searchParams.get('id');
      if (!id) throw new HttpError(400, 'id is required');
      return sendJson(res, 200, await readStreamRows(store, id));
    }
    if (method === 'GET' && path === '/api/slack/calls') {
      return sendJson(
        res,
        200,
        fake.calls
          .slice(-200)
          .map((c) => ({ method: c.method, status: c.status, error: c.error ?? null, at: c.at })),
      );
    }
    if (method !== 'POST') throw new HttpError(404, 'not found');

    const body = await readJson(req);
    switch (path) {
      case '/api/slash': {
        const user = requirePerson(field(body, 'user'));
        const channel = field(body, 'channel');
        if (!canSee(user, channel)) throw new HttpError(404, 'no such channel');
        return sendJson(res, 200, await surface.slashCommand({ user, channel, text: field(body, 'text') }));
      }
      case '/api/message': {
        const user = requirePerson(field(body, 'user'));
        const channel = field(body, 'channel');
        if (!canSee(user, channel)) throw new HttpError(404, 'no such channel');
        return sendJson(res, 200, {
          ok: true,
          message: messageJson(fake.postAsUser(channel, user, field(body, 'text'))),
        });
      }
      case '/api/action': {
        const user = requirePerson(field(body, 'user'));
        const elementIndex =
          body['elementIndex'] === 'accessory' ? 'accessory' : Number(body['elementIndex']);
        const result = await surface.blockAction({
          user,
          surface: surfaceOf(body),
          blockIndex: Number(body['blockIndex']),
          elementIndex,
          value: body['value'] as string | string[] | undefined,
          values: (body['values'] ?? {}) as RawValues,
        });
        return sendJson(res, 200, result);
      }
      case '/api/views/submit': {
        const user = requirePerson(field(body, 'user'));
        const result = await surface.submitView({
          user,
          viewId: field(body, 'viewId'),
          values: (body['values'] ?? {}) as RawValues,
        });
        return sendJson(res, 200, { ...result, modal: viewJson(result.modal) });
      }
      case '/api/views/close': {
        const user = requirePerson(field(body, 'user'));
        return sendJson(res, 200, await surface.closeView({ user, viewId: field(body, 'viewId') }));
      }
      case '/api/phone/sms': {
        const { number, phones } = requirePhone(requirePerson(field(body, 'user')));
        await phones.sendSms(number, parseSmsText(body['text']));
        return sendJson(res, 200, { ok: true });
      }
      case '/api/phone/call': {
        const { number, phones } = requirePhone(requirePerson(field(body, 'user')));
        const action = parseCallAction(body['action']);
        const digits = action === 'press' ? parseDigits(body['digits']) : undefined;
        await phones.callAction(number, field(body, 'callId'), action, digits);
        return sendJson(res, 200, { ok: true });
      }
      case '/api/home/open':
        return sendJson(res, 200, await surface.openHome({ user: requirePerson(field(body, 'user')) }));
      case '/api/pagerduty/enqueue': {
        const r = await fetch(`${sim.eventsUrl}/v2/enqueue`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', accept: 'application/json' },
          body: JSON.stringify({
            routing_key: field(body, 'routingKey'),
            event_action: (body['action'] as string | undefined) ?? 'trigger',
            ...(typeof body['dedupKey'] === 'string' && body['dedupKey']
              ? { dedup_key: body['dedupKey'] }
              : {}),
            ...((body['action'] ?? 'trigger') === 'trigger'
              ? {
                  payload: {
                    summary: field(body, 'summary'),
                    source:
                      typeof body['source'] === 'string' && body['source']
                        ? body['source']
                        : 'sandbox-monitoring',
                    severity: (body['severity'] as string | undefined) ?? 'error',
                  },
                }
              : {}),
          }),
        });
        return sendJson(res, r.status, await r.json());
      }
    }
    if (path === '/api/hr/requests') {
      const hr = requireHr();
      const id = hr.requestTimeOff(parseHrRequest(body, hr.policies));
      return sendJson(res, 200, { ok: true, requestId: id });
    }
    const hrCancel = /^\/api\/hr\/requests\/([^/]+)\/cancel$/.exec(path);
    if (hrCancel) {
      requireHr().cancel(parseRequestId(decodeURIComponent(hrCancel[1] ?? '')));
      return sendJson(res, 200, { ok: true });
    }
    const hrTerminate = /^\/api\/hr\/employees\/([^/]+)\/terminate$/.exec(path);
    if (hrTerminate) {
      requireHr().terminate(parseEmployeeId(decodeURIComponent(hrTerminate[1] ?? '')));
      return sendJson(res, 200, { ok: true });
    }
    const act = /^\/api\/pagerduty\/incidents\/([^/]+)\/([a-z]+)$/.exec(path);
    if (act) {
      try {
        pagerDutyAction(decodeURIComponent(act[1] ?? ''), act[2] ?? '', body);
      } catch (e) {
        if (e instanceof HttpError) throw e;
        throw new HttpError(409, e instanceof Error ? e.message : String(e));
      }
      return sendJson(res, 200, { ok: true });
    }
    throw new HttpError(404, 'not found');
  };

  return {
    handler(req: IncomingMessage, res: ServerResponse) {
      handle(req, res).catch((e: unknown) => {
        const status =
          e instanceof HttpError
            ? e.status
            : e instanceof SurfaceError
              ? 404
              : e instanceof PhoneInputError || e instanceof HrInputError || e instanceof ClockInputError
                ? e.status
                : 500;
        const message = e instanceof Error ? e.message : String(e);
        if (!res.headersSent) sendJson(res, status, { ok: false, error: message });
        else res.end();
      });
    },
    pagerDutyChanged: () => {
      hub.emit('pagerduty');
    },
    async close() {
      offClock?.();
      for (const res of clients) res.end();
      await tail.stop().catch(() => undefined);
      hub.removeAllListeners();
    },
  };
};
