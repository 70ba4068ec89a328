/**
 * The portal's authorisation matrix over HTTP: every route that needs a session, for each principal
 * (staff of the station's operator, staff of another operator, an originator manager, an admin, an
 * account without roles, no session), answers the expected status; a denial is a 403 problem body
 * naming the missing membership, and the same request from an admin succeeds. The matrix must name
 * every portal route the server registers: a route added without an entry fails here. The admin
 * routes beside the portal answer 401 without the admin token.
 */
import { request } from 'node:http';
import t from 'tap';
import type { HttpServer } from '../../src/http/server.js';
import { ADMIN_TOKEN, publishHistory, startTestPlatform, type TestPlatform } from '../helpers/platform.js';
import { ACCOUNTS, grantPortalRoles, portalFixture, signedIn, type PortalClient } from '../helpers/portal.js';

type Principal = 'staff' | 'otherStaff' | 'manager' | 'admin' | 'none' | 'anonymous';
const PRINCIPALS: Principal[] = ['staff', 'otherStaff', 'manager', 'admin', 'none', 'anonymous'];

interface Entry {
  method: string;
  /** The route's pattern, as the server registered it. */
  route: string;
  /** Prepares what the request needs (as an admin) and returns the path parameters. */
  setup?: (admin: PortalClient) => Promise<Record<string, string>>;
  body?: unknown;
  raw?: Buffer;
  /** The status for each principal. */
  expect: Record<Principal, number>;
}

const later = () => new Date(Date.now() + 2 * 86_400_000).toISOString();
const earlier = () => new Date(Date.now() - 3_600_000).toISOString();
/** A real 1×1 PNG (a photo is decoded before it is taken). */
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==', 'base64');

/** Station routes on BERLA (operator h2-demo): its staff and admins, nobody else. */
const station = (ok: number): Record<Principal, number> => ({ staff: ok, otherStaff: 403, manager: 403, admin: ok, none: 403, anonymous: 401 });
/** Originator routes on mon-1: its managers and admins. */
const originator = (ok: number): Record<Principal, number> => ({ staff: 403, otherStaff: 403, manager: ok, admin: ok, none: 403, anonymous: 401 });
/** Routes of any signed-in account (its own tokens, the lists filtered by its roles). */
const anyAccount = (ok: number): Record<Principal, number> => ({ staff: ok, otherStaff: ok, manager: ok, admin: ok, none: ok, anonymous: 401 });

/** Routes on one webhook subscription, the admin's: only its owner finds it (an admin included, nobody else's). */
const ownerOnly = (ok: number): Record<Principal, number> => ({ staff: 404, otherStaff: 404, manager: 404, admin: ok, none: 404, anonymous: 401 });
const HOOK = { url: 'https://93.184.215.14/hook', kinds: ['events'] };
/** A fresh webhook subscription of the admin's (the older ones deleted: an account may have 5). */
async function adminWebhook(admin: PortalClient): Promise<Record<string, string>> {
  for (const hook of (await ok(admin.call('GET', '/portal/v1/webhooks'), 'the webhooks')).webhooks) await admin.call('DELETE', `/portal/v1/webhooks/${hook.id}`);
  return { id: (await ok(admin.call('POST', '/portal/v1/webhooks', HOOK), 'a webhook')).id };
}

const draft = {
  dispensers: [{ external_id: 'D1', is_certified: true, nozzles: [
    { external_id: 'N1', connector_type: 'H70', vehicle_side: 'left', is_certified: true, fuelling_options: ['700ld'] },
    { external_id: 'N2', connector_type: 'H35', vehicle_side: 'right', is_certified: false, fuelling_options: ['350ld'] },
  ] }],
  storages: [],
  products: [{ external_id: 'P700', pressure_stage: 700, green_hydrogen_share: null, nozzle_external_ids: ['N1'] }],
};
const record = { name: 'Berlin Airport', heavy_duty: false, opening_hours: '24/7', time_zone: null, details: { city: 'Berlin' }, v1_fuel_types: ['700car', '350car'] };

async function ok(res: Promise<{ status: number; body: any }>, what: string) {
  const answer = await res;
  if (answer.status >= 300) throw new Error(`${what}: ${answer.status} ${JSON.stringify(answer.body)}`);
  return answer.body;
}

