import { EventEmitter } from 'node:events';
import {
  actionOf,
  findElement,
  type RawValue,
  type ViewState,
  viewStateValues,
  withBlockIds,
} from './console/public/blockKit.js';
import type { SlackAppSettings } from './manifest.ts';
import type { FakeChange, FakeSlack, FakeView } from './simulators/slack/fakeSlack.ts';
import {
  eventCallbackBody,
  interactionBody,
  signedHeaders,
  slashCommandBody,
} from './simulators/slack/signing.ts';
import { encodeMentions } from './simulators/slack/typed.ts';

/**
 * What Slack's own client and servers do when a person uses the app, for the sandbox console:
 * turns "Ana typed `/incident ack 42` in #incidents" or "Ana clicked Acknowledge on that card" into
 * the request Slack would send the app (form-encoded slash command, `block_actions`,
 * `view_submission`, `view_closed`, `app_home_opened`), signed with the signing secret exactly as
 * Slack signs it, with a fresh trigger id and response_url from the fake Slack; then shows the
 * app's HTTP answer the way Slack does (an ephemeral reply, inline form errors, an updated or
 * closed modal, or Slack's "failed with the error …" notice).
 *
 * It also keeps each person's modal stack, which the fake Slack (a Web API, not a client) does not.
 *
 * @example
 * const surface = createSlackSurface({ fake, botUrl, signingSecret });
 * const r = await surface.slashCommand({ user: 'U01ANA', channel: 'C01INCIDENTS', text: '/incident help' });
 */

export const SANDBOX_APP_ID = 'A0SANDBOX';
/** Slack's deprecated verification token: sent as Slack sends it; nothing checks it. */
const VERIFICATION_TOKEN = 'sandbox-deprecated-verification-token';
/** Slack gives an app 3 s to answer, then tells the person it failed. */
export const SLACK_ANSWER_MS = 3_000;

export type SurfaceResult = Readonly<{
  ok: boolean;
  /** HTTP status of the app's answer; 0 when there was none. */
  status: number;
  /** Slack's error word when the app did not answer well (`operation_timeout`, `dispatch_failed`). */
  error?: string;
  /** The app's answer body, parsed when it is JSON. */
  body?: unknown;
}>;

export type ViewSubmitResult = SurfaceResult &
  Readonly<{
    /** `response_action: errors`: block_id → message. */
    errors?: Record<string, string>;
    /** The modal this person sees now (undefined: none). */
    modal?: FakeView | undefined;
  }>;

/** Which message or view an interactive element sits in. */
export type Surface =
  | Readonly<{ kind: 'message'; channel: string; ts: string }>
  | Readonly<{ kind: 'ephemeral'; channel: string; ts: string }>
  | Readonly<{ kind: 'view'; viewId: string }>;

/** block_id → action_id → what the person entered (string, or list for multi-selects). */
export type RawValues = Readonly<Record<string, Readonly<Record<string, RawValue>>>>;

export type SlackSurfaceOptions = Readonly<{
  fake: FakeSlack;
  /** The bot's base URL (`http://127.0.0.1:<port>`); read per request. */
  botUrl: () => string;
  signingSecret: string;
  /** Default SLACK_ANSWER_MS. */
  answerTimeoutMs?: number;
  /** From the app's manifest; default: every command escaped, every event subscribed. */
  app?: Pick<SlackAppSettings, 'escapedCommands' | 'botEvents'>;
  /** Milliseconds clock that requests are signed and stamped with (default Date.now; the sandbox's clock). */
  now?: () => number;
}>;

export type SlackSurface = ReturnType<typeof createSlackSurface>;

/** `/incident trigger db "x"` → `{ command: '/incident', text: 'trigger db "x"' }`; undefined when not a command. */
export const parseSlashCommand = (input: string): { command: string; text: string } | undefined => {
  const m = /^\s*(\/[a-z0-9_-]+)(?:\s+([\s\S]*))?$/i.exec(input);
  if (!m) return undefined;
  return { command: (m[1] ?? '').toLowerCase(), text: (m[2] ?? '').trim() };
};

/**
 * Escapes `@handle` and `#channel` as Slack does for commands declared with `should_escape: true`:
 * `<@U01ANA|ana>`, `<#C01INCIDENTS|incidents>`. Unknown names stay as typed. The mention half of
 * what Slack sends; the whole encoding (entities, links) is `encodeTyped` (simulators/slack/typed.ts).
 */
export const escapeMentions = (
  text: string,
  users: ReadonlyArray<Readonly<{ id: string; name: string }>>,
  channels: ReadonlyArray<Readonly<{ id: string; name: string }>>,
): string => encodeMentions(text, { users, channels });

let actionCounter = 0;
const actionTsAt = (now: number): string => {
  return `${Math.floor(now / 1000)}.${String((now % 1000) * 1000 + (++actionCounter % 1000)).padStart(6, '0')}`;
};

