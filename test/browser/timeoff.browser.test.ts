import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Sandbox, startSandbox } from '../../sandbox/sandbox.ts';
import { PEOPLE } from '../../sandbox/world.ts';
import { tempDir } from '../support/startApp.ts';
import { waitFor } from '../support/waitFor.ts';
import { type Chromium, launchChromium } from './chromium.ts';

// Time off in the sandbox console, as a newcomer does it in Debian's Chromium, every step through
// the page, each leaving a screenshot in test-results/. HR's read-after-write lag is 2 s
// (`--hr-lag 2`); the sandbox clock starts on a fixed Monday and runs with real time: the steps wait
// on what the page shows, never on time. Ana reports to Dana (the sandbox world's organisation).

const ANA = PEOPLE.find((p) => p.handle === 'ana')!;
const DANA = PEOPLE.find((p) => p.handle === 'dana')!;
const BEN = PEOPLE.find((p) => p.handle === 'ben')!;
const CHEN = PEOPLE.find((p) => p.handle === 'chen')!;

let sandbox: Sandbox;
let browser: Chromium;
let cleanup: () => void;

beforeAll(async () => {
  const tmp = tempDir('sandbox-timeoff-browser-');
  cleanup = tmp.cleanup;
  sandbox = await startSandbox({
    dataDir: tmp.dir,
    reset: true,
    ports: 0,
    logLevel: 'debug',
    hrLagMs: 2_000,
    startAt: '2026-11-23T09:00:00Z',
  });
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
  await sandbox?.stop();
  cleanup?.();
});

/**
 * Tuesday to Friday two weeks after the sandbox's first day (it starts Monday 23 Nov 2026): Ben's
 * week on Payments primary, so Ana's trip conflicts with no on-call shift of hers.
 */
const tripDates = (): [string, string] => ['2026-12-08', '2026-12-11'];

/**
 * Types `/whosout <day>` until its answer satisfies `ok` (Switchboard hears of HR's web app by
 * webhook, and re-reads HR once its lag has passed): each try waits for its own answer.
 */
const whosOutUntil = async (day: string, ok: (answer: string) => boolean): Promise<string> => {
  const { page } = browser;
  const answers = page.locator('.msg.ephemeral', { hasText: "Who's out" });
  return waitFor(
    async () => {
      const before = await answers.count();
      await page.getByLabel('Message').fill(`/whosout ${day}`);
      await page.getByLabel('Message').press('Enter');
      await waitFor(async () => (await answers.count()) > before, {
        timeoutMs: 10_000,
        what: '/whosout answered',
      });
      const answer = (await answers.last().textContent()) ?? '';
      return ok(answer) ? answer : undefined;
    },
    { timeoutMs: 30_000, intervalMs: 500, what: `/whosout ${day} to show it` },
  );
};

const openDm = async () => {
  const { page } = browser;
  await page.getByRole('button', { name: 'Switchboard', exact: false }).first().click();
  await page.locator('.app-tab[data-tab="messages"]').click();
};

