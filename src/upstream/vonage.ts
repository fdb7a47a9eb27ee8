import type { Dispatcher } from 'undici';
import { z } from 'zod';
import { type Clock, systemClock } from '../core/clock.ts';
import { ChatOpsError, type ErrorCode, ValidationError } from '../core/errors.ts';
import {
  createUpstreamHttp,
  type UpstreamHttp,
  type UpstreamTimeouts,
  type VendorErrorInfo,
} from './http.ts';
import { createQueueingBudget, type QueueingBudget } from './queueingBudget.ts';
import type {
  CheckResult,
  CreateCallInput,
  CreatedCall,
  NccoAction,
  NumberLookup,
  SendSmsInput,
  SentSms,
  StartedVerification,
  StartVerificationInput,
  VerifyChannel,
  VonageClient,
} from './vonageContract.ts';
import { createApplicationJwtSigner } from './vonageJwt.ts';

/**
 * The communications client (Vonage-shaped): implements `VonageClient` from `./vonageContract.ts`
 * (its header has the error table). Verify v2 (start, check, cancel, next workflow), Messages
 * (SMS), Voice (create a call with an NCCO) and Number Insight basic, each on `createUpstreamHttp`
 * (undici, deadlines, zod-checked answers, coded and scrubbed errors).
 *
 * Credentials, as the service takes them: an application JWT (RS256 with `VONAGE_PRIVATE_KEY`,
 * a fresh `jti` per request, five-minute `exp`; see vonageJwt.ts) on Voice, which takes nothing
 * else, and by default on Verify v2 and Messages too: they also take HTTP Basic
 * (`api_key:api_secret`, `auth: { verify: 'basic' }`), but the vendor sends an application's
 * callbacks (verify events, message status) only for requests made with its JWT
 * (https://developer.vonage.com/en/getting-started/concepts/authentication). Number Insight:
 * Basic.
 *
 * Rate limits: one queueing budget per API per client instance (queueingBudget.ts), shared by every
 * caller of that instance: call creation 3/s (across all voice products), other voice requests
 * 15/s, Messages 75/s. A page storm waits its turn instead of meeting 429s; a 429 that comes
 * anyway (another client on the key) closes that API's budget for the `Retry-After` it names and
 * is thrown as SB_UPSTREAM_RATE_LIMITED for the durable retry.
 *
 * @example
 * const vonage = createVonageClient({ apiUrl, restUrl, apiKey, apiSecret, applicationId, privateKey, clock });
 * const { requestId } = await vonage.startVerification({ to: '447700900123', brand: 'Switchboard', clientRef: 'a1b2c3' });
 * await vonage.checkCode(requestId, '123456'); // throws SB_VALIDATION reason wrong_code when wrong
 */

/** The service's documented limits per API key (requests per second). */
export const VONAGE_RATE_LIMITS = {
  /** Voice: call creation, across all voice products. */
  callCreation: 3,
  /** Voice: every other request (read, transfer, talk…). */
  voiceOther: 15,
  /** Messages API. */
  messages: 75,
  /** The legacy SMS API (`/sms/json`; this client sends SMS through Messages). */
  legacySms: 30,
} as const;

/** Number Insight is retired on this day (https://developer.vonage.com/en/number-insight/overview). */
export const NUMBER_INSIGHT_SUNSET = new Date('2027-02-04T00:00:00.000Z');

export type VonageApi = 'verify' | 'messages' | 'callCreation' | 'voiceOther' | 'numberInsight';

export type VonageClientOptions = Readonly<{
  /** Verify, Messages, Voice; e.g. `https://api.nexmo.com`. */
  apiUrl: string;
  /** Number Insight (and the legacy APIs); e.g. `https://rest.nexmo.com`. */
  restUrl: string;
  apiKey: string;
  apiSecret: string;
  applicationId: string;
  /** PEM of the application's private key. */
  privateKey: string;
  dispatcher?: Dispatcher;
  clock?: Clock;
  timeouts?: UpstreamTimeouts;
  /** Requests per second per API; defaults from VONAGE_RATE_LIMITS (Verify and Number Insight: none). */
  limits?: Partial<Record<VonageApi, number>>;
  /** How a queued request waits for its turn (default a timer); tests move a manual clock here. */
  waitUntil?: (atMs: number) => Promise<void>;
  /** The longest a request queues for its budget before it is refused unsent. Default 60 s. */
  maxQueueMs?: number;
  /** Application JWT lifetime, default 300 s. */
  jwtTtlSeconds?: number;
  /**
   * The credential per API (Voice always takes the JWT, Number Insight Basic). Default `jwt`:
   * both APIs take Basic, but only requests made with the application's JWT get its callbacks
   * (verify events, message status): Basic is "for synchronous calls" in the Verify v2 document.
   */
  auth?: Readonly<{ verify?: 'basic' | 'jwt'; messages?: 'basic' | 'jwt' }>;
}>;

