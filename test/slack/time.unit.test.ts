import { describe, expect, it } from 'vitest';
import { slackDateUtc } from '../../machines/shared/slackDate.ts';
import {
  createReaderZones,
  formatInZone,
  slackDate,
  slackDatesAsFallback,
  spokenInZone,
  spokenZone,
} from '../../src/slack/time.ts';

/**
 * Issue 19 item 3: every time as its reader sees it. Zones and "now" are passed in: nothing here
 * depends on the machine's zone (`TZ=America/New_York npm test` gives the same) or the calendar.
 */
const AT = new Date('2026-11-27T13:58:48.000Z');
const UNIX = Math.floor(AT.getTime() / 1000);

describe('slackDate: Slack date tokens', () => {
  it('writes a date-and-time token the reader sees in their zone, with a fallback naming UTC', () => {
    expect(slackDate(AT)).toBe(`<!date^${UNIX}^{date_short_pretty} at {time}|Nov 27, 13:58 UTC>`);
    expect(slackDate(AT.toISOString())).toBe(slackDate(AT));
  });

  it('writes the fallback in the recipient’s zone when given, naming it', () => {
    expect(slackDate(AT, { fallbackZone: 'Asia/Singapore' })).toBe(
      `<!date^${UNIX}^{date_short_pretty} at {time}|Nov 27, 21:58 Asia/Singapore>`,
    );
    expect(slackDate(AT, { fallbackZone: 'Not/AZone' })).toContain('|Nov 27, 13:58 UTC>');
  });

  it('has seconds for timelines and a date-only form; never a time without its date', () => {
    expect(slackDate(AT, { format: 'dateTimeSecs' })).toBe(
      `<!date^${UNIX}^{date_short_pretty} at {time_secs}|Nov 27, 13:58:48 UTC>`,
    );
    expect(slackDate(AT, { format: 'date' })).toBe(`<!date^${UNIX}^{date_short_pretty}|Nov 27 2026 (UTC)>`);
    for (const format of ['dateTime', 'dateTimeSecs', 'date'] as const) {
      expect(slackDate(AT, { format })).toContain('{date_short_pretty}');
    }
  });

  it('shows what it cannot read as escaped text', () => {
    expect(slackDate('<soon>')).toBe('&lt;soon&gt;');
  });
});

describe('formatInZone: where Slack cannot format', () => {
  it('is 24-hour and names the zone by its IANA name', () => {
    expect(formatInZone(AT, 'Asia/Singapore')).toBe('Nov 27, 21:58 Asia/Singapore');
    expect(formatInZone(AT, 'America/New_York')).toBe('Nov 27, 08:58 America/New_York');
    expect(formatInZone(AT, 'Europe/Lisbon')).toBe('Nov 27, 13:58 Europe/Lisbon');
    expect(formatInZone(AT, 'Europe/Warsaw', { seconds: true })).toBe('Nov 27, 14:58:48 Europe/Warsaw');
    expect(formatInZone(AT, '')).toBe('Nov 27, 13:58 UTC');
  });

  it('says today, yesterday or tomorrow in the reader’s zone, else the date (and the year when not this one)', () => {
    // 23:30 UTC on the 27th is already the 28th in Singapore: "today" there, "yesterday" it is not.
    const now = new Date('2026-11-27T23:30:00.000Z');
    expect(formatInZone(AT, 'Asia/Singapore', { now })).toBe('yesterday, 21:58 Asia/Singapore');
    expect(formatInZone(AT, 'UTC', { now })).toBe('today, 13:58 UTC');
    expect(formatInZone(AT, 'America/New_York', { now })).toBe('today, 08:58 America/New_York');
    expect(formatInZone(new Date('2026-11-29T12:00:00Z'), 'UTC', { now })).toBe('Nov 29, 12:00 UTC');
    expect(formatInZone(new Date('2026-11-28T12:00:00Z'), 'UTC', { now })).toBe('tomorrow, 12:00 UTC');
    expect(formatInZone(AT, 'UTC', { now: new Date('2027-01-02T00:00:00Z') })).toBe('Nov 27 2026, 13:58 UTC');
  });

  it('reads out for a voice: words, the listener’s zone as a place', () => {
    const now = new Date('2026-11-27T15:00:00.000Z');
    expect(spokenInZone(AT, 'Asia/Singapore', now)).toBe('today at 21:58 Singapore time');
    expect(spokenInZone(AT, 'America/New_York')).toBe('on November 27 at 08:58 New York time');
    expect(spokenZone('UTC')).toBe('UTC');
  });
});

