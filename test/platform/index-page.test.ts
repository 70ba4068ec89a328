/**
 * `GET /`: an index of the service's pages, JSON by default and HTML for a browser, every link of it
 * answering on the running platform, no credential needed.
 */
import t from 'tap';
import { prefersHtml } from '../../src/api/index-page/routes.js';
import { VERSION } from '../../src/config/version.js';
import { startTestPlatform } from '../helpers/platform.js';

t.test('GET / lists the pages as JSON, each link answering', async (t) => {
  const p = await startTestPlatform(t);
  const res = await fetch(`${p.url}/`);
  t.equal(res.status, 200);
  t.match(res.headers.get('content-type'), /^application\/json/);
  t.equal(res.headers.get('vary'), 'Accept');
  const body = (await res.json()) as { version: string; pages: { rel: string; href: string; auth: string }[] };
  t.equal(body.version, VERSION);
  const hrefs = Object.fromEntries(body.pages.map((page) => [page.rel, page.href]));
  t.same(hrefs, {
    portal: `${p.url}/portal/`,
    export_v2_doc: `${p.url}/v2/doc/`,
    import_v2_doc: `${p.url}/import/v2/doc/`,
    'import_v1.1_doc': `${p.url}/import/v1.1/doc/`,
    import_v1_doc: `${p.url}/import/v1/doc/`,
    'export_v1.1_doc': `${p.url}/v1.1/doc/`,
    export_v1_doc: `${p.url}/v1/doc/`,
    portal_doc: `${p.url}/portal/v1/doc/`,
    admin: `${p.url}/admin/`,
    healthz: `${p.url}/healthz`,
    readyz: `${p.url}/readyz`,
    metrics: `${p.url}/metrics`,
    status_stream: `${p.url.replace('http:', 'ws:')}/v2/hrs/status/stream`,
  });
  for (const page of body.pages) {
    const answer = await fetch(page.href.replace(/^ws:/, 'http:'));
    // The two that take a credential exist and ask for it; the others are public.
    const expected = page.rel === 'metrics' || page.rel === 'status_stream' ? 401 : 200;
    t.equal(answer.status, expected, `${page.rel} answers ${expected}`);
  }
});

const BROWSER_ACCEPT = 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8';

t.test('a browser gets the same index as HTML at /developers/ ("For developers")', async (t) => {
  const p = await startTestPlatform(t);
  const res = await fetch(`${p.url}/developers/`, { headers: { Accept: BROWSER_ACCEPT } });
  t.equal(res.status, 200);
  t.match(res.headers.get('content-type'), /^text\/html/);
  const html = await res.text();
  for (const path of ['/portal/', '/v2/doc/', '/import/v2/doc/', '/portal/v1/doc/', '/admin/', '/healthz', '/readyz', '/metrics']) {
    t.match(html, `<a href="${p.url}${path}">`, path);
  }
  t.match(html, `<a href="${p.url}/portal/">Portal: API tokens, stations and originators</a>`, 'a link is named by what it leads to');
  t.match(html, '<meta name="viewport" content="width=device-width, initial-scale=1">', 'laid out for a phone\'s width');
  t.match(html, '/v2/hrs/status/stream');
  t.match(html, '<a class="button button-ghost" href="/">Station map</a>', 'it links back to the map');
  t.match(html, '<link rel="stylesheet" href="/portal/portal.css">', 'styled like the portal');
  t.match(res.headers.get('content-security-policy'), /default-src 'none'/, 'under the pages\' strict policy');
  const slashless = await fetch(`${p.url}/developers`, { redirect: 'manual' });
  t.same([slashless.status, slashless.headers.get('location')], [308, '/developers/'], '/developers leads to the page');
});

t.test('a browser at / gets the public map; with PUBLIC_MAP=false the "For developers" page; JSON unchanged either way', async (t) => {
  const p = await startTestPlatform(t);
  const map = await fetch(`${p.url}/`, { headers: { Accept: BROWSER_ACCEPT } });
  t.equal(map.status, 200);
  t.match(await map.text(), '<script type="module" src="/map/app.js"></script>', 'the map page');
  t.match(map.headers.get('content-security-policy'), /worker-src 'self'/, 'with MapLibre\'s worker allowed');
  t.equal(map.headers.get('vary'), 'Accept, Accept-Encoding');
  t.equal((await fetch(`${p.url}/map/app.js`)).status, 200, 'its files are served');

  const off = await startTestPlatform(t, { env: { PUBLIC_MAP: 'false' } });
  const developers = await fetch(`${off.url}/`, { headers: { Accept: BROWSER_ACCEPT } });
  const html = await developers.text();
  t.match(html, '<p class="subtitle">For developers</p>', 'PUBLIC_MAP=false: the "For developers" page at /');
  t.notMatch(html, 'Station map', 'with no link to a map that is not there');
  for (const path of ['/map/app.js', '/map/v1/config', '/map/v1/basemap.geojson', '/map/vendor/maplibre-gl.mjs']) {
    t.equal((await fetch(`${off.url}${path}`)).status, 404, `PUBLIC_MAP=false: no ${path}`);
  }
  const [on, offJson] = await Promise.all([fetch(`${p.url}/`), fetch(`${off.url}/`)]);
  t.same(
    (await on.text()).replaceAll(p.url, 'BASE').replaceAll(p.url.replace('http:', 'ws:'), 'WSBASE'),
    (await offJson.text()).replaceAll(off.url, 'BASE').replaceAll(off.url.replace('http:', 'ws:'), 'WSBASE'),
    'the JSON answer does not depend on the map',
  );
});

t.test('HTML only when text/html ranks above JSON', async (t) => {
  t.equal(prefersHtml(undefined), false);
  t.equal(prefersHtml('*/*'), false);
  t.equal(prefersHtml('application/json'), false);
  t.equal(prefersHtml('text/html'), true);
  t.equal(prefersHtml('text/*'), true);
  t.equal(prefersHtml('text/html;q=0.5, application/json'), false);
  t.equal(prefersHtml('application/json;q=0.5, text/html'), true);
  t.equal(prefersHtml('text/html, application/json'), false, 'a tie is JSON');
});