// ---------------------------------------------------------------- answers (fields we use)

const started = z.looseObject({ request_id: z.string().min(1).max(100) });
const checked = z.looseObject({ status: z.literal('completed') });
const sentMessage = z.looseObject({ message_uuid: z.string().min(1).max(100) });
const createdCall = z.looseObject({
  uuid: z.string().min(1).max(100),
  status: z.string(),
  conversation_uuid: z.string().min(1).max(200),
});
const niBasic = z.looseObject({
  status: z.union([z.number(), z.string()]),
  status_message: z.string().optional(),
  international_format_number: z.string().optional(),
  national_format_number: z.string().optional(),
  country_code: z.string().optional(),
  country_name: z.string().nullish(),
});
const empty = z.unknown();

// ---------------------------------------------------------------- input checks (everything is hostile)

/** E.164 digits without `+` (a leading `+` is tolerated and dropped). */
const NUMBER = /^[1-9]\d{6,14}$/;
const REQUEST_ID = /^[A-Za-z0-9-]{1,64}$/;
const CLIENT_REF = /^[A-Za-z0-9]{1,40}$/;

const phoneNumber = (value: unknown, field: string): string => {
  const v = typeof value === 'string' ? value.trim().replace(/^\+/, '') : '';
  if (!NUMBER.test(v)) {
    throw new ValidationError(
      `${field} must be a phone number in E.164 form, 7 to 15 digits (e.g. 447700900123)`,
      {
        details: { field },
      },
    );
  }
  return v;
};

const requestId = (value: unknown): string => {
  if (typeof value !== 'string' || !REQUEST_ID.test(value)) {
    throw new ValidationError('requestId must be the id the service returned when the verification started', {
      details: { field: 'requestId' },
    });
  }
  return value;
};

const integerIn = (value: number | undefined, fallback: number, min: number, max: number, field: string) => {
  const v = value ?? fallback;
  if (!Number.isInteger(v) || v < min || v > max) {
    throw new ValidationError(`${field} must be a whole number from ${min} to ${max}`, {
      details: { field },
    });
  }
  return v;
};

const checkNcco = (ncco: readonly NccoAction[]): NccoAction[] => {
  if (!Array.isArray(ncco) || ncco.length === 0 || ncco.length > 20) {
    throw new ValidationError('ncco must hold 1 to 20 actions', { details: { field: 'ncco' } });
  }
  return ncco.map((a, i) => {
    if (a.action === 'talk') {
      if (typeof a.text !== 'string' || a.text.trim() === '' || a.text.length > 1500) {
        throw new ValidationError(`ncco[${i}].text must be 1 to 1500 characters`, {
          details: { field: 'ncco' },
        });
      }
      return a;
    }
    if (a.action === 'input') {
      for (const url of a.eventUrl ?? []) {
        if (!/^https?:\/\//.test(url)) {
          throw new ValidationError(`ncco[${i}].eventUrl must be http(s) URLs`, {
            details: { field: 'ncco' },
          });
        }
      }
      return a;
    }
    throw new ValidationError(`ncco[${i}].action must be talk or input`, { details: { field: 'ncco' } });
  });
};

// ---------------------------------------------------------------- errors

/**
 * RFC 7807 problem details (`type`, `title`, `detail`, `instance`, `invalid_parameters`), the form
 * the newer APIs answer in; older bodies (`error_title`, `status_message`) are read too. `code` is
 * the `type` URL's fragment (`…/verify-v2#invalid-code` → `invalid-code`); `errors` lists the
 * refused fields as `name: reason`.
 */
