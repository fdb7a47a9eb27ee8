import { randomBytes } from 'node:crypto';
import { EventEmitter } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import type { ContractViolation, Simulator } from '../simulator.ts';
import { checkMessage, checkViewContent, type Refusal } from './blockKit.ts';
import { encodeTyped, type TypedDirectory } from './typed.ts';

/**
 * A fake of the Slack Web API: a real loopback HTTP server (never an in-process stub) that keeps
 * workspace state, records every call and can be told to fail. Point the bot at it with
 * `fake.env()` (`SLACK_API_URL`, `SLACK_BOT_TOKEN`, `SLACK_SIGNING_SECRET`). For the sandbox and
 * the tests: the bot never imports it. It is a {@link Simulator} (../simulator.ts).
 *
 * Methods: auth.test, chat.postMessage, chat.update, chat.postEphemeral, chat.delete,
 * views.open, views.update, views.push, views.publish, conversations.open, conversations.history,
 * conversations.members, users.info, users.lookupByEmail; plus `response_url` posts to URLs it
 * hands out (`fake.responseUrl(...)`).
 *
 * Platform behaviour it keeps: trigger ids expire after 3 s and work once
 * (`expired_trigger_id`, `exchanged_trigger_id`; https://api.slack.com/docs/triggers); a
 * response_url takes 5 posts within 30 minutes
 * (https://docs.slack.dev/interactivity/handling-user-interaction); views over 250 kB are refused
 * (`view_too_large`, in views.open's error list); 429 answers carry `Retry-After` (seconds) and
 * `{"ok":false,"error":"ratelimited"}` (https://api.slack.com/docs/rate-limits). Messages and views
 * Slack would refuse are refused with Slack's error names and `response_metadata.messages`
 * (`invalid_blocks`, `invalid_blocks_format`, `msg_too_long` on chat.* and response_url posts —
 * the hook answers 400 —, `invalid_arguments` on views.*): Block Kit's limits, one table in
 * ./blockKit.ts. Text people type (`postAsUser`; slash commands built with ./signing.ts) is
 * encoded as Slack sends it (./typed.ts).
 *
 * State is inspectable for the sandbox console (messages per channel with ts, blocks and
 * in-place updates; ephemerals; views; App Home) and every change is emitted on `fake.events`
 * as a `change` event. The console also acts as people do through `postAsUser`,
 * `recordEphemeral` (answers Slack shows without an API call), `replaceView`/`pushView`
 * (`response_action` answers), and keeps the workspace across restarts with
 * `exportState`/`importState`.
 *
 * @example
 * const fake = await startFakeSlack({ botToken: 'xoxb-test' });
 * fake.failNext('chat.update', { status: 429, retryAfter: 7 });
 * fake.failNext('chat.postMessage', { status: 429, retryAfter: 2, channel: 'C0INCIDENTS' }); // that channel only
 * ...; expect(fake.messages('C0INCIDENTS')[0]?.blocks).toEqual(...);
 * await fake.stop();
 */

export type FakeUser = {
  id: string;
  name: string;
  real_name: string;
  email?: string;
  tz?: string;
  is_bot?: boolean;
  deleted?: boolean;
};

export type FakeChannel = {
  id: string;
  name: string;
  is_im: boolean;
  /** For DMs: the other party. */
  user?: string;
  /** Members; ephemerals to non-members fail with `user_not_in_channel`. Undefined = everyone. */
  members?: string[];
  /** A private channel: reading its history needs `groups:history` (public: `channels:history`). */
  is_private?: boolean;
  /** Archived (conversations.archive): posts and updates there are refused with `is_archived`. */
  is_archived?: boolean;
  /** Who created it (conversations.create: the bot). */
  creator?: string;
};

/** Message metadata (https://api.slack.com/metadata/using), kept with the message as posted. */
export type FakeMessageMetadata = { event_type: string; event_payload: Record<string, unknown> };

export type FakeMessage = {
  channel: string;
  ts: string;
  user: string;
  bot_id: string;
  text: string;
  blocks: unknown[] | undefined;
  thread_ts: string | undefined;
  /** How many times chat.update (or a replace_original response) changed it. */
  edits: number;
  /** Previous versions, oldest first. */
  history: Array<{ text: string; blocks: unknown[] | undefined }>;
  deleted: boolean;
  /** `metadata` given to chat.postMessage; returned only to `include_all_metadata` reads. */
  metadata?: FakeMessageMetadata | undefined;
  /**
   * `api` for chat.postMessage, `response_url` for in-channel responses, `person` for a message a
   * person typed (`postAsUser`, the sandbox console).
   */
  via: 'api' | 'response_url' | 'person';
};

export type FakeEphemeral = {
  channel: string;
  user: string;
  message_ts: string;
  text: string;
  blocks: unknown[] | undefined;
  /**
   * `api` for chat.postEphemeral, `response_url` for responses; `ack` for the body of the app's
   * HTTP answer to a slash command, and `slackbot` for Slack's own notices (e.g. "failed with the
   * error operation_timeout"), both recorded with `recordEphemeral` (the sandbox console).
   */
  via: 'api' | 'response_url' | 'ack' | 'slackbot';
  /** How many times a `replace_original` response replaced it. */
  edits?: number;
};

export type FakeView = {
  id: string;
  user: string;
  type: string;
  hash: string;
  view: Record<string, unknown>;
  /** `modal` views opened via trigger; `home` via views.publish. */
  kind: 'modal' | 'home';
  updates: number;
};

export type FakeCall = {
  method: string;
  params: Record<string, unknown>;
  /** Whether a valid bot token came with the call (the token itself is not kept). */
  authed: boolean;
  status: number;
  /** Slack's `error` when ok:false. */
  error: string | undefined;
  at: number;
};

export type ResponsePost = {
  responseUrlId: string;
  body: Record<string, unknown>;
  status: number;
  at: number;
};

export type Behaviour = (
  | { status: 429; retryAfter: number }
  /**
   * With `afterApply`, the call takes effect first and then the answer is a 5xx (Slack did it; its
   * edge lost the answer): the caller cannot tell it from a call that never landed.
   */
  | { status: 500 | 502 | 503 | 504; afterApply?: boolean }
  | { error: string }
  /**
   * Answers after `delayMs`; with `afterApply`, the call takes effect first (Slack did it, its
   * answer is late), e.g. to kill the app between a post and its record.
   */
  | { delayMs: number; afterApply?: boolean }
) & {
  /** Only calls naming this `channel` (chat.postMessage's channel, a user id for a DM): others are not affected. */
  channel?: string;
};

