import t from 'tap';
import { chromium, type Browser } from 'playwright-core';
import type { HttpServer } from '../../src/http/server.js';
import { docSites } from '../helpers/docs.js';
import { baseFixture, TOKENS } from '../helpers/fixtures.js';
import { startTestPlatform } from '../helpers/platform.js';
import { CHROMIUM, skipWithoutChromium } from '../helpers/portal-browser.js';

/**
 * Swagger UI's "Try it out" fills each parameter in with its example or default. A conditional header
 * filled in that way (`If-Modified-Since`) turns the request into an empty 304: the reference pages
 * must send no conditional header the user did not type.
 */

type Json = Record<string, any>;

let server: HttpServer | undefined;
const p = await startTestPlatform(t, { fixture: baseFixture(), routes: (s) => (server = s) });

/** A `$ref` of the document, followed. */
function deref(doc: Json, value: Json): Json {
  if (typeof value.$ref !== 'string') return value;
  return (value.$ref as string).slice(2).split('/').reduce((node: Json, key) => node[key], doc);
}

t.test('no header parameter of any document carries an example or a default', async (t) => {
  const sites = docSites(server!);
  t.ok(sites.length >= 6, `every documented family (${sites.map((s) => s.family).join(', ')})`);
  let conditional = 0;
  for (const site of sites) {
    const doc = (await (await fetch(`${p.url}${site.prefix}/schema`)).json()) as Json;
    const parameters: Json[] = [
      ...Object.values((doc.components?.parameters ?? {}) as Record<string, Json>),
      ...Object.values((doc.paths ?? {}) as Record<string, Json>).flatMap((item) =>
        Object.values(item).flatMap((op: any) => (Array.isArray(op?.parameters) ? (op.parameters as Json[]) : [])),
      ),
    ].map((parameter) => deref(doc, parameter));
    for (const parameter of parameters.filter((x) => x.in === 'header')) {
      const where = `${site.prefix}: header ${parameter.name}`;
      t.notOk('example' in parameter || 'examples' in parameter, `${where} has no example`);
      t.notOk('default' in (parameter.schema ?? {}) || 'example' in (parameter.schema ?? {}) || 'examples' in (parameter.schema ?? {}), `${where}: nor its schema`);
      if (/^If-/i.test(parameter.name as string)) conditional += 1;
    }
  }
  t.ok(conditional > 0, 'the documents do declare conditional headers');
});

t.test('"Try it out" on GET /v2/hrs in Chromium sends no If-Modified-Since and gets the stations', { skip: skipWithoutChromium }, async (t) => {
  const browser: Browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'], headless: true });
  t.teardown(() => browser.close());
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  page.setDefaultTimeout(15_000);
  await page.goto(`${p.url}/v2/doc/`);

  await page.locator('button.authorize').first().click();
  await page.locator('.modal-ux input').first().fill(TOKENS.export_v2);
  await page.locator('.modal-ux button.authorize').first().click();
  await page.locator('.modal-ux button.btn-done').first().click();

  const operation = page.locator('.opblock.opblock-get', { has: page.locator('.opblock-summary-path[data-path="/v2/hrs"]') }).first();
  await operation.locator('.opblock-summary').first().click();
  await operation.locator('button.try-out__btn').click();
  const field = operation.locator('tr[data-param-name="If-Modified-Since"] input');
  t.equal(await field.inputValue(), '', 'the If-Modified-Since field is left empty');

  const sent = page.waitForRequest((r) => new URL(r.url()).pathname === '/v2/hrs');
  const answered = page.waitForResponse((r) => new URL(r.url()).pathname === '/v2/hrs');
  await operation.locator('button.execute').click();
  const request = await sent;
  const response = await answered;
  const headers = await request.allHeaders();
  t.equal(headers['authorization'], `Bearer ${TOKENS.export_v2}`, 'the request carries the token');
  t.notOk('if-modified-since' in headers, 'and no If-Modified-Since');
  t.notOk('if-none-match' in headers, 'nor If-None-Match');
  t.equal(response.status(), 200, 'so it gets the data, not an empty 304');
  const body = (await response.json()) as { count: number };
  t.ok(body.count > 0, 'the stations');
  await operation.locator('.live-responses-table').waitFor();
  t.match(await operation.locator('.live-responses-table tbody .response-col_status').first().innerText(), /200/, 'and the page shows the 200');
});
