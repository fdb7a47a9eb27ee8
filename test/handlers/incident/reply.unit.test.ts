import { describe, expect, it } from 'vitest';
import { slackCommand } from '../../../handlers/incident/reply.ts';
import { buildSlackInput } from '../../../handlers/middleware/slackInput.ts';
import type { SlackInput } from '../../../src/application/inbox.ts';

const input = buildSlackInput(
  {
    command: '/incident',
    text: 'ack 42',
    user_id: 'U0ANA',
    team_id: 'T0SWITCH',
    channel_id: 'C0OPS',
    trigger_id: '123.456.abc',
    response_url: 'https://hooks.slack.com/commands/T0SWITCH/1/x',
  },
  { receivedAt: new Date('2026-11-22T02:00:00.000Z') },
) as SlackInput;

describe('slackCommand (typed incident commands from the edge)', () => {
  it('puts the acting Slack user in `by` and leaves `asUser` for the enricher on user commands', () => {
    const c = slackCommand(input, { type: 'AcknowledgeIncident', data: { streamId: 'incident-P1' } });
    expect(c).toMatchObject({
      type: 'AcknowledgeIncident',
      data: { streamId: 'incident-P1', by: 'U0ANA', asUser: null },
      metadata: { actor: 'U0ANA', channelId: 'C0OPS', now: '2026-11-22T02:00:00.000Z' },
    });
  });

  it('gives routing commands a `by` and no `asUser`, and takes metadata overrides', () => {
    const c = slackCommand(
      input,
      { type: 'SubscribeChannelToIncidents', data: { serviceQuery: 'Payments API', channel: 'C0OPS' } },
      { channelId: 'C0OTHER' },
    );
    expect(c.data).toEqual({ serviceQuery: 'Payments API', channel: 'C0OPS', by: 'U0ANA' });
    expect(c.metadata.channelId).toBe('C0OTHER');
  });
});
