/**
 * The operator portal's API: sessions, roles, layouts, fuel types, webhooks' sign-in outage and fuzzing.
 *
 * One file, one process: its parts share the loaded platform code. Each part is a subtest named after
 * what it covers.
 */
import { createHash } from 'node:crypto';
import { request } from 'node:http';
import fc from 'fast-check';
import type { ParsedMail } from 'mailparser';
import sharp from 'sharp';
import t, { type Test } from 'tap';
import { createLogger } from '../../src/config/log.js';
import { checkFuelTypesAgainst } from '../../src/domain/portal/fuel-types.js';
import type { HttpServer } from '../../src/http/server.js';
import { loadFixture } from '../../src/registry/file/load.js';
import { startWorkers } from '../../workers/index.js';
import { baseFixture, TOKENS } from '../helpers/fixtures.js';
import { ADMIN_TOKEN, get, publishHistory, startTestPlatform, type TestPlatform } from '../helpers/platform.js';
import { ACCOUNTS, grantPortalRoles, type PortalClient, portalFixture, signedIn } from '../helpers/portal.js';
import { privatePostgres, privateRedis } from '../helpers/private-services.js';
import { smtpSink } from '../helpers/smtp.js';
import { until } from '../helpers/wait.js';
import { WsClient } from '../helpers/ws.js';

t.test('portal', async (t) => {
  /**
   * The portal's API over HTTP with real e-mail (smtp-server, mailparser): sign-in by a single-use link
   * (same answer for any address, a GET does not use it, reuse and expiry 410, rate limits), the session
   * cookie (flags, idle and absolute timeouts, sign-out, deactivation), Origin checks, the API tokens
   * (create once-shown values that work on export v2, list, the limit of five, change the expiry, revoke),
   * and the reveal link of a token an admin issued.
   */
  const MAIL_FROM = 'HRS signal platform <no-reply@hrs.example>';


  async function setup(t: Test, env: Record<string, string> = {}) {
    const smtp = await smtpSink(t);
    const p = await startTestPlatform(t, { fixture: baseFixture(), env: { SMTP_URL: `smtp://127.0.0.1:${smtp.port}`, MAIL_FROM, ...env } });
    const workers = startWorkers(p.parts.config, p.parts.redis, p.sql, createLogger('silent'));
    t.teardown(() => workers.close());
    return { smtp, p };
  }

  /** A browser-like client: sends the service's Origin and keeps the session cookie. */
  function client(p: TestPlatform) {
    let cookie: string | undefined;
    const call = async (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => {
      const res = await fetch(`${p.url}${path}`, {
        method,
        headers: {
          Origin: p.url,
          ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
          ...(cookie ? { Cookie: cookie } : {}),
          ...headers,
        },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const set = res.headers.get('set-cookie');
      if (set) cookie = set.split(';')[0]!.endsWith('=') ? undefined : set.split(';')[0];
      const text = await res.text();
      return { status: res.status, headers: res.headers, body: text ? (JSON.parse(text) as any) : undefined };
    };
    return { call, get cookie() { return cookie; } };
  }

  /** Asks for a link for alice and returns its secret, from the e-mail. */
  async function signInLink(smtp: { received: { to: string[]; mail: ParsedMail }[] }, c: ReturnType<typeof client>, email = 'alice@example.org') {
    const before = smtp.received.length;
    const asked = await c.call('POST', '/portal/v1/sign-in', { email });
    if (asked.status !== 202) throw new Error(`sign-in answered ${asked.status}`);
    const mail = await until('the sign-in e-mail', () => smtp.received.slice(before).find((r) => r.to.includes(email)));
    return /#sign-in=([\w-]{43})/.exec(mail.mail.text ?? '')![1]!;
  }

  t.test('sign-in: one answer for any address, a link by e-mail, used by POST once; the session cookie', async (t) => {
    const { smtp, p } = await setup(t);
    const c = client(p);
    const known = await c.call('POST', '/portal/v1/sign-in', { email: 'alice@example.org' });
    const unknown = await c.call('POST', '/portal/v1/sign-in', { email: 'nobody@example.org' });
    t.equal(known.status, 202);
    t.same(unknown, { ...unknown, status: 202, body: known.body }, 'the same answer whether or not the address has an account');
    const mail = await until('the e-mail', () => smtp.received.find((r) => r.to.includes('alice@example.org')));
    t.match(mail.mail.subject, /sign/i);
    const secret = /#sign-in=([\w-]{43})/.exec(mail.mail.text ?? '')![1]!;
    t.match(mail.mail.text, new RegExp(`${p.url.replace(/[.]/g, '\\.')}/portal/#sign-in=`), 'a link to the portal page');
    await new Promise((resolve) => setTimeout(resolve, 300));
    t.notOk(smtp.received.some((r) => r.to.includes('nobody@example.org')), 'nothing to an address without an account');
    const [row] = await p.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM sign_in_links WHERE hash = sha256(${secret}::bytea)`;
    t.equal(row!.n, 1, 'the link is stored as its SHA-256 (the table has no other place for it)');

    // A mail scanner fetching the link: a GET of the page, the secret in the fragment is not even sent.
    await fetch(`${p.url}/portal/#sign-in=${secret}`);
    t.equal((await c.call('GET', '/portal/v1/session')).status, 401, 'not signed in yet');
    const opened = await c.call('POST', '/portal/v1/session', { token: secret });
    t.equal(opened.status, 201, 'the POST uses the link');
    t.same(opened.body.user, { id: 'alice', email: 'alice@example.org', name: null });
    const cookie = opened.headers.get('set-cookie')!;
    t.match(cookie, /^hrs_portal=[\w-]{43}; Path=\/portal\/; HttpOnly; SameSite=Strict; Max-Age=43200$/, 'HttpOnly, SameSite=Strict, no Secure over plain HTTP');
    t.match((await c.call('GET', '/portal/v1/session')).body, { user: { id: 'alice' } });
    const again = await client(p).call('POST', '/portal/v1/session', { token: secret });
    t.same([again.status, again.body.code], [410, 'link_gone'], 'a used link is gone');

    const out = await c.call('DELETE', '/portal/v1/session');
    t.equal(out.status, 204);
    t.match(out.headers.get('set-cookie'), /Max-Age=0/, 'the cookie is cleared');
    t.equal((await c.call('GET', '/portal/v1/session', undefined, { Cookie: cookie.split(';')[0]! })).status, 401, 'the session is over, even with the old cookie');

    const late = await signInLink(smtp, c);
    await p.sql`UPDATE sign_in_links SET expires_at = clock_timestamp() - interval '1 second'`;
    t.equal((await c.call('POST', '/portal/v1/session', { token: late })).status, 410, 'an expired link is gone');
  });

  t.test('sessions end when idle, at their maximum, and when the account is deactivated; Origin is checked', async (t) => {
    const { smtp, p } = await setup(t, { PORTAL_SESSION_IDLE: '2', PORTAL_SESSION_MAX: '4' });
    const c = client(p);
    t.equal((await c.call('POST', '/portal/v1/session', { token: await signInLink(smtp, c) })).status, 201);
    p.clock.advance(2500);
    t.equal((await c.call('GET', '/portal/v1/session')).status, 401, 'idle too long');

    t.equal((await c.call('POST', '/portal/v1/session', { token: await signInLink(smtp, c) })).status, 201);
    for (let i = 0; i < 4; i++) {
      p.clock.advance(1100);
      await c.call('GET', '/portal/v1/session');
    }
    t.equal((await c.call('GET', '/portal/v1/session')).status, 401, 'past the absolute maximum, however busy');

    t.equal((await c.call('POST', '/portal/v1/session', { token: await signInLink(smtp, c) })).status, 201);
    const bare = await fetch(`${p.url}/portal/v1/tokens`, { method: 'POST', headers: { Cookie: c.cookie!, 'Content-Type': 'application/json' }, body: '{"name":"x"}' });
    t.equal(bare.status, 403, 'a change without Origin is refused');
    const foreign = await c.call('POST', '/portal/v1/tokens', { name: 'x' }, { Origin: 'https://evil.example' });
    t.match(foreign, { status: 403, body: { code: 'forbidden_origin', detail: /https:\/\/evil\.example/ } }, 'another origin is refused');
    const deactivated = await fetch(`${p.url}/admin/v1/users/alice/deactivate`, { method: 'POST', headers: { Authorization: `Bearer ${ADMIN_TOKEN}` } });
    t.equal(deactivated.status, 200);
    t.equal((await c.call('GET', '/portal/v1/session')).status, 401, 'a deactivated account is signed out at once');
    const denied = await c.call('POST', '/portal/v1/sign-in', { email: 'alice@example.org' });
    t.equal(denied.status, 202, 'asking for a link still gets the same answer');
  });

  t.test('sign-in requests are limited per address and per client', async (t) => {
    const { p } = await setup(t);
    const c = client(p);
    const statuses = [];
    for (let i = 0; i < 6; i++) statuses.push((await c.call('POST', '/portal/v1/sign-in', { email: 'bob@example.org' })).status);
    t.same(statuses, [202, 202, 202, 202, 202, 429], 'five per address in 15 minutes');
    const refused = await c.call('POST', '/portal/v1/sign-in', { email: 'bob@example.org' });
    t.ok(Number(refused.headers.get('retry-after')) > 0, 'Retry-After');
    for (let i = 0; i < 14; i++) await c.call('POST', '/portal/v1/sign-in', { email: `user${i}@example.org` });
    t.equal((await c.call('POST', '/portal/v1/sign-in', { email: 'carol@example.org' })).status, 429, 'twenty per client');
  });

  t.test('API tokens: created once-shown (works on export v2), listed with a hint, five at most, expiry changed, revoked', async (t) => {
    const { smtp, p } = await setup(t);
    const c = client(p);
    t.equal((await c.call('POST', '/portal/v1/session', { token: await signInLink(smtp, c) })).status, 201);
    const listed = await c.call('GET', '/portal/v1/tokens');
    t.match(listed.body.limits, { max_active: 5, min_days: 1, max_days: 366, default_days: 90 });
    const active = listed.body.tokens.filter((tk: { state: string }) => tk.state === 'active').length;

    const created = await c.call('POST', '/portal/v1/tokens', { name: 'laptop' });
    t.equal(created.status, 201);
    t.match(created.body.value, /^hrs_pat_[0-9A-Za-z]{49}$/, 'a prefixed value');
    t.equal(created.body.token.hint, created.body.value.slice(-4));
    t.equal(created.headers.get('cache-control'), 'no-store');
    const exported = await fetch(`${p.url}/v2/fuel-type`, { headers: { Authorization: `Bearer ${created.body.value}` } });
    t.equal(exported.status, 200, 'the new token works on export v2');
    const days = (Date.parse(created.body.token.expires_at) - Date.now()) / 86_400_000;
    t.ok(days > 89.9 && days <= 90, 'ninety days by default');
    const again = await c.call('GET', '/portal/v1/tokens');
    t.notMatch(JSON.stringify(again.body), created.body.value, 'the value is never listed');
    await until('the created e-mail', () => smtp.received.find((r) => /laptop.*created/i.test(r.mail.subject ?? '')));

    const bad = await c.call('POST', '/portal/v1/tokens', { name: 'x', expires_at: new Date(Date.now() + 400 * 86_400_000).toISOString() });
    t.match(bad, { status: 400, body: { detail: /at most 366 days/ } });
    for (let i = active + 1; i < 5; i++) t.equal((await c.call('POST', '/portal/v1/tokens', { name: `t${i}` })).status, 201);
    const sixth = await c.call('POST', '/portal/v1/tokens', { name: 'sixth' });
    t.match(sixth, { status: 409, body: { detail: /5 active personal tokens/ } }, 'the sixth is refused, saying so');

    const later = new Date(Date.now() + 200 * 86_400_000).toISOString();
    const changed = await c.call('PATCH', `/portal/v1/tokens/${created.body.token.id}`, { expires_at: later });
    t.same([changed.status, changed.body.token.expires_at], [200, later]);
    const revoked = await c.call('POST', `/portal/v1/tokens/${created.body.token.id}/revoke`);
    t.match(revoked, { status: 200, body: { token: { state: 'revoked' } } });
    const refused = await fetch(`${p.url}/v2/fuel-type`, { headers: { Authorization: `Bearer ${created.body.value}` } });
    t.equal(refused.status, 401, 'revoked at once');
    t.equal((await c.call('PATCH', `/portal/v1/tokens/${created.body.token.id}`, { expires_at: later })).status, 409, 'a revoked token cannot be changed');
    const others = await c.call('POST', '/portal/v1/tokens/999999/revoke');
    t.equal(others.status, 404, 'someone else\'s (or no) token is not found');
  });

  t.test('a token issued by an admin for an address: the reveal link works once, then 410', async (t) => {
    const { smtp, p } = await setup(t);
    const issued = await fetch(`${p.url}/admin/v1/personal-tokens`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${ADMIN_TOKEN}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ email: 'dana@example.org', name: 'Dana', token_name: 'research' }),
    });
    t.equal(issued.status, 201);
    t.match(await issued.json(), { user: { id: 'dana@example.org', email: 'dana@example.org' }, token_name: 'research' }, 'an account is made for the address');
    const mail = await until('the reveal e-mail', () => smtp.received.find((r) => r.to.includes('dana@example.org')));
    const secret = /#reveal=([\w-]{43})/.exec(mail.mail.text ?? '')![1]!;
    const c = client(p);
    const shown = await c.call('POST', '/portal/v1/reveal', { secret });
    t.equal(shown.status, 201);
    t.match(shown.body, { token: { name: 'research', state: 'active' }, value: /^hrs_pat_/ });
    t.equal((await fetch(`${p.url}/v2/fuel-type`, { headers: { Authorization: `Bearer ${shown.body.value}` } })).status, 200, 'it works on export v2');
    t.match(await c.call('POST', '/portal/v1/reveal', { secret }), { status: 410, body: { code: 'link_gone' } }, 'a second visit: 410');
    await until('the created e-mail', () => smtp.received.find((r) => r.to.includes('dana@example.org') && /created/i.test(r.mail.subject ?? '')));

    const second = await fetch(`${p.url}/admin/v1/personal-tokens`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${ADMIN_TOKEN}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ email: 'dana@example.org', token_name: 'later' }),
    });
    t.equal(second.status, 201, 'the same address again: its account is reused');
    const mail2 = await until('the second reveal e-mail', () => smtp.received.filter((r) => r.to.includes('dana@example.org') && /#reveal=/.test(r.mail.text ?? ''))[1]);
    const secret2 = /#reveal=([\w-]{43})/.exec(mail2.mail.text ?? '')![1]!;
    await p.sql`UPDATE reveal_links SET expires_at = clock_timestamp() - interval '1 second' WHERE used_at IS NULL`;
    t.equal((await c.call('POST', '/portal/v1/reveal', { secret: secret2 })).status, 410, 'an expired link: 410');
  });

  t.test('the admins\' live feed tells of token events: created, expiry changed, revoked (never a value)', async (t) => {
    const { smtp, p } = await setup(t);
    const feed = await WsClient.connect(`${p.url.replace('http:', 'ws:')}/admin/v1/live`, { Authorization: `Bearer ${ADMIN_TOKEN}` });
    t.teardown(() => feed.close());
    await feed.nextOf('snapshot');
    const c = client(p);
    t.equal((await c.call('POST', '/portal/v1/session', { token: await signInLink(smtp, c) })).status, 201);
    const created = await c.call('POST', '/portal/v1/tokens', { name: 'watched' });
    const later = new Date(Date.now() + 100 * 86_400_000).toISOString();
    await c.call('PATCH', `/portal/v1/tokens/${created.body.token.id}`, { expires_at: later });
    await fetch(`${p.url}/admin/v1/tokens/${created.body.token.id}/revoke`, { method: 'POST', headers: { Authorization: `Bearer ${ADMIN_TOKEN}` } });
    const events = [await feed.nextOf('token'), await feed.nextOf('token'), await feed.nextOf('token')];
    t.match(events, [
      { type: 'token', kind: 'created', token_id: created.body.token.id, user_id: 'alice', name: 'watched', hint: created.body.token.hint },
      { type: 'token', kind: 'expiry_changed', expires_at: later },
      { type: 'token', kind: 'revoked', by: 'admin' },
    ]);
    t.notMatch(JSON.stringify(events), created.body.value, 'never the value');
  });
});