export const parseVonageError = (json: unknown): VendorErrorInfo | undefined => {
  if (!json || typeof json !== 'object' || Array.isArray(json)) return undefined;
  const b = json as Record<string, unknown>;
  const str = (v: unknown) => (typeof v === 'string' && v.length > 0 ? v : undefined);
  const type = str(b.type);
  const code = type?.includes('#')
    ? type.slice(type.lastIndexOf('#') + 1)
    : (str(b.title) ?? str(b.error_title));
  const title = str(b.title) ?? str(b.error_title);
  const detail = str(b.detail) ?? str(b.status_message);
  const message = title && detail && title !== detail ? `${title}: ${detail}` : (detail ?? title);
  const params = Array.isArray(b.invalid_parameters) ? b.invalid_parameters : [];
  const errors = params
    .filter((p): p is Record<string, unknown> => !!p && typeof p === 'object')
    .map((p) => `${String(p.name ?? '?')}: ${String(p.reason ?? 'invalid')}`);
  if (code === undefined && message === undefined && errors.length === 0) return undefined;
  return { code, message, errors };
};

const AUTH_HINT = /unauthori[sz]ed|credential|jwt|token|api[_ ]?key|secret/i;

type Refined = { code: ErrorCode; reason: string; say: string };

/** The contract's table: how each answer reads for the operation that got it. */
const refineFor = (
  operation: string,
  status: number,
  vendorCode: string,
  vendorText: string,
): Refined | undefined => {
  if (operation === 'checkCode') {
    // The seed answers a wrong code 401, the vendor 400; a 401 that talks of credentials is auth.
    if (status === 400 || (status === 401 && !AUTH_HINT.test(`${vendorCode} ${vendorText}`))) {
      return { code: 'SB_VALIDATION', reason: 'wrong_code', say: 'the code is not right' };
    }
  }
  if (status === 402) {
    return { code: 'SB_UPSTREAM_REJECTED', reason: 'out_of_credit', say: 'the account is out of credit' };
  }
  if (status === 409) {
    if (vendorCode === 'concurrent' || /concurrent/i.test(vendorText)) {
      return {
        code: 'SB_ILLEGAL_STATE',
        reason: 'already_running',
        say: 'a verification is already running for this number',
      };
    }
    if (operation === 'cancelVerification') {
      const early = /30 ?s|too (early|soon)|not yet/i.test(vendorText);
      return early
        ? {
            code: 'SB_ILLEGAL_STATE',
            reason: 'cannot_cancel_yet',
            say: 'a verification can only be cancelled 30 seconds after it started',
          }
        : {
            code: 'SB_ILLEGAL_STATE',
            reason: 'cannot_cancel_now',
            say: 'a verification cannot be cancelled once its second step (the call) has started',
          };
    }
    return { code: 'SB_ILLEGAL_STATE', reason: 'start_again', say: 'this verification is over: start again' };
  }
  if (status === 410) {
    return { code: 'SB_ILLEGAL_STATE', reason: 'start_again', say: 'this verification is over: start again' };
  }
  return undefined;
};

const refineError = (err: unknown): never => {
  if (!(err instanceof ChatOpsError)) throw err;
  const d = err.details as Record<string, unknown>;
  const status = typeof d.status === 'number' ? d.status : undefined;
  const operation = typeof d.operation === 'string' ? d.operation : '';
  if (status === undefined) throw err;
  const vendorCode = d.vendorCode === undefined ? '' : String(d.vendorCode);
  const vendorErrors = Array.isArray(d.vendorErrors) ? (d.vendorErrors as string[]) : [];
  const vendorText = [d.vendorMessage, ...vendorErrors].filter((s) => typeof s === 'string').join(' ');
  if (status === 422) {
    const field = vendorErrors[0]?.split(':')[0]?.trim() || undefined;
    throw new ChatOpsError(
      'SB_VALIDATION',
      field ? `${err.message} (the service refused ${field})` : err.message,
      { cause: err.cause, details: { ...d, reason: 'invalid_field', ...(field ? { field } : {}) } },
    );
  }
  const refined = refineFor(operation, status, vendorCode, vendorText);
  if (!refined) throw err;
  throw new ChatOpsError(refined.code, `vonage ${operation}: ${refined.say} (HTTP ${status})`, {
    cause: err.cause,
    details: { ...d, reason: refined.reason, retryable: false },
  });
};

