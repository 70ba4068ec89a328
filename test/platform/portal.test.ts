/**
 * The portal's API over HTTP with real e-mail (smtp-server, mailparser): sign-in by a single-use link
 * (same answer for any address, a GET does not use it, reuse and expiry 410, rate limits), the session
 * cookie (flags, idle and absolute timeouts, sign-out, deactivation), Origin checks, the API tokens
 * (create once-shown values that work on export v2, list, the limit of five, change the expiry, revoke),
 * and the reveal link of a token an admin issued.
 */
import t, { type Test } from 'tap';
import type { ParsedMail } from 'mailparser';
import { createLogger } from '../../src/config/log.js';
import { startWorkers } from '../../workers/index.js';
import { baseFixture } from '../helpers/fixtures.js';
import { ADMIN_TOKEN, startTestPlatform, type TestPlatform } from '../helpers/platform.js';
import { smtpSink } from '../helpers/smtp.js';
import { until } from '../helpers/wait.js';
import { WsClient } from '../helpers/ws.js';

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
  await new Promise((resolve) => setTimeout(resolve, 2500));
  t.equal((await c.call('GET', '/portal/v1/session')).status, 401, 'idle too long');

  t.equal((await c.call('POST', '/portal/v1/session', { token: await signInLink(smtp, c) })).status, 201);
  for (let i = 0; i < 4; i++) {
    await new Promise((resolve) => setTimeout(resolve, 1100));
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