describe('readerZones: the recipient’s zone from their Slack profile, cached', () => {
  const stub = (tz: Record<string, string>, failing = new Set<string>()) => {
    const calls: string[] = [];
    const slack = {
      users: {
        info: async ({ user }: { user: string }) => {
          calls.push(user);
          if (failing.has(user)) throw new Error('slack down');
          return { ok: true, user: { id: user, tz: tz[user], tz_label: 'Label', tz_offset: 28_800 } };
        },
      },
    } as unknown as Parameters<typeof createReaderZones>[0]['slack'];
    return { slack, calls };
  };

  it('a storm of lookups for one person calls users.info once within the TTL, again after it', async () => {
    let now = 0;
    const { slack, calls } = stub({ U0CHEN: 'Asia/Singapore' });
    const zones = createReaderZones({ slack, now: () => now, ttlMs: 60_000 });
    const all = await Promise.all(Array.from({ length: 50 }, () => zones.of('U0CHEN')));
    expect(new Set(all.map((z) => z.tz))).toEqual(new Set(['Asia/Singapore']));
    expect(all[0]).toEqual({ tz: 'Asia/Singapore', label: 'Label', offsetSeconds: 28_800 });
    now = 59_999;
    await zones.of('U0CHEN');
    expect(calls).toEqual(['U0CHEN']);
    now = 60_000;
    await zones.of('U0CHEN');
    expect(calls).toEqual(['U0CHEN', 'U0CHEN']);
    zones.forget('U0CHEN');
    await zones.of('U0CHEN');
    expect(calls).toHaveLength(3);
  });

  it('UTC when Slack does not say or fails; a failure is asked again after a minute, not per message', async () => {
    let now = 0;
    const { slack, calls } = stub({ U0ANA: 'Mars/Olympus' }, new Set(['U0BEN']));
    const zones = createReaderZones({ slack, now: () => now, retryMs: 60_000 });
    expect((await zones.of('U0ANA')).tz).toBe('UTC');
    expect((await zones.of('U0BEN')).tz).toBe('UTC');
    await zones.of('U0BEN');
    expect(calls.filter((c) => c === 'U0BEN')).toHaveLength(1);
    now = 60_000;
    await zones.of('U0BEN');
    expect(calls.filter((c) => c === 'U0BEN')).toHaveLength(2);
    // A channel has no zone: nothing asked.
    expect((await zones.of('C0OPS')).tz).toBe('UTC');
    expect(calls).not.toContain('C0OPS');
  });
});

describe('slackDatesAsFallback: Slack text for an SMS', () => {
  it('turns each token into its zone-naming fallback', () => {
    expect(slackDatesAsFallback(`Already acknowledged by someone ${slackDate(AT)}.`)).toBe(
      'Already acknowledged by someone Nov 27, 13:58 UTC.',
    );
  });

  it('a machine writes the same token as the surface, with a UTC fallback (refusals shown in Slack)', () => {
    expect(slackDateUtc('2026-11-27T13:58:48Z')).toBe(slackDate(new Date('2026-11-27T13:58:48Z')));
    expect(slackDateUtc('2026-11-27T09:00:30Z', 'dateTimeSecs')).toBe(
      slackDate(new Date('2026-11-27T09:00:30Z'), { format: 'dateTimeSecs' }),
    );
    expect(slackDateUtc('not a time')).toBe('not a time');
  });
});
