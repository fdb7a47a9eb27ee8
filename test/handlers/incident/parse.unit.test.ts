import { describe, expect, it } from 'vitest';
import { parseIncidentText, parseOnCallText } from '../../../handlers/incident/parse.ts';

describe('parseIncidentText', () => {
  it.each([
    ['', { sub: 'help' }],
    ['help', { sub: 'help' }],
    ['trigger', { sub: 'trigger', form: true }],
    [
      'trigger Payments API db down',
      { sub: 'trigger', form: false, serviceQuery: null, serviceAndTitle: 'Payments API db down', title: '' },
    ],
    [
      'trigger "Payments API" db down',
      { sub: 'trigger', form: false, serviceQuery: 'Payments API', serviceAndTitle: null, title: 'db down' },
    ],
    ['list', { sub: 'list', service: null }],
    ['list Payments DB', { sub: 'list', service: 'Payments DB' }],
    ['ack #42', { sub: 'ack', ref: '42' }],
    ['acknowledge Q1ABC', { sub: 'ack', ref: 'Q1ABC' }],
    ['resolve 42 disk cleaned', { sub: 'resolve', ref: '42', resolution: 'disk cleaned' }],
    ['escalate 42', { sub: 'escalate', ref: '42', level: null }],
    ['escalate 42 3', { sub: 'escalate', ref: '42', level: 3 }],
    ['note 42', { sub: 'note', ref: '42', content: null }],
    ['note 42   rolled   back', { sub: 'note', ref: '42', content: 'rolled   back' }],
    ['reassign 42 <@U0BEN|ben> <@U0CHEN>', { sub: 'reassign', ref: '42', users: ['U0BEN', 'U0CHEN'] }],
    ['reassign 42', { sub: 'reassign', ref: '42', users: [] }],
    ['timeline 42', { sub: 'timeline', ref: '42' }],
    ['subscribe Payments API', { sub: 'subscribe', service: 'Payments API' }],
    ['unsubscribe', { sub: 'unsubscribe', service: null }],
  ])('%j', (text, expected) => {
    expect(parseIncidentText(text)).toEqual(expected);
  });

  it.each([
    ['ack', 'Which incident?', '/incident ack'],
    ['ack 42 43', 'takes only the incident', '/incident ack'],
    ['show ../etc', 'is not an incident number or id', '/incident show'],
    ['escalate 42 0', 'The level must be a number from 1 to 20', '/incident escalate'],
    ['reassign 42 @ben', 'is not a Slack user', '/incident reassign'],
    ['trigger payments', 'Give a service and a title', '/incident trigger'],
    ['trigger "Payments API"', 'Say what is broken', '/incident trigger'],
    ['launch rockets', 'not something Switchboard knows', '/incident help'],
  ])('%j is explained', (text, error, usage) => {
    const parsed = parseIncidentText(text);
    expect(parsed).toMatchObject({
      error: expect.stringContaining(error),
      usage: expect.stringContaining(usage),
    });
  });
});

describe('parseOnCallText', () => {
  it('reads everyone, a person, a name, help; refuses a bare @name', () => {
    expect(parseOnCallText('')).toEqual({ kind: 'everyone' });
    expect(parseOnCallText('help')).toEqual({ kind: 'help' });
    expect(parseOnCallText('<@U0ANA|ana>')).toEqual({ kind: 'user', slackUserId: 'U0ANA' });
    expect(parseOnCallText('Payments Primary')).toEqual({ kind: 'text', text: 'Payments Primary' });
    expect(parseOnCallText('@ana')).toMatchObject({ error: expect.stringContaining('not a Slack user') });
  });

  it('issue 20: reads cover (your next shift), one day, a range; refuses what is not a day, escaped', () => {
    expect(parseOnCallText('cover')).toEqual({ kind: 'cover', from: null, to: null });
    expect(parseOnCallText('Cover 2026-11-30')).toEqual({
      kind: 'cover',
      from: '2026-11-30',
      to: '2026-11-30',
    });
    expect(parseOnCallText('cover 2026-11-30 to 2026-12-04')).toEqual({
      kind: 'cover',
      from: '2026-11-30',
      to: '2026-12-04',
    });
    expect(parseOnCallText('cover 2026-02-30')).toMatchObject({
      error: expect.stringContaining('not a day'),
    });
    expect(parseOnCallText('cover <!here>')).toMatchObject({
      error: expect.stringContaining('&lt;!here&gt;'),
    });
    expect(parseOnCallText('cover 2026-12-04 to 2026-11-30')).toMatchObject({
      error: 'The last day is before the first.',
    });
    expect(parseOnCallText('cover 2026-11-30 until 2026-12-04')).toMatchObject({
      usage: '/oncall cover [YYYY-MM-DD [to YYYY-MM-DD]]',
    });
  });
});

describe('the trigger example (issue 9 item 10)', () => {
  it('is built from the service the user typed, not a service their account may not have', () => {
    const parsed = parseIncidentText('trigger db');
    expect(parsed).toMatchObject({
      error:
        'Give a service and a title: `/incident trigger db &lt;what is broken&gt;`, or `/incident trigger` alone to pick the service in a form.',
    });
    expect(JSON.stringify(parsed)).not.toContain('Payments API');
  });
});

describe('priority, urgency and bulk moves (issue 22 items 1 and 5)', () => {
  it.each([
    ['priority 42 P1', { sub: 'priority', ref: '42', priority: 'P1' }],
    ['priority #42 SEV 1', { sub: 'priority', ref: '42', priority: 'SEV 1' }],
    ['urgency 42 LOW', { sub: 'urgency', ref: '42', urgency: 'low' }],
    ['urgency 42 high', { sub: 'urgency', ref: '42', urgency: 'high' }],
    ['ack mine', { sub: 'ackMine' }],
    ['acknowledge MINE', { sub: 'ackMine' }],
    ['resolve 41 42 #43 42', { sub: 'resolveMany', refs: ['41', '42', '43'] }],
    // One number and words: a resolution, as before.
    ['resolve 42 rolled back 3', { sub: 'resolve', ref: '42', resolution: 'rolled back 3' }],
    ['resolve 42 43 rolled back', { sub: 'resolve', ref: '42', resolution: '43 rolled back' }],
  ])('%s', (text, expected) => {
    expect(parseIncidentText(text)).toEqual(expected);
  });

  it.each([
    ['priority', 'Which incident?', '/incident priority <id or number> <priority, e.g. P1>'],
    ['priority 42', 'Which priority?', '/incident priority'],
    ['urgency 42', 'High or low?', '/incident urgency <id or number> high|low'],
    ['urgency 42 <!channel>', 'not “&lt;!channel&gt;”', '/incident urgency'],
    ['urgency 42 high now', 'high or low', '/incident urgency'],
    ['ack mine please', '`ack mine` takes nothing more.', '/incident ack mine'],
  ])('%s is refused with the usage', (text, error, usage) => {
    const parsed = parseIncidentText(text) as { error: string; usage: string };
    expect(parsed.error).toContain(error);
    expect(parsed.usage).toContain(usage);
    expect(parsed.error).not.toContain('<!channel>');
  });

  it('refuses more incidents at once than it takes', () => {
    const many = Array.from({ length: 101 }, (_, i) => String(i + 1)).join(' ');
    expect(parseIncidentText(`resolve ${many}`)).toMatchObject({
      error: 'That is 101 incidents; give at most 100 at a time.',
    });
  });
});
