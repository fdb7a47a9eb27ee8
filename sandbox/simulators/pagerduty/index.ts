import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type Clock, systemClock } from '../../../src/core/clock.ts';
import {
  createOpenApiValidator,
  loadOpenApiDocument,
  type OpenApiPatch,
  type OpenApiValidator,
  type ValidationIssue,
} from '../openapi.ts';
import type { ContractViolation, Simulator } from '../simulator.ts';
import {
  type Agent,
  type ChangeSource,
  createModel,
  defaultSeed,
  type ModelChange,
  SimApiError,
  type SimIncident,
  type SimModel,
  type SimState,
  type SimUser,
  type SimulatorSeed,
  type WebhookEventType,
} from './model.ts';
import { BULK_UPDATE_MAX, createRestRoutes, type RouteHandler } from './routes.ts';
import { rotationAnchor } from './schedules.ts';
import { createViews } from './views.ts';
import {
  createWebhookDispatcher,
  type DeliveryAttempt,
  type SubscribeOptions,
  type WebhookOptions,
} from './webhooks.ts';

/**
 * A loopback PagerDuty: REST API v2 and Events API v2 on two real `node:http` servers (port 0),
 * an in-memory account (see `model.ts`), signed V3 webhooks for every change, spec validation of
 * every request against the vendor's OpenAPI files vendored in `./specs/`, auth, rate limits,
 * injected faults and optional read lag. For the sandbox and the tests: the bot never imports it.
 * It is a {@link Simulator} (../simulator.ts): `env()`, `connect(botUrl)`, `exportState()`…
 *
 * @example
 * const sim = await startPagerDutySimulator();
 * const pd = createPagerDutyClient({ apiUrl: sim.url, eventsUrl: sim.eventsUrl, token: sim.token });
 * sim.subscribe({ url: `${botUrl}/webhooks/pagerduty`, secret: 'whsec' });
 * sim.webApp.acknowledge(incidentId, 'ana.silva@example.org'); // → incident.acknowledged webhook
 * await sim.webhooks.idle();
 * sim.assertNoViolations();
 * await sim.stop();
 */

const DEFAULT_SPECS = new URL('./specs/', import.meta.url);

/**
 * Corrections to the vendor document, each with its source. The REST file types
 * `IncidentBody.details` as an object, but the Incident Creation API docs
 * (https://github.com/PagerDuty/developer-docs/blob/94224391aa3eac8fa73ea6a6af542dee0613d3e8/docs/REST-API/15-Incident-Creation-API.md) and the API itself take a string.
 */
export const PAGERDUTY_SPEC_PATCHES: readonly OpenApiPatch[] = [
  {
    pointer: '/components/schemas/IncidentBody/properties/details',
    value: { oneOf: [{ type: 'string' }, { type: 'object' }] },
    reason:
      'the Incident Creation API docs (docs/REST-API/15-Incident-Creation-API.md) say body.details is a string; the OpenAPI file says object',
  },
  {
    pointer: '/components/schemas/Oncall/properties/user',
    value: { oneOf: [{ $ref: '#/components/schemas/UserReference' }, { $ref: '#/components/schemas/User' }] },
    reason: 'GET /oncalls with include[]=users returns full user objects; the file only allows references',
  },
  {
    pointer: '/components/schemas/Oncall/properties/escalation_policy',
    value: {
      oneOf: [
        { $ref: '#/components/schemas/EscalationPolicyReference' },
        { $ref: '#/components/schemas/EscalationPolicy' },
      ],
    },
    reason:
      'GET /oncalls with include[]=escalation_policies returns full policies; the file only allows references',
  },
];

export const PAGERDUTY_ACCEPT = 'application/vnd.pagerduty+json;version=2';

export type RouteMatcher =
  | string
  | { readonly method?: string; readonly path: string | RegExp }
  | ((req: { operationId: string | undefined; method: string; path: string }) => boolean);

