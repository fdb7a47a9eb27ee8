import { describe, expect, it } from 'vitest';
import { type CardOnCall, onCallBlocks, uncoveredConfirm } from '../../src/timeOff/coverCard.ts';
import { parseCoverValue, TIME_OFF_COVER_ACTION } from '../../src/timeOff/coverIds.ts';

const ID = '7d3c2a10-5b6e-4f8a-9c1d-2e3f4a5b6c7d';
const SHIFT = {
  scheduleId: 'PSCHPAY',
  scheduleName: 'Payments primary',
  escalationPolicyId: 'PEPPAY',
  escalationPolicyName: 'Payments',
  level: 1,
  start: '2026-11-30T00:00:00.000Z',
  end: '2026-12-05T00:00:00.000Z',
};
const candidate = (id: string, name: string, nightPages: number | null) => ({
  slackUserId: id,
  displayName: name,
  firstName: name.split(' ')[0] ?? name,
  nightPages,
});
const onCall = (o: Partial<CardOnCall> = {}): CardOnCall => ({
  tz: 'Asia/Singapore',
  checking: 'done',
  failure: null,
  conflicts: {
    checkId: `${ID}:conflicts:1`,
    shifts: [SHIFT],
    knownUntil: '2026-12-05T00:00:00.000Z',
    candidates: [
      candidate('U0BEN', 'Ben Okafor', 0),
      candidate('U0CHEN', 'Chen Wei', 2),
      candidate('U0FRANK', 'Frank Moreau', null),
    ],
    unmapped: false,
    at: '2026-11-23T09:00:05.000Z',
  },
  cover: null,
  requestEnd: '2026-12-05T00:00:00.000Z',
  ...o,
});
const text = (blocks: unknown) => JSON.stringify(blocks);
type Element = {
  type: string;
  action_id?: string;
  value?: string;
  text?: { text: string };
  options?: { value: string; text: { text: string } }[];
};
const elements = (blocks: readonly unknown[]): Element[] =>
  (blocks as { type: string; elements?: Element[] }[])
    .filter((b) => b.type === 'actions')
    .flatMap((b) => b.elements ?? []);

describe('the approval card’s on-call section', () => {
  it('lists the shift in the approver’s zone and offers the top colleague, the others and anyone else', () => {
    const blocks = onCallBlocks(ID, '<@U0ANA>', onCall(), true);
    expect(text(blocks)).toContain('Mon 30 Nov 08:00 – Sat 5 Dec 2026 08:00 GMT+8 (Asia/Singapore)');
    const [button, select, ask, users] = elements(blocks);
    // Issue 20: "Approve and ask for cover" (the ranked colleagues asked by DM), before anyone-else.
    expect(ask).toMatchObject({
      type: 'button',
      action_id: TIME_OFF_COVER_ACTION.approveAsk,
      text: { text: 'Approve and ask for cover' },
      value: ID,
    });
    expect(button).toMatchObject({
      type: 'button',
      action_id: TIME_OFF_COVER_ACTION.approveCover,
      text: { text: 'Approve and cover with Ben' },
    });
    expect(parseCoverValue(button?.value)).toEqual({ timeOffId: ID, slackUserId: 'U0BEN' });
    expect(select?.type).toBe('static_select');
    expect(select?.options?.map((o) => [o.text.text, parseCoverValue(o.value)?.slackUserId])).toEqual([
      ['Chen Wei (2 night pages in 30 days)', 'U0CHEN'],
      ['Frank Moreau', 'U0FRANK'],
    ]);
    expect(users).toMatchObject({
      type: 'users_select',
      action_id: TIME_OFF_COVER_ACTION.approveCoverUser,
      confirm: {},
    });
  });

  it('no buttons once decided, while checking, or with nothing an override can cover; no section with incidents off', () => {
    expect(elements(onCallBlocks(ID, 'Ana', onCall(), false))).toEqual([]);
    expect(text(onCallBlocks(ID, 'Ana', onCall({ checking: 'retrying', conflicts: null }), true))).toContain(
      'On-call conflicts could not be checked yet',
    );
    const direct = onCall();
    const noSchedule = onCallBlocks(
      ID,
      'Ana',
      {
        ...direct,
        conflicts: direct.conflicts && { ...direct.conflicts, shifts: [{ ...SHIFT, scheduleId: null }] },
      },
      true,
    );
    expect(elements(noSchedule)).toEqual([]);
    expect(text(noSchedule)).toContain('no override can cover that');
    expect(onCallBlocks(ID, 'Ana', null, true)).toEqual([]);
  });

  it('issue 20: plain Approve over an uncovered shift confirms first, naming it in the approver’s zone', () => {
    expect(uncoveredConfirm(onCall())).toEqual({
      title: 'Approve with no cover?',
      text: "They are on call: Payments primary, Mon 30 Nov 08:00 – Sat 5 Dec 2026 08:00 GMT+8 (Asia/Singapore). Nobody covers it: the schedule's channel is asked to.",
    });
    const c = onCall();
    expect(uncoveredConfirm({ ...c, conflicts: c.conflicts && { ...c.conflicts, shifts: [] } })).toBeNull();
    expect(uncoveredConfirm(null)).toBeNull();
  });

  it('says when the service’s answer stops short of the request', () => {
    const c = onCall();
    const blocks = onCallBlocks(
      ID,
      'Ana',
      { ...c, conflicts: c.conflicts && { ...c.conflicts, knownUntil: '2026-12-03T00:00:00.000Z' } },
      true,
    );
    expect(text(blocks)).toContain(
      'publishes on-call shifts only until Thu 3 Dec 2026 08:00 GMT+8 (Asia/Singapore): later ones are not known yet',
    );
  });

  it('with nobody free, only anyone-else, and says so', () => {
    const c = onCall();
    const blocks = onCallBlocks(
      ID,
      'Ana',
      { ...c, conflicts: c.conflicts && { ...c.conflicts, candidates: [] } },
      true,
    );
    expect(elements(blocks).map((e) => e.type)).toEqual(['users_select']);
    expect(text(blocks)).toContain('No colleague on these schedules is free then');
  });

  it('parses only our own values', () => {
    expect(parseCoverValue(`${ID}:U0BEN`)).toEqual({ timeOffId: ID, slackUserId: 'U0BEN' });
    for (const bad of [`${ID}:`, `${ID}:ben`, `../x:U0BEN`, ID, 42, `${ID}:U0BEN:extra`])
      expect(parseCoverValue(bad)).toBeNull();
  });
});
