import {
  type FakeMessage,
  type FakeSlack,
  type FakeSlackOptions,
  startFakeSlack,
} from '../../sandbox/simulators/slack/fakeSlack.ts';
import {
  blockActionPayload,
  interactionBody,
  newTriggerId,
  slashCommandBody,
  viewSubmissionPayload,
} from '../../sandbox/simulators/slack/signing.ts';
import type { Clock } from '../../src/core/clock.ts';
import { postSigned, type SignedPostOptions, TEST_BOT_TOKEN, TEST_SIGNING_SECRET } from './startApp.ts';

/**
 * The Slack side of every lifecycle harness and crash test, in one place: the fake workspace
 * started with the tests' token and signing secret, and people typing commands, clicking buttons
 * and submitting forms in it, each request signed as Slack signs it and posted to the app.
 *
 * @example
 * const fake = await startTestSlack({ users: [{ id: 'U0ANA', name: 'ana', real_name: 'Ana', email }] });
 * const slack = slackDriver(fake, { url: () => app.url, clock });
 * const typed = await slack.slash('/incident', 'list', { user: 'U0ANA', channel: 'C0OPS' });
 * expect(typed.text).toContain('No open incidents');
 */

/** The fake Slack Web API, with the token and signing secret the test apps are configured with. */
export const startTestSlack = (
  options: Omit<FakeSlackOptions, 'botToken' | 'signingSecret'> = {},
): Promise<FakeSlack> =>
  startFakeSlack({ botToken: TEST_BOT_TOKEN, signingSecret: TEST_SIGNING_SECRET, ...options });

/** The app's answer to a slash command or a form: its HTTP status, body (JSON, or `{ text }`), text. */
export type SlackAnswer = Readonly<{
  status: number;
  body: Record<string, unknown> | null;
  /** The body's `text` ('' without one). */
  text: string;
  /** The body as sent. */
  raw: string;
  /** The response_url handed out with the request, for what the app posts to it later. */
  responseUrl: string;
  /** Slack's error when it would refuse this answer (`invalid_blocks`, `msg_too_long`…). */
  refused?: string;
}>;

export type ClickOptions = Readonly<{
  user: string;
  channel: string;
  /** The channel the click's response_url answers in (default `channel`). */
  responseChannel?: string;
  /** The message the button is on. */
  messageTs?: string;
  actionTs?: string;
  triggerId?: string;
  /** Fields merged into the action (a users_select's `selected_user`, …). */
  extra?: Record<string, unknown>;
}>;

export type SlackDriver = Readonly<{
  /** POSTs a signed body to /slack/events. */
  post(body: string, kind?: 'form' | 'json', options?: SignedPostOptions): Promise<Response>;
  /**
   * `command text` typed by `user` in `channel`: sent as Slack sends it (`&amp;`, `&lt;`, `&gt;`;
   * with the command's `should_escape` in manifest.yml, `@name`/`#name` of the fake's people and
   * channels as `<@U…|name>`/`<#C…|name>`, links as `<https://…>`).
   */
  slash(
    command: string,
    text: string,
    options: Readonly<{
      user: string;
      channel: string;
      triggerId?: string;
      headers?: Record<string, string>;
    }>,
  ): Promise<SlackAnswer>;
  /** A button clicked (`value` is what the button carries). */
  click(
    actionId: string,
    value: string,
    options: ClickOptions,
  ): Promise<SlackAnswer & { payload: Record<string, unknown> }>;
  /** A modal submitted by `user`. */
  submitView(
    callbackId: string,
    values: Record<string, unknown>,
    privateMetadata: string,
    user: string,
  ): Promise<{ status: number; body: Record<string, unknown> | null }>;
  /** What the app posted to a response_url, as text, oldest first. */
  responses(responseUrl: string): string[];
  /** The bot's messages in a person's DM, oldest first. */
  dms(user: string): FakeMessage[];
}>;