// ---------------------------------------------------------------- the client

/** The contract, plus what the budgets hold now (for a gauge, and for tests). */
export type VonageClientWithBudgets = VonageClient &
  Readonly<{
    /** Requests waiting for their turn. */
    queued(api?: VonageApi): number;
    /** Requests sent whose answer is not in yet. */
    inFlight(api?: VonageApi): number;
    /**
     * Ends a call now, ringing or answered (Voice `PUT /v1/calls/{uuid}` `hangup`, on the 15/s
     * budget): a page nobody needs any more. A call that is already over, or unknown, is done.
     */
    hangUpCall(uuid: string): Promise<void>;
  }>;

export const createVonageClient = (options: VonageClientOptions): VonageClientWithBudgets => {
  const clock = options.clock ?? systemClock;
  const nowMs = () => clock.now().getTime();
  const basic = `Basic ${Buffer.from(`${options.apiKey}:${options.apiSecret}`).toString('base64')}`;
  const secrets = [options.apiKey, options.apiSecret, options.privateKey];
  const common = {
    vendor: 'vonage' as const,
    ...(options.dispatcher ? { dispatcher: options.dispatcher } : {}),
    clock,
    ...(options.timeouts ? { timeouts: options.timeouts } : {}),
    parseVendorError: parseVonageError,
    // The per-second windows reopen fast; a 429 without headers waits a second, not a minute.
    defaultRetryAfterMs: 1_000,
    secrets,
  };
  /** Verify, Messages and Voice: the credential goes per request (Basic or a fresh JWT). */
  const api = createUpstreamHttp({
    ...common,
    baseUrl: options.apiUrl,
    defaultHeaders: { accept: 'application/json' },
  });
  const rest = createUpstreamHttp({
    ...common,
    baseUrl: options.restUrl,
    defaultHeaders: { authorization: basic, accept: 'application/json' },
  });
  const signJwt = createApplicationJwtSigner({
    applicationId: options.applicationId,
    privateKey: options.privateKey,
    now: () => clock.now(),
    ...(options.jwtTtlSeconds === undefined ? {} : { ttlSeconds: options.jwtTtlSeconds }),
  });

  const defaults: Record<VonageApi, number> = {
    verify: Infinity,
    messages: VONAGE_RATE_LIMITS.messages,
    callCreation: VONAGE_RATE_LIMITS.callCreation,
    voiceOther: VONAGE_RATE_LIMITS.voiceOther,
    numberInsight: Infinity,
  };
  const budgets = Object.fromEntries(
    (Object.keys(defaults) as VonageApi[]).map((name) => [
      name,
      createQueueingBudget({
        name,
        perSecond: options.limits?.[name] ?? defaults[name],
        now: nowMs,
        ...(options.waitUntil ? { waitUntil: options.waitUntil } : {}),
        ...(options.maxQueueMs === undefined ? {} : { maxWaitMs: options.maxQueueMs }),
      }),
    ]),
  ) as Record<VonageApi, QueueingBudget>;

  /** A 429 that came anyway (another client on the key) closes the API's budget for Retry-After. */
  const closeOn429 = (budget: QueueingBudget, e: unknown) => {
    const d = (e as { code?: unknown; details?: { retryAfterMs?: unknown } }) ?? {};
    if (d.code === 'SB_UPSTREAM_RATE_LIMITED' && typeof d.details?.retryAfterMs === 'number') {
      budget.exhaustUntil(nowMs() + d.details.retryAfterMs);
    }
  };

  const authFor: Record<'verify' | 'messages', 'basic' | 'jwt'> = {
    verify: options.auth?.verify ?? 'jwt',
    messages: options.auth?.messages ?? 'jwt',
  };

  /**
   * Waits for the API's budget, sends, closes the budget on a 429, maps the errors. A JWT is
   * signed before the request queues (the queue is at most a minute, the token lives five), so
   * nothing slow sits between its turn and the request leaving.
   */
  const call = async <T>(
    budgetName: VonageApi,
    http: UpstreamHttp,
    auth: 'basic' | 'jwt' | 'default',
    req: Parameters<UpstreamHttp['request']>[0] & { schema: z.ZodType<T> },
  ): Promise<T> => {
    const authorization = auth === 'jwt' ? `Bearer ${await signJwt()}` : auth === 'basic' ? basic : undefined;
    const budget = budgets[budgetName];
    const release = await budget.take(req.operation);
    try {
      const headers = { ...req.headers, ...(authorization === undefined ? {} : { authorization }) };
      return (await http.request({ ...req, headers })).data;
    } catch (e) {
      closeOn429(budget, e);
      return refineError(e);
    } finally {
      release();
    }
  };

  const startVerification = async (input: StartVerificationInput): Promise<StartedVerification> => {
    const to = phoneNumber(input.to, 'to');
    const brand = typeof input.brand === 'string' ? input.brand.trim() : '';
    if (brand.length === 0 || brand.length > 18 || /[/{}:$]/.test(brand)) {
      throw new ValidationError('brand must be 1 to 18 characters, without / { } : $', {
        details: { field: 'brand' },
      });
    }
    const workflow: readonly VerifyChannel[] = input.workflow ?? ['sms', 'voice'];
    if (
      workflow.length === 0 ||
      workflow.length > 3 ||
      workflow.some((c) => c !== 'sms' && c !== 'voice') ||
      new Set(workflow).size !== workflow.length
    ) {
      throw new ValidationError('workflow must list sms and/or voice, each once', {
        details: { field: 'workflow' },
      });
    }
    const codeLength = integerIn(input.codeLength, 6, 4, 10, 'codeLength');
    const channelTimeout = integerIn(input.channelTimeoutSeconds, 300, 60, 900, 'channelTimeoutSeconds');
    if (input.locale !== undefined && !/^[a-z]{2,3}-[a-z]{2}$/i.test(input.locale)) {
      throw new ValidationError('locale must look like en-gb', { details: { field: 'locale' } });
    }
    if (typeof input.clientRef !== 'string' || !CLIENT_REF.test(input.clientRef)) {
      throw new ValidationError('clientRef must be 1 to 40 letters and digits (the service refuses others)', {
        details: { field: 'clientRef' },
      });
    }
    const data = await call('verify', api, authFor.verify, {
      operation: 'startVerification',
      method: 'POST',
      path: '/v2/verify',
      body: {
        brand,
        workflow: workflow.map((channel) => ({ channel, to })),
        code_length: codeLength,
        channel_timeout: channelTimeout,
        ...(input.locale === undefined ? {} : { locale: input.locale.toLowerCase() }),
        client_ref: input.clientRef,
      },
      schema: started,
    });
    return { requestId: data.request_id };
  };

  const checkCode = async (id: string, code: string): Promise<CheckResult> => {
    const rid = requestId(id);
    if (typeof code !== 'string' || !/^[A-Za-z0-9]{4,10}$/.test(code.trim())) {
      // Checked here, not upstream: a malformed code costs none of the three attempts.
      throw new ValidationError('the code must be 4 to 10 letters or digits', {
        details: { field: 'code', reason: 'malformed_code' },
      });
    }
    await call('verify', api, authFor.verify, {
      operation: 'checkCode',
      method: 'POST',
      path: `/v2/verify/${encodeURIComponent(rid)}`,
      body: { code: code.trim() },
      schema: checked,
    });
    return { status: 'completed' };
  };

  const cancelVerification = async (id: string): Promise<void> => {
    const rid = requestId(id);
    await call('verify', api, authFor.verify, {
      operation: 'cancelVerification',
      method: 'DELETE',
      path: `/v2/verify/${encodeURIComponent(rid)}`,
      schema: empty,
    });
  };

  const nextWorkflow = async (id: string): Promise<void> => {
    const rid = requestId(id);
    await call('verify', api, authFor.verify, {
      operation: 'nextWorkflow',
      method: 'POST',
      path: `/v2/verify/${encodeURIComponent(rid)}/next_workflow`,
      schema: empty,
    });
  };

  const sendSms = async (input: SendSmsInput): Promise<SentSms> => {
    const to = phoneNumber(input.to, 'to');
    const from =
      typeof input.from === 'string' && /^[A-Za-z0-9 ]{1,11}$/.test(input.from) && /[A-Za-z]/.test(input.from)
        ? input.from // an alphanumeric sender id
        : phoneNumber(input.from, 'from');
    if (typeof input.text !== 'string' || input.text.length === 0 || input.text.length > 3200) {
      throw new ValidationError('text must be 1 to 3200 characters', { details: { field: 'text' } });
    }
    if (typeof input.clientRef !== 'string' || input.clientRef.length === 0 || input.clientRef.length > 40) {
      throw new ValidationError('clientRef must be 1 to 40 characters', { details: { field: 'clientRef' } });
    }
    const data = await call('messages', api, authFor.messages, {
      operation: 'sendSms',
      method: 'POST',
      path: '/v1/messages',
      body: { message_type: 'text', channel: 'sms', to, from, text: input.text, client_ref: input.clientRef },
      schema: sentMessage,
    });
    return { messageUuid: data.message_uuid };
  };

  const createCall = async (input: CreateCallInput): Promise<CreatedCall> => {
    const to = phoneNumber(input.to, 'to');
    const from = phoneNumber(input.from, 'from');
    const ncco = checkNcco(input.ncco);
    if (input.eventUrl !== undefined && !/^https?:\/\//.test(input.eventUrl)) {
      throw new ValidationError('eventUrl must be an http(s) URL', { details: { field: 'eventUrl' } });
    }
    const ringing =
      input.ringingSeconds === undefined
        ? undefined
        : integerIn(input.ringingSeconds, 60, 1, 120, 'ringingSeconds');
    const data = await call('callCreation', api, 'jwt', {
      operation: 'createCall',
      method: 'POST',
      path: '/v1/calls',
      body: {
        to: [{ type: 'phone', number: to }],
        from: { type: 'phone', number: from },
        ncco,
        ...(input.eventUrl === undefined ? {} : { event_url: [input.eventUrl], event_method: 'POST' }),
        ...(ringing === undefined ? {} : { ringing_timer: ringing }),
      },
      schema: createdCall,
    });
    return { uuid: data.uuid, conversationUuid: data.conversation_uuid, status: data.status };
  };

  const hangUpCall = async (uuid: string): Promise<void> => {
    if (typeof uuid !== 'string' || !/^[A-Za-z0-9-]{1,100}$/.test(uuid)) {
      throw new ValidationError('uuid must be the id the service returned for the call', {
        details: { field: 'uuid' },
      });
    }
    try {
      await call('voiceOther', api, 'jwt', {
        operation: 'hangUpCall',
        method: 'PUT',
        path: `/v1/calls/${encodeURIComponent(uuid)}`,
        body: { action: 'hangup' },
        schema: empty,
      });
    } catch (e) {
      if ((e as { code?: unknown }).code === 'SB_NOT_FOUND') return;
      throw e;
    }
  };

  const lookupNumber = async (number: string): Promise<NumberLookup | null> => {
    const n = phoneNumber(number, 'number');
    // Retired: not even asked (the answer would be 404/410).
    if (nowMs() >= NUMBER_INSIGHT_SUNSET.getTime()) return null;
    try {
      const data = await call('numberInsight', rest, 'default', {
        operation: 'lookupNumber',
        method: 'GET',
        path: '/ni/basic/json',
        query: { number: n },
        schema: niBasic,
        timeoutMs: 5_000,
      });
      if (Number(data.status) !== 0 || !data.international_format_number || !data.country_code) return null;
      return {
        international: data.international_format_number.replace(/^\+/, ''),
        national: data.national_format_number ?? data.international_format_number,
        countryCode: data.country_code,
        countryName: data.country_name ?? null,
      };
    } catch {
      // Optional by design: a lookup that fails never blocks a verification.
      return null;
    }
  };

  const count = (what: 'queued' | 'inFlight') => (name?: VonageApi) =>
    name === undefined ? Object.values(budgets).reduce((n, b) => n + b[what](), 0) : budgets[name][what]();

  return {
    startVerification,
    checkCode,
    cancelVerification,
    nextWorkflow,
    sendSms,
    createCall,
    lookupNumber,
    hangUpCall,
    queued: count('queued'),
    inFlight: count('inFlight'),
  };
};