const MATRIX: Entry[] = [
  { method: 'GET', route: '/portal/v1/session', expect: anyAccount(200) },
  { method: 'DELETE', route: '/portal/v1/session', expect: anyAccount(204) },
  { method: 'GET', route: '/portal/v1/tokens', expect: anyAccount(200) },
  { method: 'POST', route: '/portal/v1/tokens', body: { name: 'matrix' }, expect: anyAccount(201) },
  // Another account's token is not found: each account changes only its own.
  { method: 'PATCH', route: '/portal/v1/tokens/:id', setup: async () => ({ id: '1' }), body: { expires_at: later() }, expect: { ...anyAccount(404) } },
  { method: 'POST', route: '/portal/v1/tokens/:id/revoke', setup: async () => ({ id: '999999' }), expect: anyAccount(404) },

  { method: 'GET', route: '/portal/v1/stations', expect: anyAccount(200) },
  { method: 'GET', route: '/portal/v1/stations/:hrs_id', expect: station(200) },
  { method: 'PUT', route: '/portal/v1/stations/:hrs_id', body: record, expect: station(200) },
  { method: 'GET', route: '/portal/v1/stations/:hrs_id/layout', expect: station(200) },
  { method: 'PUT', route: '/portal/v1/stations/:hrs_id/layout/draft', body: draft, expect: station(200) },
  {
    method: 'DELETE', route: '/portal/v1/stations/:hrs_id/layout/draft', expect: station(204),
    setup: async (admin) => (await ok(admin.call('PUT', '/portal/v1/stations/BERLA/layout/draft', draft), 'a draft'), {}),
  },
  {
    method: 'GET', route: '/portal/v1/stations/:hrs_id/layout/diff', expect: station(200),
    setup: async (admin) => (await ok(admin.call('PUT', '/portal/v1/stations/BERLA/layout/draft', draft), 'a draft'), {}),
  },
  {
    method: 'POST', route: '/portal/v1/stations/:hrs_id/layout/confirm', body: {}, expect: station(200),
    setup: async (admin) => (await ok(admin.call('PUT', '/portal/v1/stations/BERLA/layout/draft', draft), 'a draft'), {}),
  },
  { method: 'GET', route: '/portal/v1/stations/:hrs_id/events', expect: station(200) },
  { method: 'POST', route: '/portal/v1/stations/:hrs_id/events', body: { kind: 'maintenance', starts_at: later() }, expect: station(201) },
  {
    method: 'PATCH', route: '/portal/v1/stations/:hrs_id/events/:event_id', body: { description: 'changed' }, expect: station(200),
    setup: async (admin) => ({ event_id: (await ok(admin.call('POST', '/portal/v1/stations/BERLA/events', { kind: 'other', starts_at: later() }), 'an event')).id }),
  },
  {
    method: 'POST', route: '/portal/v1/stations/:hrs_id/events/:event_id/end', expect: station(200),
    setup: async (admin) => ({ event_id: (await ok(admin.call('POST', '/portal/v1/stations/BERLA/events', { kind: 'closure', starts_at: earlier() }), 'an event')).id }),
  },
  { method: 'POST', route: '/portal/v1/operators/:operator_id/events', body: { kind: 'maintenance', starts_at: later() }, expect: station(201) },
  {
    method: 'GET', route: '/portal/v1/stations/:hrs_id/photo', expect: station(200),
    setup: async (admin) => (await ok(admin.send('PUT', '/portal/v1/stations/BERLA/photo', PNG), 'a photo'), {}),
  },
  { method: 'PUT', route: '/portal/v1/stations/:hrs_id/photo', raw: PNG, expect: station(200) },
  { method: 'DELETE', route: '/portal/v1/stations/:hrs_id/photo', expect: station(204) },
  { method: 'GET', route: '/portal/v1/stations/:hrs_id/assignments', expect: station(200) },
  { method: 'PUT', route: '/portal/v1/stations/:hrs_id/assignments/:originator_id/:signal_type', body: { state: 'testing' }, expect: station(200) },
  { method: 'GET', route: '/portal/v1/stations/:hrs_id/audit', expect: station(200) },
  { method: 'GET', route: '/portal/v1/operators/:operator_id/audit', expect: station(200) },

  { method: 'GET', route: '/portal/v1/originators', expect: anyAccount(200) },
  { method: 'GET', route: '/portal/v1/originators/:originator_id', expect: originator(200) },
  { method: 'GET', route: '/portal/v1/originators/:originator_id/tokens', expect: originator(200) },
  { method: 'POST', route: '/portal/v1/originators/:originator_id/tokens', body: { generation: 'import_v2', name: 'matrix' }, expect: originator(201) },
  {
    method: 'POST', route: '/portal/v1/originators/:originator_id/tokens/:token_id/revoke', expect: originator(200),
    setup: async (admin) => ({
      token_id: (await ok(admin.call('POST', '/portal/v1/originators/mon-1/tokens', { generation: 'import_v1', name: 'to revoke' }), 'a token')).token.id,
    }),
  },
  { method: 'GET', route: '/portal/v1/originators/:originator_id/call-logs', expect: originator(200) },

  { method: 'GET', route: '/portal/v1/stations/:hrs_id/signals', expect: station(200) },
  { method: 'GET', route: '/portal/v1/stations/:hrs_id/timeline', expect: station(200) },
  { method: 'GET', route: '/portal/v1/stations/:hrs_id/reliability', expect: station(200) },
  // mon-1 reports on BERLA.
  { method: 'GET', route: '/portal/v1/originators/:originator_id/stations/:hrs_id/signals', expect: originator(200) },
  { method: 'GET', route: '/portal/v1/originators/:originator_id/stations/:hrs_id/timeline', expect: originator(200) },
  { method: 'GET', route: '/portal/v1/originators/:originator_id/stations/:hrs_id/reliability', expect: originator(200) },
  { method: 'GET', route: '/portal/v1/originators/:originator_id/reliability', expect: originator(200) },

  { method: 'GET', route: '/portal/v1/webhooks', expect: anyAccount(200) },
  { method: 'POST', route: '/portal/v1/webhooks', body: HOOK, expect: anyAccount(201) },
  { method: 'GET', route: '/portal/v1/webhooks/:id', setup: adminWebhook, expect: ownerOnly(200) },
  { method: 'PATCH', route: '/portal/v1/webhooks/:id', setup: adminWebhook, body: { description: 'matrix' }, expect: ownerOnly(200) },
  { method: 'DELETE', route: '/portal/v1/webhooks/:id', setup: adminWebhook, expect: ownerOnly(204) },
  { method: 'POST', route: '/portal/v1/webhooks/:id/rotate-secret', setup: adminWebhook, expect: ownerOnly(200) },
  { method: 'POST', route: '/portal/v1/webhooks/:id/ping', setup: adminWebhook, expect: ownerOnly(202) },
  { method: 'GET', route: '/portal/v1/webhooks/:id/deliveries', setup: adminWebhook, expect: ownerOnly(200) },
];