t.test('portal-authz', async (t) => {
  /**
   * The portal's authorisation matrix over HTTP: every route that needs a session, for each principal
   * (staff of the station's operator, staff of another operator, an originator manager, an admin, an
   * account without roles, no session), answers the expected status; a denial is a 403 problem body
   * naming the missing membership, and the same request from an admin succeeds. The matrix must name
   * every portal route the server registers: a route added without an entry fails here. The admin
   * routes beside the portal answer 401 without the admin token.
   */
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
    { method: 'GET', route: '/portal/v1/stations/:hrs_id/drivers-waiting', expect: station(200) },
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
    { method: 'GET', route: '/portal/v1/stations/:hrs_id/forecast', expect: station(200) },
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
});

t.test('portal-fuel-types', async (t) => {
  /**
   * A draft layout against the station's v1 fuel types through the portal's API: the rule ties them both
   * ways (every v1 fuel type has a nozzle offering its option; every option with a v1 code is among the v1
   * fuel types), so removing the last 350ld nozzle or adding the first one can only be confirmed together
   * with new v1 fuel types. The draft's answer and the diff say which (`v1_fuel_types.agreeing`); the
   * confirmation carries them (`v1_fuel_types`) in its own transaction; the old body still works; a
   * refused confirmation changes nothing (neither layout nor v1 fuel types).
   */
  const N3 = { external_id: 'N3', connector_type: 'H35', vehicle_side: 'right', is_certified: true, fuelling_options: ['350ld'] };

  t.test('the confirmation carries the v1 fuel types a draft needs, both directions, in one transaction', async (t) => {
    const p = await startTestPlatform(t, { fixture: portalFixture() });
    await grantPortalRoles(p);
    const staff = await signedIn(p, ACCOUNTS.staff);
    const BERLA = '/portal/v1/stations/BERLA';
    const state = async () => {
      const [record, layouts] = await Promise.all([staff.call('GET', BERLA), staff.call('GET', `${BERLA}/layout`)]);
      return { v1: record.body.v1_fuel_types, version: layouts.body.confirmed.version, draft: layouts.body.draft !== null };
    };
    const { confirmed } = (await staff.call('GET', `${BERLA}/layout`)).body;
    t.same((await state()).v1, ['350car', '700car'], 'BERLA starts with 700car and 350car (N1 700ld, N2 350ld)');

    // Removing the last 350ld nozzle: 350car has no nozzle any more.
    const without350 = {
      ...confirmed.layout,
      dispensers: confirmed.layout.dispensers.map((d: any) => ({ ...d, nozzles: d.nozzles.filter((n: any) => n.external_id !== 'N2') })),
      products: confirmed.layout.products.filter((x: any) => x.external_id !== 'P350'),
    };
    const saved = await staff.call('PUT', `${BERLA}/layout/draft`, without350);
    t.equal(saved.status, 200, 'the draft is saved');
    t.same(saved.body.v1_fuel_types, {
      current: ['700car', '350car'],
      contradictions: ['v1 fuel type 350car has no nozzle with fuelling option 350ld on the draft layout'],
      agreeing: ['700car'],
      add: [],
      remove: ['350car'],
    }, 'the draft\'s answer names the conflict and the v1 fuel types that agree');
    t.same((await staff.call('GET', `${BERLA}/layout/diff`)).body.v1_fuel_types, saved.body.v1_fuel_types, 'and so does the diff');

    const old = await staff.call('POST', `${BERLA}/layout/confirm`, { expected_version: 1 });
    t.equal(old.status, 422, 'the old body: refused, the draft contradicts the v1 fuel types');
    t.match(old.body.detail, /350car has no nozzle/);
    const wrong = await staff.call('POST', `${BERLA}/layout/confirm`, { expected_version: 1, v1_fuel_types: ['700car', '350bus'] });
    t.equal(wrong.status, 422, 'v1 fuel types that disagree with the draft: refused');
    t.match(wrong.body, { code: 'layout_contradiction', detail: /^v1_fuel_types: v1 fuel type 350bus has no nozzle with fuelling option 350hd/ });
    t.match(wrong.headers.get('content-type'), /^application\/problem\+json/);
    const bad = await staff.call('POST', `${BERLA}/layout/confirm`, { expected_version: 1, v1_fuel_types: ['350ld'] });
    t.equal(bad.status, 400, 'a v1 fuel type that is not one: a 400');
    t.match(bad.body.detail, /v1_fuel_types\.0: must be one of 700car, 350car, 350bus/);
    const stale = await staff.call('POST', `${BERLA}/layout/confirm`, { expected_version: 0, v1_fuel_types: ['700car'] });
    t.equal(stale.status, 409, 'a stale version with v1 fuel types: a 409');
    t.same(await state(), { v1: ['350car', '700car'], version: 1, draft: true }, 'nothing of the refused confirmations was applied');

    const both = await staff.call('POST', `${BERLA}/layout/confirm`, { expected_version: 1, v1_fuel_types: saved.body.v1_fuel_types.agreeing });
    t.equal(both.status, 200, 'the layout and the v1 fuel types confirmed together');
    t.same(await state(), { v1: ['700car'], version: 2, draft: false }, 'both changed');

    // Adding the first 350ld nozzle again: 350car is missing.
    const with350 = { ...without350, dispensers: without350.dispensers.map((d: any, i: number) => (i === 0 ? { ...d, nozzles: [...d.nozzles, N3] } : d)) };
    t.equal((await staff.call('PUT', `${BERLA}/layout/draft`, with350)).status, 200);
    const diff = (await staff.call('GET', `${BERLA}/layout/diff`)).body;
    t.same(diff.diff.nozzles.added, ['N3']);
    t.same(diff.v1_fuel_types, {
      current: ['700car'],
      contradictions: ['fuelling option 350ld on the draft layout is missing from the v1 fuel types (350car)'],
      agreeing: ['700car', '350car'],
      add: ['350car'],
      remove: [],
    }, 'the diff: 350car is to be added');
    const tick = await staff.call('PUT', BERLA, { ...(await staff.call('GET', BERLA)).body, v1_fuel_types: ['700car', '350car'] });
    t.equal(tick.status, 422, 'ticking 350car on the record alone is refused (no confirmed nozzle offers it yet)');
    t.equal((await staff.call('POST', `${BERLA}/layout/confirm`, { expected_version: 2, v1_fuel_types: diff.v1_fuel_types.agreeing })).status, 200);
    t.same(await state(), { v1: ['350car', '700car'], version: 3, draft: false }, 'N3 and 350car are in effect together');

    // A draft that agrees: the old body still confirms it, and the v1 fuel types stay.
    const certified = { ...with350, dispensers: with350.dispensers.map((d: any) => ({ ...d, is_certified: !d.is_certified })) };
    const agrees = await staff.call('PUT', `${BERLA}/layout/draft`, certified);
    t.same(agrees.body.v1_fuel_types, { current: ['700car', '350car'], contradictions: [], agreeing: null, add: [], remove: [] }, 'no conflict');
    t.equal((await staff.call('POST', `${BERLA}/layout/confirm`, { expected_version: 3 })).status, 200, 'the old body confirms it');
    t.equal((await staff.call('POST', `${BERLA}/layout/confirm`)).status, 409, 'no body at all: still taken (no draft left)');
    t.same(await state(), { v1: ['350car', '700car'], version: 4, draft: false });

    // The audit trail: the v1 fuel types' change is recorded with the confirmation that made it.
    const audit = (await staff.call('GET', `${BERLA}/audit?limit=100`)).body.entries as { action: string; before: any; after: any }[];
    const updates = audit.filter((e) => e.action === 'station.update');
    t.same(updates.map((e) => [e.before.v1_fuel_types, e.after.v1_fuel_types]).reverse(), [[['350car', '700car'], ['700car']], [['700car'], ['350car', '700car']]], 'both changes audited');
    t.equal(audit.filter((e) => e.action === 'layout.confirm').length, 3, 'three confirmations');
  });

  t.test('the check alone: either side empty agrees; 700hd has no v1 code; the agreeing set may be empty', async (t) => {
    const layout = (...options: string[][]) => ({
      dispensers: [{ external_id: 'D', is_certified: true, nozzles: options.map((o, i) => ({ external_id: `N${i}`, connector_type: 'H70', vehicle_side: 'left', is_certified: true, fuelling_options: o })) }],
      storages: [],
      products: [],
    });
    t.same(checkFuelTypesAgainst(layout(['700ld'], ['350hd']), []), { current: [], contradictions: [], agreeing: null, add: [], remove: [] }, 'no v1 fuel types: nothing to compare');
    t.same(checkFuelTypesAgainst(layout(), ['700car']), { current: ['700car'], contradictions: [], agreeing: null, add: [], remove: [] }, 'no nozzle: nothing to compare');
    t.same(checkFuelTypesAgainst(null, ['700car']).agreeing, null, 'no layout: nothing to compare');
    t.same(checkFuelTypesAgainst(layout(['700ld', '700hd']), ['700car']).agreeing, null, '700hd needs no v1 fuel type');
    t.same(checkFuelTypesAgainst(layout(['700hd']), ['700car']), {
      current: ['700car'],
      contradictions: ['v1 fuel type 700car has no nozzle with fuelling option 700ld on the draft layout'],
      agreeing: [],
      add: [],
      remove: ['700car'],
    }, 'only 700hd left: the v1 fuel types that agree are none');
    t.same(checkFuelTypesAgainst(layout(['700ld'], ['350hd']), ['700car', '350car']), {
      current: ['700car', '350car'],
      contradictions: [
        'v1 fuel type 350car has no nozzle with fuelling option 350ld on the draft layout',
        'fuelling option 350hd on the draft layout is missing from the v1 fuel types (350bus)',
      ],
      agreeing: ['700car', '350bus'],
      add: ['350bus'],
      remove: ['350car'],
    }, 'one added and one removed at once');
  });
});

