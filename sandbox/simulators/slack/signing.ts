import { createHmac } from 'node:crypto';
import { commandEscapes, encodeTyped, type TypedDirectory } from './typed.ts';

/**
 * Signs requests exactly as Slack does (https://api.slack.com/authentication/verifying-requests-from-slack):
 * `v0=` + hex HMAC-SHA256 of `v0:<timestamp>:<raw body>` with the signing secret, sent as
 * `X-Slack-Signature` together with `X-Slack-Request-Timestamp` (Unix seconds).
 *
 * @example
 * const body = slashCommandBody({ command: '/incident', text: 'list' });
 * await fetch(url, { method: 'POST', body, headers: signedHeaders(secret, body, 'form') });
 */
export const slackSignature = (signingSecret: string, timestamp: number | string, rawBody: string): string =>
  `v0=${createHmac('sha256', signingSecret).update(`v0:${timestamp}:${rawBody}`).digest('hex')}`;

export const nowSeconds = (): number => Math.floor(Date.now() / 1000);

export type BodyKind = 'form' | 'json';

/** Headers of a signed request; `timestamp` defaults to now (pass an old or future one to test refusal). */
export const signedHeaders = (
  signingSecret: string,
  rawBody: string,
  kind: BodyKind,
  timestamp: number = nowSeconds(),
): Record<string, string> => ({
  'content-type': kind === 'form' ? 'application/x-www-form-urlencoded' : 'application/json',
  'x-slack-request-timestamp': String(timestamp),
  'x-slack-signature': slackSignature(signingSecret, timestamp, rawBody),
});

let counter = 0;
const unique = (): string => `${Date.now()}${String(++counter).padStart(4, '0')}`;

/** A trigger id in Slack's shape (`<digits>.<digits>.<hex>`), unique per call. */
export const newTriggerId = (): string =>
  `${unique()}.${Math.floor(Math.random() * 1e9)}.${Math.random().toString(16).slice(2, 14)}`;

export type SlashCommandFields = Readonly<{
  command?: string;
  text?: string;
  user_id?: string;
  user_name?: string;
  team_id?: string;
  team_domain?: string;
  channel_id?: string;
  channel_name?: string;
  trigger_id?: string;
  response_url?: string;
  api_app_id?: string;
  /** Slack's deprecated verification token; sent by real Slack, never stored by us. */
  token?: string;
}>;

export type SlashCommandOptions = Readonly<{
  /** The workspace's people and channels, whose `@name` / `#name` become mentions (with should_escape). */
  directory?: TypedDirectory;
  /** The command's `should_escape`; default: what manifest.yml declares for `fields.command`. */
  escape?: boolean;
  /** `fields.text` is already as Slack sends it (a test of the wire format itself): sent unchanged. */
  encoded?: boolean;
}>;

/**
 * A slash command as Slack posts it: `application/x-www-form-urlencoded`. `fields.text` is what the
 * person typed; it is sent encoded as Slack sends it (`&amp;`, `&lt;`, `&gt;`; with the command's
 * `should_escape`, known `@name`/`#name` and links as `<@U…|name>`, `<#C…|name>`, `<https://…>`;
 * ./typed.ts).
 */
export const slashCommandBody = (
  fields: SlashCommandFields = {},
  options: SlashCommandOptions = {},
): string => {
  const command = fields.command ?? '/incident';
  const typed = fields.text ?? 'help';
  const text = options.encoded
    ? typed
    : encodeTyped(typed, {
        kind: 'command',
        escape: options.escape ?? commandEscapes(command),
        ...options.directory,
      });
  return new URLSearchParams({
    token: 'deprecated-verification-token',
    team_id: 'T0SWITCH',
    team_domain: 'switchboard',
    channel_id: 'C0INCIDENTS',
    channel_name: 'incidents',
    user_id: 'U0ALICE',
    user_name: 'alice',
    api_app_id: 'A0SWITCH',
    is_enterprise_install: 'false',
    response_url: 'https://hooks.slack.com/commands/T0SWITCH/1/abcdef',
    trigger_id: newTriggerId(),
    ...fields,
    command,
    text,
  }).toString();
};

/** An interactivity payload (block_actions, view_submission, …) as Slack posts it: `payload=<json>`. */
export const interactionBody = (payload: Record<string, unknown>): string =>
  new URLSearchParams({ payload: JSON.stringify(payload) }).toString();

