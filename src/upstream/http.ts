import { type Dispatcher, request as undiciRequest } from 'undici';
import type { ZodType } from 'zod';
import type { Clock } from '../core/clock.ts';
import { ChatOpsError, type ErrorCode, type ErrorDetails } from '../core/errors.ts';
import { createScrubber, scrubText } from '../core/scrub.ts';

/**
 * Shared undici plumbing for every upstream client (one undici client per service, typed requests,
 * zod-checked responses, errors mapped to coded errors): one request function with timeouts, JSON bodies, zod-checked responses, and every failure mapped to a coded
 * error. Clients never see undici errors or raw status codes.
 *
 * Error details always carry `vendor`, `operation`, `method`, `path` (no query string: some vendors
 * put credentials there), `retryable`, and for HTTP failures `status` plus whatever the vendor said
 * (`vendorCode`, `vendorMessage`, `vendorErrors`). Credentials never appear in messages or details:
 * what the vendor said is scrubbed (src/core/scrub.ts) of the client's own credential headers, of
 * the configured secrets and of anything credential-shaped before it enters the error, because
 * gateways echo the `Authorization` header they received and these errors are stored and shown.
 *
 * | Failure | code | retryable |
 * |---|---|---|
 * | network error, timeout, 408, 5xx | SB_UPSTREAM_UNAVAILABLE | true (`maybeApplied` says a write may have landed) |
 * | 429 | SB_UPSTREAM_RATE_LIMITED (`retryAfterMs`) | true |
 * | 401, 403 | SB_UPSTREAM_AUTH | never |
 * | 404 | SB_NOT_FOUND | false |
 * | 400, 422 | SB_VALIDATION (vendor classifiers may refine) | false |
 * | other 4xx, unexpected 2xx body | SB_UPSTREAM_REJECTED | false |
 *
 * @example
 * const http = createUpstreamHttp({ vendor: 'pagerduty', baseUrl, dispatcher, parseVendorError });
 * const { data } = await http.request({
 *   operation: 'getIncident', method: 'GET', path: `/incidents/${id}`, schema: z.object({ incident }),
 * });
 */
export type UpstreamVendor = 'pagerduty' | 'pagerduty-events' | 'hibob' | 'vonage' | 'slack';

export type HeaderBag = Headers | Readonly<Record<string, string | readonly string[] | undefined>>;

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** What a vendor's error body said, normalised. */
export type VendorErrorInfo = {
  readonly code?: string | number | undefined;
  readonly message?: string | undefined;
  readonly errors?: readonly string[] | undefined;
};

/** A vendor-specific refinement of the status-based mapping (e.g. PagerDuty code 1008 → unmapped user). */
export type ErrorClassifier = (
  status: number,
  vendorError: VendorErrorInfo | undefined,
) => { readonly code?: ErrorCode; readonly reason?: string } | undefined;

export type QueryValue = string | number | boolean | readonly (string | number)[] | undefined;

export type UpstreamRequest<T> = {
  /** Stable operation name for errors and logs, e.g. `listIncidents`. */
  readonly operation: string;
  readonly method: HttpMethod;
  /** Path relative to the base URL, starting with `/`. */
  readonly path: string;
  /** Array values repeat the key as given (`statuses[]=a&statuses[]=b`); undefined values are skipped. */
  readonly query?: Readonly<Record<string, QueryValue>>;
  readonly headers?: Readonly<Record<string, string | undefined>>;
  /** JSON-serialised when present. */
  readonly body?: unknown;
  /** Checks the 2xx body (`undefined` for an empty body). */
  readonly schema: ZodType<T>;
  /** Overrides the client's total deadline for this call. */
  readonly timeoutMs?: number;
};

export type UpstreamResponse<T> = {
  readonly status: number;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  readonly data: T;
};

export type UpstreamTimeouts = {
  /** Time to the response headers (undici `headersTimeout`). Default 10 s. */
  readonly headersMs?: number;
  /** Max idle time between body chunks (undici `bodyTimeout`). Default 10 s. */
  readonly bodyMs?: number;
  /** Whole-call deadline, connect included. Default 15 s. */
  readonly totalMs?: number;
};