/** Parses an answer's body: JSON, `{ text }` when it is not JSON, null when empty. */
export const parseAnswer = (text: string): Record<string, unknown> | null => {
  if (!text) return null;
  try {
    return JSON.parse(text) as Record<string, unknown>;
  } catch {
    return { text };
  }
};

const answerOf = async (res: Response, responseUrl: string, fake: FakeSlack): Promise<SlackAnswer> => {
  const raw = await res.text();
  const body = parseAnswer(raw);
  // Slack judges the answer as a message (Block Kit limits, lone surrogates): a refusal is kept.
  const refused = fake.judgeAnswer(body)?.error;
  return { status: res.status, body, text: textOf(body), raw, responseUrl, ...(refused ? { refused } : {}) };
};

const textOf = (body: Record<string, unknown> | null): string => (body ? String(body['text'] ?? '') : '');

/** The value of the first button with `actionId` on a message, or undefined. */
export const buttonValue = (message: Pick<FakeMessage, 'blocks'>, actionId: string): string | undefined => {
  for (const b of (message.blocks ?? []) as { elements?: { action_id?: string; value?: string }[] }[]) {
    const found = b.elements?.find((e) => e.action_id === actionId);
    if (found) return found.value ?? '';
  }
  return undefined;
};

/**
 * People using the fake workspace against the app at `url()` (a function: a restarted app may have
 * another address). With `clock`, requests are signed at the clock's time, as Bolt judges a
 * request's freshness on the app's clock.
 */
export const slackDriver = (
  fake: FakeSlack,
  options: Readonly<{ url: () => string; clock?: Clock }>,
): SlackDriver => {
  const post: SlackDriver['post'] = (body, kind = 'form', o = {}) =>
    postSigned(`${options.url()}/slack/events`, body, kind, {
      ...(options.clock ? { timestamp: Math.floor(options.clock.now().getTime() / 1000) } : {}),
      ...o,
    });
  return {
    post,
    async slash(command, text, o) {
      const responseUrl = fake.responseUrl({ channel: o.channel, user: o.user });
      const res = await post(
        slashCommandBody(
          {
            command,
            text,
            user_id: o.user,
            channel_id: o.channel,
            response_url: responseUrl,
            trigger_id: o.triggerId ?? fake.issueTrigger({ user: o.user }),
          },
          { directory: fake.directory() },
        ),
        'form',
        o.headers ? { headers: o.headers } : {},
      );
      return answerOf(res, responseUrl, fake);
    },
    async click(actionId, value, o) {
      const responseUrl = fake.responseUrl({ channel: o.responseChannel ?? o.channel, user: o.user });
      const payload = blockActionPayload({
        action_id: actionId,
        value,
        user_id: o.user,
        channel_id: o.channel,
        response_url: responseUrl,
        trigger_id: o.triggerId ?? fake.issueTrigger({ user: o.user }),
        ...(o.messageTs ? { message_ts: o.messageTs } : {}),
        ...(o.actionTs ? { action_ts: o.actionTs } : {}),
      });
      if (o.extra) {
        const actions = payload.actions as Record<string, unknown>[];
        actions[0] = { ...actions[0], ...o.extra };
      }
      const res = await post(interactionBody(payload));
      return { ...(await answerOf(res, responseUrl, fake)), payload };
    },
    async submitView(callbackId, values, privateMetadata, user) {
      const payload = viewSubmissionPayload({
        callback_id: callbackId,
        user_id: user,
        values,
        trigger_id: newTriggerId(),
      });
      (payload.view as Record<string, unknown>).private_metadata = privateMetadata;
      const res = await post(interactionBody(payload));
      return { status: res.status, body: parseAnswer(await res.text()) };
    },
    responses(responseUrl) {
      const id = responseUrl.slice(responseUrl.lastIndexOf('/') + 1);
      return fake.responsePosts.filter((p) => p.responseUrlId === id).map((p) => textOf(p.body));
    },
    dms: (user) => fake.messages(fake.dmChannel(user).id),
  };
};
