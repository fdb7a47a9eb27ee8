import { createHash } from 'node:crypto';
import type { AllMiddlewareArgs } from '@slack/bolt';
import { type SlackInput, slackInboxEventId, slackInputKind } from '../../src/application/inbox.ts';
import { newId } from '../../src/core/ids.ts';
import type { JsonObject } from '../../src/core/messages.ts';

/**
 * Builds the SlackInput record of one Slack request body (one record per input,
 * appended before ack). Pure: time and retry headers come in as arguments.
 *
 * `sensitiveActionIds`: inputs whose values must not be stored in clear (a one-time code typed
 * into a modal). Their values in `view.state.values` are replaced by `[Redacted]` in the recorded
 * payload; the listener still sees the original body.
 */
export type SlackInputMeta = Readonly<{
  receivedAt: Date;
  retryNum?: number | undefined;
  retryReason?: string | undefined;
  sensitiveActionIds?: ReadonlySet<string>;
  /**
   * Slash commands whose typed text is personal data (`/verify +44 7700 900123`): the recorded
   * payload's `text` is `[Redacted]`; the listener parses the live body and records what it needs.
   */
  sensitiveSlashCommands?: ReadonlySet<string>;
}>;

/** Where listeners find the input the recording middleware built: `context.slackInput`. */
export const SLACK_INPUT_KEY = 'slackInput';

/** Reads the SlackInput the recording middleware (recordSlackInput.ts) put on Bolt's context. */
export const slackInputOf = (context: AllMiddlewareArgs['context']): SlackInput => {
  const input = context[SLACK_INPUT_KEY] as SlackInput | undefined;
  if (!input) throw new Error('no SlackInput on context: is recordSlackInputs() registered first?');
  return input;
};

type Obj = Record<string, unknown>;
const obj = (v: unknown): Obj | undefined =>
  typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Obj) : undefined;
const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);

const eventChannel = (event: Obj | undefined): string | undefined =>
  str(event?.['channel']) ?? str(obj(event?.['channel'])?.['id']) ?? str(obj(event?.['item'])?.['channel']);

const redactSensitive = (payload: Obj, sensitive: ReadonlySet<string> | undefined): Obj => {
  const values = obj(obj(obj(payload['view'])?.['state'])?.['values']);
  if (!sensitive || sensitive.size === 0 || !values) return payload;
  const hit = Object.values(values).some((block) =>
    Object.keys(obj(block) ?? {}).some((a) => sensitive.has(a)),
  );
  if (!hit) return payload;
  const copy = structuredClone(payload);
  const copyValues = obj(obj(obj(copy['view'])?.['state'])?.['values']) ?? {};
  for (const block of Object.values(copyValues)) {
    const actions = obj(block) ?? {};
    for (const [actionId, state] of Object.entries(actions)) {
      if (sensitive.has(actionId)) actions[actionId] = { ...obj(state), value: '[Redacted]' };
    }
  }
  return copy;
};

/** The SlackInput of a request body, or undefined for bodies that are not inputs. */
export const buildSlackInput = (body: Obj, meta: SlackInputMeta): SlackInput | undefined => {
  const inputKind = slackInputKind(body);
  if (!inputKind) return undefined;
  const { token: _deprecatedToken, ...withoutToken } = body;
  const redacted = redactSensitive(withoutToken, meta.sensitiveActionIds);
  const command = inputKind === 'slash_command' ? str(body['command']) : undefined;
  const payload = (
    command && meta.sensitiveSlashCommands?.has(command) && typeof redacted['text'] === 'string'
      ? { ...redacted, text: '[Redacted]' }
      : redacted
  ) as JsonObject;
  const user = obj(body['user']);
  const view = obj(body['view']);
  const event = obj(body['event']);
  const firstAction = Array.isArray(body['actions']) ? obj(body['actions'][0]) : undefined;
  const triggerId = str(body['trigger_id']);

  let deliveryId: string;
  let name: string;
  let actor: string | undefined = str(user?.['id']);
  let teamId = str(obj(body['team'])?.['id']) ?? str(user?.['team_id']);
  let channelId = str(obj(body['channel'])?.['id']) ?? str(obj(body['container'])?.['channel_id']);
  switch (inputKind) {
    case 'slash_command':
      deliveryId = triggerId ?? `command:${newId()}`;
      name = str(body['command']) ?? '/unknown';
      actor = str(body['user_id']);
      teamId = str(body['team_id']);
      channelId = str(body['channel_id']);
      break;
    case 'block_action': {
      // trigger_id + action_ts: a double click is two inputs, a redelivery of one click is not.
      const actionTs = str(firstAction?.['action_ts']) ?? str(body['action_ts']) ?? '';
      deliveryId = `${triggerId ?? newId()}:${actionTs}`;
      name = str(firstAction?.['action_id']) ?? str(body['callback_id']) ?? 'unknown_action';
      break;
    }
    case 'view_submission':
      deliveryId = triggerId ?? `view:${str(view?.['id'])}:${str(view?.['hash'])}`;
      name = str(view?.['callback_id']) ?? 'unknown_view';
      break;
    case 'view_closed':
      // No trigger_id on view_closed; a view's id and hash identify this closing.
      deliveryId = `view_closed:${str(view?.['id']) ?? newId()}:${str(view?.['hash']) ?? ''}`;
      name = str(view?.['callback_id']) ?? 'unknown_view';
      break;
    case 'event':
      deliveryId = str(body['event_id']) ?? `event:${newId()}`;
      name = str(event?.['type']) ?? 'unknown_event';
      actor = str(event?.['user']) ?? str(obj(event?.['user'])?.['id']);
      teamId = str(body['team_id']) ?? teamId;
      channelId = eventChannel(event);
      break;
    case 'options': {
      // A typeahead lookup carries no delivery id: derive one from what it asks (who, in which
      // view or message, which field, what was typed), so a replayed request is one input. The
      // same text typed again in the same view version is the same question.
      const container = obj(body['container']);
      const asked = [
        teamId,
        actor,
        str(view?.['id']) ?? str(container?.['message_ts']) ?? '',
        str(view?.['hash']) ?? '',
        channelId ?? '',
        str(body['action_id']) ?? str(body['callback_id']) ?? '',
        str(body['block_id']) ?? '',
        typeof body['value'] === 'string' ? body['value'] : '',
      ];
      deliveryId = `options:${createHash('sha256').update(JSON.stringify(asked)).digest('base64url')}`;
      name = str(body['action_id']) ?? str(body['callback_id']) ?? 'unknown_options';
      break;
    }
    case 'shortcut':
      deliveryId = triggerId ?? `shortcut:${newId()}`;
      name = str(body['callback_id']) ?? 'unknown_shortcut';
      break;
  }
  return {
    source: 'slack',
    inputKind,
    deliveryId,
    eventId: slackInboxEventId(deliveryId),
    name,
    receivedAt: meta.receivedAt.toISOString(),
    actor,
    teamId,
    channelId,
    triggerId,
    responseUrl: str(body['response_url']),
    retryNum: meta.retryNum,
    retryReason: meta.retryReason,
    payload,
  };
};