t.test('portal-fuzz', async (t) => {
  /**
   * Bad input at every state-changing endpoint of the operator and originator portal (and the admin
   * routes beside it), with fast-check: arbitrary JSON of every type, unknown fields, NUL characters,
   * huge strings, malformed JSON, wrong media types, odd path parameters. The answer is never a 5xx, a 4xx
   * is a problem body that says what is wrong, and nothing is half-applied: the registry (stations,
   * layouts, events, assignments, tokens, roles, originators) and the audit trail are exactly as before.
   * A failing confirmation leaves the old layout whole.
   */
  const RUNS = Number(process.env.FUZZ_RUNS ?? 40);

  /** Everything the portal can change, as one value to compare. */
  async function registryState(p: TestPlatform): Promise<unknown> {
    const [state] = await p.sql<{ state: unknown }[]>`
    SELECT json_build_object(
      'stations', (SELECT json_agg(json_build_object('id', hrs_id, 'name', name, 'heavy', heavy_duty, 'hours', opening_hours, 'zone', time_zone,
                    'details', details, 'photo', encode(photo_sha256, 'hex'), 'modified', static_modified_at) ORDER BY hrs_id) FROM stations),
      'fuel_types', (SELECT json_agg(json_build_object('id', hrs_id, 'f', fuel_type) ORDER BY hrs_id, fuel_type) FROM station_v1_fuel_types),
      'events', (SELECT json_agg(e ORDER BY e.hrs_id, e.id) FROM station_events e),
      'layouts', (SELECT json_agg(json_build_object('id', hrs_id, 'kind', kind, 'version', version, 'hash', encode(content_hash, 'hex')) ORDER BY hrs_id, kind) FROM layouts),
      'parts', (SELECT json_build_array((SELECT count(*) FROM dispensers), (SELECT count(*) FROM nozzles), (SELECT count(*) FROM storages), (SELECT count(*) FROM products))),
      'assignments', (SELECT json_agg(json_build_object('o', originator_id, 's', hrs_id, 't', signal_type, 'state', state) ORDER BY originator_id, hrs_id, signal_type) FROM assignments),
      'tokens', (SELECT json_agg(json_build_object('id', id, 'revoked', revoked_at, 'expires', expires_at) ORDER BY id) FROM tokens),
      'roles', (SELECT json_build_array((SELECT json_agg(m ORDER BY m.user_id, m.operator_id) FROM operator_members m),
                                        (SELECT json_agg(m ORDER BY m.user_id, m.originator_id) FROM originator_members m),
                                        (SELECT json_agg(id ORDER BY id) FROM users WHERE is_admin))),
      'originators', (SELECT json_agg(json_build_object('id', id, 'mode', call_log_mode) ORDER BY id) FROM originators),
      'audit', (SELECT count(*) FROM audit_log)
    ) AS state`;
    return state!.state;
  }

  /** JSON text that no endpoint's schema accepts: a value of any type, or an object with a field none has. */
  const invalidJson = fc.oneof(
    fc.jsonValue().filter((v) => v === null || typeof v !== 'object' || Array.isArray(v)).map((v) => JSON.stringify(v)),
    fc.dictionary(fc.string({ maxLength: 12 }), fc.jsonValue({ maxDepth: 3 })).map((o) => JSON.stringify({ ...o, __unknown_field: true })),
    fc.record({ name: fc.string({ unit: 'binary' }), state: fc.string({ unit: 'binary' }) }).map((o) => JSON.stringify({ ...o, extra: '\u0000' })),
    fc.string({ unit: 'binary-ascii', minLength: 1, maxLength: 50 }).map((s) => `{"name": ${s}`),
    fc.constantFrom('', '{', '[', 'null', '{"kind": "maintenance", "starts_at": "2027-01-01T00:00:00Z", "x": 1}', `{"name": "${'x'.repeat(300_000)}"}`),
  );

  /** The state-changing requests, their path parameters sometimes odd. */
  const target = fc.oneof(
    fc.constantFrom(
      ['PUT', '/portal/v1/stations/BERLA'],
      ['PUT', '/portal/v1/stations/BERLA/layout/draft'],
      ['POST', '/portal/v1/stations/BERLA/layout/confirm'],
      ['POST', '/portal/v1/stations/BERLA/events'],
      ['PATCH', '/portal/v1/stations/BERLA/events/ev-1'],
      ['POST', '/portal/v1/stations/BERLA/events/ev-1/end'],
      ['POST', '/portal/v1/operators/h2-demo/events'],
      ['PUT', '/portal/v1/stations/BERLA/assignments/mon-2/pricing'],
      ['PUT', '/portal/v1/stations/BERLA/assignments/mon-1/v1'],
      ['POST', '/portal/v1/originators/mon-1/tokens'],
      ['PUT', '/admin/v1/users/staff/roles'],
      ['PATCH', '/admin/v1/originators/mon-1'],
    ),
    fc
      .tuple(
        fc.constantFrom('/portal/v1/stations/%s', '/portal/v1/stations/%s/layout/draft', '/portal/v1/stations/BERLA/events/%s', '/portal/v1/originators/%s/tokens', '/portal/v1/stations/BERLA/assignments/%s/usage'),
        fc.oneof(fc.constantFrom('%00', '..', '%ED%A0%80', 'berla', 'BERL%41', ' ', '%25'), fc.string({ minLength: 1, maxLength: 30 }).map(encodeURIComponent)),
      )
      .map(([pattern, param]) => [pattern.includes('events') ? 'PATCH' : pattern.endsWith('tokens') ? 'POST' : 'PUT', pattern.replace('%s', param)]),
  );

  const contentType = fc.constantFrom('application/json', 'application/json; charset=utf-8', 'text/plain', 'application/x-www-form-urlencoded', undefined);

  async function send(p: TestPlatform, client: PortalClient, method: string, path: string, body: string, type: string | undefined) {
    const admin = path.startsWith('/admin/');
    const res = await fetch(`${p.url}${path}`, {
      method,
      headers: {
        ...(admin ? { Authorization: `Bearer ${ADMIN_TOKEN}` } : { Origin: p.url, Cookie: client.cookie! }),
        ...(type ? { 'Content-Type': type } : {}),
      },
      body,
    });
    const text = await res.text();
    return { status: res.status, type: res.headers.get('content-type') ?? '', text };
  }

  t.test('arbitrary bad input: never a 5xx, a clear problem, nothing applied', async (t) => {
    const p = await startTestPlatform(t, { fixture: portalFixture() });
    await grantPortalRoles(p);
    // An admin: every request passes authorisation, so what is checked is the input.
    const client = await signedIn(p, ACCOUNTS.admin);
    // A draft whose confirmation a malformed body must not trigger either.
    const layout = (await client.call('GET', '/portal/v1/stations/BERLA/layout')).body.confirmed.layout;
    t.equal((await client.call('PUT', '/portal/v1/stations/BERLA/layout/draft', { ...layout, products: [] })).status, 200);
    const before = await registryState(p);
    let answered = 0;
    await fc.assert(
      fc.asyncProperty(target, invalidJson, contentType, async ([method, path], body, type) => {
        // A confirmation and an end take no body at all: an empty one is that, and valid.
        fc.pre(!(body === '' && /\/(confirm|end)$/.test(path!)));
        const res = await send(p, client, method!, path!, body, type);
        answered++;
        if (res.status >= 500) throw new Error(`${method} ${path} ${type}: ${res.status} ${res.text.slice(0, 300)}`);
        if (res.status < 400) throw new Error(`${method} ${path} ${type} ${body.slice(0, 100)}: accepted (${res.status}) ${res.text.slice(0, 200)}`);
        const problem = JSON.parse(res.text) as { detail?: string };
        if (typeof problem.detail !== 'string' || problem.detail.length === 0) throw new Error(`${method} ${path}: ${res.status} without a detail`);
        if (!path!.startsWith('/admin/') && !res.type.startsWith('application/problem+json')) throw new Error(`${method} ${path}: ${res.type}`);
      }),
      { numRuns: RUNS * 12 },
    );
    t.ok(answered >= RUNS * 10, `${answered} bad requests answered`);
    t.same(await registryState(p), before, 'nothing applied, no audit entry');
  });

  t.test('photos that are not JPEG, PNG or WebP, of any size up to the cap: 4xx, nothing stored', async (t) => {
    const p = await startTestPlatform(t, { fixture: portalFixture() });
    await grantPortalRoles(p);
    const client = await signedIn(p, ACCOUNTS.staff);
    const before = await registryState(p);
    await fc.assert(
      fc.asyncProperty(fc.uint8Array({ maxLength: 2000 }), fc.constantFrom('image/png', 'image/jpeg', 'application/octet-stream', 'text/plain'), async (bytes, type) => {
        const body = Buffer.concat([Buffer.from('X'), Buffer.from(bytes)]);
        const res = await client.send('PUT', '/portal/v1/stations/BERLA/photo', body, { 'Content-Type': type });
        if (res.status !== 415) throw new Error(`${res.status} ${JSON.stringify(res.body)}`);
      }),
      { numRuns: RUNS },
    );
    const empty = await client.send('PUT', '/portal/v1/stations/BERLA/photo', Buffer.alloc(0));
    t.equal(empty.status, 400);
    t.same(await registryState(p), before, 'no photo stored');
  });

  t.test('a failing confirmation leaves the old layout whole, and the draft too', async (t) => {
    const p = await startTestPlatform(t, { fixture: portalFixture() });
    await grantPortalRoles(p);
    const staff = await signedIn(p, ACCOUNTS.staff);
    const exported = async () => (await (await get(`${p.url}/v2/hrs/BERLA`, TOKENS.export_v2)).json()) as Record<string, unknown>;
    const { confirmed } = (await staff.call('GET', '/portal/v1/stations/BERLA/layout')).body;
    // Without its 350 bar nozzle (and the product on it), and with a new nozzle T1, the layout contradicts the
    // v1 fuel types (700car, 350car): the legacy import checks signals against both.
    const contradicting = {
      ...confirmed.layout,
      dispensers: [
        ...confirmed.layout.dispensers.map((d: any) => ({ ...d, nozzles: d.nozzles.filter((n: any) => n.external_id !== 'N2') })),
        { external_id: 'DT', is_certified: true, nozzles: [{ external_id: 'T1', connector_type: 'H70', vehicle_side: 'left', is_certified: true, fuelling_options: ['700ld'] }] },
      ],
      products: confirmed.layout.products.filter((x: any) => x.external_id !== 'P350'),
    };
    t.equal((await staff.call('PUT', '/portal/v1/stations/BERLA/layout/draft', contradicting)).status, 200);
    const before = { state: await registryState(p), record: await exported(), layouts: (await staff.call('GET', '/portal/v1/stations/BERLA/layout')).body };

    const refused = await staff.call('POST', '/portal/v1/stations/BERLA/layout/confirm', { expected_version: confirmed.version });
    t.equal(refused.status, 422);
    t.match(refused.body, { code: 'layout_contradiction', detail: /350car/ });
    const stale = await staff.call('POST', '/portal/v1/stations/BERLA/layout/confirm', { expected_version: confirmed.version + 1 });
    t.equal(stale.status, 409);
    t.match(stale.body, { code: 'version_conflict' });
    t.same(await registryState(p), before.state, 'no row changed, no audit entry');
    t.same(await exported(), before.record, 'export shows the old layout, whole');
    t.same((await staff.call('GET', '/portal/v1/stations/BERLA/layout')).body, before.layouts, 'the confirmed layout and the draft as they were');
    const signal = await fetch(`${p.url}/import/v2/signal/availability/`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${TOKENS.import_v2}`, 'Content-Type': 'application/json' },
      body: JSON.stringify([{ hrs: 'BERLA', datetime: new Date().toISOString(), nozzles: [{ id: 'T1', available: true }], station: { maintenance: false, limitedly_available: false } }]),
    });
    t.equal(signal.status, 400, 'the draft nozzle stays unknown to import');
  });
});

t.test('portal-layout-lifecycle', async (t) => {
  /**
   * The layout's lifecycle through the portal on two instances of the service (one database, one Redis):
   * a draft is invisible to import and export on both; a confirmation is in effect on the other instance
   * when its answer arrives (no waiting): the new nozzle is accepted and exported there, a removed product's
   * price and a removed nozzle leave the published status at once on both; an assignment changed on one
   * instance switches publication on the other with the next signal.
   */
  const ago = (seconds: number) => new Date(Date.now() - seconds * 1000).toISOString();

  function post(p: TestPlatform, category: string, body: unknown) {
    return fetch(`${p.url}/import/v2/signal/${category}/`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${TOKENS.import_v2}`, 'Content-Type': 'application/json' },
      body: JSON.stringify(body),
    }).then(async (res) => ({ status: res.status, text: await res.text() }));
  }

  const availability = (nozzles: { id: string; available: boolean }[]) => [
    { hrs: 'BERLA', datetime: ago(2), nozzles, station: { maintenance: false, limitedly_available: false } },
  ];

  async function record(p: TestPlatform) {
    const res = await get(`${p.url}/v2/hrs/BERLA`, TOKENS.export_v2);
    const body = (await res.json()) as { dispensers: { nozzles: { external_id: string }[] }[] };
    return { lastModified: res.headers.get('last-modified'), nozzles: body.dispensers.flatMap((d) => d.nozzles.map((n) => n.external_id)) };
  }

  type Status = {
    availability: { nozzles: { id: string; available: boolean }[] } | null;
    pricing: { products: { id: string }[] } | null;
  };

  async function status(p: TestPlatform): Promise<Status> {
    return (await (await get(`${p.url}/v2/hrs/BERLA/status`, TOKENS.export_v2)).json()) as Status;
  }

  /**
   * Whether `holds` is true of the status on the instance that accepted a signal (at once: it applied it
   * before its 204) and on the other (once the announcement has come over Redis, a few milliseconds later).
   */
  async function seenOnBoth(t: Test, accepted: TestPlatform, other: TestPlatform, holds: (s: Status) => boolean, what: string): Promise<void> {
    t.ok(holds(await status(accepted)), `${what} (the instance that accepted it)`);
    const seen = await until(`${what} on the other instance`, async () => (holds(await status(other)) ? true : undefined), 5000).catch(() => false);
    t.ok(seen, `${what} (the other instance)`);
  }

  t.test('draft invisible, confirmation at once on both instances, removals leave the status at once, assignments switch publication', async (t) => {
    const a = await startTestPlatform(t, { fixture: portalFixture() });
    const b = await startTestPlatform(t, { sameStoreAs: a });
    await grantPortalRoles(a);
    const staff = await signedIn(a, ACCOUNTS.staff);
    const { confirmed } = (await staff.call('GET', '/portal/v1/stations/BERLA/layout')).body;
    const current = confirmed.layout;
    const withN9 = {
      ...current,
      dispensers: current.dispensers.map((d: any, i: number) =>
        i === 0 ? { ...d, nozzles: [...d.nozzles, { external_id: 'N9', connector_type: 'H70', vehicle_side: 'left', is_certified: true, fuelling_options: ['700ld'] }] } : d,
      ),
    };

    // The draft: invisible to import and export on both instances.
    t.equal((await staff.call('PUT', '/portal/v1/stations/BERLA/layout/draft', withN9)).status, 200);
    for (const p of [a, b]) {
      const refused = await post(p, 'availability', availability([{ id: 'N9', available: true }]));
      t.equal(refused.status, 400, 'a draft-only nozzle is refused');
      t.match(refused.text, /Unknown nozzle identifier: N9/, 'with the spec\'s message');
      t.notOk((await record(p)).nozzles.includes('N9'), 'export shows no draft nozzle');
    }
    const before = await record(b);

    // Confirmed on A: in effect on B when the answer arrives.
    a.clock.advance(1000); // Last-Modified has whole seconds
    t.equal((await staff.call('POST', '/portal/v1/stations/BERLA/layout/confirm', { expected_version: confirmed.version })).status, 200);
    t.equal((await post(b, 'availability', availability([{ id: 'N1', available: true }, { id: 'N2', available: true }, { id: 'N9', available: true }]))).status, 204, 'B accepts N9 at once');
    const after = await record(b);
    t.ok(after.nozzles.includes('N9'), 'B exports N9 at once');
    t.ok(Date.parse(after.lastModified!) > Date.parse(before.lastModified!), 'Last-Modified moved');
    await seenOnBoth(t, b, a, (s) => s.availability!.nozzles.some((n) => n.id === 'N9'), 'N9 in the status');

    // Pricing live for mon-1 (testing in the fixture), then P350's price published.
    t.equal((await staff.call('PUT', '/portal/v1/stations/BERLA/assignments/mon-1/pricing', { state: 'live' })).status, 200);
    t.equal((await post(b, 'pricing', [{ hrs: 'BERLA', datetime: ago(2), products: [{ id: 'P700', gross_price: '13.85' }, { id: 'P350', gross_price: '11.50' }] }])).status, 204);
    await seenOnBoth(t, b, a, (s) => JSON.stringify(s.pricing?.products.map((x) => x.id)) === '["P700","P350"]', 'both prices published');

    // P350 and nozzle N2 removed: gone from the status at once on both, and refused on B.
    const withoutP350 = {
      ...withN9,
      dispensers: withN9.dispensers.map((d: any) => ({ ...d, nozzles: d.nozzles.filter((n: any) => n.external_id !== 'N2') })),
      products: withN9.products.filter((p: any) => p.external_id !== 'P350'),
    };
    // The v1 fuel types must follow the layout (350ld is gone with N2).
    const rec = (await staff.call('GET', '/portal/v1/stations/BERLA')).body;
    const { hrs_id: _h, operator: _o, photo: _p, static_modified_at: _s, ...fields } = rec;
    t.equal((await staff.call('PUT', '/portal/v1/stations/BERLA/layout/draft', withoutP350)).status, 200);
    const contradicted = await staff.call('POST', '/portal/v1/stations/BERLA/layout/confirm', {});
    t.equal(contradicted.status, 422, 'not while the v1 fuel types still name 350car');
    t.ok((await record(b)).nozzles.includes('N2'), 'nothing changed');
    // Neither may go first while both name 350: the record alone cannot drop 350car either. A station
    // without v1 fuel types has nothing to contradict (the legacy import then refuses its signals).
    t.equal((await staff.call('PUT', '/portal/v1/stations/BERLA', { ...fields, v1_fuel_types: ['700car'] })).status, 422, 'the record alone cannot drop 350car');
    t.equal((await staff.call('PUT', '/portal/v1/stations/BERLA', { ...fields, v1_fuel_types: [] })).status, 200, 'no v1 fuel types');
    t.equal((await staff.call('POST', '/portal/v1/stations/BERLA/layout/confirm', {})).status, 200, 'now the layout without N2 and P350');
    for (const [name, p] of [['A', a], ['B', b]] as const) {
      const now = await status(p);
      t.same(now.pricing!.products.map((x) => x.id), ['P700'], `${name}: P350's price stopped at once`);
      t.notOk(now.availability!.nozzles.some((n) => n.id === 'N2'), `${name}: N2 left the status at once`);
    }
    const refusedPrice = await post(b, 'pricing', [{ hrs: 'BERLA', datetime: ago(1), products: [{ id: 'P350', gross_price: '11.50' }] }]);
    t.equal(refusedPrice.status, 400);
    t.match(refusedPrice.text, /Unknown product identifier: P350/);

    // Assignments: availability to testing on A; B's next signal is accepted, not published.
    t.equal((await staff.call('PUT', '/portal/v1/stations/BERLA/assignments/mon-1/availability', { state: 'testing' })).status, 200);
    t.equal((await post(b, 'availability', availability([{ id: 'N1', available: false }, { id: 'N9', available: false }]))).status, 204, 'accepted while testing');
    for (const p of [a, b]) t.equal((await status(p)).availability, null, 'no live source: nothing published, the testing signal neither');
    t.equal((await staff.call('PUT', '/portal/v1/stations/BERLA/assignments/mon-1/availability', { state: 'live' })).status, 200);
    t.equal((await post(b, 'availability', availability([{ id: 'N1', available: false }, { id: 'N9', available: false }]))).status, 204);
    await seenOnBoth(t, b, a, (s) => s.availability?.nozzles.find((n) => n.id === 'N1')?.available === false, 'live again: published');
  });
});