type Json = Record<string, unknown>;

export const createSlackSurface = (options: SlackSurfaceOptions) => {
  const { fake, signingSecret } = options;
  const answerMs = options.answerTimeoutMs ?? SLACK_ANSWER_MS;
  const now = options.now ?? Date.now;
  const actionTs = () => actionTsAt(now());
  const events = new EventEmitter();
  events.setMaxListeners(100);
  /** Open modals per person, bottom first. */
  const stacks = new Map<string, string[]>();
  let pushing = false;

  const setStack = (user: string, stack: string[]) => {
    stacks.set(user, stack);
    events.emit('modal', { user, view: modalOf(user) });
  };
  const modalOf = (user: string): FakeView | undefined => {
    const id = stacks.get(user)?.at(-1);
    return id ? fake.views.get(id) : undefined;
  };

  const onChange = (change: FakeChange) => {
    if (change.kind === 'view.opened' && change.view.kind === 'modal') {
      const user = change.view.user;
      // views.open starts a new stack; a pushed view goes on top.
      setStack(user, pushing ? [...(stacks.get(user) ?? []), change.view.id] : [change.view.id]);
    } else if (change.kind === 'view.updated' && change.view.kind === 'modal') {
      if (stacks.get(change.view.user)?.includes(change.view.id)) {
        events.emit('modal', { user: change.view.user, view: modalOf(change.view.user) });
      }
    }
  };
  fake.events.on('change', onChange);

  const team = () => ({ id: fake.teamId, domain: 'switchboard-demo' });
  const userRef = (id: string) => {
    const u = fake.users.get(id);
    return { id, username: u?.name ?? id, name: u?.name ?? id, team_id: fake.teamId };
  };
  const people = () =>
    [...fake.users.values()].filter((u) => !u.is_bot).map((u) => ({ id: u.id, name: u.name }));
  const channelsList = () =>
    [...fake.channels.values()].filter((c) => !c.is_im).map((c) => ({ id: c.id, name: c.name }));
  const channelRef = (id: string) => ({ id, name: fake.channels.get(id)?.name ?? id });

  const requireUser = (user: string) => {
    if (!fake.users.has(user) || fake.users.get(user)?.is_bot) throw new SurfaceError(`no person ${user}`);
  };

  /** Posts a signed request; never throws: a failure is an answer Slack would show. */
  const post = async (body: string, kind: 'form' | 'json'): Promise<SurfaceResult> => {
    try {
      const res = await fetch(`${options.botUrl()}/slack/events`, {
        method: 'POST',
        body,
        headers: {
          ...signedHeaders(signingSecret, body, kind, Math.floor(now() / 1000)),
          'user-agent': 'Slackbot 1.0 (+https://api.slack.com/robots)',
        },
        signal: AbortSignal.timeout(answerMs),
      });
      const text = await res.text();
      let parsed: unknown = text;
      if (text !== '') {
        try {
          parsed = JSON.parse(text) as unknown;
        } catch {
          parsed = text;
        }
      }
      if (!res.ok) return { ok: false, status: res.status, error: 'dispatch_failed', body: parsed };
      return { ok: true, status: res.status, ...(text === '' ? {} : { body: parsed }) };
    } catch (e) {
      const timeout = e instanceof Error && (e.name === 'TimeoutError' || e.name === 'AbortError');
      return { ok: false, status: 0, error: timeout ? 'operation_timeout' : 'dispatch_failed' };
    }
  };

  const slackbotNotice = (channel: string, user: string, what: string, error: string) =>
    fake.recordEphemeral({
      channel,
      user,
      text: `${what} failed with the error "${error}"`,
      via: 'slackbot',
    });

  const viewPayload = (v: FakeView, values: ViewState): Json => {
    const stack = stacks.get(v.user) ?? [];
    const at = stack.indexOf(v.id);
    return {
      ...v.view,
      id: v.id,
      team_id: fake.teamId,
      type: v.type,
      blocks: withBlockIds(Array.isArray(v.view['blocks']) ? v.view['blocks'] : []),
      state: { values },
      hash: v.hash,
      private_metadata: typeof v.view['private_metadata'] === 'string' ? v.view['private_metadata'] : '',
      callback_id: typeof v.view['callback_id'] === 'string' ? v.view['callback_id'] : '',
      root_view_id: stack[0] ?? v.id,
      previous_view_id: at > 0 ? (stack[at - 1] ?? null) : null,
      app_id: SANDBOX_APP_ID,
      app_installed_team_id: fake.teamId,
      bot_id: fake.botId,
    };
  };

  const requireView = (user: string, viewId: string): FakeView => {
    const v = fake.views.get(viewId) ?? [...fake.homes.values()].find((h) => h.id === viewId);
    if (!v || v.user !== user) throw new SurfaceError(`no view ${viewId} for ${user}`);
    return v;
  };

  return {
    /** `modal` events: `{ user, view }` whenever the top of a person's modal stack changes. */
    events,
    modalOf,

    /** A person types a slash command in a channel (or a DM). */
    async slashCommand(
      input: Readonly<{ user: string; channel: string; text: string }>,
    ): Promise<SurfaceResult> {
      requireUser(input.user);
      const parsed = parseSlashCommand(input.text);
      if (!parsed) throw new SurfaceError('not a slash command');
      const channel = fake.channels.get(input.channel);
      if (!channel) throw new SurfaceError(`no channel ${input.channel}`);
      const responseUrl = fake.responseUrl({ channel: channel.id, user: input.user });
      const body = slashCommandBody(
        {
          token: VERIFICATION_TOKEN,
          team_id: fake.teamId,
          team_domain: 'switchboard-demo',
          channel_id: channel.id,
          channel_name: channel.is_im ? 'directmessage' : channel.name,
          user_id: input.user,
          user_name: fake.users.get(input.user)?.name ?? input.user,
          command: parsed.command,
          text: parsed.text,
          api_app_id: SANDBOX_APP_ID,
          response_url: responseUrl,
          trigger_id: fake.issueTrigger({ user: input.user }),
        },
        {
          // As typed: encoded once, by signing.ts, with the command's should_escape.
          escape: !options.app || options.app.escapedCommands.has(parsed.command),
          directory: { users: people(), channels: channelsList() },
        },
      );
      const result = await post(body, 'form');
      if (!result.ok) {
        slackbotNotice(channel.id, input.user, parsed.command, result.error ?? 'dispatch_failed');
        return result;
      }
      const answer = result.body;
      if (typeof answer === 'string' && answer.trim() !== '') {
        fake.recordEphemeral({
          channel: channel.id,
          user: input.user,
          text: answer,
          via: 'ack',
          responseUrl,
        });
      } else if (answer && typeof answer === 'object') {
        const a = answer as Json;
        const text = typeof a['text'] === 'string' ? a['text'] : '';
        const blocks = Array.isArray(a['blocks']) ? (a['blocks'] as unknown[]) : undefined;
        if (text || blocks) {
          if (a['response_type'] === 'in_channel') {
            // Slack shows the command as the person's message, then the answer in the channel.
            fake.postAsUser(channel.id, input.user, input.text.trim());
            const url = fake.responseUrl({ channel: channel.id, user: input.user });
            await fetch(url, {
              method: 'POST',
              headers: { 'content-type': 'application/json' },
              body: JSON.stringify({ text, ...(blocks ? { blocks } : {}), response_type: 'in_channel' }),
            });
          } else {
            fake.recordEphemeral({
              channel: channel.id,
              user: input.user,
              text,
              blocks,
              via: 'ack',
              responseUrl,
            });
          }
        }
      }
      return result;
    },

    /** A person clicks a button or picks from a select, in a message or a view. */
    async blockAction(
      input: Readonly<{
        user: string;
        surface: Surface;
        blockIndex: number;
        elementIndex: number | 'accessory';
        /** The pick, for selects, date pickers, overflow menus. */
        value?: RawValue;
        /** Current inputs of the view the element is in (views only). */
        values?: RawValues;
      }>,
    ): Promise<SurfaceResult> {
      requireUser(input.user);
      const trigger = fake.issueTrigger({ user: input.user });
      const s = input.surface;
      let payload: Json;
      if (s.kind === 'view') {
        const v = requireView(input.user, s.viewId);
        const found = findElement(v.view['blocks'], input.blockIndex, input.elementIndex);
        if (!found) throw new SurfaceError('no such element in that view');
        payload = {
          container: { type: 'view', view_id: v.id },
          view: viewPayload(v, viewStateValues(v.view, input.values)),
          actions: [actionOf(found.element, found.blockId, input.value, actionTs())],
        };
      } else if (s.kind === 'message') {
        const m = fake.messages(s.channel).find((x) => x.ts === s.ts && !x.deleted);
        if (!m) throw new SurfaceError('no such message');
        const found = findElement(m.blocks, input.blockIndex, input.elementIndex);
        if (!found) throw new SurfaceError('no such element in that message');
        payload = {
          container: { type: 'message', message_ts: m.ts, channel_id: m.channel, is_ephemeral: false },
          channel: channelRef(m.channel),
          message: {
            type: 'message',
            ts: m.ts,
            user: m.user,
            ...(m.bot_id ? { bot_id: m.bot_id, app_id: SANDBOX_APP_ID } : {}),
            text: m.text,
            team: fake.teamId,
            ...(m.blocks ? { blocks: withBlockIds(m.blocks) } : {}),
          },
          state: { values: {} },
          response_url: fake.responseUrl({ channel: m.channel, user: input.user, messageTs: m.ts }),
          actions: [actionOf(found.element, found.blockId, input.value, actionTs())],
        };
      } else {
        const e = fake.ephemerals.find((x) => x.message_ts === s.ts && x.user === input.user);
        if (!e) throw new SurfaceError('no such ephemeral message');
        const found = findElement(e.blocks, input.blockIndex, input.elementIndex);
        if (!found) throw new SurfaceError('no such element in that message');
        payload = {
          container: { type: 'message', message_ts: e.message_ts, channel_id: e.channel, is_ephemeral: true },
          channel: channelRef(e.channel),
          state: { values: {} },
          // The fake cannot replace an ephemeral in place: replace_original posts a new one.
          response_url: fake.responseUrl({ channel: e.channel, user: input.user }),
          actions: [actionOf(found.element, found.blockId, input.value, actionTs())],
        };
      }
      return post(
        interactionBody({
          type: 'block_actions',
          user: userRef(input.user),
          api_app_id: SANDBOX_APP_ID,
          token: VERIFICATION_TOKEN,
          trigger_id: trigger,
          team: team(),
          enterprise: null,
          is_enterprise_install: false,
          ...payload,
        }),
        'form',
      );
    },

    /** A person presses a modal's submit button. */
    async submitView(
      input: Readonly<{ user: string; viewId: string; values: RawValues }>,
    ): Promise<ViewSubmitResult> {
      requireUser(input.user);
      const v = requireView(input.user, input.viewId);
      const result = await post(
        interactionBody({
          type: 'view_submission',
          team: team(),
          user: userRef(input.user),
          api_app_id: SANDBOX_APP_ID,
          token: VERIFICATION_TOKEN,
          trigger_id: fake.issueTrigger({ user: input.user }),
          view: viewPayload(v, viewStateValues(v.view, input.values)),
          response_urls: [],
          is_enterprise_install: false,
          enterprise: null,
        }),
        'form',
      );
      if (!result.ok) return { ...result, modal: modalOf(input.user) };
      const answer = (result.body && typeof result.body === 'object' ? result.body : {}) as Json;
      const stack = [...(stacks.get(input.user) ?? [])];
      switch (answer['response_action']) {
        case 'errors':
          return {
            ...result,
            errors: (answer['errors'] ?? {}) as Record<string, string>,
            modal: modalOf(input.user),
          };
        case 'update':
          fake.replaceView(v.id, answer['view'] as Json);
          break;
        case 'push':
          pushing = true;
          try {
            fake.pushView(input.user, answer['view'] as Json);
          } finally {
            pushing = false;
          }
          break;
        case 'clear':
          setStack(input.user, []);
          break;
        default:
          setStack(
            input.user,
            stack.filter((id) => id !== v.id),
          );
      }
      return { ...result, modal: modalOf(input.user) };
    },

    /** A person closes a modal (Cancel or ×); the app hears of it when it asked to (`notify_on_close`). */
    async closeView(input: Readonly<{ user: string; viewId: string }>): Promise<SurfaceResult> {
      requireUser(input.user);
      const v = requireView(input.user, input.viewId);
      const stack = stacks.get(input.user) ?? [];
      setStack(
        input.user,
        stack.filter((id) => id !== v.id),
      );
      if (v.view['notify_on_close'] !== true) return { ok: true, status: 0 };
      return post(
        interactionBody({
          type: 'view_closed',
          team: team(),
          user: userRef(input.user),
          api_app_id: SANDBOX_APP_ID,
          token: VERIFICATION_TOKEN,
          view: viewPayload(v, viewStateValues(v.view, {})),
          is_cleared: false,
          is_enterprise_install: false,
        }),
        'form',
      );
    },

    /** A person opens the app's Home tab: Slack sends `app_home_opened` (the app publishes the view). */
    async openHome(input: Readonly<{ user: string }>): Promise<SurfaceResult> {
      requireUser(input.user);
      if (options.app && !options.app.botEvents.has('app_home_opened')) return { ok: true, status: 0 };
      const dm = fake.dmChannel(input.user);
      const home = fake.homes.get(input.user);
      return post(
        eventCallbackBody(
          {
            type: 'app_home_opened',
            user: input.user,
            channel: dm.id,
            tab: 'home',
            event_ts: actionTs(),
            ...(home ? { view: viewPayload(home, {}) } : {}),
          },
          { team_id: fake.teamId },
        ),
        'json',
      );
    },

    stop() {
      fake.events.off('change', onChange);
      events.removeAllListeners();
    },
  };
};

/** The console asked for something that does not exist (answered 404/400, never sent to the app). */
export class SurfaceError extends Error {
  override readonly name = 'SurfaceError';
}