export type FakeChange =
  | { kind: 'message.posted'; message: FakeMessage }
  | { kind: 'message.updated'; message: FakeMessage }
  | { kind: 'message.deleted'; message: FakeMessage }
  | { kind: 'ephemeral.posted'; ephemeral: FakeEphemeral }
  /** A `replace_original` through a slash command's response_url replaced its answer in place. */
  | { kind: 'ephemeral.updated'; ephemeral: FakeEphemeral }
  | { kind: 'view.opened' | 'view.updated' | 'home.published'; view: FakeView }
  | { kind: 'call'; call: FakeCall };

/** What `exportState` returns and `importState` takes (plain JSON). */
export type FakeSlackState = {
  channels: FakeChannel[];
  messages: FakeMessage[];
  ephemerals: FakeEphemeral[];
  views: FakeView[];
  homes: FakeView[];
  counters: { ts: number; id: number };
};

export type FakeSlackOptions = Readonly<{
  botToken?: string;
  /**
   * The app's signing secret, which Slack signs what it sends the app with; `env()` hands it to
   * the bot (default: random). Whoever posts to the bot as Slack signs with it.
   */
  signingSecret?: string;
  teamId?: string;
  teamName?: string;
  botUserId?: string;
  botId?: string;
  users?: FakeUser[];
  channels?: FakeChannel[];
  /** Milliseconds clock for trigger / response_url expiry (tests move it). Default Date.now. */
  now?: () => number;
  /** Trigger ids unknown to the fake are accepted (as if just issued). Default true. */
  acceptUnknownTriggers?: boolean;
  /**
   * The bot token's scopes. Undefined = every scope. Modelled for conversations.history
   * (`channels:history`, `groups:history`, `im:history`) and conversations.members
   * (`channels:read`, `groups:read`): without it Slack answers `missing_scope`.
   */
  scopes?: readonly string[];
  /**
   * How long (on `now`) a posted message takes to show in conversations.history: Slack does not
   * promise that a read right after a post sees it. Default 0 (at once); `setHistoryLag` changes it.
   */
  historyLagMs?: number;
  port?: number;
}>;

/** conversations.history's page size: default 100, at most 999 (https://api.slack.com/methods/conversations.history). */
export const HISTORY_DEFAULT_LIMIT = 100;
export const HISTORY_MAX_LIMIT = 999;

export const TRIGGER_TTL_MS = 3_000;
export const RESPONSE_URL_MAX_USES = 5;
export const RESPONSE_URL_TTL_MS = 30 * 60_000;
export const VIEW_MAX_BYTES = 250_000;

const DEFAULT_USERS: FakeUser[] = [
  {
    id: 'U0ALICE',
    name: 'alice',
    real_name: 'Alice Example',
    email: 'alice@example.com',
    tz: 'Europe/Berlin',
  },
  { id: 'U0BOB', name: 'bob', real_name: 'Bob Example', email: 'bob@example.com', tz: 'America/New_York' },
];
const DEFAULT_CHANNELS: FakeChannel[] = [
  { id: 'C0INCIDENTS', name: 'incidents', is_im: false },
  { id: 'C0GENERAL', name: 'general', is_im: false },
];

type Handler = (params: Record<string, unknown>) => Record<string, unknown>;

/** An `ok: false` answer (also thrown by `replaceView`/`pushView` when Slack would refuse the view). */
export class SlackApiError extends Error {
  readonly slackError: string;
  readonly extra: Record<string, unknown>;
  constructor(slackError: string, extra: Record<string, unknown> = {}) {
    super(slackError);
    this.slackError = slackError;
    this.extra = extra;
  }
}

/**
 * Errors the real Slack answers to calls that break the Web API's contract (unknown method, no or
 * a wrong token, malformed arguments, an oversized view): what `contractViolations()` reports.
 * Refusals a correct app meets in normal use (an expired trigger, a user not found, a rate limit)
 * are not violations, nor is anything a test injected with `failNext`/`setBehaviour`.
 */
const CONTRACT_ERRORS = new Set([
  'unknown_method',
  'not_authed',
  'invalid_auth',
  'invalid_arguments',
  'invalid_blocks',
  'invalid_blocks_format',
  'msg_too_long',
  'invalid_metadata_format',
  'users_list_not_supplied',
  'view_too_large',
]);

export class FakeSlack implements Simulator<FakeSlackState> {
  readonly name = 'slack';
  readonly events = new EventEmitter();
  readonly botToken: string;
  readonly signingSecret: string;
  readonly teamId: string;
  readonly teamName: string;
  readonly botUserId: string;
  readonly botId: string;
  readonly users = new Map<string, FakeUser>();
  readonly channels = new Map<string, FakeChannel>();
  readonly calls: FakeCall[] = [];
  readonly responsePosts: ResponsePost[] = [];
  /** response_url posts Slack refused (invalid blocks, text too long), with its answer. */
  readonly refusedResponses: Array<{ responseUrlId: string; error: string; extra: Record<string, unknown> }> =
    [];
  readonly ephemerals: FakeEphemeral[] = [];
  readonly views = new Map<string, FakeView>();
  readonly homes = new Map<string, FakeView>();
  readonly now: () => number;
  readonly acceptUnknownTriggers: boolean;
  readonly scopes: ReadonlySet<string> | undefined;

  private readonly messagesByChannel = new Map<string, FakeMessage[]>();
  private readonly triggers = new Map<string, { issuedAt: number; used: boolean; user?: string }>();
  private readonly responseUrls = new Map<
    string,
    {
      channel: string;
      user: string;
      messageTs: string | undefined;
      issuedAt: number;
      uses: number;
      /** A slash command's URL: the answer it last showed (the ack, or a response), to replace. */
      ephemeral?: FakeEphemeral;
    }
  >();
  private readonly once = new Map<string, Behaviour[]>();
  /** When each message was posted (on `now`), for the history lag. */
  private readonly postedAt = new WeakMap<FakeMessage, number>();
  private historyLagMs = 0;
  private readonly always = new Map<string, Behaviour>();
  private readonly handlers: Record<string, Handler>;
  private readonly injected = new WeakSet<FakeCall>();
  private tsCounter = 0;
  private idCounter = 0;
  private server: Server | undefined;
  private baseUrl = '';

