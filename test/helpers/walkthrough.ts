import { AxeBuilder } from '@axe-core/playwright';
import { mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type Locator, type Page } from 'playwright-core';
import { CHROMIUM } from './portal-browser.js';
import type { DemoProcess } from './demo-process.js';

/**
 * The browser side of the walk-throughs (test/system/walkthrough-*.test.ts): Chromium at a desktop's and a
 * phone's size, every page error, console error and CSP violation collected, the portal's sign-in by an
 * e-mailed link as its user does it, the pages' width, and an accessibility check with axe-core.
 */

export interface Width {
  name: 'desktop' | 'phone';
  viewport: { width: number; height: number };
  mobile: boolean;
}

export const WIDTHS: readonly Width[] = [
  { name: 'desktop', viewport: { width: 1280, height: 900 }, mobile: false },
  { name: 'phone', viewport: { width: 390, height: 844 }, mobile: true },
];

interface WalkTest {
  teardown(fn: () => unknown): void;
  passing(): boolean;
}

const OUTPUT = fileURLToPath(new URL('../output/', import.meta.url));

let browser: Browser | undefined;

/** Closes the file's browser (register with `t.teardown` on the file's root). */
export const closeWalkBrowser = () => browser?.close();

/**
 * A fresh browser context at the width (its own cookies and storage), closed when the test ends; when
 * the test failed, the page as it was is kept in test/output/<name>-failed.png.
 */
export async function openAt(t: WalkTest, width: Width, name: string): Promise<{ page: Page; problems: string[] }> {
  browser ??= await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'], headless: true });
  const context = await browser.newContext({
    viewport: width.viewport,
    isMobile: width.mobile,
    hasTouch: width.mobile,
    locale: 'en-GB',
    timezoneId: 'Europe/Berlin',
  });
  t.teardown(() => context.close());
  const problems: string[] = [];
  await context.exposeBinding('reportViolation', (_source, text: string) => problems.push(`CSP violation: ${text}`));
  await context.addInitScript(`document.addEventListener('securitypolicyviolation', (e) => window.reportViolation(e.violatedDirective + ' ' + e.blockedURI));`);
  const page = await context.newPage();
  page.setDefaultTimeout(15_000);
  t.teardown(async () => {
    if (t.passing()) return;
    mkdirSync(OUTPUT, { recursive: true });
    await page.screenshot({ path: `${OUTPUT}${name}-failed.png`, fullPage: true }).catch(() => {});
  });
  page.on('pageerror', (err) => problems.push(`page error: ${err.message}`));
  page.on('console', (message) => {
    if (message.type() === 'error') problems.push(`console error on ${page.url()}: ${message.text()} (${message.location().url})`);
  });
  return { page, problems };
}

/**
 * What a user clicks to go somewhere by its visible name, whether the page makes it a button, a link or
 * a tab (navigation may move from buttons to links with URLs of their own); the first visible one.
 */
export function control(scope: Page | Locator, name: string | RegExp): Locator {
  const options = { name, exact: typeof name === 'string' };
  return scope.getByRole('button', options).or(scope.getByRole('link', options)).or(scope.getByRole('tab', options)).first();
}

/** How much wider than the viewport the page is (0: no horizontal scroll). */
export function overflow(page: Page): Promise<number> {
  return page.evaluate<number>('Math.max(0, document.documentElement.scrollWidth - document.documentElement.clientWidth)');
}

/**
 * Signs in on the portal as a newcomer does: the address in the sign-in form, the link from the e-mail
 * (or the demo's terminal), the "Sign in" button on the page it opens. Resolves once "Sign out" shows.
 * `onSignInView` runs once the sign-in form shows (an accessibility check of it).
 */
export async function signInByMail(page: Page, demo: DemoProcess, email: string, onSignInView?: () => Promise<void>): Promise<void> {
  await page.goto(demo.banner.portal);
  await page.getByRole('heading', { name: 'Sign in' }).waitFor();
  await onSignInView?.();
  await page.getByLabel('E-mail address').fill(email);
  const mark = demo.mark();
  await page.getByRole('button', { name: /sign-in link/i }).click();
  await page.getByRole('status').filter({ hasText: /sign-in link is on its way|link/i }).first().waitFor();
  const link = await demo.signInLink(email, mark);
  await page.goto(link);
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  await page.getByRole('button', { name: 'Sign out' }).waitFor();
}

/** The serious and critical axe-core findings (WCAG 2.x A and AA, best practices), one line per rule with its first elements. */
export async function seriousViolations(page: Page): Promise<string[]> {
  const result = await new AxeBuilder({ page }).withTags(['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice']).analyze();
  return result.violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.id} (${v.impact}, ${v.nodes.length} element${v.nodes.length === 1 ? '' : 's'}): ${v.nodes.slice(0, 3).map((n) => n.target.join(' ')).join(', ')}${v.nodes.length > 3 ? ', …' : ''}`);
}

/** The demo's stations as export v2 lists them, with the banner's token. */
export async function demoStations(demo: DemoProcess): Promise<{ hrs_id: string; name: string }[]> {
  const res = await fetch(`${demo.banner.base}/v2/hrs?limit=500`, { headers: { Authorization: `Bearer ${demo.banner.exportV2Token}` } });
  if (res.status !== 200) throw new Error(`GET /v2/hrs answered ${res.status}`);
  return ((await res.json()) as { results: { hrs_id: string; name: string }[] }).results;
}
