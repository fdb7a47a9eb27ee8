/**
 * The shape a signed Slack body must have before Bolt and the listeners see it. Bolt dereferences
 * fields by type (`body.event.type`, `body.view.callback_id`, `body.actions[0].action_id`,
 * `body.user.id`, …), so a signed body of another shape would throw inside Bolt and answer 500,
 * which Slack retries. The receiver answers such bodies 400 with nothing stored; a well-formed
 * body of a type nothing handles goes on (and is recorded as an unknown input).
 *
 * The shapes follow Slack's payload references:
 * https://api.slack.com/reference/interaction-payloads, https://api.slack.com/interactivity/slash-commands,
 * https://api.slack.com/apis/connections/events-api#callback-field.
 *
 * @example
 * slackBodyProblem({ type: 'event_callback', event: null }, 'json'); // 'event is not an object'
 */
type Obj = Record<string, unknown>;

const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const isStr = (v: unknown): v is string => typeof v === 'string';

/** Fields that, when present, must be objects (Slack may send `null` for team and enterprise). */
const OBJECT_FIELDS = ['user', 'channel', 'container', 'view', 'message', 'state'] as const;
const NULLABLE_OBJECT_FIELDS = ['team', 'enterprise'] as const;

const interactionProblem = (body: Obj): string | undefined => {
  for (const f of OBJECT_FIELDS) {
    if (f in body && !isObj(body[f])) return `${f} is not an object`;
  }
  for (const f of NULLABLE_OBJECT_FIELDS) {
    if (f in body && body[f] !== null && !isObj(body[f])) return `${f} is not an object`;
  }
  if (!isObj(body['user']) || !isStr(body['user']['id'])) return 'user.id is missing';
  switch (body['type']) {
    case 'block_actions': {
      const actions = body['actions'];
      if (!Array.isArray(actions) || actions.length === 0) return 'actions is not a non-empty array';
      if (!actions.every((a) => isObj(a) && isStr(a['action_id']) && (!('value' in a) || isStr(a['value']))))
        return 'an action has no action_id';
      return undefined;
    }
    case 'block_suggestion':
      return isStr(body['action_id']) && isStr(body['block_id']) ? undefined : 'action_id is missing';
    case 'view_submission':
    case 'view_closed': {
      const view = body['view'];
      if (!isObj(view) || !isStr(view['id']) || !isStr(view['callback_id'])) return 'view is missing';
      return undefined;
    }
    case 'shortcut':
    case 'message_action':
      return isStr(body['callback_id']) ? undefined : 'callback_id is missing';
    default:
      return undefined;
  }
};

/**
 * Why a parsed, signed body is not one Slack sends (undefined when it is). `source` says how it
 * came: form fields (a slash command), a form's `payload` (an interaction) or a JSON body (Events API).
 */
export const slackBodyProblem = (body: Obj, source: 'form' | 'payload' | 'json'): string | undefined => {
  if ('type' in body && !isStr(body['type'])) return 'type is not a string';
  if (source === 'form') {
    if (!Object.values(body).every(isStr)) return 'a form field is repeated';
    return isStr(body['command']) ? undefined : 'command is missing';
  }
  if (source === 'payload') {
    if (!isStr(body['type'])) return 'type is missing';
    return interactionProblem(body);
  }
  if (body['type'] === 'event_callback') {
    const event = body['event'];
    if (!isObj(event) || !isStr(event['type'])) return 'event is not an object with a type';
    if ('event_id' in body && !isStr(body['event_id'])) return 'event_id is not a string';
  }
  return undefined;
};
