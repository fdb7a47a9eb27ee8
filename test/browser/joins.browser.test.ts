import type { Locator } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Sandbox, startSandbox } from '../../sandbox/sandbox.ts';
import { PEOPLE, type Person } from '../../sandbox/world.ts';
import { tempDir } from '../support/startApp.ts';
import { waitFor } from '../support/waitFor.ts';
import { type Chromium, launchChromium } from './chromium.ts';

// Issue 12's headline, walked through in the sandbox console in Debian's Chromium: Ana, on call
// next week, asks for those days off; Dana's DM shows the conflict; Dana clicks "Approve and cover
// with Ben"; the override appears in the incident-service panel and /oncall names Ben; a page
// during that week goes to Ben. Every step goes through the page and leaves a screenshot in
// test-results/ (joins-*.png).
//
// The sandbox clock starts on Monday 23 Nov 2026, 09:00 UTC (so nothing depends on the calendar)
// and runs with real time; the console's "+1 week" and "+1 day" move it into Ana's week. The
// rotations anchor at 07:00 UTC that Monday: Payments primary is Ben's until Mon 30 Nov 07:00 UTC,
// then Ana's for a week. Paging is at once (`--page-after 0`); HR's lag is 2 s.

const who = (handle: string): Person => PEOPLE.find((p) => p.handle === handle)!;
const [ANA, BEN, DANA] = [who('ana'), who('ben'), who('dana')];
const START = '2026-11-23T09:00:00Z';
/** Next week's working days: Ana's on-call week on Payments primary. */
const [FIRST_DAY, LAST_DAY] = ['2026-11-30', '2026-12-04'];

let sandbox: Sandbox;
let browser: Chromium;
let cleanup: () => void;

beforeAll(async () => {
  const tmp = tempDir('sandbox-joins-browser-');
  cleanup = tmp.cleanup;
  sandbox = await startSandbox({
    dataDir: tmp.dir,
    reset: true,
    ports: 0,
    logLevel: 'debug',
    hrLagMs: 2_000,
    startAt: START,
    paging: { delayMinutes: 0, callAfterMinutes: 5 },
  });
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
  await sandbox?.stop();
  cleanup?.();
});

const playAs = async (person: Person) => {
  const { page } = browser;
  await page.getByLabel('You are').selectOption(person.slackId);
  await page.getByText('● live').waitFor();
};
const openDm = async () => {
  const { page } = browser;
  await page.getByRole('button', { name: 'Switchboard', exact: false }).first().click();
  await page.locator('.app-tab[data-tab="messages"]').click();
};
const openChannel = async (name: string) => {
  await browser.page.getByRole('button', { name: `# ${name}` }).click();
};
const type = async (text: string) => {
  const { page } = browser;
  await page.getByLabel('Message').fill(text);
  await page.getByLabel('Message').press('Enter');
};
/** Moves the sandbox clock with the console's button (and its confirmation). */
const advance = async (label: '+1 week' | '+1 day') => {
  const { page } = browser;
  const before = await page.getByTestId('clock-now').getAttribute('datetime');
  await page.getByRole('button', { name: label, exact: true }).click();
  await page.getByRole('alertdialog').getByRole('button', { name: label, exact: true }).click();
  await expect.poll(() => page.getByTestId('clock-now').getAttribute('datetime')).not.toBe(before);
};
/** Scrolls to what may be re-rendered live meanwhile (a card updated in place, the panel refreshed). */
const scrollTo = (l: Locator) =>
  waitFor(
    async () => {
      try {
        await l.scrollIntoViewIfNeeded({ timeout: 2_000 });
        return true;
      } catch {
        return undefined;
      }
    },
    { timeoutMs: 15_000, what: 'scrolled into view' },
  );
/** `/oncall` in #incidents; resolves with the newest answer's text. */
const onCall = async (): Promise<string> => {
  const { page } = browser;
  await openChannel('incidents');
  const answers = page.locator('.msg.ephemeral', { hasText: 'Payments' }).filter({ hasText: 'Level 1' });
  const before = await answers.count();
  await type('/oncall');
  await expect.poll(() => answers.count(), { timeout: 15_000 }).toBeGreaterThan(before);
  const answer = answers.last();
  await scrollTo(answer);
  return (await answer.textContent()) ?? '';
};

