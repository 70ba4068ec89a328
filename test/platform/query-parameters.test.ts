/**
 * One rule for query parameters on every route of every family (src/http/query.ts): a route takes the
 * parameters it declares; any other is a 400 in the family's error format naming it, before
 * authentication; `_` (a client's cache-buster) passes on GET and HEAD. Walks every registered route,
 * WebSocket upgrades included, and checks that the documented parameters are exactly the declared ones
 * and still work.
 */
import t from 'tap';
import { request } from 'node:http';
import type { HttpServer, RouteInfo } from '../../src/http/server.js';
import { ADMIN_FEED_PATH } from '../../src/push/admin-feed.js';
import { STREAM_PATH } from '../../src/push/subscriptions.js';
import { legacyFixture, TOKENS } from '../helpers/fixtures.js';
import { ADMIN_TOKEN, get, publishHistory, startTestPlatform } from '../helpers/platform.js';

let server: HttpServer | undefined;
const p = await startTestPlatform(t, { fixture: legacyFixture(), routes: (s) => void (server = s) });
// The history published, so its routes answer 200 (503 before the history worker's first run).
await publishHistory(p);

/** A path of a route pattern with each `:param` given a value. */
const concrete = (pattern: string) => pattern.replace(/:([a-z_]+)/g, (_, name: string) => (name === 'hrs_id' ? 'BERLA' : name === 'name' ? 'swagger-ui.css' : 'x1'));

/** The family's error format, from the answer: a problem body or `{"detail"}`. */
function named(body: Record<string, unknown>, parameter: string): boolean {
  const detail = typeof body.detail === 'string' ? body.detail : '';
  return detail.includes(parameter) && /unknown parameter/.test(detail);
}

t.test('every route answers 400 to an unknown parameter, naming it, in its family\'s format', async (t) => {
  const routes = server!.routes();
  t.ok(routes.length > 80, `routes walked: ${routes.length}`);
  const families = new Set<string>();
  for (const route of routes) {
    const url = `${p.url}${concrete(route.path)}?${route.query?.[0] ? `${route.query[0]}=1&` : ''}zzunknown=1`;
    const init = { method: route.method, redirect: 'manual' as const, ...(route.method === 'GET' ? {} : { body: '[]', headers: { 'Content-Type': 'application/json' } }) };
    let res = await fetch(url, init);
    let path = route.path;
    const where = `${route.method} ${route.path} (${route.auth})`;
    if (res.status === 308) {
      // A page's folder typed without its slash: the redirect carries the query on, and the page refuses the name.
      const location = new URL(res.headers.get('location') ?? '', url);
      t.equal(location.search, new URL(url).search, `${where}: the redirect keeps the query string`);
      path = location.pathname;
      res = await fetch(location, init);
    }
    const type = res.headers.get('content-type') ?? '';
    const body = (await res.json().catch(() => ({}))) as Record<string, unknown>;
    t.equal(res.status, 400, `${where}: 400`);
    t.ok(named(body, 'zzunknown'), `${where}: the body names the parameter`);
    // The import families and the admin API answer `{"detail"}` (the spec's import bodies); the others problem bodies.
    const drf = path.startsWith('/import/') || path.startsWith('/admin/');
    t.match(type, drf ? /^application\/json/ : /^application\/problem\+json/, `${where}: the family's format`);
    if (!drf) t.match(body, { status: 400, code: 'invalid_parameter' }, `${where}: a problem body`);
    families.add(route.path.split('/')[1]!);
  }
  t.ok(['import', 'v1', 'v1.1', 'v2', 'portal', 'admin', 'datex2'].every((f) => families.has(f)), `every family walked: ${[...families].join(', ')}`);
});

t.test('a query string of many unknown names: ten named, the rest counted', async (t) => {
  const query = Array.from({ length: 500 }, (_, i) => `p${i}=1`).join('&');
  const res = await get(`${p.url}/v2/fuel-type?${query}`, TOKENS.export_v2);
  t.equal(res.status, 400);
  t.equal(((await res.json()) as { detail: string }).detail, 'unknown parameter(s): p0, p1, p2, p3, p4, p5, p6, p7, p8, p9 and 490 more; this path takes no query parameters.');
});

t.test('WebSocket upgrades are refused the same way', async (t) => {
  for (const path of [STREAM_PATH, ADMIN_FEED_PATH]) {
    const status = await new Promise<number>((resolve, reject) => {
      const req = request(`${p.url}${path}?zzunknown=1`, {
        headers: { Connection: 'Upgrade', Upgrade: 'websocket', 'Sec-WebSocket-Key': 'dGhlIHNhbXBsZSBub25jZQ==', 'Sec-WebSocket-Version': '13' },
      });
      req.on('response', (res) => {
        res.resume();
        resolve(res.statusCode!);
      });
      req.on('upgrade', (_res, socket) => {
        socket.destroy();
        resolve(101);
      });
      req.on('error', reject);
      req.end();
    });
    t.equal(status, 400, `${path}: upgrade with an unknown parameter refused`);
  }
});