  constructor(options: FakeSlackOptions = {}) {
    this.botToken = options.botToken ?? 'xoxb-fake-slack-token';
    this.signingSecret = options.signingSecret ?? randomBytes(24).toString('hex');
    this.teamId = options.teamId ?? 'T0SWITCH';
    this.teamName = options.teamName ?? 'Switchboard Demo';
    this.botUserId = options.botUserId ?? 'U0SWITCHBOT';
    this.botId = options.botId ?? 'B0SWITCHBOT';
    this.now = options.now ?? Date.now;
    this.acceptUnknownTriggers = options.acceptUnknownTriggers ?? true;
    this.scopes = options.scopes ? new Set(options.scopes) : undefined;
    this.historyLagMs = options.historyLagMs ?? 0;
    for (const u of options.users ?? DEFAULT_USERS) this.users.set(u.id, { ...u });
    this.users.set(this.botUserId, {
      id: this.botUserId,
      name: 'switchboard',
      real_name: 'Switchboard',
      is_bot: true,
    });
    for (const c of options.channels ?? DEFAULT_CHANNELS) this.channels.set(c.id, { ...c });
    this.events.setMaxListeners(100);
    this.handlers = {
      'auth.test': () => ({
        url: 'https://switchboard-demo.slack.com/',
        team: this.teamName,
        user: 'switchboard',
        team_id: this.teamId,
        user_id: this.botUserId,
        bot_id: this.botId,
        is_enterprise_install: false,
      }),
      'chat.postMessage': (p) => {
        refuse(checkMessage(p['text'], blocks(p['blocks'])));
        const channel = this.resolveChannel(p['channel']);
        if (channel.is_archived) throw new SlackApiError('is_archived');
        const message = this.addMessage(
          channel.id,
          str(p['text']),
          blocks(p['blocks']),
          opt(p['thread_ts']),
          'api',
          metadataOf(p['metadata']),
        );
        return { channel: channel.id, ts: message.ts, message: publicMessage(message) };
      },
      'chat.update': (p) => {
        refuse(checkMessage(p['text'], blocks(p['blocks'])));
        const message = this.findMessage(str(p['channel']), str(p['ts']));
        if (this.channels.get(message.channel)?.is_archived) throw new SlackApiError('is_archived');
        this.editMessage(
          message,
          p['text'] === undefined ? message.text : str(p['text']),
          blocks(p['blocks']) ?? message.blocks,
        );
        return {
          channel: message.channel,
          ts: message.ts,
          text: message.text,
          message: publicMessage(message),
        };
      },
      'chat.delete': (p) => {
        const message = this.findMessage(str(p['channel']), str(p['ts']));
        message.deleted = true;
        this.emit({ kind: 'message.deleted', message });
        return { channel: message.channel, ts: message.ts };
      },
      'chat.postEphemeral': (p) => {
        refuse(checkMessage(p['text'], blocks(p['blocks'])));
        const channel = this.resolveChannel(p['channel']);
        const user = this.requireUser(p['user']);
        if (channel.members && !channel.members.includes(user.id))
          throw new SlackApiError('user_not_in_channel');
        const e = this.addEphemeral(channel.id, user.id, str(p['text']), blocks(p['blocks']), 'api');
        return { message_ts: e.message_ts };
      },
      'views.open': (p) => {
        const view = this.checkView(p['view']);
        const triggerUser = this.useTrigger(str(p['trigger_id']));
        const user = str(p['user_id'] ?? '') || triggerUser || 'U0UNKNOWN';
        const v: FakeView = {
          id: this.newId('V'),
          user,
          type: str(view['type'] ?? 'modal'),
          hash: this.newHash(),
          view,
          kind: 'modal',
          updates: 0,
        };
        this.views.set(v.id, v);
        this.emit({ kind: 'view.opened', view: v });
        return { view: publicView(v, this.teamId) };
      },
      // Pushes a modal onto the stack of the one open (the fake keeps no stack: a new modal view).
      'views.push': (p) => {
        const view = this.checkView(p['view']);
        const triggerUser = this.useTrigger(str(p['trigger_id']));
        const v: FakeView = {
          id: this.newId('V'),
          user: triggerUser ?? 'U0UNKNOWN',
          type: str(view['type'] ?? 'modal'),
          hash: this.newHash(),
          view,
          kind: 'modal',
          updates: 0,
        };
        this.views.set(v.id, v);
        this.emit({ kind: 'view.opened', view: v });
        return { view: publicView(v, this.teamId) };
      },
      'views.update': (p) => {
        const id = opt(p['view_id']);
        const external = opt(p['external_id']);
        const v = id
          ? this.views.get(id)
          : [...this.views.values()].find(
              (x) => x.view['external_id'] === external && external !== undefined,
            );
        if (!v) throw new SlackApiError('not_found');
        const hash = opt(p['hash']);
        if (hash !== undefined && hash !== v.hash) throw new SlackApiError('hash_conflict');
        v.view = this.checkView(p['view']);
        v.hash = this.newHash();
        v.updates++;
        this.emit({ kind: 'view.updated', view: v });
        return { view: publicView(v, this.teamId) };
      },
      'views.publish': (p) => {
        const user = this.requireUser(p['user_id']);
        const view = this.checkView(p['view']);
        if (view['type'] !== 'home') throw new SlackApiError('invalid_arguments');
        const existing = this.homes.get(user.id);
        const v: FakeView = {
          id: existing?.id ?? this.newId('V'),
          user: user.id,
          type: 'home',
          hash: this.newHash(),
          view,
          kind: 'home',
          updates: existing ? existing.updates + 1 : 0,
        };
        this.homes.set(user.id, v);
        this.emit({ kind: 'home.published', view: v });
        return { view: publicView(v, this.teamId) };
      },
      'conversations.open': (p) => {
        const users = str(p['users'] ?? '')
          .split(',')
          .map((u) => u.trim())
          .filter(Boolean);
        if (users.length === 0) throw new SlackApiError('users_list_not_supplied');
        if (users.length > 1)
          throw new SlackApiError('not_implemented', { detail: 'the fake opens 1:1 DMs only' });
        const user = this.requireUser(users[0]);
        return { channel: { id: this.dmChannel(user.id).id } };
      },
      'conversations.history': (p) => {
        const channel = this.resolveChannel(p['channel']);
        const needed = channel.is_im
          ? 'im:history'
          : channel.is_private
            ? 'groups:history'
            : 'channels:history';
        if (this.scopes && !this.scopes.has(needed)) {
          throw new SlackApiError('missing_scope', { needed, provided: [...this.scopes].join(',') });
        }
        const limit = Math.min(
          Math.max(Number(p['limit'] ?? HISTORY_DEFAULT_LIMIT) || HISTORY_DEFAULT_LIMIT, 1),
          HISTORY_MAX_LIMIT,
        );
        const inclusive = p['inclusive'] === true || p['inclusive'] === 'true' || p['inclusive'] === '1';
        const oldest = opt(p['oldest']);
        const latest = opt(p['latest']);
        const withMetadata =
          p['include_all_metadata'] === true ||
          p['include_all_metadata'] === 'true' ||
          p['include_all_metadata'] === '1';
        // Top-level messages (thread replies are conversations.replies'), newest first, once visible.
        const visibleFrom = this.now() - this.historyLagMs;
        const inRange = (this.messagesByChannel.get(channel.id) ?? [])
          .filter((m) => !m.deleted && (m.thread_ts === undefined || m.thread_ts === m.ts))
          .filter((m) => (this.postedAt.get(m) ?? 0) <= visibleFrom)
          .filter(
            (m) =>
              oldest === undefined ||
              (inclusive ? Number(m.ts) >= Number(oldest) : Number(m.ts) > Number(oldest)),
          )
          .filter(
            (m) =>
              latest === undefined ||
              (inclusive ? Number(m.ts) <= Number(latest) : Number(m.ts) < Number(latest)),
          )
          .reverse();
        const page = inRange.slice(0, limit);
        return {
          messages: page.map((m) => ({
            ...publicMessage(m),
            ...(withMetadata && m.metadata ? { metadata: m.metadata } : {}),
          })),
          has_more: inRange.length > page.length,
          pin_count: 0,
        };
      },
      // Issue 12: who may decide time off sent to the HR channel. Undefined members = every user.
      'conversations.members': (p) => {
        const channel = this.resolveChannel(p['channel']);
        const needed = channel.is_private ? 'groups:read' : 'channels:read';
        if (this.scopes && !this.scopes.has(needed)) {
          throw new SlackApiError('missing_scope', { needed, provided: [...this.scopes].join(',') });
        }
        const members =
          channel.members ??
          (channel.is_im
            ? [channel.user ?? '', this.botUserId]
            : [...this.users.values()].filter((u) => !u.deleted).map((u) => u.id));
        return { members: members.filter(Boolean), response_metadata: { next_cursor: '' } };
      },
      // Issue 22 item 7: channels on demand (https://api.slack.com/methods/conversations.create,
      // …invite, …archive). Public channels need `channels:manage` (private: `groups:write`).
      'conversations.create': (p) => {
        const isPrivate = p['is_private'] === true || p['is_private'] === 'true';
        this.needScope(isPrivate ? 'groups:write' : 'channels:manage');
        const name = str(p['name'] ?? '');
        const problem = channelNameProblem(name);
        if (problem) throw new SlackApiError(problem);
        if ([...this.channels.values()].some((c) => !c.is_im && c.name === name)) {
          throw new SlackApiError('name_taken');
        }
        const channel: FakeChannel = {
          id: this.newId(isPrivate ? 'G' : 'C'),
          name,
          is_im: false,
          members: [this.botUserId],
          creator: this.botUserId,
          ...(isPrivate ? { is_private: true } : {}),
        };
        this.channels.set(channel.id, channel);
        return { channel: publicChannel(channel, this.now()) };
      },
      'conversations.invite': (p) => {
        const channel = this.resolveChannel(p['channel']);
        this.needScope(channel.is_private ? 'groups:write' : 'channels:manage');
        if (channel.is_im) throw new SlackApiError('method_not_supported_for_channel_type');
        if (channel.is_archived) throw new SlackApiError('is_archived');
        const users = str(p['users'] ?? '')
          .split(',')
          .map((u) => u.trim())
          .filter(Boolean);
        if (users.length === 0) throw new SlackApiError('no_user');
        if (users.length > 1000) throw new SlackApiError('too_many_users');
        if (channel.members && !channel.members.includes(this.botUserId))
          throw new SlackApiError('not_in_channel');
        for (const id of users) {
          if (id === this.botUserId) throw new SlackApiError('cant_invite_self');
          const user = this.users.get(id);
          if (!user || user.deleted) throw new SlackApiError('user_not_found');
          if (user.is_bot) throw new SlackApiError('cant_invite');
        }
        const members = channel.members ?? [...this.users.keys()];
        if (users.every((u) => members.includes(u))) throw new SlackApiError('already_in_channel');
        channel.members = [...members, ...users.filter((u) => !members.includes(u))];
        return { channel: publicChannel(channel, this.now()) };
      },
      'conversations.archive': (p) => {
        const channel = this.resolveChannel(p['channel']);
        this.needScope(channel.is_private ? 'groups:write' : 'channels:manage');
        if (channel.is_im) throw new SlackApiError('method_not_supported_for_channel_type');
        if (channel.is_archived) throw new SlackApiError('already_archived');
        if (channel.members && !channel.members.includes(this.botUserId))
          throw new SlackApiError('not_in_channel');
        channel.is_archived = true;
        return {};
      },
      'users.info': (p) => {
        const user = this.requireUser(p['user']);
        return { user: publicUser(user, this.teamId) };
      },
      'users.lookupByEmail': (p) => {
        const email = str(p['email']).toLowerCase();
        const user = [...this.users.values()].find((u) => u.email?.toLowerCase() === email && !u.deleted);
        if (!user) throw new SlackApiError('users_not_found');
        return { user: publicUser(user, this.teamId) };
      },
    };
  }

