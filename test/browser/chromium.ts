import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { type BrowserContext, chromium, type Page } from 'playwright-core';

/**
 * Debian's Chromium driven by playwright-core, for `*.browser.test.ts`: never a downloaded browser
 * (`.ci/run` installs the `chromium` package when it is missing), a fresh profile per launch, no
 * network features that would reach outside loopback.
 *
 * @example
 * const browser = await launchChromium();
 * await browser.page.goto(url);
 * await browser.screenshot('step-1');
 * await browser.close();
 */

export const CHROMIUM = '/usr/bin/chromium';
export const SCREENSHOTS = resolve(import.meta.dirname, '../../test-results');

export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

export type Chromium = Readonly<{
  context: BrowserContext;
  page: Page;
  /** Saves `test-results/<name>.png` (the folder is gitignored). */
  screenshot(name: string): Promise<string>;
  /** Errors the page threw or logged, for assertions. */
  pageErrors: string[];
  close(): Promise<void>;
}>;

export const launchChromium = async (
  options: Readonly<{ width?: number; height?: number }> = {},
): Promise<Chromium> => {
  if (!existsSync(CHROMIUM)) {
    throw new Error(`${CHROMIUM} is missing: install Debian's chromium (apt-get install -y chromium)`);
  }
  const profile = mkdtempSync(join(tmpdir(), 'switchboard-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: CHROMIUM_ARGS,
    viewport: { width: options.width ?? 1440, height: options.height ?? 900 },
  });
  const page = context.pages()[0] ?? (await context.newPage());
  const pageErrors: string[] = [];
  page.on('pageerror', (e) => pageErrors.push(e.message));
  page.on('console', (m) => {
    if (m.type() === 'error') pageErrors.push(m.text());
  });
  mkdirSync(SCREENSHOTS, { recursive: true });
  return {
    context,
    page,
    pageErrors,
    async screenshot(name) {
      const path = join(SCREENSHOTS, `${name}.png`);
      await page.screenshot({ path });
      return path;
    },
    async close() {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
};