export type UpstreamHttpOptions = {
  readonly vendor: UpstreamVendor;
  readonly baseUrl: string;
  /** undici Dispatcher (Agent, Pool, MockAgent, RetryAgent). Default: undici's global dispatcher. */
  readonly dispatcher?: Dispatcher;
  /** Sent on every request (auth, versioned Accept…). Never copied into errors. */
  readonly defaultHeaders?: Readonly<Record<string, string>>;
  readonly timeouts?: UpstreamTimeouts;
  readonly clock?: Clock;
  /** Reads the vendor's error body; return undefined when it is not in the vendor's shape. */
  readonly parseVendorError?: (json: unknown, text: string) => VendorErrorInfo | undefined;
  readonly classify?: ErrorClassifier;
  /** `retryAfterMs` on a 429 whose headers say nothing. Default 60 s (per-minute windows). */
  readonly defaultRetryAfterMs?: number;
  /**
   * Credentials this client sends some other way than `defaultHeaders` (per-request headers, parts
   * of a Basic pair): scrubbed from whatever the vendor echoes, like the default headers are.
   */
  readonly secrets?: readonly string[];
};

export type UpstreamHttp = {
  request<T>(req: UpstreamRequest<T>): Promise<UpstreamResponse<T>>;
};

const DEFAULT_TIMEOUTS = { headersMs: 10_000, bodyMs: 10_000, totalMs: 15_000 } as const;

const readHeader = (headers: HeaderBag, name: string): string | undefined => {
  if (typeof (headers as Headers).get === 'function') return (headers as Headers).get(name) ?? undefined;
  const bag = headers as Readonly<Record<string, string | readonly string[] | undefined>>;
  const lower = name.toLowerCase();
  for (const [k, v] of Object.entries(bag)) {
    if (k.toLowerCase() === lower) return typeof v === 'string' ? v : v?.[0];
  }
  return undefined;
};

const nonNegative = (ms: number) => Math.max(0, Math.ceil(ms));

/** `Retry-After`: delta-seconds or an HTTP-date (RFC 9110 §10.2.3). */
const parseRetryAfter = (value: string | undefined, nowMs: number): number | undefined => {
  if (value === undefined || value.trim() === '') return undefined;
  const v = value.trim();
  if (/^\d+(\.\d+)?$/.test(v)) return nonNegative(Number(v) * 1000);
  const at = Date.parse(v);
  return Number.isNaN(at) ? undefined : nonNegative(at - nowMs);
};

/** An epoch reset time in seconds, or milliseconds when it is too large to be seconds. */
const parseEpochReset = (value: string | undefined, nowMs: number): number | undefined => {
  if (value === undefined || !/^\d+(\.\d+)?$/.test(value.trim())) return undefined;
  const n = Number(value.trim());
  const atMs = n > 1e12 ? n : n * 1000;
  return nonNegative(atMs - nowMs);
};

/**
 * How long to wait before retrying after a 429, from the vendor's own headers; undefined when the
 * headers say nothing usable.
 *
 * - PagerDuty: `ratelimit-reset` = seconds until the window resets (not an epoch).
 * - HiBob: `X-RateLimit-Reset` = Unix time of the reset.
 * - Vonage: `Retry-After` seconds, else `X-RateLimit-Reset` (epoch; milliseconds in their examples).
 * - Slack: `Retry-After` seconds.
 *
 * @example rateLimitDelayMs({ 'ratelimit-reset': '7' }, 'pagerduty') // 7000
 */
export const rateLimitDelayMs = (headers: HeaderBag, vendor: UpstreamVendor, nowMs: number = Date.now()) => {
  switch (vendor) {
    case 'pagerduty':
    case 'pagerduty-events': {
      const reset = readHeader(headers, 'ratelimit-reset');
      if (reset !== undefined && /^\d+(\.\d+)?$/.test(reset.trim())) return nonNegative(Number(reset) * 1000);
      return parseRetryAfter(readHeader(headers, 'retry-after'), nowMs);
    }
    case 'hibob':
      return (
        parseEpochReset(readHeader(headers, 'x-ratelimit-reset'), nowMs) ??
        parseRetryAfter(readHeader(headers, 'retry-after'), nowMs)
      );
    case 'vonage':
      return (
        parseRetryAfter(readHeader(headers, 'retry-after'), nowMs) ??
        parseEpochReset(readHeader(headers, 'x-ratelimit-reset'), nowMs)
      );
    case 'slack':
      return parseRetryAfter(readHeader(headers, 'retry-after'), nowMs);
    default: {
      const _exhaustive: never = vendor;
      return _exhaustive;
    }
  }
};

export type HttpErrorInput = {
  readonly vendor: UpstreamVendor;
  readonly operation: string;
  readonly method: HttpMethod;
  readonly path: string;
  readonly status: number;
  readonly headers: HeaderBag;
  readonly vendorError?: VendorErrorInfo | undefined;
  readonly nowMs?: number;
  readonly defaultRetryAfterMs?: number;
  readonly classify?: ErrorClassifier | undefined;
  /** Cleans the vendor's text (default: `scrubText`, known secrets and credential shapes). */
  readonly scrub?: ((text: string) => string) | undefined;
};