  /** Base URL (`http://127.0.0.1:<port>`). */
  get url(): string {
    if (!this.baseUrl) throw new Error('fake Slack is not listening; call start()');
    return this.baseUrl;
  }

  /** What SLACK_API_URL should be: `<url>/api/`. */
  get apiUrl(): string {
    return `${this.url}/api/`;
  }

  async start(port = 0): Promise<this> {
    const server = createServer((req, res) => {
      this.handle(req, res).catch((e: unknown) => {
        if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ ok: false, error: 'fake_internal_error', detail: String(e) }));
      });
    });
    server.keepAliveTimeout = 5_000;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => resolve());
    });
    this.server = server;
    this.baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    return this;
  }

  async close(): Promise<void> {
    const server = this.server;
    if (!server) return;
    this.server = undefined;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  // ----- the common simulator interface (../simulator.ts) -----

  /** What the bot needs to use this workspace: Web API base URL, bot token, signing secret. */
  env(): Readonly<Record<string, string>> {
    return {
      SLACK_API_URL: this.apiUrl,
      SLACK_BOT_TOKEN: this.botToken,
      SLACK_SIGNING_SECRET: this.signingSecret,
    };
  }

  /** Calls the real Slack would refuse as malformed or unauthenticated (see CONTRACT_ERRORS), response_url posts included. */
  contractViolations(): readonly ContractViolation[] {
    return [
      ...this.calls
        .filter((c) => c.error !== undefined && CONTRACT_ERRORS.has(c.error) && !this.injected.has(c))
        .map((c) => ({
          simulator: this.name,
          summary: `${c.method} answered ${c.error}: ${JSON.stringify(c.params).slice(0, 200)}`,
        })),
      ...this.refusedResponses.map((r) => ({
        simulator: this.name,
        summary: `response_url answered ${r.error}: ${JSON.stringify(r.extra).slice(0, 200)}`,
      })),
    ];
  }

  /** Same as `close()`. */
  stop(): Promise<void> {
    return this.close();
  }

  // ----- test controls -----

  /** The next `times` calls of `method` behave as given (then normal again). */
  failNext(method: string, behaviour: Behaviour, times = 1): void {
    const list = this.once.get(method) ?? [];
    for (let i = 0; i < times; i++) list.push(behaviour);
    this.once.set(method, list);
  }

  /** Every call of `method` behaves as given until `clearBehaviour(method)`. */
  setBehaviour(method: string, behaviour: Behaviour): void {
    this.always.set(method, behaviour);
  }

  /** Messages show in conversations.history `ms` after they are posted (0: at once). */
  setHistoryLag(ms: number): void {
    this.historyLagMs = ms;
  }

  clearBehaviour(method?: string): void {
    if (method === undefined) {
      this.always.clear();
      this.once.clear();
    } else {
      this.always.delete(method);
      this.once.delete(method);
    }
  }

  /**
   * Issues a trigger id, as Slack does with each interaction (valid 3 s, once). With `context.user`,
   * a modal opened with it belongs to that user (Slack knows who clicked; views.open has no user).
   */
  issueTrigger(context: Readonly<{ user?: string }> = {}): string {
    const id = `${this.now()}${++this.idCounter}.${Math.floor(Math.random() * 1e9)}.${this.newHash().slice(0, 12)}`;
    this.triggers.set(id, {
      issuedAt: this.now(),
      used: false,
      ...(context.user ? { user: context.user } : {}),
    });
    return id;
  }

  /** Issues a response_url pointing at this fake (5 uses within 30 minutes). */
  responseUrl(context: Readonly<{ channel: string; user: string; messageTs?: string }>): string {
    const id = this.newHash();
    this.responseUrls.set(id, {
      channel: context.channel,
      user: context.user,
      messageTs: context.messageTs,
      issuedAt: this.now(),
      uses: 0,
    });
    return `${this.url}/response/${id}`;
  }

  addUser(user: FakeUser): void {
    this.users.set(user.id, { ...user });
  }

  addChannel(channel: FakeChannel): void {
    this.channels.set(channel.id, { ...channel });
  }

  /** Messages in a channel, oldest first (deleted ones included, flagged). */
  messages(channel: string): FakeMessage[] {
    return [...(this.messagesByChannel.get(channel) ?? [])];
  }

  /** Every channel that has messages, with them. */
  allMessages(): Map<string, FakeMessage[]> {
    return new Map([...this.messagesByChannel].map(([k, v]) => [k, [...v]]));
  }

  /** Calls of one method (or all), oldest first. */
  callsOf(method?: string): FakeCall[] {
    return method === undefined ? [...this.calls] : this.calls.filter((c) => c.method === method);
  }

  /** The DM channel with a user, created on first use (as conversations.open does). */
  dmChannel(userId: string): FakeChannel {
    const existing = [...this.channels.values()].find((c) => c.is_im && c.user === userId);
    if (existing) return existing;
    const channel: FakeChannel = {
      id: `D${userId.replace(/^U/, '')}`,
      name: userId,
      is_im: true,
      user: userId,
    };
    this.channels.set(channel.id, channel);
    return channel;
  }

  /** Resolves when a change matching `predicate` happens (or rejects after `timeoutMs`). */
  waitFor<C extends FakeChange>(
    predicate: (change: FakeChange) => change is C,
    timeoutMs?: number,
  ): Promise<C>;
  waitFor(predicate: (change: FakeChange) => boolean, timeoutMs?: number): Promise<FakeChange>;
  waitFor(predicate: (change: FakeChange) => boolean, timeoutMs = 5_000): Promise<FakeChange> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.events.off('change', listener);
        reject(new Error(`fake Slack: no matching change within ${timeoutMs} ms`));
      }, timeoutMs);
      const listener = (change: FakeChange) => {
        if (!predicate(change)) return;
        clearTimeout(timer);
        this.events.off('change', listener);
        resolve(change);
      };
      this.events.on('change', listener);
    });
  }

  // ----- what people do (the sandbox console) -----

  /** The workspace's people and channels, whose `@name` / `#name` Slack turns into mentions (./typed.ts). */
  directory(): TypedDirectory {
    return {
      users: [...this.users.values()].filter((u) => !u.deleted).map((u) => ({ id: u.id, name: u.name })),
      channels: [...this.channels.values()].filter((c) => !c.is_im).map((c) => ({ id: c.id, name: c.name })),
    };
  }

  /**
   * A message a person typed in a channel (Slack shows it; the app gets no request for it here).
   * `typed` is stored as Slack stores message text: entities, mentions and links encoded (./typed.ts).
   */
  postAsUser(channel: string, user: string, typed: string, threadTs?: string): FakeMessage {
    const text = encodeTyped(typed, { kind: 'message', ...this.directory() });
    const c = this.channels.get(channel);
    if (!c) throw new Error(`fake Slack: no channel ${channel}`);
    if (!this.users.has(user)) throw new Error(`fake Slack: no user ${user}`);
    // A reply in a thread (issue 22): `threadTs` must be a message of the channel.
    if (threadTs !== undefined && !this.messagesByChannel.get(channel)?.some((m) => m.ts === threadTs)) {
      throw new Error(`fake Slack: no message ${threadTs} in ${channel} to reply to`);
    }
    const message: FakeMessage = {
      channel,
      ts: this.nextTs(),
      user,
      bot_id: '',
      text,
      blocks: undefined,
      thread_ts: threadTs,
      edits: 0,
      history: [],
      deleted: false,
      via: 'person',
    };
    const list = this.messagesByChannel.get(channel) ?? [];
    list.push(message);
    this.messagesByChannel.set(channel, list);
    this.postedAt.set(message, this.now());
    this.emit({ kind: 'message.posted', message });
    return message;
  }

  /**
   * Records an ephemeral Slack shows without a Web API call: the body of the app's HTTP answer to
   * a slash command (`ack`), or a notice from Slack itself (`slackbot`).
   */
  recordEphemeral(
    input: Readonly<{
      channel: string;
      user: string;
      text: string;
      blocks?: unknown[] | undefined;
      via: 'ack' | 'slackbot';
      /** The slash command's response_url, whose `replace_original` replaces this answer. */
      responseUrl?: string;
    }>,
  ): FakeEphemeral {
    const e = this.addEphemeral(input.channel, input.user, input.text, input.blocks, input.via);
    const entry = input.responseUrl
      ? this.responseUrls.get(input.responseUrl.slice(input.responseUrl.lastIndexOf('/') + 1))
      : undefined;
    if (entry && !entry.messageTs) entry.ephemeral = e;
    return e;
  }

  /**
   * Judges the app's HTTP answer to a slash command or an action (its ack body) as Slack does a
   * message: a refusal is recorded in `refusedResponses` (a contract violation) and returned.
   */
  judgeAnswer(body: unknown): Refusal | undefined {
    if (typeof body !== 'object' || body === null) return undefined;
    const b = body as Record<string, unknown>;
    let refusal: Refusal | undefined;
    try {
      refusal = checkMessage(b['text'], blocks(b['blocks']));
    } catch (e) {
      if (!(e instanceof SlackApiError)) throw e;
      refusal = { error: e.slackError, extra: e.extra };
    }
    if (refusal) this.refusedResponses.push({ responseUrlId: 'ack', ...refusal });
    return refusal;
  }

  /** Replaces an open modal's view, as a `response_action: update` answer does. */
  replaceView(viewId: string, view: Record<string, unknown>): FakeView {
    const v = this.views.get(viewId);
    if (!v) throw new Error(`fake Slack: no view ${viewId}`);
    v.view = this.checkView(view);
    v.hash = this.newHash();
    v.updates++;
    this.emit({ kind: 'view.updated', view: v });
    return v;
  }

  /** Opens a modal without a trigger, as a `response_action: push` answer does. */
  pushView(user: string, view: Record<string, unknown>): FakeView {
    const checked = this.checkView(view);
    const v: FakeView = {
      id: this.newId('V'),
      user,
      type: str(checked['type'] ?? 'modal'),
      hash: this.newHash(),
      view: checked,
      kind: 'modal',
      updates: 0,
    };
    this.views.set(v.id, v);
    this.emit({ kind: 'view.opened', view: v });
    return v;
  }

  /** Workspace content (channels, messages, ephemerals, views) as JSON, to persist across restarts. */
  exportState(): FakeSlackState {
    return structuredClone({
      channels: [...this.channels.values()],
      messages: [...this.messagesByChannel.values()].flat(),
      ephemerals: this.ephemerals,
      views: [...this.views.values()],
      homes: [...this.homes.values()],
      counters: { ts: this.tsCounter, id: this.idCounter },
    });
  }

  /** Restores what `exportState` returned (before any traffic); emits nothing. */
  importState(state: FakeSlackState): void {
    for (const c of state.channels) this.channels.set(c.id, { ...c });
    this.messagesByChannel.clear();
    for (const m of state.messages) {
      const list = this.messagesByChannel.get(m.channel) ?? [];
      list.push(structuredClone(m));
      this.messagesByChannel.set(m.channel, list);
    }
    this.ephemerals.splice(0, this.ephemerals.length, ...structuredClone(state.ephemerals));
    this.views.clear();
    for (const v of state.views) this.views.set(v.id, structuredClone(v));
    this.homes.clear();
    for (const v of state.homes) this.homes.set(v.user, structuredClone(v));
    this.tsCounter = Math.max(this.tsCounter, state.counters.ts);
    this.idCounter = Math.max(this.idCounter, state.counters.id);
  }

  // ----- HTTP -----

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://fake');
    const raw = await readBody(req);
    if (req.method === 'POST' && url.pathname.startsWith('/api/')) {
      await this.handleApi(url.pathname.slice('/api/'.length), req, raw, res);
      return;
    }
    if (req.method === 'POST' && url.pathname.startsWith('/response/')) {
      this.handleResponseUrl(url.pathname.slice('/response/'.length), raw, res);
      return;
    }
    if (req.method === 'GET' && url.pathname === '/state') {
      send(res, 200, this.snapshot());
      return;
    }
    send(res, 404, { ok: false, error: 'unknown_path' });
  }

  private async handleApi(
    method: string,
    req: IncomingMessage,
    raw: string,
    res: ServerResponse,
  ): Promise<void> {
    const params = parseParams(raw, req.headers['content-type']);
    const bearer = /^Bearer\s+(.+)$/i.exec(req.headers.authorization ?? '')?.[1];
    const token = bearer ?? (typeof params['token'] === 'string' ? params['token'] : undefined);
    delete params['token'];
    const record = (status: number, error: string | undefined, injected = false): void => {
      const call: FakeCall = {
        method,
        params,
        authed: token === this.botToken,
        status,
        error,
        at: this.now(),
      };
      if (injected) this.injected.add(call);
      this.calls.push(call);
      this.emit({ kind: 'call', call });
    };

    const behaviour = this.behaviourFor(method, params);
    if (behaviour && 'delayMs' in behaviour && !behaviour.afterApply) await sleep(behaviour.delayMs);
    const lateAnswer = behaviour && 'delayMs' in behaviour && behaviour.afterApply ? behaviour.delayMs : 0;
    if (behaviour && 'status' in behaviour) {
      if ('afterApply' in behaviour && behaviour.afterApply) {
        // Slack did it; the answer is lost on the way back.
        try {
          this.handlers[method]?.(params);
        } catch (e) {
          if (!(e instanceof SlackApiError)) throw e;
        }
      }
      record(behaviour.status, behaviour.status === 429 ? 'ratelimited' : undefined, true);
      if (behaviour.status === 429) {
        res.writeHead(429, {
          'content-type': 'application/json',
          'retry-after': String(behaviour.retryAfter),
        });
        res.end(JSON.stringify({ ok: false, error: 'ratelimited' }));
      } else {
        res.writeHead(behaviour.status, { 'content-type': 'text/plain' });
        res.end('upstream connect error');
      }
      return;
    }
    if (behaviour && 'error' in behaviour) {
      record(200, behaviour.error, true);
      send(res, 200, { ok: false, error: behaviour.error });
      return;
    }

    const handler = this.handlers[method];
    if (!handler) {
      record(404, 'unknown_method');
      send(res, 404, { ok: false, error: 'unknown_method' });
      return;
    }
    if (token === undefined) {
      record(200, 'not_authed');
      send(res, 200, { ok: false, error: 'not_authed' });
      return;
    }
    if (token !== this.botToken) {
      record(200, 'invalid_auth');
      send(res, 200, { ok: false, error: 'invalid_auth' });
      return;
    }
    let answer: Record<string, unknown>;
    try {
      const result = handler(params);
      record(200, undefined);
      answer = { ok: true, ...result };
    } catch (e) {
      if (!(e instanceof SlackApiError)) throw e;
      record(200, e.slackError);
      answer = { ok: false, error: e.slackError, ...e.extra };
    }
    if (lateAnswer > 0) await sleep(lateAnswer);
    send(res, 200, answer);
  }

  /** The injected behaviour for this call (a `failNext` first, then a `setBehaviour`), if any. */
  private behaviourFor(method: string, params: Record<string, unknown>): Behaviour | undefined {
    const applies = (b: Behaviour) => b.channel === undefined || b.channel === params['channel'];
    const queued = this.once.get(method);
    const at = queued?.findIndex(applies) ?? -1;
    if (queued && at >= 0) return queued.splice(at, 1)[0];
    const always = this.always.get(method);
    return always && applies(always) ? always : undefined;
  }

  private handleResponseUrl(id: string, raw: string, res: ServerResponse): void {
    const entry = this.responseUrls.get(id);
    let body: Record<string, unknown> = {};
    try {
      body = JSON.parse(raw) as Record<string, unknown>;
    } catch {
      body = {};
    }
    const post = (status: number): void => {
      this.responsePosts.push({ responseUrlId: id, body, status, at: this.now() });
    };
    if (!entry) {
      post(404);
      send(res, 404, { ok: false, error: 'invalid_url' });
      return;
    }
    if (this.now() - entry.issuedAt > RESPONSE_URL_TTL_MS) {
      post(404);
      send(res, 404, { ok: false, error: 'expired_url' });
      return;
    }
    if (entry.uses >= RESPONSE_URL_MAX_USES) {
      post(404);
      send(res, 404, { ok: false, error: 'used_url' });
      return;
    }
    // Slack refuses a response it cannot show as it refuses chat.postMessage (./blockKit.ts); the
    // hook answers 400 with the error (a refused post does not use up the URL).
    let blk: unknown[] | undefined;
    try {
      blk = blocks(body['blocks']);
      refuse(checkMessage(body['text'], blk));
    } catch (e) {
      if (!(e instanceof SlackApiError)) throw e;
      post(400);
      this.refusedResponses.push({ responseUrlId: id, error: e.slackError, extra: e.extra });
      send(res, 400, { ok: false, error: e.slackError, ...e.extra });
      return;
    }
    entry.uses++;
    post(200);
    const text = str(body['text'] ?? '');
    if (body['delete_original'] === true && entry.messageTs) {
      const message = this.findMessage(entry.channel, entry.messageTs);
      message.deleted = true;
      this.emit({ kind: 'message.deleted', message });
    } else if (body['replace_original'] === true && entry.messageTs) {
      this.editMessage(this.findMessage(entry.channel, entry.messageTs), text, blk);
    } else if (body['replace_original'] === true && entry.ephemeral) {
      // A slash command's answer, replaced where the person sees it.
      const e = entry.ephemeral;
      e.text = text;
      e.blocks = blk;
      e.edits = (e.edits ?? 0) + 1;
      this.emit({ kind: 'ephemeral.updated', ephemeral: e });
    } else if (body['response_type'] === 'in_channel') {
      this.addMessage(entry.channel, text, blk, opt(body['thread_ts']), 'response_url');
    } else {
      const e = this.addEphemeral(entry.channel, entry.user, text, blk, 'response_url');
      if (!entry.messageTs) entry.ephemeral = e;
    }
    send(res, 200, { ok: true });
  }

  // ----- state -----

  /** Everything the fake holds, as JSON (also served at GET /state). */
  snapshot(): Record<string, unknown> {
    return {
      team: { id: this.teamId, name: this.teamName },
      users: [...this.users.values()],
      channels: [...this.channels.values()],
      messages: Object.fromEntries(this.messagesByChannel),
      ephemerals: this.ephemerals,
      views: [...this.views.values()],
      homes: [...this.homes.values()],
    };
  }

  private emit(change: FakeChange): void {
    this.events.emit('change', change);
  }

  private nextTs(): string {
    const seconds = Math.floor(this.now() / 1000);
    return `${seconds}.${String(++this.tsCounter % 1_000_000).padStart(6, '0')}`;
  }

  /** `missing_scope` unless the bot token has `needed` (every scope when none were given). */
  private needScope(needed: string): void {
    if (this.scopes && !this.scopes.has(needed)) {
      throw new SlackApiError('missing_scope', { needed, provided: [...this.scopes].join(',') });
    }
  }

  private newId(prefix: string): string {
    return `${prefix}${String(++this.idCounter).padStart(8, '0')}`;
  }

  private newHash(): string {
    return `${this.now().toString(16)}${Math.random().toString(16).slice(2, 10)}`;
  }

  private resolveChannel(value: unknown): FakeChannel {
    const id = str(value ?? '');
    if (this.channels.has(id)) return this.channels.get(id)!;
    if (this.users.has(id)) return this.dmChannel(id); // posting to a user id opens the DM
    throw new SlackApiError('channel_not_found');
  }

  private requireUser(value: unknown): FakeUser {
    const user = this.users.get(str(value ?? ''));
    if (!user || user.deleted) throw new SlackApiError('user_not_found');
    return user;
  }

  private findMessage(channel: string, ts: string): FakeMessage {
    const message = this.messagesByChannel.get(channel)?.find((m) => m.ts === ts && !m.deleted);
    if (!message)
      throw new SlackApiError(this.channels.has(channel) ? 'message_not_found' : 'channel_not_found');
    return message;
  }

  private addMessage(
    channel: string,
    text: string,
    blk: unknown[] | undefined,
    threadTs: string | undefined,
    via: FakeMessage['via'],
    metadata?: FakeMessageMetadata,
  ): FakeMessage {
    if (!text && !blk) throw new SlackApiError('no_text');
    const message: FakeMessage = {
      channel,
      ts: this.nextTs(),
      user: this.botUserId,
      bot_id: this.botId,
      text,
      blocks: blk,
      thread_ts: threadTs,
      edits: 0,
      history: [],
      deleted: false,
      ...(metadata ? { metadata } : {}),
      via,
    };
    const list = this.messagesByChannel.get(channel) ?? [];
    list.push(message);
    this.messagesByChannel.set(channel, list);
    this.postedAt.set(message, this.now());
    this.emit({ kind: 'message.posted', message });
    return message;
  }

  private editMessage(message: FakeMessage, text: string, blk: unknown[] | undefined): void {
    message.history.push({ text: message.text, blocks: message.blocks });
    message.text = text;
    message.blocks = blk;
    message.edits++;
    this.emit({ kind: 'message.updated', message });
  }

  private addEphemeral(
    channel: string,
    user: string,
    text: string,
    blk: unknown[] | undefined,
    via: FakeEphemeral['via'],
  ): FakeEphemeral {
    const e: FakeEphemeral = { channel, user, message_ts: this.nextTs(), text, blocks: blk, via };
    this.ephemerals.push(e);
    this.emit({ kind: 'ephemeral.posted', ephemeral: e });
    return e;
  }

  private useTrigger(triggerId: string): string | undefined {
    if (!triggerId) throw new SlackApiError('invalid_arguments');
    let t = this.triggers.get(triggerId);
    if (!t) {
      if (!this.acceptUnknownTriggers) throw new SlackApiError('invalid_trigger_id');
      t = { issuedAt: this.now(), used: false };
      this.triggers.set(triggerId, t);
    }
    if (t.used) throw new SlackApiError('exchanged_trigger_id');
    if (this.now() - t.issuedAt > TRIGGER_TTL_MS) throw new SlackApiError('expired_trigger_id');
    t.used = true;
    return t.user;
  }

  private checkView(value: unknown): Record<string, unknown> {
    const view = typeof value === 'string' ? tryJson(value, INVALID) : value;
    if (typeof view !== 'object' || view === null || Array.isArray(view))
      throw new SlackApiError('invalid_arguments');
    if (Buffer.byteLength(JSON.stringify(view)) > VIEW_MAX_BYTES) throw new SlackApiError('view_too_large');
    refuse(checkViewContent(view as Record<string, unknown>));
    return view as Record<string, unknown>;
  }
}

