import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Sandbox, startSandbox } from '../../sandbox/sandbox.ts';
import { PEOPLE } from '../../sandbox/world.ts';
import { tempDir } from '../support/startApp.ts';
import { type Chromium, launchChromium } from './chromium.ts';

// Time off in the sandbox console, as a newcomer does it in Debian's Chromium, every step through
// the page, each leaving a screenshot in test-results/. HR's read-after-write lag is 2 s
// (`--hr-lag 2`) on the real clock: the steps wait on what the page shows, never on time.

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
  });
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
  await sandbox?.stop();
  cleanup?.();
});

describe('time off in the sandbox', () => {
  it('in HR’s web app: Ben asks for a day off, sees it waiting for Frank, cancels it; Chen is terminated', async () => {
    const { page } = browser;
    await page.goto(sandbox.consoleUrl);
    await page.getByText('● live').waitFor();
    await page.getByLabel('You are').selectOption(BEN.slackId);
    await page.getByRole('tab', { name: 'HR' }).click();
    const panel = page.getByTestId('panel-hr');
    await panel.getByText('No time-off requests.').waitFor();
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
    expect(await request.textContent()).toContain('Approver (manager): Frank Moreau');
    expect(await request.textContent()).toContain('Wed, 5 Mar 2031 · 1 working day');
    await browser.screenshot('timeoff-hr-02-requested');

    // Asking again for the same day: HR refuses, in words.
    await form.getByLabel('Note').fill('again');
    await form.getByRole('button', { name: 'Request' }).click();
    await page.locator('.toast-error', { hasText: 'already has time off' }).waitFor();

    await request.getByRole('button', { name: 'Cancel request' }).click();
    await panel.locator('.hr-request.hr-canceled', { hasText: 'dentist' }).waitFor({ state: 'attached' });
    await panel.getByText('No time-off requests.').waitFor();
    await browser.screenshot('timeoff-hr-03-cancelled');

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