/** The path parameters every entry may use. */
const DEFAULTS = { hrs_id: 'BERLA', operator_id: 'h2-demo', originator_id: 'mon-1', signal_type: 'pricing' };

/**
 * Requests without a session, each from its own loopback address: every one is a failed
 * authentication, and the platform refuses an address after 30 a minute (the limit is tested elsewhere).
 */
let loopback = 1;
function fromElsewhere(method: string, path: string, options: { body?: Buffer | string; headers?: Record<string, string> } = {}): Promise<{ status: number; headers: Headers; body: any }> {
  loopback = (loopback % 250) + 1;
  const url = new URL(path, p.url);
  return new Promise((resolve, reject) => {
    const req = request(
      { host: url.hostname, port: url.port, path: `${url.pathname}${url.search}`, method, localAddress: `127.0.0.${loopback + 1}`, headers: { Origin: p.url, ...options.headers } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          const headers = new Headers(Object.entries(res.headers).flatMap(([k, v]) => (typeof v === 'string' ? [[k, v] as [string, string]] : [])));
          resolve({ status: res.statusCode!, headers, body: text ? JSON.parse(text) : undefined });
        });
      },
    );
    req.on('error', reject);
    req.end(options.body);
  });
}

const fill = (route: string, params: Record<string, string>) => route.replace(/:(\w+)/g, (_, name: string) => encodeURIComponent(params[name]!));

let server: HttpServer | undefined;
const p: TestPlatform = await startTestPlatform(t, {
  fixture: portalFixture(),
  routes: (s) => (server = s),
  // Every webhook route's cases make a subscription (and ping it): more than WEBHOOK_RATE_LIMIT's 10 a minute.
  env: { WEBHOOK_SECRET_KEY: '0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef', WEBHOOK_RATE_LIMIT: '1000' },
});
await grantPortalRoles(p);
// The history published (the timeline and figures answer 503 before its first run).
await publishHistory(p);
const ACCOUNT_OF: Record<Exclude<Principal, 'anonymous'>, string> = {
  staff: ACCOUNTS.staff,
  otherStaff: ACCOUNTS.otherStaff,
  manager: ACCOUNTS.manager,
  admin: ACCOUNTS.admin,
  none: ACCOUNTS.none,
};
const clientOf = async (who: Exclude<Principal, 'anonymous'>) => signedIn(p, ACCOUNT_OF[who]);

t.test('the matrix names every portal route that needs a session, and only those', async (t) => {
  const registered = server!.routes().filter((r) => r.auth === 'portal').map((r) => `${r.method} ${r.path}`).sort();
  const named = MATRIX.map((e) => `${e.method} ${e.route}`).sort();
  t.same(named, registered, 'a new portal route needs its row in the matrix');
});