describe('time off in the sandbox', () => {
  it('Ana asks in Slack, Dana approves from her DM, HR records it after its lag, Ana is told each step', async () => {
    const { page } = browser;
    const [first, last] = tripDates();
    await page.goto(sandbox.consoleUrl);
    await page.getByText('● live').waitFor();
    await page.getByLabel('You are').selectOption(ANA.slackId);
    await page.getByRole('button', { name: '# general' }).click();
    await page.getByLabel('Message').fill(`/timeoff Holiday ${first} ${last} family trip`);
    await page.getByLabel('Message').press('Enter');
    await page.locator('.msg.ephemeral', { hasText: 'Asking Dana Kowalski to approve' }).waitFor();
    await browser.screenshot('timeoff-01-ana-asked');
    await openDm();
    await page.locator('.msg', { hasText: 'Waiting for' }).filter({ hasText: 'Dana Kowalski' }).waitFor();
    await browser.screenshot('timeoff-02-ana-status');

    await page.getByLabel('You are').selectOption(DANA.slackId);
    await openDm();
    const card = page.locator('.msg', { hasText: 'Time off request' }).filter({ hasText: 'Ana Silva' });
    await card.getByRole('button', { name: 'Approve' }).waitFor({ timeout: 15_000 });
    expect(await card.textContent()).toContain('family trip');
    await browser.screenshot('timeoff-03-dana-card');
    await card.getByRole('button', { name: 'Approve' }).click();
    await card.getByText('Approved by', { exact: false }).waitFor({ timeout: 15_000 });
    await browser.screenshot('timeoff-04-dana-approved');

    await page.getByLabel('You are').selectOption(ANA.slackId);
    await openDm();
    await page
      .locator('.msg', { hasText: 'approved your' })
      .filter({ hasText: 'Recording it in HR' })
      .waitFor({ timeout: 15_000 });
    await browser.screenshot('timeoff-05-ana-approved');

    // HR's web app: the request is there as soon as Switchboard submits it, approved by Dana.
    await page.getByRole('tab', { name: 'HR' }).click();
    const hrPanel = page.getByTestId('panel-hr');
    const inHr = hrPanel.locator('.hr-request', { hasText: 'Ana Silva' }).filter({ hasText: 'family trip' });
    await inHr.waitFor({ timeout: 15_000 });
    expect(await inHr.getByTestId('hr-status').textContent()).toBe('Approved');
    expect(await inHr.getByTestId('hr-origin').textContent()).toBe('made in Switchboard');
    expect(await inHr.textContent()).toContain('Approved by: Dana Kowalski');
    expect(await inHr.textContent()).toContain('4 working days');
    await browser.screenshot('timeoff-06-hr-approved');

    // After HR's lag (2 s), Switchboard reads it back and tells Ana: her status message says so in
    // place, and a new DM.
    await page
      .locator('.msg', { hasText: 'is recorded in HR. Enjoy your time off' })
      .last()
      .waitFor({ timeout: 30_000 });
    await browser.screenshot('timeoff-07-ana-recorded');
    const recorded = sandbox.hibob
      .timeOffRequests()
      .filter((r) => r.employeeId === ANA.hr.employeeId && r.startDate === first);
    expect(recorded).toEqual([
      expect.objectContaining({ endDate: last, status: 'approved', policyType: 'Holiday', via: 'api' }),
    ]);
    // Confirmed by a read that HR answered only once its lag had passed since the submit.
    const submitted = sandbox.hibob.requestsFor('submitTimeOff').find((r) => r.status === 200);
    const readBack = sandbox.hibob.requestsFor('getTimeOffRequest').filter((r) => r.status === 200);
    expect(submitted).toBeDefined();
    expect(readBack.length).toBeGreaterThan(0);
    expect(readBack[0]!.at - submitted!.at).toBeGreaterThanOrEqual(2_000);
    // Everything the bot sent HR (and Slack, and the others) kept to their contracts.
    expect(sandbox.contractViolations()).toEqual([]);
    expect(browser.pageErrors).toEqual([]);
  });

  it('in HR’s web app: Ben asks for a day off (waiting for Dana; /whosout in Slack lists it), cancels it (/whosout drops it); Chen is terminated', async () => {
    const { page } = browser;
    await page.goto(sandbox.consoleUrl);
    await page.getByText('● live').waitFor();
    await page.getByLabel('You are').selectOption(BEN.slackId);
    await page.getByRole('tab', { name: 'HR' }).click();
    const panel = page.getByTestId('panel-hr');
    await panel.getByTestId('hr-lag').waitFor();
    expect(await panel.getByTestId('hr-lag').textContent()).toBe('2 s');
    expect(await panel.getByLabel('Act in HR as').inputValue()).toBe(BEN.hr.employeeId);
    await browser.screenshot('timeoff-hr-01-empty');

    const form = panel.getByTestId('hr-request-form');
    await form.getByLabel('Policy').selectOption('Sick');
    await form.getByLabel('First day', { exact: true }).fill('2031-03-05');
    await form.getByLabel('Last day', { exact: true }).fill('2031-03-05');
    await form.getByLabel('Note').fill('dentist');
    await form.getByRole('button', { name: 'Request' }).click();
    const request = panel.locator('.hr-request', { hasText: 'dentist' });
    await request.waitFor();
    expect(await request.getByTestId('hr-status').textContent()).toBe('Pending');
    expect(await request.getByTestId('hr-origin').textContent()).toBe('made in HR');
    expect(await request.textContent()).toContain('Approver (manager): Dana Kowalski');
    expect(await request.textContent()).toContain('Wed, 5 Mar 2031 · 1 working day');
    await browser.screenshot('timeoff-hr-02-requested');
    // Switchboard sees what was asked in HR's web app: /whosout lists it as waiting for approval.
    await whosOutUntil('2031-03-05', (a) => a.includes('Ben Okafor: Sick'));
    await browser.screenshot('timeoff-hr-02b-whosout');

    // Asking again for the same day: HR refuses, in words.
    await form.getByLabel('Note').fill('again');
    await form.getByRole('button', { name: 'Request' }).click();
    await page.locator('.toast-error', { hasText: 'already has time off' }).waitFor();

    await request.getByRole('button', { name: 'Cancel request' }).click();
    await panel.locator('.hr-request.hr-canceled', { hasText: 'dentist' }).waitFor({ state: 'attached' });
    await panel
      .getByTestId('hr-requests')
      .locator('.hr-request', { hasText: 'dentist' })
      .waitFor({ state: 'detached' });
    await browser.screenshot('timeoff-hr-03-cancelled');
    await whosOutUntil('2031-03-05', (a) => a.includes('Nobody is out'));

    const chen = panel.getByTestId(`hr-employee-${CHEN.hr.employeeId}`);
    await chen.getByRole('button', { name: 'Terminate' }).click();
    await page.getByRole('alertdialog').getByRole('button', { name: 'Terminate' }).click();
    await chen.getByText('Terminated').waitFor();
    expect(sandbox.hibob.employee(CHEN.hr.employeeId)?.status).toBe('terminated');
    await browser.screenshot('timeoff-hr-04-terminated');
    // The browser logs the one refused request (HR's 409 for the same day twice); nothing else.
    expect(browser.pageErrors).toEqual([
      'Failed to load resource: the server responded with a status of 409 (Conflict)',
    ]);
  });
});