const statusCode = (status: number): ErrorCode => {
  if (status === 429) return 'SB_UPSTREAM_RATE_LIMITED';
  if (status === 401 || status === 403) return 'SB_UPSTREAM_AUTH';
  if (status === 408 || status >= 500) return 'SB_UPSTREAM_UNAVAILABLE';
  if (status === 404) return 'SB_NOT_FOUND';
  if (status === 400 || status === 422) return 'SB_VALIDATION';
  return 'SB_UPSTREAM_REJECTED';
};

const RETRYABLE: ReadonlySet<ErrorCode> = new Set(['SB_UPSTREAM_UNAVAILABLE', 'SB_UPSTREAM_RATE_LIMITED']);
const FIXED: ReadonlySet<ErrorCode> = new Set([...RETRYABLE, 'SB_UPSTREAM_AUTH']);

/** Maps a non-2xx answer to a coded error (exported for clients with unusual transports, and tests). */
export const upstreamHttpError = (input: HttpErrorInput): ChatOpsError => {
  const { vendor, operation, method, path, status } = input;
  const scrub = input.scrub ?? scrubText;
  const raw = input.vendorError;
  const vendorError: VendorErrorInfo | undefined = raw && {
    code: typeof raw.code === 'string' ? scrub(raw.code) : raw.code,
    message: raw.message === undefined ? undefined : scrub(raw.message),
    errors: raw.errors?.map(scrub),
  };
  const nowMs = input.nowMs ?? Date.now();
  const refined = input.classify?.(status, vendorError);
  let code = statusCode(status);
  // 401/403 are never retried blindly and 429/5xx always may be: a classifier only adds the reason.
  if (refined?.code && !FIXED.has(code)) code = refined.code;
  const reason = refined?.reason;
  const retryable = RETRYABLE.has(code);
  const details: Record<string, unknown> = { vendor, operation, method, path, status, retryable };
  if (reason !== undefined) details.reason = reason;
  if (vendorError?.code !== undefined) details.vendorCode = vendorError.code;
  if (vendorError?.message !== undefined) details.vendorMessage = vendorError.message;
  if (vendorError?.errors !== undefined && vendorError.errors.length > 0)
    details.vendorErrors = vendorError.errors;
  if (code === 'SB_UPSTREAM_RATE_LIMITED') {
    const fromHeaders = rateLimitDelayMs(input.headers, vendor, nowMs);
    details.retryAfterMs = fromHeaders ?? input.defaultRetryAfterMs ?? 60_000;
    details.retryAfterSource = fromHeaders === undefined ? 'default' : 'headers';
  }
  if (code === 'SB_UPSTREAM_UNAVAILABLE') details.maybeApplied = method !== 'GET' && status !== 503;
  const said = [vendorError?.message, vendorError?.code === undefined ? undefined : `(${vendorError.code})`]
    .filter((s) => s !== undefined)
    .join(' ');
  const extra =
    vendorError?.errors && vendorError.errors.length > 0 ? `: ${vendorError.errors.join('; ')}` : '';
  return new ChatOpsError(
    code,
    `${vendor} ${operation} failed: HTTP ${status}${said ? ` ${said}` : ''}${extra}`,
    {
      details,
    },
  );
};

const CONNECT_PHASE = new Set([
  'UND_ERR_CONNECT_TIMEOUT',
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
]);

/** Maps a transport failure (undici `UND_ERR_*`, system errors, our deadline) to SB_UPSTREAM_UNAVAILABLE. */
export const upstreamNetworkError = (
  err: unknown,
  ctx: { vendor: UpstreamVendor; operation: string; method: HttpMethod; path: string },
): ChatOpsError => {
  const e = err as { code?: unknown; name?: unknown; cause?: { code?: unknown } } | undefined;
  const name = typeof e?.name === 'string' ? e.name : undefined;
  const rawCode =
    typeof e?.code === 'string' ? e.code : typeof e?.cause?.code === 'string' ? e.cause.code : undefined;
  const timeout =
    name === 'TimeoutError' ||
    rawCode === 'UND_ERR_HEADERS_TIMEOUT' ||
    rawCode === 'UND_ERR_BODY_TIMEOUT' ||
    rawCode === 'UND_ERR_CONNECT_TIMEOUT';
  const transportCode = rawCode ?? (name === 'TimeoutError' ? 'DEADLINE_EXCEEDED' : (name ?? 'UNKNOWN'));
  // A write whose request left the machine may have been applied even though we saw no answer.
  const maybeApplied = ctx.method !== 'GET' && !CONNECT_PHASE.has(transportCode);
  const details: ErrorDetails = {
    ...ctx,
    retryable: true,
    reason: timeout ? 'timeout' : 'network',
    transportCode,
    maybeApplied,
  };
  return new ChatOpsError(
    'SB_UPSTREAM_UNAVAILABLE',
    `${ctx.vendor} ${ctx.operation} failed: ${timeout ? 'timed out' : 'network error'} (${transportCode})`,
    { cause: err, details },
  );
};