for (const entry of MATRIX) {
  t.test(`${entry.method} ${entry.route}`, async (t) => {
    const admin = await signedIn(p, ACCOUNTS.admin);
    for (const who of PRINCIPALS) {
      const params = { ...DEFAULTS, ...(entry.setup ? await entry.setup(admin) : {}) };
      const path = fill(entry.route, params);
      const body = entry.raw ?? (entry.body === undefined ? undefined : JSON.stringify(entry.body));
      const type = entry.raw ? 'application/octet-stream' : 'application/json';
      const c = who === 'anonymous' ? undefined : await clientOf(who);
      const res = !c
        ? await fromElsewhere(entry.method, path, { body, headers: body === undefined ? {} : { 'Content-Type': type } })
        : entry.raw ? await c.send(entry.method, path, entry.raw) : await c.call(entry.method, path, entry.body);
      const expected = entry.expect[who];
      t.equal(res.status, expected, `${who}: ${expected}${res.status === expected ? '' : ` (${JSON.stringify(res.body)})`}`);
      if (expected === 403) {
        t.equal(res.headers.get('content-type'), 'application/problem+json; charset=utf-8', `${who}: a problem body`);
        t.match(res.body, { status: 403, code: 'forbidden', detail: /needs (staff|manager) membership of the (operator|originator) "[\w.-]+" \(or the admin role\)/ }, `${who}: says what is missing`);
      }
      if (expected === 401) t.match(res.body, { status: 401, detail: /Not signed in/ }, `${who}: told to sign in`);
    }
  });
}

t.test('what another operator\'s staff may not do, an admin does; each sees only its own in the lists', async (t) => {
  const other = await signedIn(p, ACCOUNTS.otherStaff);
  const admin = await signedIn(p, ACCOUNTS.admin);
  const manager = await signedIn(p, ACCOUNTS.manager);
  const none = await signedIn(p, ACCOUNTS.none);
  const event = { kind: 'maintenance', starts_at: later() };
  t.equal((await other.call('POST', '/portal/v1/stations/BERLA/events', event)).status, 403);
  t.equal((await admin.call('POST', '/portal/v1/stations/BERLA/events', event)).status, 201);
  t.same((await other.call('GET', '/portal/v1/stations')).body.stations.map((s: any) => s.hrs_id), ['KIELX']);
  t.same((await admin.call('GET', '/portal/v1/stations')).body.stations.map((s: any) => s.hrs_id), ['BERLA', 'HAMBG', 'KIELX']);
  t.same((await none.call('GET', '/portal/v1/stations')).body.stations, []);
  t.same((await manager.call('GET', '/portal/v1/originators')).body.originators.map((o: any) => o.id), ['mon-1']);
  t.same((await admin.call('GET', '/portal/v1/originators')).body.originators.map((o: any) => o.id), ['mon-1', 'mon-2']);
  t.same((await other.call('GET', '/portal/v1/originators')).body.originators, []);
  t.equal((await other.call('GET', '/portal/v1/stations/NONEX')).status, 404, 'a station that does not exist: 404 for everyone');
  t.equal((await admin.call('GET', '/portal/v1/stations/NONEX')).status, 404);
});

t.test('the admin routes beside the portal: 401 without the admin token, 200 with it', async (t) => {
  const routes: [string, string, unknown?][] = [
    ['GET', `/admin/v1/users/${ACCOUNTS.staff}/roles`],
    ['PUT', `/admin/v1/users/${ACCOUNTS.none}/roles`, { admin: false, operators: [], originators: [] }],
    ['PATCH', '/admin/v1/originators/mon-2', { call_log_mode: 'errors' }],
    ['GET', '/admin/v1/transmissions?state=testing'],
    ['GET', '/admin/v1/audit'],
  ];
  const staff = await signedIn(p, ACCOUNTS.admin);
  for (const [method, path, body] of routes) {
    const send = (headers: Record<string, string>) =>
      fromElsewhere(method, path, { headers: { 'Content-Type': 'application/json', ...headers }, body: body === undefined ? undefined : JSON.stringify(body) });
    t.equal((await send({})).status, 401, `${method} ${path}: no token`);
    t.equal((await send({ Authorization: 'Bearer not-the-admin-token-000' })).status, 401, `${method} ${path}: another token`);
    t.equal((await send({ Cookie: staff.cookie! })).status, 401, `${method} ${path}: a portal admin's session is not the admin token`);
    t.equal((await send({ Authorization: `Bearer ${ADMIN_TOKEN}` })).status, 200, `${method} ${path}: the admin token`);
  }
});
