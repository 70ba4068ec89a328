import { copyFileSync, existsSync, mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type Page } from 'playwright-core';
import type { TestPlatform } from './platform.js';
import { signedIn } from './portal.js';

/**
 * The portal page in Debian's Chromium for the browser tests: one browser per test file, a context per
 * account with its session cookie set, CSP violations, page errors and console errors collected, and
 * screenshots to test/output/ (and docs/ with UPDATE_DOCS_SCREENSHOT=1).
 */

export const CHROMIUM = '/usr/bin/chromium';
export const skipWithoutChromium = existsSync(CHROMIUM) ? false : `no Chromium at ${CHROMIUM} (install Debian's "chromium" package)`;
const OUTPUT = fileURLToPath(new URL('../output/', import.meta.url));
const DOCS = fileURLToPath(new URL('../../docs/', import.meta.url));

let browser: Browser | undefined;

/** Closes the file's browser (register with `t.teardown`). */
export const closeBrowser = () => browser?.close();

export async function screenshot(page: Page, name: string): Promise<void> {
  mkdirSync(OUTPUT, { recursive: true });
  const path = `${OUTPUT}${name}.png`;
  await page.screenshot({ path, fullPage: true });
  if (process.env.UPDATE_DOCS_SCREENSHOT === '1') copyFileSync(path, `${DOCS}${name}.png`);
}

/**
 * A page of a fresh context in the file's browser (no cookie unless given: the portal's session cookie)
 * that collects CSP violations, page errors and console errors; `expected`: console errors a flow asks
 * for, not problems. `timezoneId`: the browser's zone (Europe/Berlin unless told). `phone`: a phone's
 * screen (390 × 844, touch) instead of a desktop's 1280 × 900.
 */
export async function watchedPage(
  t: { teardown(fn: () => unknown): void },
  p: TestPlatform,
  { cookie, expected, timezoneId = 'Europe/Berlin', phone = false }: { cookie?: string; expected?: RegExp; timezoneId?: string; phone?: boolean } = {},
): Promise<{ page: Page; problems: string[] }> {
  browser ??= await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'], headless: true });
  const screen = phone ? { viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true } : { viewport: { width: 1280, height: 900 } };
  const context = await browser.newContext({ ...screen, locale: 'en-GB', timezoneId });
  t.teardown(() => context.close());
  if (cookie) {
    const [name, value] = cookie.split('=') as [string, string];
    await context.addCookies([{ name, value, url: `${p.url}/portal/`, httpOnly: true, sameSite: 'Strict' }]);
  }
  const problems: string[] = [];
  await context.exposeBinding('reportViolation', (_source, text: string) => problems.push(`CSP violation: ${text}`));
  await context.addInitScript(`document.addEventListener('securitypolicyviolation', (e) => window.reportViolation(e.violatedDirective + ' ' + e.blockedURI));`);
  const page = await context.newPage();
  page.setDefaultTimeout(10_000);
  page.on('pageerror', (err) => problems.push(`page error: ${err.message}`));
  page.on('console', (message) => {
    if (message.type() === 'error' && !(expected && expected.test(message.text()))) problems.push(`${message.text()} (${message.location().url})`);
  });
  return { page, problems };
}

/**
 * The page signed in as the account, on its tokens view (a `watchedPage`). `expected`: console errors a
 * flow asks for (refused requests the browser logs as failed loads); any other is a problem.
 */
export async function openPortalAs(
  t: { teardown(fn: () => unknown): void },
  p: TestPlatform,
  user: string,
  expected?: RegExp,
  screen: { timezoneId?: string; phone?: boolean } = {},
): Promise<{ page: Page; problems: string[] }> {
  const { page, problems } = await watchedPage(t, p, { ...screen, cookie: (await signedIn(p, user)).cookie!, expected });
  await page.goto(`${p.url}/portal/`);
  await page.waitForSelector('body[data-view="tokens"]');
  return { page, problems };
}