const buildUrl = (baseUrl: string, path: string, query: UpstreamRequest<unknown>['query']): string => {
  const url = new URL(baseUrl.replace(/\/$/, '') + path);
  for (const [key, value] of Object.entries(query ?? {})) {
    if (value === undefined) continue;
    if (Array.isArray(value)) for (const v of value) url.searchParams.append(key, String(v));
    else url.searchParams.append(key, String(value));
  }
  return url.toString();
};

const tryJson = (text: string): unknown => {
  if (text.trim() === '') return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
};

/** Header names whose values are credentials. */
const CREDENTIAL_HEADER = /auth|token|key|secret|cookie|signature/i;

/**
 * A scrubber that also knows the credentials this client sends (whole header values and their
 * parts: `Token token=<key>` is echoed whole or as the bare key), on top of `scrubText`.
 */
const credentialScrubber = (
  headers: Readonly<Record<string, string>> = {},
  secrets: readonly string[] = [],
) => {
  const values = Object.entries(headers)
    .filter(([name]) => CREDENTIAL_HEADER.test(name))
    .flatMap(([, v]) => [v, ...v.split(/[\s=]+/)])
    .concat(secrets);
  const own = createScrubber(values);
  return (text: string) => scrubText(own(text));
};

/** Builds the request function a vendor client wraps. See the module comment for the error table. */
export const createUpstreamHttp = (options: UpstreamHttpOptions): UpstreamHttp => {
  const timeouts = { ...DEFAULT_TIMEOUTS, ...options.timeouts };
  const scrub = credentialScrubber(options.defaultHeaders, options.secrets);
  const now = () => (options.clock ? options.clock.now().getTime() : Date.now());

  const request = async <T>(req: UpstreamRequest<T>): Promise<UpstreamResponse<T>> => {
    const ctx = { vendor: options.vendor, operation: req.operation, method: req.method, path: req.path };
    const headers: Record<string, string> = { ...options.defaultHeaders };
    for (const [k, v] of Object.entries(req.headers ?? {})) if (v !== undefined) headers[k] = v;
    const body = req.body === undefined ? undefined : JSON.stringify(req.body);
    if (body !== undefined && !Object.keys(headers).some((k) => k.toLowerCase() === 'content-type')) {
      headers['content-type'] = 'application/json';
    }
    let status: number;
    let responseHeaders: Record<string, string | string[] | undefined>;
    let text: string;
    try {
      const res = await undiciRequest(buildUrl(options.baseUrl, req.path, req.query), {
        method: req.method,
        headers,
        body,
        ...(options.dispatcher ? { dispatcher: options.dispatcher } : {}),
        headersTimeout: timeouts.headersMs,
        bodyTimeout: timeouts.bodyMs,
        signal: AbortSignal.timeout(req.timeoutMs ?? timeouts.totalMs),
      });
      status = res.statusCode;
      responseHeaders = res.headers;
      text = await res.body.text();
    } catch (err) {
      throw upstreamNetworkError(err, ctx);
    }

    const json = tryJson(text);
    if (status < 200 || status >= 300) {
      throw upstreamHttpError({
        ...ctx,
        status,
        headers: responseHeaders,
        vendorError: json === undefined ? undefined : options.parseVendorError?.(json, text),
        nowMs: now(),
        ...(options.defaultRetryAfterMs === undefined
          ? {}
          : { defaultRetryAfterMs: options.defaultRetryAfterMs }),
        classify: options.classify,
        scrub,
      });
    }
    if (text.trim() !== '' && json === undefined) {
      throw new ChatOpsError(
        'SB_UPSTREAM_REJECTED',
        `${options.vendor} ${req.operation}: response is not JSON`,
        {
          details: { ...ctx, status, retryable: false, reason: 'unexpected_response' },
        },
      );
    }
    const parsed = req.schema.safeParse(json);
    if (!parsed.success) {
      const issues = parsed.error.issues
        .slice(0, 5)
        .map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`);
      throw new ChatOpsError(
        'SB_UPSTREAM_REJECTED',
        scrub(`${options.vendor} ${req.operation}: unexpected response shape (${issues.join('; ')})`),
        {
          cause: parsed.error,
          details: {
            ...ctx,
            status,
            retryable: false,
            reason: 'unexpected_response',
            issues: issues.map(scrub),
          },
        },
      );
    }
    return { status, headers: responseHeaders, data: parsed.data };
  };

  return { request };
};
