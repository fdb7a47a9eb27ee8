import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { asError } from '../core/errors.ts';
import type { Logger } from '../logger.ts';
import type { Metrics } from '../metrics.ts';
import { closeUnread, isClientAbort } from './rawBody.ts';

/**
 * The one HTTP server on PORT: Slack's `/slack/events`, the vendor
 * webhooks, and the ops endpoints, all as routes on a plain `node:http` server. No framework:
 * routes are exact paths, and each route reads its own raw body (signatures need the bytes).
 *
 * Shutdown (`close`) stops accepting connections, answers requests that still arrive on open
 * keep-alive connections with 503 + `Connection: close`, lets requests in flight finish, and
 * cuts whatever is left after `graceMs`.
 */
export type RouteHandler = (req: IncomingMessage, res: ServerResponse) => Promise<void> | void;

export type Route = Readonly<{
  method: 'GET' | 'POST' | 'HEAD';
  path: string;
  handler: RouteHandler;
}>;

export type HttpServer = Readonly<{
  server: Server;
  /** Starts listening; resolves with the bound port (pass 0 for a free one). */
  listen(port: number, host?: string): Promise<number>;
  /** Stops taking requests and waits (at most graceMs) for those in flight. */
  close(graceMs?: number): Promise<void>;
  isDraining(): boolean;
}>;

export type HttpServerOptions = Readonly<{
  routes: readonly Route[];
  logger: Logger;
  metrics: Metrics;
  /** Milliseconds clock for rate-limiting log lines (default Date.now; tests pass their own). */
  nowMs?: () => number;
}>;

/** At most one log line per this many ms about requests the client aborted (with a count). */
export const ABORT_LOG_INTERVAL_MS = 10_000;
/** Time to receive a request's headers, and the whole request (Slack must be answered in 3 s). */
export const HEADERS_TIMEOUT_MS = 10_000;
export const REQUEST_TIMEOUT_MS = 15_000;

export const sendJson = (
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
) => {
  if (res.headersSent) return;
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(text),
    ...headers,
  });
  res.end(text);
};

/**
 * A request answered without its body: one that has a body is not read at all and its connection
 * is closed once answered (`closeUnread`: an unverified sender cannot make the process read and
 * drop bodies on paths nobody serves); one without keeps its keep-alive connection.
 */
const dropBody = (req: IncomingMessage, res: ServerResponse): void => {
  const length = req.headers['content-length'];
  if ((length !== undefined && length !== '0') || req.headers['transfer-encoding'] !== undefined)
    closeUnread(req, res);
  else req.resume();
};

export const createHttpServer = (options: HttpServerOptions): HttpServer => {
  const { logger, metrics } = options;
  const byPath = new Map<string, Route[]>();
  for (const r of options.routes) {
    const list = byPath.get(r.path) ?? [];
    if (list.some((x) => x.method === r.method))
      throw new TypeError(`route ${r.method} ${r.path} registered twice`);
    list.push(r);
    byPath.set(r.path, list);
  }
  let draining = false;
  const sockets = new Set<Socket>();
  const nowMs = options.nowMs ?? Date.now;
  let abortsUnlogged = 0;
  let abortLoggedAt: number | undefined;
  /** A client that went away mid-request: one line, no stack, at most one per interval. */
  const logAbort = (path: string): void => {
    abortsUnlogged += 1;
    const now = nowMs();
    if (abortLoggedAt !== undefined && now - abortLoggedAt < ABORT_LOG_INTERVAL_MS) return;
    logger.info({ route: path, aborted: abortsUnlogged }, 'requests aborted by the client');
    abortLoggedAt = now;
    abortsUnlogged = 0;
  };

  const server = createServer(
    {
      headersTimeout: HEADERS_TIMEOUT_MS,
      requestTimeout: REQUEST_TIMEOUT_MS,
      // Check those timeouts every second (Node's default is every 30 s).
      connectionsCheckingInterval: 1_000,
    },
    (req, res) => {
      const started = process.hrtime.bigint();
      const path = (req.url ?? '/').split('?', 1)[0] ?? '/';
      const candidates = byPath.get(path);
      const route = candidates?.find(
        (r) => r.method === req.method || (req.method === 'HEAD' && r.method === 'GET'),
      );
      const label = candidates ? path : 'unmatched';
      res.on('finish', () => {
        metrics.httpRequests.inc({ route: label, method: req.method ?? '?', status: String(res.statusCode) });
        metrics.httpDuration.observe({ route: label }, Number(process.hrtime.bigint() - started) / 1e9);
      });
      if (draining) {
        res.setHeader('connection', 'close');
        sendJson(res, 503, { ok: false, error: 'shutting_down' }, { 'retry-after': '5' });
        return;
      }
      if (!candidates) {
        dropBody(req, res);
        sendJson(res, 404, { ok: false, error: 'not_found' });
        return;
      }
      if (!route) {
        dropBody(req, res);
        sendJson(
          res,
          405,
          { ok: false, error: 'method_not_allowed' },
          { allow: candidates.map((r) => r.method).join(', ') },
        );
        return;
      }
      Promise.resolve()
        .then(() => route.handler(req, res))
        .catch((e: unknown) => {
          if (isClientAbort(e)) {
            logAbort(label);
            if (!res.headersSent) res.destroy();
            return;
          }
          logger.error({ err: asError(e), route: path }, 'request failed');
          if (!res.headersSent) sendJson(res, 500, { ok: false, error: 'internal_error' });
          else res.end();
        });
    },
  );
  // Keep-alive longer than typical load-balancer idle timeouts, so they close first.
  server.keepAliveTimeout = 65_000;
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });

  return {
    server,
    listen: (port, host) =>
      new Promise((resolve, reject) => {
        server.once('error', reject);
        const onListening = () => {
          server.off('error', reject);
          resolve((server.address() as AddressInfo).port);
        };
        if (host === undefined) server.listen(port, onListening);
        else server.listen(port, host, onListening);
      }),
    close: async (graceMs = 5_000) => {
      if (!server.listening) return;
      draining = true;
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      const timer = setTimeout(() => {
        logger.warn({ open: sockets.size }, 'shutdown grace period over: closing remaining connections');
        server.closeAllConnections();
      }, graceMs);
      timer.unref();
      await closed;
      clearTimeout(timer);
    },
    isDraining: () => draining,
  };
};