/** Starts a fake on a free loopback port. */
export const startFakeSlack = (options: FakeSlackOptions = {}): Promise<FakeSlack> =>
  new FakeSlack(options).start(options.port ?? 0);

const str = (v: unknown): string =>
  typeof v === 'string' ? v : v === undefined || v === null ? '' : String(v);
const opt = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);
/** A message's `blocks`: a JSON array (a string in form bodies), or `invalid_blocks_format`. */
const blocks = (v: unknown): unknown[] | undefined => {
  if (v === undefined || v === null || v === '') return undefined;
  const parsed = typeof v === 'string' ? tryJson(v, INVALID) : v;
  if (!Array.isArray(parsed)) throw new SlackApiError('invalid_blocks_format');
  return parsed;
};

/** Throws what Slack answers when it refuses a message or a view (./blockKit.ts). */
const refuse = (refusal: Refusal | undefined): void => {
  if (refusal) throw new SlackApiError(refusal.error, refusal.extra);
};

/** chat.postMessage's `metadata` (a JSON string in form bodies): both fields, or `invalid_metadata_format`. */
const metadataOf = (v: unknown): FakeMessageMetadata | undefined => {
  if (v === undefined || v === null || v === '') return undefined;
  const parsed = typeof v === 'string' ? tryJson(v) : v;
  const m = parsed as { event_type?: unknown; event_payload?: unknown } | null;
  if (
    typeof m !== 'object' ||
    m === null ||
    typeof m.event_type !== 'string' ||
    m.event_type === '' ||
    typeof m.event_payload !== 'object' ||
    m.event_payload === null ||
    Array.isArray(m.event_payload)
  ) {
    throw new SlackApiError('invalid_metadata_format');
  }
  return { event_type: m.event_type, event_payload: m.event_payload as Record<string, unknown> };
};

