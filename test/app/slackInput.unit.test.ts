import { describe, expect, it } from 'vitest';
import { buildSlackInput } from '../../handlers/middleware/slackInput.ts';
import { slackInboxEventId } from '../../src/application/inbox.ts';

const receivedAt = new Date('2026-11-22T02:00:00.000Z');

describe('buildSlackInput', () => {
  it('records a slash command by trigger id, without the deprecated token', () => {
    const input = buildSlackInput(
      {
        token: 'legacy',
        command: '/incident',
        text: 'ack P1',
        user_id: 'U1',
        team_id: 'T1',
        channel_id: 'C1',
        trigger_id: 'tr.1',
        response_url: 'https://hooks.slack.com/commands/x',
      },
      { receivedAt },
    );
    expect(input).toMatchObject({
      source: 'slack',
      inputKind: 'slash_command',
      deliveryId: 'tr.1',
      eventId: slackInboxEventId('tr.1'),
      name: '/incident',
      actor: 'U1',
      teamId: 'T1',
      channelId: 'C1',
      responseUrl: 'https://hooks.slack.com/commands/x',
      receivedAt: '2026-11-22T02:00:00.000Z',
    });
    expect(input?.payload).not.toHaveProperty('token');
  });

  it('keys block actions by trigger id and action_ts', () => {
    const input = buildSlackInput(
      {
        type: 'block_actions',
        trigger_id: 'tr.2',
        user: { id: 'U2', team_id: 'T2' },
        channel: { id: 'C2' },
        actions: [{ action_id: 'incident.acknowledge', action_ts: '17.5' }],
      },
      { receivedAt },
    );
    expect(input).toMatchObject({
      inputKind: 'block_action',
      deliveryId: 'tr.2:17.5',
      name: 'incident.acknowledge',
      actor: 'U2',
      teamId: 'T2',
      channelId: 'C2',
    });
  });

  it('keys events by event_id and keeps the retry headers', () => {
    const input = buildSlackInput(
      {
        type: 'event_callback',
        team_id: 'T3',
        event_id: 'Ev1',
        event: { type: 'app_home_opened', user: 'U3', channel: 'D3' },
      },
      { receivedAt, retryNum: 2, retryReason: 'http_timeout' },
    );
    expect(input).toMatchObject({
      inputKind: 'event',
      deliveryId: 'Ev1',
      name: 'app_home_opened',
      actor: 'U3',
      channelId: 'D3',
      retryNum: 2,
      retryReason: 'http_timeout',
    });
  });

  it('keys view_closed (which has no trigger) by view id and hash', () => {
    const input = buildSlackInput(
      {
        type: 'view_closed',
        user: { id: 'U4' },
        view: { id: 'V1', hash: 'h1', callback_id: 'timeOff.request' },
      },
      { receivedAt },
    );
    expect(input).toMatchObject({
      inputKind: 'view_closed',
      deliveryId: 'view_closed:V1:h1',
      name: 'timeOff.request',
    });
  });

  it('classifies options and shortcuts, and ignores bodies that are not inputs', () => {
    expect(
      buildSlackInput(
        { type: 'block_suggestion', action_id: 'incident.service', user: { id: 'U5' } },
        { receivedAt },
      )?.inputKind,
    ).toBe('options');
    expect(
      buildSlackInput({ type: 'shortcut', callback_id: 'incident.new', trigger_id: 'tr.6' }, { receivedAt }),
    ).toMatchObject({ inputKind: 'shortcut', deliveryId: 'tr.6' });
    expect(buildSlackInput({ type: 'url_verification' }, { receivedAt })).toBeUndefined();
  });

  it('stores sensitive modal values as [Redacted] and leaves the original body alone', () => {
    const body = {
      type: 'view_submission',
      trigger_id: 'tr.7',
      user: { id: 'U7' },
      view: {
        id: 'V7',
        callback_id: 'verify.code',
        state: {
          values: {
            code: { 'verify.code': { type: 'plain_text_input', value: '482913' } },
            note: { n: { value: 'hi' } },
          },
        },
      },
    };
    const input = buildSlackInput(body, { receivedAt, sensitiveActionIds: new Set(['verify.code']) });
    expect(JSON.stringify(input?.payload)).not.toContain('482913');
    expect(JSON.stringify(input?.payload)).toContain('"hi"');
    expect(body.view.state.values.code['verify.code'].value).toBe('482913');
  });

  it('keeps `[Redacted]` for the text of a sensitive slash command, and the text of the others', () => {
    const slash = (command: string, text: string) => ({
      command,
      text,
      user_id: 'U1',
      channel_id: 'C1',
      team_id: 'T1',
      trigger_id: `t-${command}`,
    });
    const meta = { receivedAt, sensitiveSlashCommands: new Set(['/verify']) };
    const verify = buildSlackInput(slash('/verify', '+44 7700 900123'), meta);
    expect(JSON.stringify(verify?.payload)).not.toContain('7700');
    expect(verify?.payload).toMatchObject({ command: '/verify', text: '[Redacted]' });
    const incident = buildSlackInput(slash('/incident', 'trigger db 7700 down'), meta);
    expect(incident?.payload).toMatchObject({ text: 'trigger db 7700 down' });
  });
});
