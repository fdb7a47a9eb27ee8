import { describe, expect, it } from 'vitest';
import {
  type AckReminderCommand,
  type AckReminderEvent,
  ackReminderDecider,
} from '../../../machines/incident/ackReminder.ts';
import {
  type IncidentChannelCommand,
  type IncidentChannelEvent,
  incidentChannelDecider,
  incidentChannelName,
} from '../../../machines/incident/incidentChannel.ts';
import { channelNameProblem } from '../../../sandbox/simulators/slack/fakeSlack.ts';
import { deciderSpec } from '../../support/deciderSpec.ts';

// Issue 22 items 4 and 7: the rules of acknowledge reminders and of an incident's own channel.

const INCIDENT = 'incident-PINC042';
const ACK = '0b7d8a5e-3c1f-5a2b-9d4e-6f7a8b9c0d1e';
const NOW = '2026-11-23T09:30:00.000Z';
const meta = (commandId = 'c-1', actor = 'system:scheduler') => ({ now: NOW, commandId, actor });
const ids = { incident: INCIDENT, ack: ACK, round: 0 };

const reminders = deciderSpec(ackReminderDecider);
const due: AckReminderEvent = { type: 'IncidentAckReminderDue', data: { ...ids, at: NOW } };
const sent: AckReminderEvent = { type: 'IncidentAckReminderSent', data: { ...ids, to: ['U0CHEN'], at: NOW } };
const keep = (by: string, round = 0): AckReminderCommand => ({
  type: 'KeepIncidentAcknowledged',
  data: { ...ids, round, by },
  metadata: meta('c-keep', by),
});

describe('acknowledge reminders (decider)', () => {
  it('a reminder is due once per acknowledgement and round', () => {
    const remind: AckReminderCommand = { type: 'RemindIncidentAssignee', data: ids, metadata: meta() };
    reminders.given([]).when(remind).then([due]);
    reminders.given([due]).when(remind).then([]);
  });

  it('only the person reminded may keep it, once; a reminder never sent is refused', () => {
    reminders
      .given([due])
      .when(keep('U0CHEN'))
      .then({ code: 'SB_ILLEGAL_STATE', details: { reason: 'not_reminded' } });
    reminders
      .given([due, sent])
      .when(keep('U0ANA'))
      .then({ code: 'SB_ILLEGAL_STATE', details: { reason: 'not_yours' } });
    const kept: AckReminderEvent = {
      type: 'IncidentAckReminderKept',
      data: { ...ids, by: 'U0CHEN', at: NOW },
    };
    reminders.given([due, sent]).when(keep('U0CHEN')).then([kept]);
    reminders.given([due, sent, kept]).when(keep('U0CHEN')).then([]);
  });

  it('an answer to an older round is refused once a newer reminder went out', () => {
    const due1: AckReminderEvent = { type: 'IncidentAckReminderDue', data: { ...ids, round: 1, at: NOW } };
    reminders
      .given([due, sent, due1])
      .when(keep('U0CHEN'))
      .then({ code: 'SB_ILLEGAL_STATE', details: { reason: 'stale_reminder' } });
  });

  it('unanswered once, and not when kept', () => {
    const check: AckReminderCommand = { type: 'CheckIncidentAckReminderAnswer', data: ids, metadata: meta() };
    const unanswered: AckReminderEvent = { type: 'IncidentAckReminderUnanswered', data: { ...ids, at: NOW } };
    reminders.given([due, sent]).when(check).then([unanswered]);
    reminders.given([due, sent, unanswered]).when(check).then([]);
    const kept: AckReminderEvent = {
      type: 'IncidentAckReminderKept',
      data: { ...ids, by: 'U0CHEN', at: NOW },
    };
    reminders.given([due, sent, kept]).when(check).then([]);
  });
});

const channels = deciderSpec(incidentChannelDecider);
const ask = (by: string, commandId: string): IncidentChannelCommand => ({
  type: 'CreateIncidentChannel',
  data: { streamId: INCIDENT, by },
  metadata: meta(commandId, by),
});
const requested: IncidentChannelEvent = {
  type: 'IncidentChannelRequested',
  data: { streamId: INCIDENT, requestId: 'r-1', by: 'U0ANA', at: NOW },
};
const created: IncidentChannelEvent = {
  type: 'IncidentChannelCreated',
  data: { streamId: INCIDENT, requestId: 'r-1', channel: 'C0INC42', name: 'inc-42-db', at: NOW },
};

describe('an incident channel (decider)', () => {
  it('is asked for once; a second ask is pointed at it in words', () => {
    channels.given([]).when(ask('U0ANA', 'r-1')).then([requested]);
    channels
      .given([requested])
      .when(ask('U0BEN', 'r-2'))
      .then({ code: 'SB_ILLEGAL_STATE', details: { reason: 'channel_pending' } });
    channels
      .given([requested, created])
      .when(ask('U0BEN', 'r-2'))
      .then({ code: 'SB_ILLEGAL_STATE', details: { reason: 'channel_exists', channel: 'C0INC42' } });
  });

  it('may be asked again after a failure; records only its own request', () => {
    const failed: IncidentChannelEvent = {
      type: 'IncidentChannelFailed',
      data: { streamId: INCIDENT, requestId: 'r-1', reason: 'missing_scope', at: NOW },
    };
    channels
      .given([requested])
      .when({
        type: 'RecordIncidentChannelCreated',
        data: { streamId: INCIDENT, requestId: 'r-other', channel: 'C0X', name: 'x' },
        metadata: meta(),
      })
      .then([]);
    channels
      .given([requested, failed])
      .when(ask('U0BEN', 'r-2'))
      .then([{ ...requested, data: { ...requested.data, requestId: 'r-2', by: 'U0BEN' } }]);
  });

  it('is archived once per resolve', () => {
    const archive: IncidentChannelCommand = {
      type: 'ArchiveIncidentChannel',
      data: { streamId: INCIDENT, resolved: 'e-9' },
      metadata: meta(),
    };
    const archiveDue: IncidentChannelEvent = {
      type: 'IncidentChannelArchiveDue',
      data: { streamId: INCIDENT, resolved: 'e-9', channel: 'C0INC42', at: NOW },
    };
    channels.given([requested, created]).when(archive).then([archiveDue]);
    channels.given([requested, created, archiveDue]).when(archive).then([]);
    channels.given([requested]).when(archive).then([]);
  });
});

describe('incident channel names (Slack’s rules)', () => {
  it.each([
    [42, 'Database on fire', 'inc-42-database-on-fire'],
    [7, 'API: 5xx in EU (v2.1)!', 'inc-7-api-5xx-in-eu-v2-1'],
    [8, 'Café crème — über', 'inc-8-cafe-creme-uber'],
    [9, '🔥🔥🔥', 'inc-9-incident'],
    [10, 'snake_case stays', 'inc-10-snake_case-stays'],
  ])('#%i “%s” → %s', (number, title, name) => {
    expect(incidentChannelName(number, title)).toBe(name);
    expect(channelNameProblem(name)).toBeUndefined();
  });

  it('at most 80 characters, with the suffix when the name is taken', () => {
    const long = 'word '.repeat(40);
    for (const suffix of [1, 2, 19]) {
      const name = incidentChannelName(123456, long, suffix);
      expect(name.length).toBeLessThanOrEqual(80);
      expect(channelNameProblem(name)).toBeUndefined();
      if (suffix > 1) expect(name.endsWith(`-${suffix}`)).toBe(true);
    }
  });
});
