/**
 * A driver's alert in a real Chromium, at a desktop's width in English and a phone's in German: the
 * map's station panel's form (fuelling option, when, address), the confirmation e-mail from a real SMTP
 * server, its link's page and button, the alert's page and "Stop the alert". Each page is checked
 * with axe-core (WCAG 2.x A and AA, best practices), fits the width, and shows no page error, console
 * error or CSP violation. Screenshots: docs/alerts-{map,confirm,confirmed,manage}-{desktop,phone}.png
 * (with UPDATE_DOCS_SCREENSHOT=1).
 */
import t, { type Test } from 'tap';
import type { Page } from 'playwright-core';
import { createLogger } from '../../src/config/log.js';
import { startWorkers } from '../../workers/index.js';
import { mapFixture } from '../helpers/map.js';
import { closeBrowser, screenshot, skipWithoutChromium, watchedPage } from '../helpers/portal-browser.js';
import { postSignals, publishHistory, startTestPlatform } from '../helpers/platform.js';
import { smtpSink } from '../helpers/smtp.js';
import { until } from '../helpers/wait.js';
import { overflow, seriousViolations } from '../helpers/walkthrough.js';

t.teardown(closeBrowser);
const ago = (s: number) => new Date(Date.now() - s * 1000).toISOString();

const SCREENS = [
  { name: 'desktop', phone: false, language: 'en', words: { form: 'Tell me by e-mail', address: 'Your e-mail address', when: 'When', submit: 'Send me the confirmation link', sent: /Check your inbox/, confirm: 'Turn the alert on', on: 'Your alert is on', manage: 'Your alert', stop: 'Stop the alert', stopped: 'Your alert is stopped', available: 'it is available again' } },
  { name: 'phone', phone: true, language: 'de', words: { form: 'Per E-Mail benachrichtigen', address: 'Ihre E-Mail-Adresse', when: 'Wann', submit: 'Bestätigungslink senden', sent: /Bitte sehen Sie in Ihr Postfach/, confirm: 'Benachrichtigung einschalten', on: 'Ihre Benachrichtigung ist eingeschaltet', manage: 'Ihre Benachrichtigung', stop: 'Benachrichtigung beenden', stopped: 'Ihre Benachrichtigung ist beendet', available: 'sobald sie wieder verfügbar ist' } },
] as const;

/** The page's checks: axe, the width, and what the page watch collected. */
async function checked(t: Test, page: Page, what: string, problems: string[]) {
  t.same(await seriousViolations(page), [], `${what}: no serious accessibility finding`);
  t.equal(await overflow(page), 0, `${what}: fits the width`);
  t.same(problems, [], `${what}: no page error, console error or CSP violation`);
}

for (const screen of SCREENS) {
  t.test(`a driver's alert at ${screen.name} width (${screen.language}): asked on the map, confirmed, stopped`, { skip: skipWithoutChromium }, async (t) => {
    const smtp = await smtpSink(t);
    const p = await startTestPlatform(t, { fixture: mapFixture(), env: { MAP_RATE_LIMIT: '100000' } });
    const workers = startWorkers({ ...p.parts.config, smtpUrl: `smtp://127.0.0.1:${smtp.port}`, baseUrl: p.url }, p.parts.redis, p.sql, createLogger('silent'));
    t.teardown(() => workers.close());
    await postSignals(p, 'availability', [
      { hrs: 'BERLA', datetime: ago(5), station: { maintenance: false, limitedly_available: false }, nozzles: [{ id: 'N1', available: false }, { id: 'N2', available: true }] },
    ]);
    await publishHistory(p);

    const { page, problems } = await watchedPage(t, p, { phone: screen.phone });
    if (screen.language === 'de') await page.addInitScript(`Object.defineProperty(navigator, 'languages', { get: () => ['de-DE', 'de'] });`);
    await page.goto(`${p.url}/#/station/BERLA`);
    await page.waitForSelector('body[data-ready="true"]');
    const form = page.locator('section.panel-section', { has: page.getByRole('heading', { name: screen.words.form }) });
    await form.waitFor();
    await form.scrollIntoViewIfNeeded();
    t.equal(await form.getByLabel(screen.words.when).inputValue(), 'available', 'an option that is down now suggests "available again"');
    t.equal(await form.getByLabel(screen.words.when).locator('option:checked').textContent(), screen.words.available);
    await form.getByLabel(screen.words.address).fill(`driver-${screen.name}@example.org`);
    await form.getByRole('button', { name: screen.words.submit }).click();
    await form.getByRole('status').filter({ hasText: screen.words.sent }).waitFor();
    await checked(t, page, 'the map with the form answered', problems);
    await form.getByRole('status').scrollIntoViewIfNeeded();
    await screenshot(page, `alerts-map-${screen.name}`);

    const mail = await until('the confirmation e-mail', () => smtp.received[0]);
    t.same(mail.to, [`driver-${screen.name}@example.org`]);
    const link = /https?:\/\/\S+\/map\/alerts\/confirm\?token=[\w-]+/.exec(mail.mail.text ?? '')?.[0];
    t.ok(link, 'the e-mail holds the confirmation link');
    t.match(mail.mail.subject, screen.language === 'de' ? /^Bitte bestätigen/ : /^Confirm your alert/, 'in the language the map showed');

    await page.goto(link!);
    await page.getByRole('button', { name: screen.words.confirm }).waitFor();
    await checked(t, page, 'the confirmation page', problems);
    await screenshot(page, `alerts-confirm-${screen.name}`);
    await page.getByRole('button', { name: screen.words.confirm }).click();
    await page.getByRole('heading', { level: 1, name: screen.words.on }).waitFor();
    await checked(t, page, 'the confirmed page', problems);
    await screenshot(page, `alerts-confirmed-${screen.name}`);
    const [alert] = await p.sql<{ state: string; manage_token: string }[]>`SELECT state, manage_token FROM driver_alerts`;
    t.equal(alert!.state, 'active', 'the alert is on');

    await page.goto(`${p.url}/map/alerts/manage?token=${alert!.manage_token}`);
    await page.getByRole('heading', { level: 1, name: screen.words.manage }).waitFor();
    await checked(t, page, 'the alert\'s page', problems);
    await screenshot(page, `alerts-manage-${screen.name}`);
    await page.getByRole('button', { name: screen.words.stop }).click();
    await page.getByRole('heading', { level: 1, name: screen.words.stopped }).waitFor();
    await checked(t, page, 'the stopped page', problems);
    t.same(await p.sql`SELECT 1 FROM driver_alerts`, [], 'the alert and its address are deleted');
  });
}
