import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Sandbox, startSandbox } from '../../sandbox/sandbox.ts';
import { PEOPLE } from '../../sandbox/world.ts';
import { tempDir } from '../support/startApp.ts';
import { type Chromium, launchChromium } from './chromium.ts';

// The sandbox console as a person uses it, in Debian's Chromium: everything goes through the page
// (the person picker, the composer, buttons, the side panel), and each step leaves a screenshot in
// test-results/.

const ANA = PEOPLE.find((p) => p.handle === 'ana')!;
const BEN = PEOPLE.find((p) => p.handle === 'ben')!;
const FRANK = PEOPLE.find((p) => p.handle === 'frank')!;

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

  it('the incident walkthrough: trigger, see the card, acknowledge, find the event, resolve from the incident service', async () => {
    const { page } = browser;
    await page.goto(sandbox.consoleUrl);
    await page.getByText('● live').waitFor();
    await page.getByLabel('You are').selectOption(ANA.slackId);
    await page.getByRole('button', { name: '# incidents' }).click();

    await page.getByLabel('Message').fill('/incident trigger db Database on fire');
    await page.getByLabel('Message').press('Enter');
    const card = page.locator('.msg[data-surface-kind="message"]', { hasText: 'Database on fire' });
    const acknowledge = card.getByRole('button', { name: 'Acknowledge' });
    await acknowledge.waitFor({ timeout: 15_000 });
    expect(await card.textContent()).toContain('Triggered');
    await card.scrollIntoViewIfNeeded();
    await browser.screenshot('sandbox-04-incident-card');

    await acknowledge.click();
    await expect
      .poll(async () => (await card.locator('.bk-fields').textContent()) ?? '', { timeout: 15_000 })
      .toContain('Acknowledged');
    expect(await card.getByRole('button', { name: 'Acknowledge' }).count()).toBe(0);
    expect(await card.textContent()).toContain('(edited)');
    await card.scrollIntoViewIfNeeded();
    await browser.screenshot('sandbox-05-card-acknowledged');
    // The card's thread tells the story (issue 22), folded under it as in Slack.
    const thread = card.locator('details.thread');
    await expect
      .poll(async () => (await thread.locator('summary').textContent()) ?? '', { timeout: 15_000 })
      .toMatch(/\d+ repl/);
    await thread.locator('summary').click();
    await expect
      .poll(
        async () => (await thread.locator('.msg[data-surface-kind="reply"]').allTextContents()).join('\n'),
        {
          timeout: 15_000,
        },
      )
      .toContain('Acknowledged');

    await page.getByRole('tab', { name: 'Event store' }).click();
    await page.getByRole('button', { name: 'Live tail' }).click();
    const acknowledged = page
      .getByTestId('store-tail')
      .locator('.ev-row', { hasText: 'IncidentAcknowledged' })
      .first();
    await acknowledged.waitFor({ timeout: 15_000 });
    expect(await acknowledged.textContent()).toMatch(/incident-[0-9a-f-]+/);
    // Open the incident's stream and the event in it: type, kind, actor, time, and its data.
    await acknowledged.locator('button[data-stream]').click();
    const inStream = page.getByTestId('store-stream').locator('.ev-row', { hasText: 'IncidentAcknowledged' });
    await inStream.waitFor();
    expect(await page.getByTestId('store-stream').textContent()).toContain('AcknowledgeIncident');
    expect(await inStream.textContent()).toContain('event');
    await inStream.locator('.ev-type').click();
    expect(await inStream.locator('pre.json').textContent()).toContain('"data"');
    await inStream.scrollIntoViewIfNeeded();
    await browser.screenshot('sandbox-06-store-acknowledged');

    await page.getByRole('tab', { name: 'Incident service' }).click();
    await page.getByLabel('Act as').selectOption(FRANK.email);
    const row = page.locator('.pd-incident', { hasText: 'Database on fire' });
    expect(await row.textContent()).toContain('Acknowledged');
    await row.getByRole('button', { name: 'Resolve' }).click();
    await expect
      .poll(async () => (await card.locator('.bk-fields').textContent()) ?? '', { timeout: 15_000 })
      .toContain('Resolved');
    expect(await card.getByRole('button', { name: 'Resolve' }).count()).toBe(0);
    await expect
      .poll(() => page.locator('.pd-incident.pd-resolved', { hasText: 'Database on fire' }).count())
      .toBe(1);
    await card.scrollIntoViewIfNeeded();
    await browser.screenshot('sandbox-07-resolved-from-incident-service');
    expect(browser.pageErrors).toEqual([]);
  });
});