const publicMessage = (m: FakeMessage) => ({
  type: 'message',
  ts: m.ts,
  user: m.user,
  bot_id: m.bot_id,
  text: m.text,
  ...(m.blocks ? { blocks: m.blocks } : {}),
  ...(m.thread_ts ? { thread_ts: m.thread_ts } : {}),
});

const publicView = (v: FakeView, teamId: string) => ({
  ...v.view,
  id: v.id,
  team_id: teamId,
  type: v.type,
  hash: v.hash,
  state: { values: {} },
});

const publicUser = (u: FakeUser, teamId: string) => ({
  id: u.id,
  team_id: teamId,
  name: u.name,
  real_name: u.real_name,
  deleted: u.deleted === true,
  is_bot: u.is_bot === true,
  tz: u.tz ?? 'UTC',
  profile: {
    real_name: u.real_name,
    display_name: u.name,
    ...(u.email ? { email: u.email } : {}),
  },
});

const send = (res: ServerResponse, status: number, body: unknown): void => {
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8' });
  res.end(JSON.stringify(body));
};

const readBody = async (req: IncomingMessage): Promise<string> => {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
};

/** The Web API takes form bodies (objects JSON-encoded in fields, as the SDK sends) or JSON. */
const parseParams = (raw: string, contentType: string | undefined): Record<string, unknown> => {
  if (raw === '') return {};
  if (contentType?.includes('application/json')) return JSON.parse(raw) as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const [k, v] of new URLSearchParams(raw)) {
    out[k] = /^[[{]/.test(v) ? tryJson(v) : v;
  }
  return out;
};

const INVALID = Symbol('invalid JSON');

const tryJson = (v: string, otherwise: unknown = v): unknown => {
  try {
    return JSON.parse(v) as unknown;
  } catch {
    return otherwise;
  }
};

/**
 * Why Slack would refuse `name` for a new channel, or undefined: lowercase letters, digits,
 * hyphens and underscores only, 1 to 80 characters (https://api.slack.com/methods/conversations.create).
 */
export const channelNameProblem = (name: string): string | undefined => {
  if (name === '') return 'invalid_name_required';
  if (name.length > 80) return 'invalid_name_maxlength';
  if (/^[-_]+$/.test(name)) return 'invalid_name_punctuation';
  if (!/^[a-z0-9_-]+$/.test(name)) return 'invalid_name_specials';
  return undefined;
};

const publicChannel = (c: FakeChannel, nowMs: number): Record<string, unknown> => ({
  id: c.id,
  name: c.name,
  is_channel: !c.is_private,
  is_group: c.is_private === true,
  is_im: false,
  is_private: c.is_private === true,
  is_archived: c.is_archived === true,
  created: Math.floor(nowMs / 1000),
  creator: c.creator ?? '',
  is_member: true,
});
