import { afterEach, describe, expect, it } from 'vitest';
import { ANA, DANA, type JoinsHarness, PAYMENTS_SCHEDULE, PD_IDS, startJoinsHarness } from './harness.ts';

/** The joins world is what its header says: the rota, the org, approved leave the Switchboard way. */
let h: JoinsHarness | undefined;
afterEach(async () => {
  await h?.stop();
  h = undefined;
});

describe('the joins harness', () => {
  it('puts Ben on call this week and Ana next week, and /oncall in #payments says so', async () => {
    h = await startJoinsHarness();
    const { monday, nextMonday, from, to } = h.nextWeek();
    expect([from, to]).toEqual(['2026-11-30', '2026-12-04']);
    const now = await h.oncall('Payments API');
    // Ben is named as Slack shows him (a mention: the leave check resolved him, issue 20).
    expect(now).toContain(
      `Level 1: <@U0BEN> (Payments primary) until <!date^${Date.parse('2026-11-30T00:00:00Z') / 1000}^{date_short_pretty} at {time}|Nov 30, 00:00 UTC> · next: Ana Silva`,
    );
    const ana = await h.sb.lifecycle('incidents')?.pagerduty.listOnCalls({
      since: monday.toISOString(),
      until: nextMonday.toISOString(),
      userIds: [PD_IDS.ana],
      limit: 100,
      offset: 0,
    });
    expect(ana?.items.map((o) => o.schedule?.id)).toContain(PAYMENTS_SCHEDULE);
  });

  it('gives Ana approved leave through Slack: Dana approves, HR confirms', async () => {
    h = await startJoinsHarness();
    const id = await h.approvedLeave(ANA, 'holiday 2026-12-14 to 2026-12-15 Family');
    expect(await h.types(id)).toContain('TimeOffConfirmed');
    expect(h.api.readModel.view(id)?.approver.slackUserId).toBe(DANA);
  });
});