t.test('the cache-buster `_` passes on GET and HEAD, not on other methods', async (t) => {
  for (const [url, token] of [
    [`${p.url}/v2/hrs?_=1700000000000`, TOKENS.export_v2],
    [`${p.url}/v2/hrs?limit=1&_=1`, TOKENS.export_v2],
    [`${p.url}/v2/hrs/BERLA/reliability?period=7d&_=1`, TOKENS.export_v2],
    [`${p.url}/v1.1/hrs/status?_=1`, TOKENS.export_v1],
    [`${p.url}/import/v1/fuel-type?_=1`, TOKENS.import_v1],
    [`${p.url}/admin/v1/tokens?_=1`, ADMIN_TOKEN],
    [`${p.url}/v2/doc/schema?_=1`, undefined],
  ] as const) {
    const res = await get(url, token);
    await res.arrayBuffer();
    t.equal(res.status, 200, `GET ${url.slice(p.url.length)}`);
    const head = await get(url, token, { method: 'HEAD' });
    t.equal(head.status, 200, `HEAD ${url.slice(p.url.length)}`);
  }
  const post = await fetch(`${p.url}/import/v2/signal/availability/?_=1`, { method: 'POST', body: '[]', headers: { Authorization: `Bearer ${TOKENS.import_v2}`, 'Content-Type': 'application/json' } });
  t.equal(post.status, 400, 'POST: `_` is an unknown parameter like any other');
  t.match(await post.json(), { detail: /unknown parameter\(s\): _; this path takes no query parameters\./ });
});

t.test('documented parameters still work', async (t) => {
  const ok = async (url: string, token: string | undefined, status = 200) => {
    const res = await get(`${p.url}${url}`, token);
    await res.arrayBuffer();
    t.equal(res.status, status, url);
  };
  await ok('/v2/hrs?limit=1&offset=0', TOKENS.export_v2);
  await ok('/v2/hrs/BERLA/reliability?period=30d', TOKENS.export_v2);
  await ok('/v1.1/hrs/status?fuelling_option=700ld', TOKENS.export_v1);
  await ok('/v1/hrs/BERLA/status?fuelling_option=700car', TOKENS.export_v1);
  await ok('/admin/v1/call-logs?originator=mon-1&limit=5', ADMIN_TOKEN);
  await ok('/admin/v1/transmissions?state=testing&limit=5', ADMIN_TOKEN);
  await ok('/admin/v1/audit?limit=5', ADMIN_TOKEN);
  await ok('/admin/v1/mail?limit=5&offset=0', ADMIN_TOKEN);
  await ok('/admin/v1/users?email=nobody@example.com', ADMIN_TOKEN);
  // A bad value of a known parameter is still the route's own 400.
  const bad = await get(`${p.url}/v2/hrs?limit=0`, TOKENS.export_v2);
  t.equal(bad.status, 400);
  t.notMatch(((await bad.json()) as { detail: string }).detail, /unknown parameter/, 'a bad value is not an unknown parameter');
});

t.test('the documents: each operation\'s query parameters are exactly the route\'s declaration', async (t) => {
  type Op = { parameters?: { $ref?: string; in?: string; name?: string }[] };
  type Doc = { paths: Record<string, Record<string, Op>>; components: { parameters?: Record<string, { in: string; name: string }> } };
  const routes = new Map<string, RouteInfo>(server!.routes().map((r) => [`${r.method} ${r.path.replace(/:([a-z_]+)/g, '{$1}')}`, r]));
  let compared = 0;
  for (const doc of ['/import/v2/doc/schema', '/v2/doc/schema', '/import/v1/doc/schema', '/import/v1.1/doc/schema', '/v1/doc/schema', '/v1.1/doc/schema', '/portal/v1/doc/schema']) {
    const document = (await (await get(`${p.url}${doc}`)).json()) as Doc & { info: { description: string } };
    t.match(document.info.description, /unknown query parameter/i, `${doc}: the rule is stated`);
    for (const [path, methods] of Object.entries(document.paths)) {
      for (const [method, op] of Object.entries(methods)) {
        const route = routes.get(`${method.toUpperCase()} ${path}`);
        if (!route) continue;
        const documented = (op.parameters ?? [])
          .map((prm) => (prm.$ref ? document.components.parameters![prm.$ref.split('/').pop()!]! : prm))
          .filter((prm) => prm.in === 'query')
          .map((prm) => prm.name)
          .sort();
        t.same(documented, [...(route.query ?? [])].sort(), `${doc}: ${method} ${path}`);
        compared++;
      }
    }
  }
  t.ok(compared > 40, `operations compared: ${compared}`);
});
