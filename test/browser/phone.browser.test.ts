import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Sandbox, startSandbox } from '../../sandbox/sandbox.ts';
import { PEOPLE } from '../../sandbox/world.ts';
import { tempDir } from '../support/startApp.ts';
import { waitFor } from '../support/waitFor.ts';
import { type Chromium, launchChromium } from './chromium.ts';

// The phone walkthrough, as a newcomer does it in the sandbox console in Debian's Chromium: verify
// a phone number with the code that arrives on the phone in the side panel, then be paged for an
// incident and acknowledge it from the phone's keypad. Every step goes through the page, and leaves
// a screenshot in test-results/. The sandbox's paging delays are set to 0 minutes
// (`--page-after 0 --call-after 0`), so nothing waits on the clock. Ana is on call for Payments
// next week (Ben this week): the paging steps move the sandbox clock a week on, from the console.

const ANA = PEOPLE.find((p) => p.handle === 'ana')!;

let sandbox: Sandbox;
let browser: Chromium;
let cleanup: () => void;

beforeAll(async () => {
  const tmp = tempDir('sandbox-phone-browser-');
  cleanup = tmp.cleanup;
  // Pages at once: the SMS as soon as an incident is triggered, the call right after it.
  sandbox = await startSandbox({
    dataDir: tmp.dir,
    reset: true,
    ports: 0,
    logLevel: 'debug',
    paging: { delayMinutes: 0, callAfterMinutes: 0 },
  });
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
  await sandbox?.stop();
  cleanup?.();
});