/** The phone walkthrough's /verify, as `person`: the code arrives on their phone, Enter code. */
const verifyPhone = async (person: Person, digits: string) => {
  const { page } = browser;
  await playAs(person);
  await openChannel('incidents');
  await page.getByRole('tab', { name: 'Phone' }).click();
  const panel = page.getByTestId('panel-phone');
  await type(`/verify ${person.phone}`);
  await page.locator('.msg.ephemeral', { hasText: `Sending a code to +44 •••• ••${digits}` }).waitFor();
  const sms = panel.getByTestId('phone-sms').filter({ hasText: 'Switchboard code' });
  await sms.waitFor({ timeout: 15_000 });
  const code = /(\d{4,10})/.exec((await sms.locator('.sms-text').textContent()) ?? '')?.[1] ?? '';
  expect(code).toMatch(/^\d{4,10}$/);
  await openDm();
  const prompt = page.locator('.msg[data-surface-kind="message"]', { hasText: 'Enter it here before' });
  await prompt.getByRole('button', { name: 'Enter code' }).click();
  const modal = page.getByRole('dialog');
  await modal.getByText('Verify your phone').waitFor();
  await modal.getByRole('textbox').fill(code);
  await modal.getByRole('button', { name: 'Verify' }).click();
  await page.locator('.msg', { hasText: 'is verified' }).waitFor({ timeout: 15_000 });
};

