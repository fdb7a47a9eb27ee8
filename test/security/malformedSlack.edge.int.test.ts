import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newTriggerId } from '../../sandbox/simulators/slack/signing.ts';
import { type IncidentHarness, OPS, startIncidentHarness } from '../incidents/harness.ts';

/**
 * Issue 9 item 4: a signed body of a shape the parser does not expect is answered 400 with
 * nothing stored, or recorded as an unknown input (200); never a 5xx, which Slack retries. Each
 * body is signed with the app's secret, through the real receiver, Bolt and the incident listeners.
 */
let h: IncidentHarness;
beforeAll(async () => {
  h = await startIncidentHarness();
});
afterAll(async () => {
  await h.stop();
});

const form = (fields: Record<string, string>): string => new URLSearchParams(fields).toString();
const payload = (value: unknown): string => form({ payload: JSON.stringify(value) });
const action = (overrides: Record<string, unknown>): Record<string, unknown> => ({
  type: 'block_actions',
  team: { id: 'T0SWITCH' },
  user: { id: 'U0ANA', team_id: 'T0SWITCH' },
  channel: { id: OPS },
  trigger_id: newTriggerId(),
  response_url: 'https://hooks.slack.com/actions/T0SWITCH/1/abcdef',
  actions: [
    { type: 'button', action_id: 'incident.acknowledge', block_id: 'b', value: 'x', action_ts: '1.2' },
  ],
  ...overrides,
});

const cases: ReadonlyArray<readonly [string, string, 'form' | 'json']> = [
  ['payload=null', 'payload=null', 'form'],
  ['payload is a JSON array', payload([1, 2]), 'form'],
  ['payload is a JSON number', payload(42), 'form'],
  ['payload is a JSON string', payload('block_actions'), 'form'],
  ['payload is true', payload(true), 'form'],
  ['payload is not JSON', 'payload=%7Bnot-json', 'form'],
  ['payload with bad percent-encoding', 'payload=%7B%22type%22%3A%ZZ%7D', 'form'],
  ['payload given twice', `${payload(action({}))}&${payload(action({}))}`, 'form'],
  ['payload missing type', payload({ user: { id: 'U0ANA' } }), 'form'],
  ['payload type is a number', payload({ type: 7, user: { id: 'U0ANA' } }), 'form'],
  ['payload type is an object', payload({ type: { a: 1 } }), 'form'],
  ['block_actions with actions not an array', payload(action({ actions: 'incident.acknowledge' })), 'form'],
  [
    'block_actions with actions an object',
    payload(action({ actions: { action_id: 'incident.acknowledge' } })),
    'form',
  ],
  ['block_actions with a null action', payload(action({ actions: [null] })), 'form'],
  ['block_actions with an empty actions list', payload(action({ actions: [] })), 'form'],
  ['block_actions with user null', payload(action({ user: null })), 'form'],
  ['block_actions with channel a string', payload(action({ channel: OPS })), 'form'],
  [
    'block_actions with action_id a number',
    payload(action({ actions: [{ action_id: 5, value: 1 }] })),
    'form',
  ],
  [
    'view_submission with view null',
    payload({ type: 'view_submission', user: { id: 'U0ANA' }, view: null }),
    'form',
  ],
  ['view_submission with no view', payload({ type: 'view_submission', user: { id: 'U0ANA' } }), 'form'],
  [
    'view_submission with view a string',
    payload({ type: 'view_submission', user: { id: 'U0ANA' }, view: 'v' }),
    'form',
  ],
  ['view_closed with view null', payload({ type: 'view_closed', user: { id: 'U0ANA' }, view: null }), 'form'],
  ['block_suggestion with nothing', payload({ type: 'block_suggestion' }), 'form'],
  ['shortcut with nothing', payload({ type: 'shortcut' }), 'form'],
  ['message_action with nothing', payload({ type: 'message_action' }), 'form'],
  ['slash command with no command', form({ text: 'hi', user_id: 'U0ANA', team_id: 'T0SWITCH' }), 'form'],
  ['slash command given twice', 'command=%2Fincident&command=%2Foncall&text=list&user_id=U0ANA', 'form'],
  ['slash command with bad percent-encoding', 'command=%2Fincident&text=%E0%A4%A&user_id=U0ANA', 'form'],
  ['slash command with text given twice', 'command=%2Fincident&text=list&text=help&user_id=U0ANA', 'form'],
  ['an empty form', '', 'form'],
  ['JSON that is an array', '[{"type":"event_callback"}]', 'json'],
  ['JSON that is a string', '"event_callback"', 'json'],
  ['JSON that is null', 'null', 'json'],
  ['JSON that does not parse', '{"type":', 'json'],
  ['event_callback with no event', '{"type":"event_callback","event_id":"Ev1"}', 'json'],
  ['event_callback with event null', '{"type":"event_callback","event_id":"Ev2","event":null}', 'json'],
  [
    'event_callback with event a string',
    '{"type":"event_callback","event_id":"Ev3","event":"app_home_opened"}',
    'json',
  ],
  [
    'event_callback with an event of no type',
    '{"type":"event_callback","event_id":"Ev4","event":{"user":"U0ANA"}}',
    'json',
  ],
  [
    'event_callback app_home_opened with user an object',
    '{"type":"event_callback","event_id":"Ev5","event":{"type":"app_home_opened","user":{"id":"U0ANA"},"tab":"home"}}',
    'json',
  ],
  ['a JSON body with no type', '{"event":{"type":"app_mention"}}', 'json'],
  ['a JSON body with type a number', '{"type":1}', 'json'],
  ['url_verification with no challenge', '{"type":"url_verification"}', 'json'],
];

describe('signed Slack bodies of unexpected shapes', () => {
  it.each(cases)('%s: 400 with nothing stored, or 200 recorded; never 5xx', async (_name, body, kind) => {
    const before = (await h.sb.store.readAll()).length;
    const res = await h.post(body, kind);
    await res.text();
    expect([200, 400]).toContain(res.status);
    await h.idle();
    if (res.status === 400) expect((await h.sb.store.readAll()).length).toBe(before);
  });

  it('logs no request failure for any of them', () => {
    const failures = h.logs
      .lines()
      .filter((l) => /failed before it was acknowledged|request failed/.test(String(l['msg'])));
    expect(failures).toEqual([]);
  });
});
