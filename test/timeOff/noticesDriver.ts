import { randomUUID } from 'node:crypto';
import { expect } from 'vitest';
import type { FakeMessage } from '../../sandbox/simulators/slack/fakeSlack.ts';
import { shortTimeOffId } from '../../src/timeOff/blocks/timeOffIds.ts';
import { ANA, DANA, HR_EMPLOYEES, HR_IDS, messageText, type TimeOffHarness } from './harness.ts';

/**
 * Drives time-off requests with commands on the bus, as the Slack listeners and the HR processor
 * send them, and reads back what Switchboard DMed (the notices tests).
 */
export const ANA_P = { hrId: HR_IDS.ana, slackUserId: ANA, displayName: 'Ana Silva' };
export const DANA_P = { hrId: HR_IDS.dana, slackUserId: DANA, displayName: 'Dana Lee' };

export type Ask = Readonly<{
  policyType?: string;
  startDate?: string;
  endDate?: string;
  description?: string;
}>;

export type Button = { action_id: string; value?: string };

/** The buttons of a message (actions blocks and section accessories). */
export const buttons = (m: Readonly<{ blocks?: unknown[] | undefined }>): Button[] =>
  (
    (m.blocks ?? []) as {
      elements?: { action_id?: string; value?: string }[];
      accessory?: { action_id?: string; value?: string };
    }[]
  )
    .flatMap((b) => [...(b.elements ?? []), ...(b.accessory ? [b.accessory] : [])])
    .filter((e): e is Button => typeof e.action_id === 'string');

export const noticesDriver = (h: () => TimeOffHarness) => {
  const send = async (type: string, data: Record<string, unknown>, actor: string, now?: string) => {
    await h().sb.bus.dispatch({
      type,
      data,
      metadata: { now: now ?? h().clock.now().toISOString(), commandId: randomUUID(), actor },
    } as never);
    await h().idle();
  };

  const ask = (a: Ask = {}) => ({
    policyType: a.policyType ?? 'Holiday',
    startDate: a.startDate ?? '2026-12-07',
    endDate: a.endDate ?? '2026-12-09',
    startPortion: 'all_day',
    endPortion: 'all_day',
    description: a.description ?? '',
    holidays: [],
    approvalRules: null,
  });

  const d = {
    send,
    ask,
    /** Ana asks Dana for time off; the request's id. */
    async request(a: Ask = {}): Promise<string> {
      const timeOffId = randomUUID();
      await send('RequestTimeOff', { timeOffId, ...ask(a), requester: ANA_P, approver: DANA_P }, ANA);
      return timeOffId;
    },
    /** The directory as the HR sync keeps it (a full read), so teams and Home know who is who. */
    async seedDirectory() {
      await send(
        'RecordDirectorySnapshot',
        {
          employees: HR_EMPLOYEES.map((e) => ({
            hrId: e.id,
            email: e.email,
            displayName: e.displayName,
            managerHrId: e.managerId,
            site: e.site,
            status: 'active',
          })),
        },
        'system:test',
      );
    },
    /** The data of the first (or `last`) event of `type` in the request's stream. */
    async dataOf<T>(timeOffId: string, type: string, last = false): Promise<T> {
      const all = (await h().sb.store.readStream(`timeoff-${timeOffId}`)).filter((e) => e.type === type);
      const found = last ? all.at(-1) : all[0];
      if (!found) throw new Error(`no ${type} in the request's stream`);
      return found.data as T;
    },
    async cardRef(timeOffId: string, last = false) {
      return (
        await d.dataOf<{ card: { channel: string; ts: string } }>(timeOffId, 'TimeOffApprovalAsked', last)
      ).card;
    },
    /** Dana's cards about a request (with its buttons now, or before). */
    cardsFor(timeOffId: string): FakeMessage[] {
      return h()
        .dms(DANA)
        .filter(
          (m) =>
            buttons(m).some((b) => b.value === timeOffId && b.action_id.startsWith('timeoff.')) ||
            m.history.some((v) => JSON.stringify(v.blocks ?? []).includes(`timeoff.actions:${timeOffId}`)),
        );
    },
    card(timeOffId: string): FakeMessage {
      const cards = d.cardsFor(timeOffId);
      expect(cards).toHaveLength(1);
      return cards[0] as FakeMessage;
    },
    /** Ana's status message about a request (one per request). */
    statusOf(timeOffId: string): FakeMessage {
      const found = h()
        .dms(ANA)
        .filter(
          (m) =>
            messageText(m).includes(`Request \`${shortTimeOffId(timeOffId)}\``) &&
            messageText(m).includes('Your time off request'),
        );
      expect(found).toHaveLength(1);
      return found[0] as FakeMessage;
    },
    /** Approved by Dana on her card, then HR's id recorded and read back, as the HR processor does. */
    async approve(timeOffId: string) {
      await send('ApproveTimeOff', { timeOffId, card: await d.cardRef(timeOffId, true) }, DANA);
    },
    async submitted(timeOffId: string, hrRequestId: string) {
      const { submitRequestId } = await d.dataOf<{ submitRequestId: string }>(timeOffId, 'TimeOffApproved');
      await send('RecordTimeOffSubmitted', { timeOffId, submitRequestId, hrRequestId }, 'system:test');
    },
    async readBack(timeOffId: string) {
      const { readBackRequestId } = await d.dataOf<{ readBackRequestId: string }>(
        timeOffId,
        'TimeOffSubmitted',
      );
      await send(
        'RecordTimeOffReadBack',
        { timeOffId, readBackRequestId, hrStatus: 'approved' },
        'system:test',
      );
    },
  };
  return d;
};