describe('the headline: time off that knows the rota, and a rota that knows who is away', () => {
  it('the world: Ben on call this week, Ana next week (the panel); Ben and Ana verify their phones', async () => {
    const { page } = browser;
    await page.goto(sandbox.consoleUrl);
    await page.getByText('● live').waitFor();
    expect(await page.getByTestId('clock-now').textContent()).toMatch(/^Mon, 23 Nov 2026, 09:0\d UTC$/);
    const payments = page.getByTestId('pd-schedule-PSCHPAY');
    const shifts = payments.getByTestId('pd-shift');
    await shifts.first().waitFor();
    expect(await shifts.nth(0).textContent()).toContain('Ben Okafor');
    expect(await shifts.nth(1).textContent()).toBe('Ana Silva Mon 30 Nov, 07:00 – Mon 7 Dec, 07:00 UTC');
    expect(await payments.getByTestId('pd-override').count()).toBe(0);
    await scrollTo(payments);
    await browser.screenshot('joins-01-rota-ana-next-week');

    await verifyPhone(BEN, '0102');
    await verifyPhone(ANA, '0101');
    await browser.screenshot('joins-02-phones-verified');
    expect(browser.pageErrors).toEqual([]);
  });

  it('Ana asks for next week off; Dana, her manager, gets the DM with the conflicting Payments shift', async () => {
    const { page } = browser;
    await playAs(ANA);
    await openChannel('general');
    await type(`/timeoff Holiday ${FIRST_DAY} ${LAST_DAY} next week off`);
    await page.locator('.msg.ephemeral', { hasText: 'Asking Dana Kowalski to approve' }).waitFor();
    await browser.screenshot('joins-03-ana-asked');

    // Before Dana decides, /oncall still has Ana next on Payments primary.
    expect(await onCall()).toMatch(
      /Level 1: @Ben Okafor \(Payments primary\) until Nov 30, 07:00 UTC · next: @Ana Silva from Nov 30, 07:00 UTC/,
    );

    await playAs(DANA);
    await openDm();
    const card = page.locator('.msg', { hasText: 'Time off request' }).filter({ hasText: 'Ana Silva' });
    await card.getByRole('button', { name: 'Approve', exact: true }).waitFor({ timeout: 15_000 });
    // The on-call conflict, looked up in the incident service, in Dana's time zone (Warsaw, UTC+1).
    await card.getByText('Payments primary', { exact: false }).first().waitFor({ timeout: 15_000 });
    const text = (await card.textContent()) ?? '';
    expect(text).toContain('next week off');
    expect(text).toMatch(/Mon 30 Nov,? 08:00/);
    await scrollTo(card);
    await browser.screenshot('joins-04-dana-dm-conflict');
    expect(browser.pageErrors).toEqual([]);
  });

  it('Dana clicks "Approve and cover with Ben": the override is in the incident-service panel, /oncall names Ben', async () => {
    const { page } = browser;
    const card = page.locator('.msg', { hasText: 'Time off request' }).filter({ hasText: 'Ana Silva' });
    // One click: the top-ranked colleague's button approves and covers (no confirm, like Approve).
    await card.getByRole('button', { name: 'Approve and cover with Ben', exact: true }).click();
    await card.getByText('Approved by', { exact: false }).waitFor({ timeout: 15_000 });
    await card.getByText('covered by', { exact: false }).first().waitFor({ timeout: 15_000 });
    await scrollTo(card);
    await browser.screenshot('joins-05b-dana-approved-with-cover');

    // The incident service's own page: one override, Ben over Ana's shift.
    await page.getByRole('tab', { name: 'Incident service' }).click();
    const payments = page.getByTestId('pd-schedule-PSCHPAY');
    const override = payments.getByTestId('pd-override');
    await override.first().waitFor({ timeout: 15_000 });
    expect(await override.count()).toBe(1);
    expect(await override.textContent()).toMatch(/^Ben Okafor Mon 30 Nov, 07:00 – /);
    const upstream = sandbox.sim.state.schedules.get('PSCHPAY')?.overrides ?? [];
    expect(upstream.map((o) => o.userId)).toEqual([BEN.pagerdutyId]);
    await scrollTo(payments);
    await browser.screenshot('joins-06-override-in-incident-service');

    // /oncall: Ben stays on after Mon 30 Nov 07:00 UTC; Ana is not next any more.
    const answer = await onCall();
    expect(answer).toContain('@Ben Okafor (Payments primary)');
    expect(answer).not.toContain('Ana Silva');
    await browser.screenshot('joins-07-oncall-names-ben');
    expect(browser.pageErrors).toEqual([]);
  });

  it('a page during that week goes to Ben, not Ana', async () => {
    const { page } = browser;
    await playAs(BEN);
    // Into Ana's week: Tuesday 1 Dec, around 09:00 UTC.
    await advance('+1 week');
    await advance('+1 day');
    expect(await page.getByTestId('clock-now').textContent()).toMatch(/^Tue, 1 Dec 2026, 09:\d\d UTC$/);
    expect(await onCall()).toMatch(/Level 1: @Ben Okafor \(Payments primary\)/);
    await browser.screenshot('joins-08-next-week-oncall');

    // Monitoring on the Payments API alerts the incident service (its Events API, from its panel).
    await page.getByRole('tab', { name: 'Incident service' }).click();
    const form = page.locator('#pd-trigger');
    await form
      .getByLabel('Monitoring service')
      .selectOption({ label: 'api · Payments API: cards and transfers' });
    await form.getByLabel('Alert summary').fill('Card payments failing');
    await form.getByRole('button', { name: 'Send alert' }).click();
    await page.locator('.pd-incident', { hasText: 'Card payments failing' }).waitFor({ timeout: 15_000 });

    await page.getByRole('tab', { name: 'Phone' }).click();
    const sms = page
      .getByTestId('panel-phone')
      .getByTestId('phone-sms')
      .filter({ hasText: 'Card payments failing' });
    await sms.waitFor({ timeout: 15_000 });
    expect(await sms.textContent()).toContain('reply 4 to acknowledge');
    await browser.screenshot('joins-09-ben-paged');

    // The card and its timeline say Ben was paged; Ana's phone has nothing about it.
    await openChannel('incidents');
    const card = page.locator('.msg[data-surface-kind="message"]', { hasText: 'Card payments failing' });
    await card.waitFor({ timeout: 15_000 });
    const number = /#(\d+) Card payments failing/.exec((await card.textContent()) ?? '')?.[1];
    await type(`/incident timeline ${number}`);
    const timeline = page.locator('.msg.ephemeral', { hasText: 'Paged @Ben Okafor by SMS' });
    await timeline.waitFor({ timeout: 15_000 });
    expect(await timeline.textContent()).not.toContain('Ana Silva');
    await scrollTo(timeline);
    await browser.screenshot('joins-10-timeline-paged-ben');

    await playAs(ANA);
    await page.getByRole('tab', { name: 'Phone' }).click();
    const anaPhone = page.getByTestId('panel-phone');
    await anaPhone.getByTestId('phone-sms').first().waitFor();
    expect(await anaPhone.getByTestId('phone-sms').filter({ hasText: 'Card payments failing' }).count()).toBe(
      0,
    );
    expect(
      sandbox.phones.view(ANA.phone).sms.filter((m) => m.text.includes('Card payments failing')),
    ).toEqual([]);
    await browser.screenshot('joins-11-ana-not-paged');
    expect(sandbox.contractViolations()).toEqual([]);
    expect(browser.pageErrors).toEqual([]);
  });
});
