import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Sandbox, startSandbox } from '../sandbox/sandbox.ts';
import { PEOPLE } from '../sandbox/world.ts';
import { tempDir } from '../support/startApp.ts';
import { type Chromium, launchChromium } from './chromium.ts';

// The sandbox console as a person uses it, in Debian's Chromium: everything goes through the page
// (the person picker, the composer, buttons, the side panel), and each step leaves a screenshot in
// test-results/.

const ANA = PEOPLE.find((p) => p.handle === 'ana')!;
const BEN = PEOPLE.find((p) => p.handle === 'ben')!;

let sandbox: Sandbox;
let browser: Chromium;
let cleanup: () => void;

beforeAll(async () => {
  const tmp = tempDir('sandbox-browser-');
  cleanup = tmp.cleanup;
  sandbox = await startSandbox({ dataDir: tmp.dir, reset: true, ports: 0, logLevel: 'debug' });
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
  await sandbox?.stop();
  cleanup?.();
});

describe('the sandbox console', () => {
  it('pick who you are, run a command Switchboard does not know, and find it in the event store', async () => {
    const { page } = browser;
    await page.goto(sandbox.consoleUrl);
    await page.getByText('● live').waitFor();
    await page.getByLabel('You are').selectOption(ANA.slackId);
    await page.getByRole('button', { name: '# incidents' }).click();
    await expect
      .poll(() => page.getByLabel('Message').getAttribute('placeholder'))
      .toBe('Message #incidents');
    await browser.screenshot('sandbox-01-picked-ana');

    await page.getByLabel('Message').fill('/frobnicate now');
    await page.getByLabel('Message').press('Enter');
    const reply = page.locator('.msg.ephemeral', { hasText: "Switchboard doesn't know /frobnicate yet." });
    await reply.waitFor();
    expect(await reply.textContent()).toContain('Only visible to you');
    await browser.screenshot('sandbox-02-ephemeral-reply');

    // Ben does not see Ana's ephemeral reply.
    await page.getByLabel('You are').selectOption(BEN.slackId);
    await page.getByText('This is the very beginning of #incidents.').waitFor();
    await expect.poll(() => page.locator('.msg.ephemeral', { hasText: '/frobnicate' }).count()).toBe(0);
    await page.getByLabel('You are').selectOption(ANA.slackId);
    await reply.waitFor();

    await page.getByRole('tab', { name: 'Event store' }).click();
    const recorded = page
      .getByTestId('store-tail')
      .locator('.ev-row', { hasText: 'SlackInputReceived' })
      .first();
    await recorded.waitFor();
    expect(await recorded.textContent()).toContain('inbox-slack');
    expect(await recorded.textContent()).toContain('Ana Silva');
    await recorded.locator('summary').click();
    expect(await recorded.locator('pre.json').textContent()).toContain('"command": "/frobnicate"');
    await browser.screenshot('sandbox-03-store-recorded-input');
    expect(browser.pageErrors).toEqual([]);
  });
});