t.test('portal-roles', async (t) => {
  /**
   * Roles and the audit trail: roles set by admins (the admin API and the registry file), shown by the
   * session; every change through the portal and the admin API in the audit trail (who, when, what,
   * before and after), readable by admins and by operator staff for their own stations only; the call-log
   * mode set by admins applying from the next call; testing and unassigned transmissions with their
   * payloads for admins; the editor's refusals (a record contradicting the layout, an event not running).
   */
  const admin = (p: { url: string }, method: string, path: string, body?: unknown) =>
    fetch(`${p.url}${path}`, {
      method,
      headers: { Authorization: `Bearer ${ADMIN_TOKEN}`, ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    }).then(async (res) => ({ status: res.status, body: (await res.json().catch(() => undefined)) as any }));

  const ago = (seconds: number) => new Date(Date.now() - seconds * 1000).toISOString();

  t.test('roles: set by admins whole, refused for unknown ids, shown by the session, audited', async (t) => {
    const p = await startTestPlatform(t, { fixture: portalFixture() });
    await grantPortalRoles(p);
    const session = await (await signedIn(p, ACCOUNTS.staff)).call('GET', '/portal/v1/session');
    t.same(session.body.roles, { admin: false, operators: [{ id: 'h2-demo', name: 'H2 Demo GmbH' }], originators: [] });
    t.same((await admin(p, 'GET', `/admin/v1/users/${ACCOUNTS.manager}/roles`)).body, {
      admin: false, operators: [], originators: [{ id: 'mon-1', name: 'Monitoring One' }],
    });

    const refused = await admin(p, 'PUT', `/admin/v1/users/${ACCOUNTS.staff}/roles`, { admin: false, operators: ['h2-demo', 'nope'], originators: ['gone'] });
    t.equal(refused.status, 400);
    t.match(refused.body.detail, /operators: unknown operator "nope".*originators: unknown originator "gone"/);
    t.same((await admin(p, 'GET', `/admin/v1/users/${ACCOUNTS.staff}/roles`)).body.operators, [{ id: 'h2-demo', name: 'H2 Demo GmbH' }], 'nothing changed');
    t.equal((await admin(p, 'PUT', '/admin/v1/users/nobody/roles', { admin: false, operators: [], originators: [] })).status, 404);
    t.equal((await admin(p, 'PUT', `/admin/v1/users/${ACCOUNTS.staff}/roles`, { admin: 'yes', operators: [], originators: [] })).status, 400);

    // A membership taken away applies to the next request of an open session.
    const staff = await signedIn(p, ACCOUNTS.staff);
    t.equal((await staff.call('GET', '/portal/v1/stations/BERLA')).status, 200);
    t.equal((await admin(p, 'PUT', `/admin/v1/users/${ACCOUNTS.staff}/roles`, { admin: false, operators: [], originators: [] })).status, 200);
    const denied = await staff.call('GET', '/portal/v1/stations/BERLA');
    t.equal(denied.status, 403);
    t.match(denied.body.detail, /staff membership of the operator "h2-demo"/);

    const audit = (await admin(p, 'GET', `/admin/v1/audit?actor=admin-token&limit=500`)).body.entries as any[];
    const last = audit.find((e) => e.action === 'user.roles' && e.subject === ACCOUNTS.staff)!;
    t.match(last, { via: 'admin', before: { operators: ['h2-demo'] }, after: { operators: [] } }, 'before and after');
    t.ok(Date.parse(last.at) > Date.now() - 60_000, 'when');
  });

  t.test('the registry file gives accounts roles: given ones replace, left-out ones are kept, unknown ids refused with the path', async (t) => {
    const p = await startTestPlatform(t, { fixture: portalFixture() });
    const fixture = portalFixture();
    const users = fixture.users.map((u) => (u.id === ACCOUNTS.staff ? { ...u, operators: ['h2-demo', 'north-h2'] } : u.id === ACCOUNTS.admin ? { ...u, admin: true } : u));
    const summary = await loadFixture(p.sql, { ...fixture, users }, { baseDir: '.' });
    t.equal(summary.users.changed, 2);
    t.same((await admin(p, 'GET', `/admin/v1/users/${ACCOUNTS.staff}/roles`)).body.operators.map((o: any) => o.id), ['h2-demo', 'north-h2']);
    t.equal((await admin(p, 'GET', `/admin/v1/users/${ACCOUNTS.admin}/roles`)).body.admin, true);
    // Left out: kept.
    await loadFixture(p.sql, fixture, { baseDir: '.' });
    t.same((await admin(p, 'GET', `/admin/v1/users/${ACCOUNTS.staff}/roles`)).body.operators.map((o: any) => o.id), ['h2-demo', 'north-h2']);
    const bad = fixture.users.map((u) => (u.id === ACCOUNTS.manager ? { ...u, originators: ['mon-1', 'ghost'] } : u));
    await t.rejects(loadFixture(p.sql, { ...fixture, users: bad }, { baseDir: '.' }), { message: 'users[3].originators[1]: unknown originator "ghost"' });
  });

  t.test('the audit trail: portal and admin changes, who/what/before/after; operator staff read their stations\' only', async (t) => {
    const p = await startTestPlatform(t, { fixture: portalFixture() });
    await grantPortalRoles(p);
    const staff = await signedIn(p, ACCOUNTS.staff);
    const other = await signedIn(p, ACCOUNTS.otherStaff);
    const record = (await staff.call('GET', '/portal/v1/stations/BERLA')).body;
    const { hrs_id: _id, operator: _op, photo: _photo, static_modified_at: _at, ...fields } = record;
    t.equal((await staff.call('PUT', '/portal/v1/stations/BERLA', { ...fields, name: 'Berlin BER' })).status, 200);
    t.equal((await other.call('PUT', '/portal/v1/stations/KIELX', { name: 'Kiel Port' })).status, 200);
    const created = await admin(p, 'POST', '/admin/v1/users', { email: 'new@example.org' });
    t.equal(created.status, 201);
    t.equal((await admin(p, 'POST', `/admin/v1/users/${created.body.id}/deactivate`)).status, 200);
    const tokens = (await admin(p, 'GET', '/admin/v1/tokens?originator=mon-1')).body.tokens as any[];
    t.equal((await admin(p, 'POST', `/admin/v1/tokens/${tokens[0].id}/revoke`)).status, 200);
    t.equal((await admin(p, 'POST', `/admin/v1/tokens/${tokens[0].id}/revoke`)).status, 200, 'again: nothing to record');
    const alice = await signedIn(p, ACCOUNTS.none);
    const made = await alice.call('POST', '/portal/v1/tokens', { name: 'ci' });
    t.equal(made.status, 201);

    const all = (await admin(p, 'GET', '/admin/v1/audit')).body.entries as any[];
    const actions = all.map((e) => `${e.actor} ${e.action} ${e.hrs_id ?? e.subject}`);
    t.match(actions, [
      `user:alice personal_token.create ${made.body.token.id}`,
      `admin-token token.revoke ${tokens[0].id}`,
      `admin-token user.deactivate ${created.body.id}`,
      `admin-token user.create ${created.body.id}`,
      'user:north-staff station.update KIELX',
      'user:staff station.update BERLA',
    ]);
    t.equal(actions.filter((a) => a.includes('token.revoke')).length, 1, 'a revocation that changed nothing is not recorded');
    const berla = all.find((e) => e.action === 'station.update' && e.hrs_id === 'BERLA');
    t.match(berla, { via: 'portal', operator_id: 'h2-demo', before: { name: 'Berlin Airport' }, after: { name: 'Berlin BER' } });
    t.notOk(JSON.stringify(all).includes(made.body.value), 'never a token value');

    const mine = (await staff.call('GET', '/portal/v1/operators/h2-demo/audit')).body.entries as any[];
    t.ok(mine.length > 0 && mine.every((e) => e.operator_id === 'h2-demo'), 'the operator\'s entries only');
    t.equal((await staff.call('GET', '/portal/v1/stations/KIELX/audit')).status, 403);
    t.equal((await other.call('GET', '/portal/v1/operators/h2-demo/audit')).status, 403);
    const page1 = await staff.call('GET', '/portal/v1/stations/BERLA/audit?limit=1');
    t.equal(page1.body.entries.length, 1);
    t.equal((await staff.call('GET', '/portal/v1/stations/BERLA/audit?limit=0')).status, 400);
    t.equal((await staff.call('GET', '/portal/v1/stations/BERLA/audit?cursor=nonsense')).status, 400);
  });

  t.test('call-log mode set by an admin applies from the next call; testing and unassigned transmissions for admins', async (t) => {
    const p = await startTestPlatform(t, { fixture: portalFixture() });
    const workers = startWorkers(p.parts.config, p.parts.redis, p.sql, createLogger('silent'));
    t.teardown(() => workers.close());
    const post = (category: string, body: unknown) =>
      fetch(`${p.url}/import/v2/signal/${category}/`, { method: 'POST', headers: { Authorization: `Bearer ${TOKENS.import_v2}`, 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
    t.same((await admin(p, 'PATCH', '/admin/v1/originators/mon-1', { call_log_mode: 'always' })).body, { id: 'mon-1', call_log_mode: 'always' });
    t.equal((await admin(p, 'PATCH', '/admin/v1/originators/mon-1', { call_log_mode: 'sometimes' })).status, 400);
    t.equal((await admin(p, 'PATCH', '/admin/v1/originators/nobody', { call_log_mode: 'always' })).status, 404);
    // BERLA pricing: testing; KIELX: mon-1 is not assigned at all.
    t.equal((await post('pricing', [{ hrs: 'BERLA', datetime: ago(2), products: [{ id: 'P700', gross_price: '13.85' }] }])).status, 204);
    t.equal((await post('usage', [{ hrs: 'KIELX', datetime: ago(1), nozzles: [{ id: 'KN1', usage_status: 'free' }] }])).status, 204);
    // The call log is written by a worker after the answer: both calls are waited for, then checked.
    const logs = await until('both calls logged (mode always)', async () => {
      const res = await admin(p, 'GET', '/admin/v1/call-logs?originator=mon-1');
      return res.body.call_logs.length >= 2 ? res.body.call_logs : undefined;
    });
    t.same(logs.map((l: any) => l.status), [204, 204], 'every call, not only failed ones');

    const testing = (await admin(p, 'GET', '/admin/v1/transmissions?state=testing')).body;
    t.match(testing.transmissions, [{ originator: 'mon-1', hrs_id: 'BERLA', category: 'pricing', state: 'testing', payload: { products: [{ id: 'P700', gross_price: '13.85' }] } }]);
    const unassigned = (await admin(p, 'GET', '/admin/v1/transmissions?state=unassigned&originator=mon-1')).body;
    t.match(unassigned.transmissions, [{ hrs_id: 'KIELX', category: 'usage', state: 'unassigned' }]);
    t.equal((await admin(p, 'GET', '/admin/v1/transmissions')).status, 400, 'state is required');
    const one = (await admin(p, 'GET', '/admin/v1/transmissions?state=testing&limit=1')).body;
    t.equal(one.transmissions.length, 1);
    t.type(one.next, 'string', 'a full page links to the next');
    t.same((await admin(p, 'GET', one.next)).body.transmissions, [], 'which is empty here');
  });

  t.test('the editor refuses what would break the registry, and changes nothing then', async (t) => {
    const p = await startTestPlatform(t, { fixture: portalFixture() });
    await grantPortalRoles(p);
    const staff = await signedIn(p, ACCOUNTS.staff);
    const record = (await staff.call('GET', '/portal/v1/stations/BERLA')).body;
    const { hrs_id: _id, operator: _op, photo: _photo, static_modified_at: _at, ...fields } = record;
    const contradiction = await staff.call('PUT', '/portal/v1/stations/BERLA', { ...fields, v1_fuel_types: ['700car'] });
    t.equal(contradiction.status, 422);
    t.match(contradiction.body, { code: 'layout_contradiction', detail: /^v1_fuel_types: / });
    t.same((await staff.call('GET', '/portal/v1/stations/BERLA')).body, record, 'unchanged');

    const future = await staff.call('POST', '/portal/v1/stations/BERLA/events', { id: 'later', kind: 'maintenance', starts_at: new Date(Date.now() + 86_400_000).toISOString() });
    t.equal(future.status, 201);
    const end = await staff.call('POST', '/portal/v1/stations/BERLA/events/later/end');
    t.equal(end.status, 409);
    t.match(end.body.detail, /has not started yet/);
    t.equal((await staff.call('POST', '/portal/v1/stations/BERLA/events', { id: 'later', kind: 'closure', starts_at: ago(60) })).status, 409, 'the id is taken');
    const running = await staff.call('POST', '/portal/v1/stations/BERLA/events', { kind: 'limited-service', starts_at: ago(3600), description: 'one dispenser' });
    const ended = await staff.call('POST', `/portal/v1/stations/BERLA/events/${running.body.id}/end`);
    t.equal(ended.status, 200);
    t.ok(Date.parse(ended.body.ends_at) <= Date.now(), 'ended now');
    t.equal((await staff.call('POST', `/portal/v1/stations/BERLA/events/${running.body.id}/end`)).status, 409, 'ended already');
    const changed = await staff.call('PATCH', '/portal/v1/stations/BERLA/events/later', { description: 'Compressor swap', ends_at: ago(0) });
    t.equal(changed.status, 400, 'the whole event is checked: ends before it starts');
    t.match(changed.body.detail, /ends_at: must be after starts_at/);

    const broadcastOther = await staff.call('POST', '/portal/v1/operators/h2-demo/events', { kind: 'maintenance', starts_at: ago(10), hrs_ids: ['BERLA', 'KIELX'] });
    t.equal(broadcastOther.status, 422, 'a station of another operator refuses the whole broadcast');
    t.notOk((await staff.call('GET', '/portal/v1/stations/BERLA/events')).body.events.some((e: any) => e.kind === 'maintenance' && e.id !== 'later' && e.id !== 'ev-1'), 'nothing broadcast');

    const png = await sharp({ create: { width: 2, height: 2, channels: 3, background: '#123456' } }).png().toBuffer();
    t.equal((await staff.send('PUT', '/portal/v1/stations/BERLA/photo', Buffer.from('GIF89a....'))).status, 415);
    const put = await staff.send('PUT', '/portal/v1/stations/BERLA/photo', png);
    t.equal(put.status, 200);
    const exported = await fetch(`${p.url}/v2/hrs/BERLA/photo`, { headers: { Authorization: `Bearer ${TOKENS.export_v2}` } });
    t.equal(exported.status, 200);
    t.equal(exported.headers.get('content-type'), 'image/png', 'served by export as today');
    t.equal(createHash('sha256').update(Buffer.from(await exported.arrayBuffer())).digest('hex'), put.body.photo.sha256, 'the image as stored');
    const big = Buffer.concat([png, Buffer.alloc(5 * 1024 * 1024)]);
    t.equal((await staff.send('PUT', '/portal/v1/stations/BERLA/photo', big)).status, 413);
    t.equal((await staff.call('DELETE', '/portal/v1/stations/BERLA/photo')).status, 204);
    t.equal((await fetch(`${p.url}/v2/hrs/BERLA/photo`, { headers: { Authorization: `Bearer ${TOKENS.export_v2}` } })).status, 404);
  });
});

t.test('portal-round-trip', async (t) => {
  /**
   * GET-modify-PUT on a station of the portal: the body of `GET /portal/v1/stations/{hrs_id}` goes back
   * to its `PUT` as it is, changed where wanted. The read-only fields (`hrs_id`, `operator`, `photo`,
   * `static_modified_at`) are ignored when they equal what GET shows, a 400 `read_only` naming the field
   * when they would change it, and `static_modified_at` of an older copy is a 409: nothing is changed then.
   */
  /** A 1×1 PNG (a real image, whatever checks the photo upload makes). */
  const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==', 'base64');

  async function setup(t: Parameters<typeof startTestPlatform>[0]): Promise<{ p: TestPlatform; staff: PortalClient }> {
    const p = await startTestPlatform(t, { fixture: portalFixture() });
    await grantPortalRoles(p);
    return { p, staff: await signedIn(p, ACCOUNTS.staff) };
  }

  const auditCount = async (p: TestPlatform) => (await p.sql`SELECT count(*)::int AS n FROM audit_log WHERE hrs_id = 'BERLA'`)[0]!.n as number;

  t.test('the body of GET, sent back unchanged, is accepted and changes nothing', async (t) => {
    const { p, staff } = await setup(t);
    const got = await staff.call('GET', '/portal/v1/stations/BERLA');
    t.equal(got.status, 200);
    t.ok(['hrs_id', 'operator', 'photo', 'static_modified_at'].every((k) => k in got.body), 'GET shows the read-only fields');
    const audits = await auditCount(p);
    const put = await staff.call('PUT', '/portal/v1/stations/BERLA', got.body);
    t.equal(put.status, 200, `accepted (${JSON.stringify(put.body)})`);
    t.same(put.body, got.body, 'the answer is the station as it was');
    t.equal(await auditCount(p), audits, 'no change recorded');
  });

  t.test('GET, change the name, PUT: changed; the same older copy again is a 409', async (t) => {
    const { p, staff } = await setup(t);
    const got = (await staff.call('GET', '/portal/v1/stations/BERLA')).body;
    const put = await staff.call('PUT', '/portal/v1/stations/BERLA', { ...got, name: 'Berlin Airport South' });
    t.equal(put.status, 200);
    t.equal(put.body.name, 'Berlin Airport South');
    t.ok(Date.parse(put.body.static_modified_at) > Date.parse(got.static_modified_at), 'static_modified_at moved');
    t.same((await staff.call('GET', '/portal/v1/stations/BERLA')).body, put.body, 'GET shows what PUT answered');

    // Someone else's copy, read before that change.
    const stale = await staff.call('PUT', '/portal/v1/stations/BERLA', { ...got, heavy_duty: true });
    t.equal(stale.status, 409);
    t.equal(stale.body.code, 'version_conflict');
    t.match(stale.body.detail, /BERLA changed at .* after the copy sent .*nothing was changed/);
    const now = (await staff.call('GET', '/portal/v1/stations/BERLA')).body;
    t.same(now, put.body, 'nothing changed');

    // The same change without static_modified_at: made whatever happened meanwhile (as before).
    const { static_modified_at: _, ...unconditional } = got;
    const forced = await staff.call('PUT', '/portal/v1/stations/BERLA', { ...unconditional, heavy_duty: true });
    t.equal(forced.status, 200);
    t.equal(forced.body.heavy_duty, true);
    t.equal(forced.body.name, 'Berlin Airport', 'the whole record is the body: the name sent back is the old one');

    // A change elsewhere (an event) moves static_modified_at too: a copy from before it is refused.
    const before = (await staff.call('GET', '/portal/v1/stations/BERLA')).body;
    t.equal((await staff.call('POST', '/portal/v1/stations/BERLA/events', { kind: 'maintenance', starts_at: new Date(Date.now() + 86_400_000).toISOString() })).status, 201);
    const after = (await staff.call('GET', '/portal/v1/stations/BERLA')).body;
    if (after.static_modified_at !== before.static_modified_at) {
      t.equal((await staff.call('PUT', '/portal/v1/stations/BERLA', { ...before, name: 'X' })).status, 409, 'an event since the copy: 409');
    }
    t.equal((await staff.call('PUT', '/portal/v1/stations/BERLA', { ...after, name: 'Berlin' })).status, 200, 'a fresh copy: accepted');
  });

  t.test('read-only fields that would change are a 400 naming them; nothing is changed', async (t) => {
    const { p, staff } = await setup(t);
    const got = (await staff.call('GET', '/portal/v1/stations/BERLA')).body;
    const audits = await auditCount(p);
    const cases: [string, Record<string, unknown>, RegExp][] = [
      ['hrs_id', { hrs_id: 'HAMBG' }, /^hrs_id: read-only: this is station "BERLA"/],
      ['operator', { operator: 'north-h2' }, /^operator: read-only: the station belongs to "h2-demo"/],
      ['photo', { photo: { media_type: 'image/png', bytes: 10, sha256: 'a'.repeat(64) } }, /^photo: read-only: upload a photo with PUT \/portal\/v1\/stations\/BERLA\/photo/],
    ];
    for (const [field, change, message] of cases) {
      const res = await staff.call('PUT', '/portal/v1/stations/BERLA', { ...got, name: 'Changed', ...change });
      t.equal(res.status, 400, `${field}: 400`);
      t.equal(res.body.code, 'read_only', `${field}: read_only`);
      t.match(res.body.detail, message, `${field}: named (${res.body.detail})`);
      t.match(res.body.detail, /Nothing was changed\.$/);
    }
    const both = await staff.call('PUT', '/portal/v1/stations/BERLA', { ...got, hrs_id: 'HAMBG', operator: 'north-h2' });
    t.match(both.body.detail, /^hrs_id: .*; operator: /, 'every such field is named');
    const wrongType = await staff.call('PUT', '/portal/v1/stations/BERLA', { ...got, static_modified_at: 'yesterday' });
    t.equal(wrongType.status, 400);
    t.equal(wrongType.body.code, 'invalid_body', 'a read-only field is still checked for its form');
    t.match(wrongType.body.detail, /^static_modified_at: /);
    t.same((await staff.call('GET', '/portal/v1/stations/BERLA')).body, got, 'the station is as it was');
    t.equal(await auditCount(p), audits, 'nothing recorded');
  });

  t.test('a station with a photo: the round trip works, the photo stays', async (t) => {
    const { staff } = await setup(t);
    const uploaded = await staff.send('PUT', '/portal/v1/stations/BERLA/photo', PNG, { 'Content-Type': 'image/png' });
    t.equal(uploaded.status, 200, `photo uploaded (${JSON.stringify(uploaded.body)})`);
    const got = (await staff.call('GET', '/portal/v1/stations/BERLA')).body;
    t.ok(got.photo, 'GET shows the photo');
    const put = await staff.call('PUT', '/portal/v1/stations/BERLA', { ...got, opening_hours: 'Mo-Fr 06:00-22:00' });
    t.equal(put.status, 200, `accepted (${JSON.stringify(put.body)})`);
    t.same(put.body.photo, got.photo, 'the photo is kept');
    t.equal(put.body.opening_hours, 'Mo-Fr 06:00-22:00');
    const removed = await staff.call('PUT', '/portal/v1/stations/BERLA', { ...put.body, photo: null });
    t.equal(removed.status, 400, 'a photo is not removed by the record');
    t.equal(removed.body.code, 'read_only');
  });

  t.test('an event as the list gives it may be sent back to its PATCH; its id is read-only', async (t) => {
    const { p, staff } = await setup(t);
    const [event] = (await staff.call('GET', '/portal/v1/stations/BERLA/events')).body.events.filter((e: { id: string }) => e.id === 'ev-1');
    t.ok(event, 'the event is listed');
    const changed = await staff.call('PATCH', '/portal/v1/stations/BERLA/events/ev-1', { ...event, description: 'Compressor swap' });
    t.equal(changed.status, 200, `accepted (${JSON.stringify(changed.body)})`);
    t.same(changed.body, { ...event, description: 'Compressor swap' });
    const audits = await auditCount(p);
    const other = await staff.call('PATCH', '/portal/v1/stations/BERLA/events/ev-1', { ...event, id: 'ev-2' });
    t.equal(other.status, 400);
    t.equal(other.body.code, 'read_only');
    t.match(other.body.detail, /^id: read-only: this is the event "ev-1"/);
    t.equal(await auditCount(p), audits, 'nothing changed');
  });
});

t.test('portal-sign-in-outage', async (t) => {
  /**
   * `POST /portal/v1/sign-in` tells the truth when the link cannot be made: while PostgreSQL (where the
   * link is stored) or Redis (where its e-mail is queued) is down the answer is a 503 with `Retry-After`
   * in the portal's error format, for known and unknown addresses alike (nothing disclosed), and no
   * e-mail goes out; once both are back a known address gets its link and an unknown one the same 202.
   */
  const KNOWN = 'alice@example.org';
  const UNKNOWN = 'nobody@example.org';

  async function setup(t: Test, env: Record<string, string>) {
    const smtp = await smtpSink(t);
    const p = await startTestPlatform(t, { fixture: baseFixture(), env: { SMTP_URL: `smtp://127.0.0.1:${smtp.port}`, DATABASE_TIMEOUT: '2', ...env } });
    const workers = startWorkers(p.parts.config, p.parts.redis, p.sql, createLogger('silent'));
    t.teardown(() => workers.close());
    return { smtp, p };
  }

  async function signIn(p: TestPlatform, email: string) {
    const res = await fetch(`${p.url}/portal/v1/sign-in`, {
      method: 'POST',
      headers: { Origin: p.url, 'Content-Type': 'application/json' },
      body: JSON.stringify({ email }),
    });
    return { status: res.status, type: res.headers.get('content-type'), retryAfter: res.headers.get('retry-after'), body: (await res.json()) as any };
  }

  async function linkArrives(t: Test, smtp: Awaited<ReturnType<typeof smtpSink>>, p: TestPlatform) {
    const before = smtp.received.length;
    const known = await signIn(p, KNOWN);
    const unknown = await signIn(p, UNKNOWN);
    t.equal(known.status, 202, 'a known address: 202');
    t.same(unknown, known, 'an unknown address: the very same answer');
    await until('the sign-in e-mail', () => smtp.received.slice(before).find((r) => r.to.includes(KNOWN)));
  }

  function refused(t: Test, answer: Awaited<ReturnType<typeof signIn>>, what: string, detail: RegExp) {
    t.equal(answer.status, 503, `${what}: 503`);
    t.equal(answer.retryAfter, '5', `${what}: Retry-After`);
    t.match(answer.type, /^application\/problem\+json/, `${what}: the portal's error format`);
    t.equal(answer.body.status, 503);
    t.match(answer.body.detail, detail, what);
    t.notMatch(answer.body.detail, /on its way/, `${what}: never "on its way"`);
  }

  t.test('PostgreSQL down: 503 with Retry-After for any address, no e-mail; a link again once it is back', async (t) => {
    const pg = await privatePostgres(t);
    const { smtp, p } = await setup(t, { DATABASE_URL: pg.url('hrs_sign_in') });
    await linkArrives(t, smtp, p);

    await pg.stop();
    const before = smtp.received.length;
    const known = await signIn(p, KNOWN);
    refused(t, known, 'a known address', /no sign-in link could be made.*nothing was sent/i);
    t.equal(known.body.code, 'service_unavailable');
    const unknown = await signIn(p, UNKNOWN);
    t.same(unknown, known, 'an unknown address: the very same answer');

    await pg.start();
    await until('PostgreSQL answers again', async () => ((await fetch(`${p.url}/readyz`)).status === 200 ? true : undefined));
    await linkArrives(t, smtp, p);
    t.notOk(smtp.received.slice(before, -1).some((r) => r.to.includes(KNOWN)), 'nothing was sent while PostgreSQL was down');
  });

  t.test('Redis down: the e-mail cannot be queued, 503 for any address; a link again once it is back', async (t) => {
    const redis = await privateRedis(t);
    const { smtp, p } = await setup(t, { REDIS_URL: redis.url });
    await linkArrives(t, smtp, p);

    await redis.stop();
    await until('the client has seen Redis go', () => (p.parts.redis.isReady ? undefined : true));
    const known = await signIn(p, KNOWN);
    refused(t, known, 'a known address', /could not be queued.*nothing was sent/i);
    t.equal(known.body.code, 'mail_unavailable');
    t.same(await signIn(p, UNKNOWN), known, 'an unknown address: the very same answer');
    const links = await p.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM sign_in_links`;
    t.equal(links[0]!.n, 1, 'no link stored for nothing: only the first one');

    await redis.start();
    await until('Redis answers again', () => (p.parts.redis.isReady ? true : undefined));
    await linkArrives(t, smtp, p);
  });
});