describe('the sandbox phone', () => {
  it('verify: /verify, the code arrives on the phone, Enter code in the DM, verified on App Home', async () => {
    const { page } = browser;
    await page.goto(sandbox.consoleUrl);
    await page.getByText('● live').waitFor();
    await page.getByLabel('You are').selectOption(ANA.slackId);
    await page.getByRole('button', { name: '# incidents' }).click();
    // api's escalation policy starts with the Payments rotation: Ben's turn this week, Ana's next
    // week. Move the sandbox clock a week on first (the console's +1 week, confirmed), before her
    // phone is verified: the seeded database incident, a week old, escalates to her then, unpaged.
    await page.getByRole('button', { name: '+1 week' }).click();
    await page.getByRole('alertdialog').getByRole('button', { name: '+1 week' }).click();
    await page.getByRole('tab', { name: 'Incident service' }).click();
    // The incident service's panel: Ana is on call now at Payments' first level.
    const level1 = page
      .getByTestId('panel-pagerduty')
      .locator('.oc-policy')
      .first()
      .locator('.oc-levels li b');
    await expect.poll(() => level1.first().textContent(), { timeout: 15_000 }).toBe('Ana Silva');
    // The database incident's escalation to her has been through paging (not paged: no phone yet).
    await waitFor(
      async () =>
        (await sandbox.store.readAll()).some(
          (e) =>
            e.type === 'RecordIncidentPageActivity' &&
            (e.data as { kind?: string; slackUserId?: string }).kind === 'no_verified_phone' &&
            (e.data as { slackUserId?: string }).slackUserId === ANA.slackId,
        ),
      { timeoutMs: 15_000, what: 'the escalated database incident not paged to Ana (no phone yet)' },
    );
    await browser.screenshot('phone-00-next-week');
    await page.getByRole('tab', { name: 'Phone' }).click();
    const panel = page.getByTestId('panel-phone');
    await panel.getByText('No messages yet.').waitFor();
    expect(await panel.getByTestId('phone-number').textContent()).toBe('+44 7700 900101');
    await browser.screenshot('phone-01-empty-phone');

    await page.getByLabel('Message').fill(`/verify ${ANA.phone}`);
    await page.getByLabel('Message').press('Enter');
    await page.locator('.msg.ephemeral', { hasText: 'Sending a code to +44 •••• ••0101' }).waitFor();
    const sms = panel.getByTestId('phone-sms').filter({ hasText: 'Switchboard code' });
    await sms.waitFor({ timeout: 15_000 });
    const code = /(\d{4,10})/.exec((await sms.locator('.sms-text').textContent()) ?? '')?.[1] ?? '';
    expect(code).toMatch(/^\d{4,10}$/);
    expect(await sms.textContent()).toContain('from +44 7700 900000');
    await browser.screenshot('phone-02-code-arrived');

    await page.getByRole('button', { name: 'Switchboard', exact: false }).first().click();
    await page.locator('.app-tab[data-tab="messages"]').click();
    const prompt = page.locator('.msg[data-surface-kind="message"]', { hasText: 'Enter it here before' });
    await prompt.getByRole('button', { name: 'Enter code' }).click();
    const modal = page.getByRole('dialog');
    await modal.getByText('Verify your phone').waitFor();
    await modal.getByRole('textbox').fill(code);
    await browser.screenshot('phone-03-code-entered');
    await modal.getByRole('button', { name: 'Verify' }).click();
    await page.locator('.msg', { hasText: 'is verified' }).waitFor({ timeout: 15_000 });
    await browser.screenshot('phone-04-verified-dm');

    await page.locator('.app-tab[data-tab="home"]').click();
    const home = page.getByTestId('home');
    await home.getByText('Your on-call number').waitFor({ timeout: 15_000 });
    expect(await home.textContent()).toContain('+44 •••• ••0101');
    await browser.screenshot('phone-05-verified-home');
    expect(browser.pageErrors).toEqual([]);
  });

  it('/verify test: a test text and a test call reach the phone; answer it and hear it', async () => {
    const { page } = browser;
    await page.getByRole('button', { name: '# incidents' }).click();
    await page.getByLabel('Message').fill('/verify test');
    await page.getByLabel('Message').press('Enter');
    const panel = page.getByTestId('panel-phone');
    await panel
      .getByTestId('phone-sms')
      .filter({ hasText: 'this is a test message' })
      .waitFor({ timeout: 15_000 });
    const call = panel.getByTestId('phone-call').filter({ hasText: 'Incoming call' });
    await call.waitFor({ timeout: 15_000 });
    expect(await page.getByRole('tab', { name: 'Phone' }).getAttribute('class')).toContain('ringing');
    expect(await call.textContent()).toContain('from +44 7700 900000');
    await browser.screenshot('phone-06-test-call-ringing');
    await call.getByRole('button', { name: 'Answer' }).click();
    // A talk-only call says its text and ends.
    const ended = panel.getByTestId('phone-call').filter({ hasText: 'Call ended' });
    await ended.waitFor({ timeout: 15_000 });
    expect(await ended.getByTestId('call-says').textContent()).toContain('This is a test call from');
    expect(await page.getByRole('tab', { name: 'Phone' }).getAttribute('class')).not.toContain('ringing');
    await browser.screenshot('phone-07-test-call-heard');
    expect(browser.pageErrors).toEqual([]);
  });

  it('paged: trigger an incident, the SMS page arrives, then the call; press 4: the card shows it acknowledged by phone, the timeline from the keypad', async () => {
    const { page } = browser;
    await page.getByRole('button', { name: '# incidents' }).click();
    // api's escalation policy starts with the Payments rotation, Ana's turn this week now.
    await page.getByLabel('Message').fill('/incident trigger api Card payments failing');
    await page.getByLabel('Message').press('Enter');
    const card = page.locator('.msg[data-surface-kind="message"]', { hasText: 'Card payments failing' });
    await card.getByRole('button', { name: 'Acknowledge' }).waitFor({ timeout: 15_000 });

    const panel = page.getByTestId('panel-phone');
    const sms = panel.getByTestId('phone-sms').filter({ hasText: 'Card payments failing' });
    await sms.waitFor({ timeout: 15_000 });
    expect(await sms.textContent()).toContain('reply 4 to acknowledge');
    const call = panel.getByTestId('phone-call').filter({ hasText: 'Incoming call' });
    await call.waitFor({ timeout: 15_000 });
    await browser.screenshot('phone-08-paged-sms-and-call');

    await call.getByRole('button', { name: 'Answer' }).click();
    const onCall = panel.getByTestId('phone-call').filter({ hasText: 'On a call' });
    await onCall.getByRole('group', { name: 'Keypad' }).waitFor({ timeout: 15_000 });
    expect(await onCall.getByTestId('call-says').textContent()).toContain('Card payments failing');
    await browser.screenshot('phone-09-call-answered-keypad');
    await onCall.getByRole('button', { name: 'Key 4' }).click();
    const ncco = panel.getByTestId('call-ncco').first();
    await ncco.waitFor({ timeout: 15_000 });
    expect(await ncco.textContent()).toContain('"action": "talk"');
    expect(await ncco.textContent()).toContain('acknowledge');

    await expect
      .poll(async () => (await card.locator('.bk-fields').textContent()) ?? '', { timeout: 15_000 })
      .toContain('Acknowledged');
    expect(await card.textContent()).toContain('Acknowledged by @Ana Silva');
    await expect
      .poll(async () => (await card.textContent()) ?? '', { timeout: 15_000 })
      .toContain('Paging @Ana Silva acknowledged by phone');
    await card.scrollIntoViewIfNeeded();
    await browser.screenshot('phone-10-card-acknowledged-by-phone');
    // The timeline says how: by phone, from the keypad, after the SMS and the call.
    const number = /#(\d+) Card payments failing/.exec((await card.textContent()) ?? '')?.[1];
    // The page's receipts reach the timeline through their own processor, which may still be
    // working through the earlier test's calls: ask again until the timeline has caught up.
    const timeline = page.locator('.msg.ephemeral', { hasText: 'by phone (keypad)' }).last();
    await expect
      .poll(
        async () => {
          await page.getByLabel('Message').fill(`/incident timeline ${number}`);
          await page.getByLabel('Message').press('Enter');
          await timeline.waitFor({ timeout: 15_000 });
          return (await timeline.textContent()) ?? '';
        },
        { timeout: 60_000, interval: 1_000 },
      )
      .toContain('Paged @Ana Silva by SMS');
    const told = (await timeline.textContent()) ?? '';
    expect(told).toContain('Acknowledged by @Ana Silva by phone (keypad)');
    await timeline.scrollIntoViewIfNeeded();
    await browser.screenshot('phone-11-timeline-acknowledged-by-phone');
    expect(browser.pageErrors).toEqual([]);
  });
  it('paged again: reply 4 to the SMS from the phone, and the incident is acknowledged; nothing is left ringing', async () => {
    const { page } = browser;
    await page.getByLabel('Message').fill('/incident trigger api Refunds stuck');
    await page.getByLabel('Message').press('Enter');
    const card = page.locator('.msg[data-surface-kind="message"]', { hasText: 'Refunds stuck' });
    await card.getByRole('button', { name: 'Acknowledge' }).waitFor({ timeout: 15_000 });
    const panel = page.getByTestId('panel-phone');
    await panel.getByTestId('phone-sms').filter({ hasText: 'Refunds stuck' }).waitFor({ timeout: 15_000 });

    await panel.getByLabel('Reply by SMS').fill('4');
    await panel.getByRole('button', { name: 'Send' }).click();
    await panel
      .getByTestId('phone-sms')
      .filter({ hasText: /^\s*4\s*to \+44 7700 900000/ })
      .waitFor();
    await expect
      .poll(async () => (await card.textContent()) ?? '', { timeout: 15_000 })
      .toContain('Paging @Ana Silva acknowledged by phone');
    expect(await card.locator('.bk-fields').textContent()).toContain('Acknowledged');
    // Nothing is left ringing about it (a call placed before the reply is ended by Switchboard).
    await expect
      .poll(() => panel.getByTestId('phone-call').filter({ hasText: 'Incoming call' }).count(), {
        timeout: 15_000,
      })
      .toBe(0);
    await card.scrollIntoViewIfNeeded();
    await browser.screenshot('phone-12-acknowledged-by-sms-reply');
    expect(browser.pageErrors).toEqual([]);
  });
});