export const blockActionPayload = (
  overrides: Readonly<{
    action_id?: string;
    value?: string;
    user_id?: string;
    channel_id?: string;
    trigger_id?: string;
    action_ts?: string;
    message_ts?: string;
    response_url?: string;
  }> = {},
): Record<string, unknown> => ({
  type: 'block_actions',
  token: 'deprecated-verification-token',
  api_app_id: 'A0SWITCH',
  team: { id: 'T0SWITCH', domain: 'switchboard' },
  user: { id: overrides.user_id ?? 'U0ALICE', username: 'alice', team_id: 'T0SWITCH' },
  channel: { id: overrides.channel_id ?? 'C0INCIDENTS', name: 'incidents' },
  container: { type: 'message', message_ts: overrides.message_ts ?? '1700000000.000100' },
  trigger_id: overrides.trigger_id ?? newTriggerId(),
  response_url: overrides.response_url ?? 'https://hooks.slack.com/actions/T0SWITCH/1/abcdef',
  actions: [
    {
      type: 'button',
      action_id: overrides.action_id ?? 'incident.acknowledge',
      block_id: 'actions',
      value: overrides.value ?? 'PINC001',
      action_ts: overrides.action_ts ?? `${nowSeconds()}.${String(++counter).padStart(6, '0')}`,
    },
  ],
});

/**
 * A message shortcut (`message_action`) as Slack sends it when someone picks it in a message's
 * menu: the message as Slack has it (its `ts`, `thread_ts` for a reply, its author, its text).
 */
export const messageActionPayload = (
  input: Readonly<{
    callback_id: string;
    user_id: string;
    channel_id: string;
    message: Readonly<{
      ts: string;
      thread_ts?: string | undefined;
      user?: string | undefined;
      bot_id?: string | undefined;
      text: string;
    }>;
    trigger_id?: string;
    response_url?: string;
  }>,
): Record<string, unknown> => ({
  type: 'message_action',
  token: 'deprecated-verification-token',
  action_ts: `${nowSeconds()}.${String(++counter).padStart(6, '0')}`,
  team: { id: 'T0SWITCH', domain: 'switchboard' },
  user: { id: input.user_id, name: 'someone', team_id: 'T0SWITCH' },
  channel: { id: input.channel_id, name: 'channel' },
  is_enterprise_install: false,
  callback_id: input.callback_id,
  trigger_id: input.trigger_id ?? newTriggerId(),
  response_url: input.response_url ?? 'https://hooks.slack.com/app/T0SWITCH/1/abcdef',
  message_ts: input.message.ts,
  message: {
    type: 'message',
    ts: input.message.ts,
    text: input.message.text,
    ...(input.message.thread_ts ? { thread_ts: input.message.thread_ts } : {}),
    ...(input.message.user ? { user: input.message.user } : {}),
    ...(input.message.bot_id ? { bot_id: input.message.bot_id } : {}),
  },
});

export const viewSubmissionPayload = (
  overrides: Readonly<{
    callback_id?: string;
    user_id?: string;
    values?: Record<string, unknown>;
    trigger_id?: string;
  }> = {},
): Record<string, unknown> => ({
  type: 'view_submission',
  token: 'deprecated-verification-token',
  api_app_id: 'A0SWITCH',
  team: { id: 'T0SWITCH', domain: 'switchboard' },
  user: { id: overrides.user_id ?? 'U0ALICE', username: 'alice', team_id: 'T0SWITCH' },
  trigger_id: overrides.trigger_id ?? newTriggerId(),
  view: {
    id: `V${unique()}`,
    type: 'modal',
    callback_id: overrides.callback_id ?? 'incident.trigger',
    private_metadata: '',
    state: { values: overrides.values ?? {} },
  },
});

/** An Events API callback as Slack posts it (JSON), with a fresh `event_id` unless given. */
export const eventCallbackBody = (
  event: Record<string, unknown>,
  overrides: Readonly<{ event_id?: string; team_id?: string }> = {},
): string =>
  JSON.stringify({
    token: 'deprecated-verification-token',
    team_id: overrides.team_id ?? 'T0SWITCH',
    api_app_id: 'A0SWITCH',
    type: 'event_callback',
    event_id: overrides.event_id ?? `Ev${unique()}`,
    event_time: nowSeconds(),
    event,
  });