export type Fault = {
  /** HTTP status to answer, or `reset` to destroy the socket without an answer. */
  readonly status: 400 | 401 | 403 | 429 | 500 | 502 | 503 | 504 | 'reset';
  /** How many matching requests fail (default 1). */
  readonly times?: number;
  /** `ratelimit-reset` seconds on a 429 (default 1). */
  readonly resetSeconds?: number;
  /** A 429 with neither headers nor body (the vendor says this happens). */
  readonly bare?: boolean;
  /** Apply the request first, then fail the answer: the caller cannot know it landed. */
  readonly afterApply?: boolean;
  /**
   * The JSON error body repeats the `Authorization` header the request carried (whole, and the bare
   * key), as some gateways and proxies do: what the bot must never store or show.
   */
  readonly echoAuthorization?: boolean;
};

export type Delay = {
  /** How long to hold the request (or its answer); ignored when `until` is given. */
  readonly ms?: number;
  /**
   * Hold until this settles instead of for a time: a test opens it once it has done what must
   * happen inside the window, so the interleaving does not depend on the machine's speed.
   */
  readonly until?: Promise<unknown>;
  readonly times?: number;
  /**
   * Apply the request first, then hold its answer for `ms` (latency on the way back): the change is
   * visible to readers, webhooks and the web app before the caller hears of it.
   */
  readonly afterApply?: boolean;
};

export type Violation = {
  readonly kind: 'request' | 'response' | 'route' | 'contract' | 'unimplemented';
  readonly server: 'rest' | 'events';
  readonly operationId: string | undefined;
  readonly method: string;
  readonly path: string;
  readonly issues: readonly ValidationIssue[];
};

export type RecordedRequest = {
  readonly server: 'rest' | 'events';
  readonly operationId: string | undefined;
  readonly method: string;
  /** Path and query as received. */
  readonly url: string;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  readonly body: unknown;
  status: number | 'reset';
};

export type PagerDutySimulatorOptions = {
  /** The account API key the REST API accepts (default `sim-pagerduty-token`). */
  readonly token?: string;
  /**
   * The secret of the bot's webhook subscription: `env()` hands it to the bot as
   * PAGERDUTY_WEBHOOK_SECRET and `connect(botUrl)` subscribes the bot with it. Default: random.
   */
  readonly webhookSecret?: string;
  /** Keys limited to GET: writes answer 403 (code 2010). */
  readonly readOnlyTokens?: readonly string[];
  readonly seed?: SimulatorSeed;
  readonly clock?: Clock;
  /** REST requests per minute per key; over it → 429 with ratelimit-* headers. Default: unlimited. */
  readonly requestsPerMinute?: number;
  /**
   * Incidents one bulk `PUT /incidents` may name; more is refused with 413 (default 250, the
   * vendor's documented maximum; tests lower it to see a bot chunk).
   */
  readonly bulkLimit?: number;
  /** Reads of an incident lag its writes by this long, on `clock` (eventual consistency). Default 0. */
  readonly readLagMs?: number;
  readonly webhooks?: WebhookOptions;
  /** Check the simulator's own answers against the documented response schemas (default true). */
  readonly validateResponses?: boolean;
  /** Base of `html_url` links. */
  readonly webUrl?: string;
  /** Folder holding `rest-openapiv3.json` and `events-v2-openapiv3.json`. Default: the vendored `./specs/`. */
  readonly specsDir?: URL;
};

type Json = Record<string, unknown>;

const readBody = (req: IncomingMessage): Promise<Buffer> =>
  new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });

const listen = (server: Server) =>
  new Promise<string>((resolve) => {
    server.listen(0, '127.0.0.1', () =>
      resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`),
    );
  });

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const hold = async (delay: Delay): Promise<void> => {
  await (delay.until ?? sleep(delay.ms ?? 0));
};

const clientOf = (source: ChangeSource): Json | null =>
  source === 'web' ? { name: 'PagerDuty' } : source === 'events' ? { name: 'Events API v2' } : null;

export const startPagerDutySimulator = async (options: PagerDutySimulatorOptions = {}) => {
  const token = options.token ?? 'sim-pagerduty-token';
  const webhookSecret = options.webhookSecret ?? randomBytes(24).toString('hex');
  const readOnly = new Set(options.readOnlyTokens ?? []);
  const clock = options.clock ?? systemClock;
  let requestsPerMinute = options.requestsPerMinute;
  let readLagMs = options.readLagMs ?? 0;
  const validateResponses = options.validateResponses ?? true;

  const specs = options.specsDir ?? DEFAULT_SPECS;
  const restValidator: OpenApiValidator = createOpenApiValidator(
    loadOpenApiDocument(new URL('rest-openapiv3.json', specs)),
    {
      name: 'pagerduty-rest',
      patches: PAGERDUTY_SPEC_PATCHES,
    },
  );
  const eventsValidator: OpenApiValidator = createOpenApiValidator(
    loadOpenApiDocument(new URL('events-v2-openapiv3.json', specs)),
    { name: 'pagerduty-events', basePath: '/v2', ignoreSecurity: true },
  );

  const webhooks = createWebhookDispatcher(options.webhooks);
  const restServer = createServer();
  const eventsServer = createServer();
  const url = await listen(restServer);
  const eventsUrl = await listen(eventsServer);
  const links = { apiUrl: url, webUrl: options.webUrl ?? 'https://switchboard-sim.pagerduty.example' };

  // The model reports changes; views need the model; webhooks need views: wire late.
  let onChange: (c: ModelChange) => void = () => undefined;
  const model: SimModel = createModel(
    options.seed ?? defaultSeed({ rotationStart: rotationAnchor(clock.now()) }),
    clock,
    (c) => onChange(c),
  );
  const views = createViews(model, links);

  onChange = (change) => {
    const occurredAt = clock.now().toISOString();
    const agent = views.agentRef(change.agent);
    if ('service' in change) {
      webhooks.publish(
        change.type,
        'service',
        occurredAt,
        agent,
        clientOf(change.source),
        views.webhookService(change.service),
        {
          serviceId: change.service.id,
          teamIds: change.service.teamIds,
        },
      );
      return;
    }
    const data =
      change.type === 'incident.annotated' && change.note
        ? views.webhookNote(change.incident, change.note)
        : views.webhookIncident(change.incident);
    webhooks.publish(change.type, 'incident', occurredAt, agent, clientOf(change.source), data, {
      serviceId: change.incident.serviceId,
      teamIds: change.incident.teamIds,
    });
  };

  // ---------------------------------------------------------------- read lag (eventual consistency)

  const versions = new Map<string, Array<{ visibleAt: number; view: Json; text: string }>>();
  const committed = () => {
    if (readLagMs <= 0) return;
    const at = clock.now().getTime() + readLagMs;
    for (const inc of model.incidents.values()) {
      const view = views.incident(inc);
      const text = JSON.stringify(view);
      const list = versions.get(inc.id) ?? [];
      if (list[list.length - 1]?.text !== text) list.push({ visibleAt: at, view, text });
      versions.set(inc.id, list);
    }
  };
  const visibleView = (inc: SimIncident): Json | undefined => {
    if (readLagMs <= 0 && !versions.has(inc.id)) return views.incident(inc);
    const list = versions.get(inc.id);
    if (!list) return views.incident(inc);
    const now = clock.now().getTime();
    let found: Json | undefined;
    for (const v of list) if (v.visibleAt <= now) found = v.view;
    return found;
  };
  const visibleIncidents = () =>
    [...model.incidents.values()].map(visibleView).filter((v): v is Json => v !== undefined);
  const visibleIncident = (idOrNumber: string) => {
    try {
      return visibleView(model.requireIncident(idOrNumber));
    } catch {
      return undefined;
    }
  };

  const routes: Record<string, RouteHandler> = createRestRoutes({
    model,
    views,
    visibleIncidents,
    visibleIncident,
    committed,
    subscribe: (opts) => webhooks.subscribe(opts),
    webhookSubscriptions: () => [...webhooks.subscriptions.values()],
    bulkLimit: options.bulkLimit ?? BULK_UPDATE_MAX,
  });

  // ---------------------------------------------------------------- faults, rate limit, records

  const faults: Array<{ matcher: RouteMatcher; fault: Fault; left: number }> = [];
  const delays: Array<{ matcher: RouteMatcher; delay: Delay; left: number }> = [];
  const violations: Violation[] = [];
  const requests: RecordedRequest[] = [];
  const windows = new Map<string, { start: number; count: number }>();

  const matches = (m: RouteMatcher, r: { operationId: string | undefined; method: string; path: string }) => {
    if (typeof m === 'string') return m === r.operationId;
    if (typeof m === 'function') return m(r);
    if (m.method && m.method.toUpperCase() !== r.method) return false;
    return typeof m.path === 'string' ? m.path === r.path : m.path.test(r.path);
  };
  const take = <T extends { matcher: RouteMatcher; left: number }>(
    list: T[],
    r: Parameters<typeof matches>[1],
  ) => {
    const i = list.findIndex((x) => matches(x.matcher, r));
    if (i < 0) return undefined;
    const x = list[i]!;
    x.left -= 1;
    if (x.left <= 0) list.splice(i, 1);
    return x;
  };

  const rateHeaders = (key: string): Record<string, string> => {
    if (requestsPerMinute === undefined) return {};
    const w = windows.get(key);
    const now = clock.now().getTime();
    const resetS = w ? Math.max(1, Math.ceil((w.start + 60_000 - now) / 1000)) : 60;
    return {
      'ratelimit-limit': String(requestsPerMinute),
      'ratelimit-remaining': String(Math.max(0, requestsPerMinute - (w?.count ?? 0))),
      'ratelimit-reset': String(resetS),
    };
  };
  /** Counts the request; true when it is over the limit. */
  const overLimit = (key: string) => {
    if (requestsPerMinute === undefined) return false;
    const now = clock.now().getTime();
    let w = windows.get(key);
    if (!w || now >= w.start + 60_000) {
      w = { start: now, count: 0 };
      windows.set(key, w);
    }
    w.count += 1;
    return w.count > requestsPerMinute;
  };

  const send = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
    if (res.destroyed) return;
    const text = body === undefined ? '' : JSON.stringify(body);
    res.writeHead(status, {
      ...(text ? { 'content-type': 'application/json; charset=utf-8' } : {}),
      ...headers,
    });
    res.end(text);
  };

  const sendFault = (res: ServerResponse, fault: Fault, extra: Record<string, string>) => {
    if (fault.status === 'reset') {
      res.socket?.destroy();
      return;
    }
    if (fault.echoAuthorization) {
      const auth = String(res.req?.headers.authorization ?? '');
      const key = auth.replace(/^Token token=/, '');
      return void send(
        res,
        fault.status,
        {
          error: {
            message: `Request rejected by gateway (Authorization: ${auth})`,
            code: 2001,
            errors: [`api key ${key} is not valid for this request`, `authorization=${auth}`],
          },
        },
        extra,
      );
    }
    if (fault.status === 429) {
      if (fault.bare) return void send(res, 429, undefined);
      return void send(
        res,
        429,
        { error: { message: 'Rate Limit Exceeded', code: 2020 } },
        {
          ...extra,
          'ratelimit-limit': '960',
          'ratelimit-remaining': '0',
          'ratelimit-reset': String(fault.resetSeconds ?? 1),
        },
      );
    }
    if (fault.status === 502 || fault.status === 503 || fault.status === 504) {
      // Load balancers answer HTML, not the API's JSON.
      res.writeHead(fault.status, { 'content-type': 'text/html' });
      res.end(`<html><body><h1>${fault.status} Service Unavailable</h1></body></html>`);
      return;
    }
    send(res, fault.status, { error: { message: 'Internal Server Error' } }, extra);
  };

  const vendorError = (err: SimApiError) => ({
    error: {
      message: err.message,
      ...(err.code === undefined ? {} : { code: err.code }),
      errors: [...err.errors],
    },
  });

  const FROM_OPERATIONS = new Set([
    'createIncident',
    'updateIncident',
    'updateIncidents',
    'createIncidentNote',
  ]);

  // ---------------------------------------------------------------- REST server

  /**
   * What both servers do first: read and record the request, then apply an injected fault or delay.
   * Undefined when a fault already answered.
   */
  const intake = async (
    server: 'rest' | 'events',
    validator: OpenApiValidator,
    req: IncomingMessage,
    res: ServerResponse,
  ) => {
    const raw = await readBody(req);
    const method = (req.method ?? 'GET').toUpperCase();
    const reqUrl = req.url ?? '/';
    const path = new URL(reqUrl, 'http://sim.invalid').pathname;
    const operationId = validator.match(method, reqUrl)?.operationId;
    let parsedBody: unknown;
    try {
      parsedBody = raw.length ? JSON.parse(raw.toString()) : undefined;
    } catch {
      parsedBody = raw.toString();
    }
    const record: RecordedRequest = {
      server,
      operationId,
      method,
      url: reqUrl,
      headers: { ...req.headers },
      body: parsedBody,
      status: 0,
    };
    requests.push(record);
    const info = { operationId, method, path };
    const fault = take(faults, info);
    if (fault && !fault.fault.afterApply) {
      record.status = fault.fault.status;
      sendFault(res, fault.fault, {});
      return undefined;
    }
    const delay = take(delays, info);
    if (delay && !delay.delay.afterApply) await hold(delay.delay);
    const answerDelay = delay?.delay.afterApply ? delay.delay : undefined;
    return { raw, method, reqUrl, path, operationId, record, afterApply: fault?.fault, answerDelay };
  };

  const handleRest = async (req: IncomingMessage, res: ServerResponse) => {
    const got = await intake('rest', restValidator, req, res);
    if (!got) return;
    const { raw, method, reqUrl, path, operationId, record, afterApply, answerDelay } = got;

    const auth = req.headers.authorization;
    const key = auth?.startsWith('Token token=') ? auth.slice('Token token='.length) : undefined;
    if (key === undefined || (key !== token && !readOnly.has(key))) {
      record.status = 401;
      return send(res, 401, { error: { message: 'Unauthorized', code: 2006, errors: [] } });
    }
    if (overLimit(key)) {
      record.status = 429;
      return send(res, 429, { error: { message: 'Rate Limit Exceeded', code: 2020 } }, rateHeaders(key));
    }
    const limitHeaders = rateHeaders(key);

    const validated = restValidator.validateRequest({ method, url: reqUrl, headers: req.headers, body: raw });
    if (!validated.route) {
      violations.push({ kind: 'route', server: 'rest', operationId, method, path, issues: validated.issues });
      record.status = 404;
      return send(res, 404, { error: { message: 'Not Found', code: 2100 } }, limitHeaders);
    }
    if (validated.issues.length > 0) {
      violations.push({
        kind: 'request',
        server: 'rest',
        operationId,
        method,
        path,
        issues: validated.issues,
      });
      record.status = 400;
      const fromMissing = validated.issues.some((i) => i.name === 'From' && i.message.includes('missing'));
      return send(
        res,
        400,
        fromMissing
          ? {
              error: {
                message:
                  'You must specify a user\'s email address in the "From" header to perform this action',
                code: 2016,
                errors: [],
              },
            }
          : {
              error: {
                message: 'Invalid Input Provided',
                code: 2001,
                errors: validated.issues.map(describe),
              },
            },
        limitHeaders,
      );
    }
    const accept = req.headers.accept;
    if (accept !== PAGERDUTY_ACCEPT) {
      violations.push({
        kind: 'contract',
        server: 'rest',
        operationId,
        method,
        path,
        issues: [
          { where: 'header', name: 'Accept', message: `expected ${PAGERDUTY_ACCEPT}, got ${String(accept)}` },
        ],
      });
    }
    if (method !== 'GET' && readOnly.has(key)) {
      record.status = 403;
      return send(
        res,
        403,
        { error: { message: 'Access Denied', code: 2010, errors: ['read-only API key'] } },
        limitHeaders,
      );
    }
    let from: SimUser | undefined;
    if (FROM_OPERATIONS.has(validated.route.operationId)) {
      from = model.userByEmail(String(req.headers.from ?? ''));
      if (!from) {
        record.status = 400;
        return send(
          res,
          400,
          { error: { message: 'Requester User Not Found', code: 1008, errors: [] } },
          limitHeaders,
        );
      }
    }
    const handler = routes[validated.route.operationId];
    if (!handler) {
      violations.push({
        kind: 'unimplemented',
        server: 'rest',
        operationId,
        method,
        path,
        issues: [
          { where: 'route', message: `${validated.route.operationId} is in the spec but not simulated` },
        ],
      });
      record.status = 501;
      return send(res, 501, { error: { message: 'Not implemented by the simulator' } }, limitHeaders);
    }
    let result: { status: number; body: unknown };
    try {
      result = handler({
        params: validated.route.pathParams,
        query: validated.query,
        body: validated.body,
        from,
      });
    } catch (err) {
      if (!(err instanceof SimApiError)) throw err;
      result = { status: err.status, body: vendorError(err) };
      committed();
    }
    // Only successful answers are checked: the vendor document omits many error statuses the API
    // really returns (400 on PUT /incidents/{id}, for one), and those bodies are the error shape.
    if (validateResponses && result.status < 300) {
      const issues = restValidator.validateResponse(validated.route.operationId, result.status, result.body);
      if (issues.length > 0) {
        violations.push({ kind: 'response', server: 'rest', operationId, method, path, issues });
      }
    }
    if (answerDelay) await hold(answerDelay);
    if (afterApply) {
      record.status = afterApply.status;
      return sendFault(res, afterApply, limitHeaders);
    }
    record.status = result.status;
    send(res, result.status, result.body, limitHeaders);
  };

  // ---------------------------------------------------------------- Events API server

  const handleEvents = async (req: IncomingMessage, res: ServerResponse) => {
    const got = await intake('events', eventsValidator, req, res);
    if (!got) return;
    const { raw, method, reqUrl, path, operationId, record, afterApply } = got;

    const validated = eventsValidator.validateRequest({
      method,
      url: reqUrl,
      headers: req.headers,
      body: raw,
    });
    if (!validated.route) {
      violations.push({
        kind: 'route',
        server: 'events',
        operationId,
        method,
        path,
        issues: validated.issues,
      });
      record.status = 404;
      return send(res, 404, { status: 'not found', message: 'Not Found' });
    }
    if (validated.issues.length > 0) {
      violations.push({
        kind: 'request',
        server: 'events',
        operationId,
        method,
        path,
        issues: validated.issues,
      });
      record.status = 400;
      return send(res, 400, {
        status: 'invalid event',
        message: 'Event object is invalid',
        errors: validated.issues.map(describe),
      });
    }
    let status: number;
    let body: unknown;
    try {
      if (validated.route.operationId === 'createV2Event') {
        const out = model.enqueueEvent(validated.body as Parameters<SimModel['enqueueEvent']>[0]);
        status = 202;
        body = { status: 'success', message: 'Event processed', dedup_key: out.dedupKey };
      } else {
        model.recordChangeEvent(validated.body as Parameters<SimModel['recordChangeEvent']>[0]);
        status = 202;
        body = { status: 'success', message: 'Change event processed' };
      }
      committed();
    } catch (err) {
      if (!(err instanceof SimApiError)) throw err;
      status = err.status;
      body = { status: 'invalid event', message: err.message, errors: [...err.errors] };
    }
    if (afterApply) {
      record.status = afterApply.status;
      return sendFault(res, afterApply, {});
    }
    record.status = status;
    send(res, status, body);
  };

  const guard = (handler: typeof handleRest) => (req: IncomingMessage, res: ServerResponse) => {
    handler(req, res).catch((err: unknown) => {
      // A simulator bug: answer 500 and make the test fail loudly.
      violations.push({
        kind: 'unimplemented',
        server: 'rest',
        operationId: undefined,
        method: req.method ?? '',
        path: req.url ?? '',
        issues: [
          { where: 'route', message: `simulator crashed: ${err instanceof Error ? err.stack : String(err)}` },
        ],
      });
      send(res, 500, { error: { message: 'Simulator error' } });
    });
  };
  restServer.on('request', guard(handleRest));
  eventsServer.on('request', guard(handleEvents));

  // ---------------------------------------------------------------- web app (changes a person makes in the UI)

  const userAgent = (email: string): Agent => {
    const u = model.userByEmail(email);
    if (!u) throw new Error(`simulator: no user with email ${email}`);
    return { kind: 'user', userId: u.id };
  };
  const userIdByEmail = (email: string) => (userAgent(email) as { userId: string }).userId;
  const webAction = <T>(fn: () => T): T => {
    const out = fn();
    committed();
    return out;
  };

  const webApp = {
    trigger: (input: {
      serviceId: string;
      title: string;
      byEmail: string;
      urgency?: 'high' | 'low';
      incidentKey?: string;
      details?: string;
    }) =>
      webAction(() =>
        model.createIncident({
          serviceId: input.serviceId,
          title: input.title,
          ...(input.urgency ? { urgency: input.urgency } : {}),
          ...(input.incidentKey ? { incidentKey: input.incidentKey } : {}),
          ...(input.details ? { details: input.details } : {}),
          agent: userAgent(input.byEmail),
          source: 'web',
        }),
      ),
    acknowledge: (incidentId: string, userEmail: string) =>
      webAction(() => {
        const inc = model.requireIncident(incidentId);
        model.acknowledge(inc, userAgent(userEmail), 'web');
        return inc;
      }),
    resolve: (incidentId: string, userEmail: string, resolution?: string) =>
      webAction(() => {
        const inc = model.requireIncident(incidentId);
        model.resolve(inc, userAgent(userEmail), 'web', resolution);
        return inc;
      }),
    /** The acknowledgement timed out (or someone un-acknowledged): back to triggered. */
    unacknowledge: (incidentId: string) =>
      webAction(() => {
        const inc = model.requireIncident(incidentId);
        model.unacknowledge(inc, { kind: 'system' }, 'system');
        return inc;
      }),
    escalate: (incidentId: string, level: number, userEmail: string) =>
      webAction(() => {
        const inc = model.requireIncident(incidentId);
        model.escalate(inc, level, userAgent(userEmail), 'web');
        return inc;
      }),
    reassign: (incidentId: string, toEmails: readonly string[], byEmail: string) =>
      webAction(() => {
        const inc = model.requireIncident(incidentId);
        model.reassign(inc, { userIds: toEmails.map(userIdByEmail) }, userAgent(byEmail), 'web');
        return inc;
      }),
    delegate: (incidentId: string, escalationPolicyId: string, byEmail: string) =>
      webAction(() => {
        const inc = model.requireIncident(incidentId);
        model.reassign(inc, { escalationPolicyId }, userAgent(byEmail), 'web');
        return inc;
      }),
    setPriority: (incidentId: string, priorityName: string, userEmail: string) =>
      webAction(() => {
        const inc = model.requireIncident(incidentId);
        model.setPriority(inc, priorityName, userAgent(userEmail), 'web');
        return inc;
      }),
    /** An alert grouped into the incident (monitoring sent another related one). */
    addAlert: (incidentId: string, summary: string) =>
      webAction(() => model.addAlert(model.requireIncident(incidentId), { summary })),
    /** Urgency changed in the web app: the vendor sends no webhook for it (read-backs see it). */
    setUrgency: (incidentId: string, urgency: 'high' | 'low', userEmail: string) =>
      webAction(() => {
        const inc = model.requireIncident(incidentId);
        model.updateIncident(inc, { urgency }, userAgent(userEmail), 'web');
        return inc;
      }),
    addNote: (incidentId: string, content: string, userEmail: string) =>
      webAction(() => model.addNote(model.requireIncident(incidentId), content, userAgent(userEmail), 'web')),
    createService: (
      input: { name: string; escalationPolicyId: string; description?: string },
      byEmail: string,
    ) => webAction(() => model.createService(input, userAgent(byEmail), 'web')),
    updateService: (
      serviceId: string,
      input: { name?: string; description?: string; escalationPolicyId?: string },
      byEmail: string,
    ) => webAction(() => model.updateService(serviceId, input, userAgent(byEmail), 'web')),
  };

  // ---------------------------------------------------------------- the handle tests hold

  const describeViolation = (v: Violation) =>
    `${v.kind} ${v.server} ${v.method} ${v.path}${v.operationId ? ` (${v.operationId})` : ''}: ${v.issues.map(describe).join('; ')}`;

  const simulator = {
    name: 'pagerduty' as const,
    /** What the bot needs to use this account: both base URLs, the API key, the webhook secret. */
    env: () => ({
      PAGERDUTY_API_URL: url,
      PAGERDUTY_EVENTS_URL: eventsUrl,
      PAGERDUTY_TOKEN: token,
      PAGERDUTY_WEBHOOK_SECRET: webhookSecret,
    }),
    /** Subscribes the bot's webhook route (`<botUrl>/webhooks/pagerduty`) with `webhookSecret`. */
    connect(botUrl: string) {
      webhooks.subscribe({
        url: `${botUrl}/webhooks/pagerduty`,
        secret: webhookSecret,
        description: 'Switchboard',
      });
    },
    /**
     * The whole account (users, schedules, services, incidents…) and its id counters, as JSON.
     * Webhook subscriptions are not part of it: whoever listens subscribes again after a restart.
     */
    exportState: (): SimState => model.exportState(),
    /** Restores an exported account; call it before any traffic, and before anyone subscribes. */
    importState(state: SimState) {
      model.importState(state);
      versions.clear();
      committed();
    },
    /** Requests that break the vendor's published API description, and other contract breaches. */
    contractViolations: (): readonly ContractViolation[] =>
      violations.map((v) => ({ simulator: 'pagerduty', summary: describeViolation(v) })),
  };

  const handle = {
    ...simulator,
    webhookSecret,
    /** REST base URL (`PAGERDUTY_API_URL`). */
    url,
    /** Events API base URL (`PAGERDUTY_EVENTS_URL`); paths `/v2/enqueue`, `/v2/change/enqueue`. */
    eventsUrl,
    token,
    /** The account: users, services, incidents… Mutate through `webApp` so webhooks are sent. */
    state: model,
    views,
    requests,
    violations,
    /** Vendor-shaped JSON of an incident as it is now (no read lag). */
    incident: (idOrNumber: string | number) => views.incident(model.requireIncident(String(idOrNumber))),
    requestsFor: (operationId: string) => requests.filter((r) => r.operationId === operationId),
    assertNoViolations() {
      if (violations.length > 0) {
        throw new Error(
          `PagerDuty simulator saw ${violations.length} violation(s):\n${violations.map(describeViolation).join('\n')}`,
        );
      }
    },
    clearViolations() {
      violations.length = 0;
    },
    /** The next `times` requests matching fail with `fault.status` (before or after being applied). */
    failNext(matcher: RouteMatcher, fault: Fault) {
      faults.push({ matcher, fault, left: fault.times ?? 1 });
    },
    /** The next `times` matching requests wait `ms` (or until `until` settles) before being handled. */
    delayNext(matcher: RouteMatcher, delay: Delay) {
      delays.push({ matcher, delay, left: delay.times ?? 1 });
    },
    clearFaults() {
      faults.length = 0;
      delays.length = 0;
    },
    setRequestsPerMinute(limit: number | undefined) {
      requestsPerMinute = limit;
      windows.clear();
    },
    setReadLag(ms: number) {
      readLagMs = ms;
      if (ms > 0) committed();
      else versions.clear();
    },
    /** Registers a V3 webhook subscription; returns it with its signing secret. */
    subscribe(opts: SubscribeOptions) {
      const sub = webhooks.subscribe(opts);
      return { id: sub.id, secret: sub.secrets[0]!, subscription: sub };
    },
    /** Deliveries are signed with both secrets until `finishRotation()`. */
    rotateSecret(newSecret: string, subscriptionId?: string) {
      webhooks.rotateSecret(newSecret, subscriptionId);
    },
    finishRotation(subscriptionId?: string) {
      webhooks.finishRotation(subscriptionId);
    },
    webhooks: {
      /** Every delivery attempt, in order, with headers, body, status and outcome. */
      attempts: webhooks.attempts as readonly DeliveryAttempt[],
      delivered: (eventType?: WebhookEventType | string) =>
        webhooks.attempts.filter(
          (a) => a.outcome === 'delivered' && (eventType === undefined || a.eventType === eventType),
        ),
      duplicateNext: (count = 1) => webhooks.duplicateNext(count),
      hold: () => webhooks.hold(),
      release: (opts: { reverse?: boolean } = {}) => webhooks.release(opts),
      heldCount: () => webhooks.heldCount(),
      enable: (subscriptionId: string) => webhooks.enable(subscriptionId),
      idle: () => webhooks.idle(),
    },
    webApp,
    /** Runs automatic escalations and acknowledgement timeouts due at `clock.now()`. */
    runTimers() {
      webAction(() => model.runTimers());
    },
    async stop() {
      await webhooks.stop();
      const close = (s: Server) =>
        new Promise<void>((resolve) => {
          s.close(() => resolve());
          s.closeAllConnections();
        });
      await Promise.all([close(restServer), close(eventsServer)]);
    },
  };
  return handle satisfies Simulator<SimState>;
};

const describe = (i: ValidationIssue) => `${i.where}${i.name ? ` ${i.name}` : ''}: ${i.message}`;

export type PagerDutySimulator = Awaited<ReturnType<typeof startPagerDutySimulator>>;
export type { SimState as PagerDutyState, SimulatorSeed, WebhookEventType } from './model.ts';
export { defaultSeed } from './model.ts';
export { rotationAnchor } from './schedules.ts';
