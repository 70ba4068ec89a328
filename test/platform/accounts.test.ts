/**
 * Authentication, client addresses, rate limits and the shared e-mail and list rules.
 *
 * One file, one process: its parts share the loaded platform code. Each part is a subtest named after
 * what it covers.
 */
import { execFileSync } from 'node:child_process';
import { readdir, readFile } from 'node:fs/promises';
import { createServer, type Socket } from 'node:net';
import { join } from 'node:path';
import { createClient } from '@redis/client';
import t from 'tap';
import { failedAuthLimit, MESSAGES } from '../../src/api/auth.js';
import { loadConfig } from '../../src/config/config.js';
import { createLogger } from '../../src/config/log.js';
import { compileTrust, trustEntries } from '../../src/config/trust-proxy.js';
import { SANDBOX_TOKEN } from '../../src/domain/sandbox.js';
import { emailAddress } from '../../src/domain/text.js';
import { clientAddress, forwardedFor, normalize } from '../../src/http/client-address.js';
import { DRF_ERRORS, HttpError, json, PROBLEM_ERRORS, unauthorized } from '../../src/http/errors.js';
import { rateLimitGuard } from '../../src/http/rate-limit-guard.js';
import type { Request } from '../../src/http/request.js';
import { type RateLimit, RateLimiter } from '../../src/infra/rate-limit.js';
import { openRedis, type Redis } from '../../src/infra/redis.js';
import { FixtureError, loadFixture } from '../../src/registry/file/load.js';
import { baseFixture, TOKENS } from '../helpers/fixtures.js';
import { ADMIN_TOKEN, get, logCapture, startTestPlatform, type TestPlatform, uniqueName } from '../helpers/platform.js';
import { ACCOUNTS, grantPortalRoles, portalClient, portalFixture, signedIn } from '../helpers/portal.js';
import { TEST_REDIS_URL } from '../helpers/services.js';
import { until } from '../helpers/wait.js';

t.test('auth', async (t) => {
  /** One route of each API family and the generation it takes. */
  const FAMILIES = [
    { family: 'import v1', path: '/import/v1/fuel-type', accepts: 'import_v1', style: 'drf' },
    { family: 'import v1.1', path: '/import/v1.1/fuel-type', accepts: 'import_v1', style: 'drf' },
    { family: 'import v2', path: '/import/v2/active-stations/', accepts: 'import_v2', style: 'drf' },
    { family: 'export v1', path: '/v1/fuel-type', accepts: 'export_v1', style: 'problem' },
    { family: 'export v1.1', path: '/v1.1/vehicle-type', accepts: 'export_v1', style: 'problem' },
    { family: 'export v2', path: '/v2/fuel-type', accepts: 'export_v2', style: 'problem' },
  ] as const;

  const GENERATIONS = ['import_v1', 'import_v2', 'export_v1', 'export_v2'] as const;

  t.test('the auth matrix: every token generation against every API family', async (t) => {
    const p = await startTestPlatform(t, { fixture: baseFixture() });
    for (const { family, path, accepts, style } of FAMILIES) {
      for (const generation of GENERATIONS) {
        const res = await get(`${p.url}${path}`, TOKENS[generation]);
        const body = await res.json();
        if (generation === accepts) {
          t.equal(res.status, 200, `${generation} passes on ${family}`);
          continue;
        }
        t.equal(res.status, 401, `${generation} is refused on ${family}`);
        t.equal(res.headers.get('content-type'), style === 'drf' ? 'application/json; charset=utf-8' : 'application/problem+json; charset=utf-8');
        t.type(body.detail, 'string', 'the body has a detail');
        if (family === 'export v2' && generation === 'export_v1') t.equal(body.detail, MESSAGES.exportV1OnV2, 'the v1 export token is told why');
        if (family.startsWith('export v1') && generation === 'export_v2') t.equal(body.detail, MESSAGES.personalOnV1);
        if (family === 'import v2' && generation === 'import_v1') {
          t.equal(body.detail, 'This is an import v1/v1.1 token; import v2 accepts an import v2 token only.');
        }
      }
    }
    t.match(MESSAGES.exportV1OnV2, /do not authenticate on export v2/);
    t.match(MESSAGES.exportV1OnV2, /personal/);
  });

  t.test('missing, malformed, unknown, revoked, expired and deactivated credentials', async (t) => {
    const fixture = baseFixture();
    fixture.users.push({ id: 'bob', email: 'bob@example.org' });
    fixture.tokens.push(
      { generation: 'export_v2', user: 'alice', name: 'old', value: 'alice-expired-token-0001', expires_at: '2020-01-01T00:00:00Z' },
      { generation: 'export_v2', user: 'bob', name: 'bob', value: 'bob-personal-token-000001', expires_at: null },
    );
    const p = await startTestPlatform(t, { fixture });
    const url = `${p.url}/v2/fuel-type`;
    const detail = async (res: Response) => {
      t.equal(res.status, 401);
      return (await res.json()).detail;
    };
    t.equal(await detail(await fetch(url)), MESSAGES.missing);
    t.equal(await detail(await fetch(url, { headers: { Authorization: '' } })), MESSAGES.missing);
    t.equal(await detail(await fetch(url, { headers: { Authorization: `Token ${TOKENS.export_v2}` } })), MESSAGES.malformed);
    t.equal(await detail(await fetch(url, { headers: { Authorization: 'Bearer' } })), MESSAGES.malformed);
    t.equal(await detail(await fetch(url, { headers: { Authorization: 'Bearer a b' } })), MESSAGES.malformed);
    t.equal(await detail(await get(url, 'no-such-token-anywhere')), MESSAGES.unknown);
    t.equal(await detail(await get(url, 'alice-expired-token-0001')), MESSAGES.expired);
    t.equal((await get(url, `${TOKENS.export_v2}`, { headers: { Authorization: `bearer   ${TOKENS.export_v2}` } })).status, 200, 'the scheme is case-insensitive');

    t.equal((await get(url, 'bob-personal-token-000001')).status, 200, 'a token without expiry works');
    await p.sql`UPDATE users SET deactivated_at = now() WHERE id = 'bob'`;
    p.parts.tokens.invalidate();
    t.equal(await detail(await get(url, 'bob-personal-token-000001')), MESSAGES.deactivated);

    // Revocation through the admin API takes effect at once, cache or not.
    t.equal((await get(url, TOKENS.export_v2)).status, 200);
    const list = await (await get(`${p.url}/admin/v1/tokens?user=alice`, ADMIN_TOKEN)).json();
    const laptop = list.tokens.find((x: { name: string }) => x.name === 'laptop');
    t.notOk('hash' in laptop || 'value' in laptop, 'listings never show a hash or value');
    const revoked = await fetch(`${p.url}/admin/v1/tokens/${laptop.id}/revoke`, { method: 'POST', headers: { Authorization: `Bearer ${ADMIN_TOKEN}` } });
    t.equal(revoked.status, 200);
    t.type((await revoked.json()).revoked_at, 'string');
    t.equal(await detail(await get(url, TOKENS.export_v2)), MESSAGES.revoked);
    t.equal((await fetch(`${p.url}/admin/v1/tokens/999999/revoke`, { method: 'POST', headers: { Authorization: `Bearer ${ADMIN_TOKEN}` } })).status, 404);
  });

  t.test('a revocation on one instance reaches the others through Redis', async (t) => {
    const a = await startTestPlatform(t, { fixture: baseFixture() });
    const b = await startTestPlatform(t, { sameStoreAs: a });
    let reloads = 0;
    b.parts.registry.onReload(() => reloads++);
    t.equal((await get(`${a.url}/v2/fuel-type`, TOKENS.export_v2)).status, 200, 'cached on a');
    t.equal((await get(`${b.url}/v2/fuel-type`, TOKENS.export_v2)).status, 200, 'cached on b');
    const list = await (await get(`${a.url}/admin/v1/tokens?user=alice`, ADMIN_TOKEN)).json();
    const revoke = await fetch(`${a.url}/admin/v1/tokens/${list.tokens[0].id}/revoke`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${ADMIN_TOKEN}` },
    });
    t.equal(revoke.status, 200);
    t.equal((await get(`${a.url}/v2/fuel-type`, TOKENS.export_v2)).status, 401, 'refused at once where it was revoked');
    let status = 0;
    for (let i = 0; i < 50 && status !== 401; i++) {
      status = (await get(`${b.url}/v2/fuel-type`, TOKENS.export_v2)).status;
      if (status !== 401) await new Promise((resolve) => setTimeout(resolve, 20));
    }
    t.equal(status, 401, 'and on the other instance as soon as the announcement arrives');
    t.equal(reloads, 0, 'a revocation clears token caches without reading the registry again');
    // Changed behind both instances' backs: only reading the registry again shows it.
    await a.sql`UPDATE originators SET call_log_mode = 'always' WHERE id = 'mon-1'`;
    t.equal(b.parts.registry.callLogMode('mon-1'), 'errors', 'b still has the registry it read');
    await a.parts.bus.publish({ type: 'registry', hrs_ids: ['BERLA'], tokens: true });
    await until('the registry to be read again', () => (reloads > 0 ? true : undefined));
    t.equal(b.parts.registry.callLogMode('mon-1'), 'always', 'a registry announcement still reloads it: b has what the database says now');
  });

  t.test('last-used times are gathered in memory and written in one statement', async (t) => {
    const p = await startTestPlatform(t, { fixture: baseFixture() });
    for (let i = 0; i < 5; i++) await get(`${p.url}/v2/fuel-type`, TOKENS.export_v2);
    await get(`${p.url}/import/v2/active-stations/`, TOKENS.import_v2);
    const unset = await p.sql`SELECT count(*)::int AS n FROM tokens WHERE last_used_at IS NOT NULL`;
    t.equal(unset[0]!.n, 0, 'no write per request');
    t.equal(await p.parts.tokens.flushLastUsed(), 2, 'two tokens were used');
    const rows = await p.sql`SELECT generation, last_used_at FROM tokens WHERE last_used_at IS NOT NULL ORDER BY generation`;
    t.same(rows.map((r) => r.generation), ['export_v2', 'import_v2']);
    t.ok(Date.now() - rows[0]!.last_used_at.getTime() < 10_000);
    t.equal(await p.parts.tokens.flushLastUsed(), 0, 'nothing new to write');
  });

  t.test('the admin API', async (t) => {
    await t.test('answers 401 when ADMIN_TOKEN is unset', async (t) => {
      const p = await startTestPlatform(t, { env: { ADMIN_TOKEN: '' } });
      const res = await get(`${p.url}/admin/v1/tokens`, 'anything-at-all-here');
      t.equal(res.status, 401);
      t.same(await res.json(), { detail: MESSAGES.adminDisabled });
    });
    await t.test('takes only ADMIN_TOKEN', async (t) => {
      const p = await startTestPlatform(t, { fixture: baseFixture() });
      t.equal((await get(`${p.url}/admin/v1/tokens`)).status, 401);
      t.equal((await get(`${p.url}/admin/v1/tokens`, TOKENS.export_v2)).status, 401);
      const res = await get(`${p.url}/admin/v1/tokens?generation=import_v2`, ADMIN_TOKEN);
      t.equal(res.status, 200);
      t.match((await res.json()).tokens, [{ generation: 'import_v2', originator: 'mon-1' }]);
      const bad = await get(`${p.url}/admin/v1/tokens?generation=nope`, ADMIN_TOKEN);
      t.equal(bad.status, 400);
      t.match(await bad.json(), { detail: /generation/ });
    });
  });

  t.test('import v2 active stations for the token\'s originator', async (t) => {
    const p = await startTestPlatform(t, { fixture: baseFixture() });
    const res = await get(`${p.url}/import/v2/active-stations/`, TOKENS.import_v2);
    t.same(await res.json(), {
      stations: {
        availability: { live: ['BERLA'], testing: [] },
        usage: { live: ['HAMBG'], testing: [] },
        'hydrogen-storage': { live: [], testing: [] },
        pricing: { live: [], testing: ['BERLA'] },
      },
    });
  });

  t.test('reference data of every generation', async (t) => {
    const p = await startTestPlatform(t, { fixture: baseFixture() });
    const v1 = await (await get(`${p.url}/import/v1/fuel-type`, TOKENS.import_v1)).json();
    t.same(v1.map((x: { code: string }) => x.code), ['700car', '350car', '350bus']);
    const v2 = await (await get(`${p.url}/v2/fuel-type`, TOKENS.export_v2)).json();
    t.same(v2[0], { code: '700ld', description: 'Hydrogen at 700 bar for light-duty vehicles', pressure_stage: 700, vehicle_class: 'light-duty' });
    t.same(v2.map((x: { code: string }) => x.code), ['700ld', '350ld', '700hd', '350hd']);
    const vehicles = await (await get(`${p.url}/v2/vehicle-type`, TOKENS.export_v2)).json();
    t.same(vehicles.map((x: { code: string }) => x.code), ['M1', 'M2', 'M3', 'N1', 'N2', 'N3']);
    t.ok(vehicles.every((x: { name: string }) => x.name.length > 5));
  });

  t.test('failed authentications: 30 per minute per client address, then its failures get 429 with Retry-After', async (t) => {
    const p = await startTestPlatform(t, { fixture: baseFixture() });
    for (let i = 0; i < 30; i++) {
      const res = await get(`${p.url}${i % 2 ? '/v2/fuel-type' : '/import/v2/active-stations/'}`, `no-such-token-${i}`);
      t.equal(res.status, 401, `failure ${i + 1}`);
      await res.arrayBuffer();
    }
    let res = await get(`${p.url}/v2/fuel-type`, 'no-such-token-31');
    t.equal(res.status, 429, 'the 31st within the minute is refused');
    t.equal(res.headers.get('retry-after'), '60');
    t.match(await res.json(), {
      status: 429,
      code: 'throttled',
      detail: 'Rate limit exceeded: at most 30 failed authentications per minute per client address. Retry in 60 seconds.',
    });
    res = await get(`${p.url}/import/v2/active-stations/`);
    t.equal(res.status, 429, 'no credential at all is refused the same way');
    t.same(await res.json(), {
      detail: 'Request was throttled: at most 30 failed authentications per minute per client address. Expected available in 60 seconds.',
    });
    res = await get(`${p.url}/healthz`);
    t.equal(res.status, 200, 'public routes are not affected');
  });

  t.test('a throttled address: valid tokens of every family still pass; only its failures are refused', async (t) => {
    const p = await startTestPlatform(t, { fixture: baseFixture() });
    for (let i = 0; i < 31; i++) await (await get(`${p.url}/v2/fuel-type`, `no-such-token-${i}`)).arrayBuffer();
    let res = await get(`${p.url}/v2/fuel-type`, 'no-such-token-x');
    t.equal(res.status, 429, 'the address is throttled');
    await res.arrayBuffer();
    for (const { family, path, accepts } of FAMILIES) {
      res = await get(`${p.url}${path}`, TOKENS[accepts]);
      t.equal(res.status, 200, `a valid token on ${family} passes from the throttled address`);
      await res.arrayBuffer();
    }
    res = await get(`${p.url}/admin/v1/tokens`, ADMIN_TOKEN);
    t.equal(res.status, 200, 'the admin token passes too');
    await res.arrayBuffer();
    res = await get(`${p.url}/import/v2/active-stations/`, TOKENS.export_v2);
    t.equal(res.status, 429, 'a token of the wrong family is a failure: refused with 429');
    await res.arrayBuffer();
  });

  const request = (clientAddress: string) => ({ clientAddress }) as unknown as Request;

  t.test('failures are counted per client address; other addresses and successes never count', async (t) => {
    const redis = await openRedis(TEST_REDIS_URL, 'auth-failures-test');
    const prefix = uniqueName('authfail');
    t.teardown(async () => {
      const keys = await redis.keys(`${prefix}:*`);
      if (keys.length > 0) await redis.del(keys);
      await redis.close();
    });
    // A window of a second (the platform's is a minute): the throttle's behaviour, not its length, is tested.
    const attempts = failedAuthLimit(new RateLimiter(redis, prefix), createLogger('silent'), { limit: 3, windowSeconds: 1, name: 'af' });
    const attacker = request('203.0.113.7');
    const honest = request('198.51.100.1');
    const invalid = unauthorized('Invalid token.');
    for (let i = 0; i < 3; i++) {
      t.equal(await attempts.failed(attacker, invalid, DRF_ERRORS), undefined, `failure ${i + 1} keeps its 401`);
      t.equal(await attempts.failed(honest, new Error('a fault, not a refusal'), DRF_ERRORS), undefined);
      t.equal(await attempts.failed(honest, new HttpError(403, 'forbidden', 'no'), DRF_ERRORS), undefined);
    }
    const refused = await attempts.failed(attacker, invalid, DRF_ERRORS);
    t.match(refused, { status: 429, code: 'throttled', options: { headers: { 'Retry-After': '1' } } }, 'the fourth failure is answered 429');
    t.equal(await attempts.failed(honest, invalid, DRF_ERRORS), undefined, 'another address is never affected; non-401 failures do not count');
    // The window has passed (with a tenth of it to spare): a wait on the clock, since the window is the clock's.
    await new Promise((resolve) => setTimeout(resolve, 1100));
    t.equal(await attempts.failed(attacker, invalid, DRF_ERRORS), undefined, 'a window later the address\'s failures are 401s again');
  });

  t.test('a refused failure costs no Redis call; successes are never seen', async (t) => {
    let hits = 0;
    const limiter = {
      ready: true,
      hit: async () => {
        hits++;
        return { allowed: true, remaining: hits >= 3 ? 0 : 3 - hits } as Awaited<ReturnType<RateLimiter['hit']>>;
      },
    };
    const attempts = failedAuthLimit(limiter, createLogger('silent'), { limit: 3, windowSeconds: 60, name: 'af' });
    const req = request('192.0.2.9');
    for (let i = 0; i < 3; i++) t.equal(await attempts.failed(req, unauthorized('Invalid token.'), DRF_ERRORS), undefined);
    t.equal(hits, 3, 'each failure is counted in Redis');
    for (let i = 0; i < 10; i++) t.match(await attempts.failed(req, unauthorized('Invalid token.'), DRF_ERRORS), { status: 429 });
    t.equal(hits, 3, 'failures refused 429 ask Redis nothing');
  });
});

t.test('client-address', async (t) => {
  /**
   * The client address behind trusted proxies (TRUST_PROXY): derived from X-Forwarded-For / Forwarded
   * only when the peer is trusted, walked from the right; and what uses it (the failed-authentication
   * throttle, the sandbox's per-address limit, the access log).
   */

  const trust = (...entries: string[]) => compileTrust(entries);

  t.test('no TRUST_PROXY: the peer is the client, whatever the headers say', async (t) => {
    t.equal(compileTrust([]), undefined, 'an empty list trusts nobody');
    t.equal(clientAddress('198.51.100.7', { 'x-forwarded-for': '203.0.113.1' }, undefined), '198.51.100.7');
    t.equal(clientAddress('198.51.100.7', { forwarded: 'for=203.0.113.1' }, undefined), '198.51.100.7');
    t.equal(clientAddress('::ffff:198.51.100.7', {}, undefined), '198.51.100.7', 'an IPv4-mapped peer is written as IPv4');
  });

  t.test('a spoofed X-Forwarded-For from an untrusted peer is ignored', async (t) => {
    const proxies = trust('10.0.0.1');
    t.equal(clientAddress('198.51.100.7', { 'x-forwarded-for': '203.0.113.1' }, proxies), '198.51.100.7');
    t.equal(clientAddress('198.51.100.7', { forwarded: 'for=203.0.113.1' }, proxies), '198.51.100.7');
  });

  t.test('a trusted proxy names the client: the rightmost untrusted address', async (t) => {
    const proxies = trust('10.0.0.1');
    t.equal(clientAddress('10.0.0.1', { 'x-forwarded-for': '203.0.113.1' }, proxies), '203.0.113.1');
    t.equal(
      clientAddress('10.0.0.1', { 'x-forwarded-for': '6.6.6.6, 203.0.113.1' }, proxies),
      '203.0.113.1',
      'what the client wrote itself (left of what the proxy appended) is never read',
    );
    t.equal(clientAddress('10.0.0.1', {}, proxies), '10.0.0.1', 'a trusted peer that forwards nothing is the client');
    t.equal(clientAddress('10.0.0.1', { 'x-forwarded-for': '' }, proxies), '10.0.0.1');
  });

  t.test('chains of trusted proxies, by address and CIDR', async (t) => {
    const proxies = trust('10.0.0.0/8', '192.168.1.1');
    t.equal(clientAddress('10.1.2.3', { 'x-forwarded-for': '6.6.6.6, 203.0.113.9, 192.168.1.1, 10.9.9.9' }, proxies), '203.0.113.9', 'each trusted hop hands over to the one it names');
    t.equal(clientAddress('10.1.2.3', { 'x-forwarded-for': '10.4.4.4,10.5.5.5' }, proxies), '10.4.4.4', 'every hop trusted: the leftmost');
    t.equal(clientAddress('10.1.2.3', { 'x-forwarded-for': '203.0.113.9, garbage, 10.5.5.5' }, proxies), '10.5.5.5', 'an entry that is no address ends the walk at the hop that named it');
    t.equal(clientAddress('10.1.2.3', { 'x-forwarded-for': '203.0.113.9:4711' }, proxies), '203.0.113.9', 'a port is dropped');
    t.equal(clientAddress('::ffff:10.1.2.3', { 'x-forwarded-for': '203.0.113.9' }, proxies), '203.0.113.9', 'an IPv4-mapped peer matches an IPv4 range');
    const names = trust('loopback', 'uniquelocal');
    t.equal(clientAddress('127.0.0.1', { 'x-forwarded-for': '203.0.113.9, fd00::5' }, names), '203.0.113.9', 'the names loopback and uniquelocal');
  });

  t.test('Forwarded (RFC 7239): quoted IPv6 with port, several elements, case, unknown and obfuscated nodes', async (t) => {
    t.same(forwardedFor('for=192.0.2.43, for="[2001:db8:cafe::17]:4711";proto=https'), ['192.0.2.43', '[2001:db8:cafe::17]:4711']);
    t.same(forwardedFor('For="_gazonk";by=203.0.113.43, proto=http;for=198.51.100.17;host=x'), ['_gazonk', '198.51.100.17']);
    t.same(forwardedFor('for="a;b,c", for=192.0.2.1'), ['a;b,c', '192.0.2.1'], 'separators inside quotes are text');
    t.same(forwardedFor('proto=https'), ['unknown'], 'an element without for= says nothing of its client');
    const proxies = trust('10.0.0.1');
    t.equal(clientAddress('10.0.0.1', { forwarded: 'for="[2001:DB8:CAFE:0:0:0:0:17]:4711"' }, proxies), '2001:db8:cafe::17', 'quoted IPv6 with a port, in one spelling');
    t.equal(clientAddress('10.0.0.1', { forwarded: 'for=6.6.6.6, for=198.51.100.17;proto=https' }, proxies), '198.51.100.17');
    t.equal(clientAddress('10.0.0.1', { forwarded: 'for=unknown' }, proxies), '10.0.0.1', 'unknown: the proxy is the client');
    t.equal(clientAddress('10.0.0.1', { forwarded: 'for="_hidden"' }, proxies), '10.0.0.1', 'an obfuscated node: the proxy is the client');
    t.equal(
      clientAddress('10.0.0.1', { forwarded: 'for=6.6.6.6', 'x-forwarded-for': '198.51.100.17' }, proxies),
      '198.51.100.17',
      'X-Forwarded-For, when there is one, is read rather than Forwarded',
    );
  });

  t.test('addresses in one spelling', async (t) => {
    t.equal(normalize('2001:DB8:0:0:0:0:0:1'), '2001:db8::1');
    t.equal(normalize('0:0:0:0:0:0:0:1'), '::1');
    t.equal(normalize('::FFFF:7f00:1'), '127.0.0.1');
    t.equal(normalize('[::1]:80'), '::1');
    t.equal(normalize('2001:db8:0:0:1:0:0:1'), '2001:db8::1:0:0:1', 'the first of equal zero runs is shortened');
    t.equal(normalize('not an address'), undefined);
    t.equal(normalize('1.2.3'), undefined);
  });

  t.test('TRUST_PROXY: a list of addresses or CIDRs, empty by default; anything else is refused at start', async (t) => {
    t.same(loadConfig({}).trustProxy, []);
    t.same(loadConfig({ TRUST_PROXY: '10.0.0.0/8, ::1 192.168.1.1' }).trustProxy, ['10.0.0.0/8', '::1', '192.168.1.1']);
    t.same(trustEntries(' , '), []);
    t.throws(() => loadConfig({ TRUST_PROXY: '10.0.0.0/33' }), { code: 'CONFIG_INVALID', message: /TRUST_PROXY/ });
    t.throws(() => loadConfig({ TRUST_PROXY: 'proxy.example.org' }), { message: /TRUST_PROXY must list IP addresses or CIDR ranges/ });
  });

  const bad = (p: { url: string }, xff: string, i: number) =>
    get(`${p.url}/v2/fuel-type`, `no-such-token-${i}`, { headers: { 'X-Forwarded-For': xff } }).then(async (res) => {
      await res.arrayBuffer();
      return res.status;
    });

  t.test('behind a trusted proxy the failed-authentication throttle slows the failing client only', async (t) => {
    const p = await startTestPlatform(t, { fixture: baseFixture(), env: { TRUST_PROXY: '127.0.0.1', LOG_LEVEL: 'info' } });
    for (let i = 0; i < 30; i++) t.equal(await bad(p, '203.0.113.7', i), 401);
    t.equal(await bad(p, '203.0.113.7', 31), 429, 'the failing client is throttled');
    t.equal(await bad(p, '6.6.6.6, 203.0.113.7', 32), 429, 'and cannot escape by writing its own X-Forwarded-For');
    t.equal(await bad(p, '198.51.100.1', 33), 401, 'another client behind the same proxy is not');
    const res = await get(`${p.url}/v2/fuel-type`, TOKENS.export_v2, { headers: { 'X-Forwarded-For': '198.51.100.2' } });
    t.equal(res.status, 200);
    await res.arrayBuffer();
    const line = p.logs.lines.find((l) => l.msg === 'request' && l.status === 200 && l.path === '/v2/fuel-type');
    t.equal(line?.remote_address, '198.51.100.2', 'the access log names the client, not the proxy');
  });

  t.test('without TRUST_PROXY a client cannot escape the throttle by forging X-Forwarded-For', async (t) => {
    const p = await startTestPlatform(t, { fixture: baseFixture() });
    for (let i = 0; i < 30; i++) t.equal(await bad(p, `203.0.113.${i}`, i), 401);
    t.equal(await bad(p, '198.51.100.99', 31), 429, 'every forged address is the one peer');
  });

  t.test("the sandbox's per-address limit counts each client behind a trusted proxy apart", async (t) => {
    const p = await startTestPlatform(t, { fixture: baseFixture(), env: { TRUST_PROXY: '127.0.0.0/8', SANDBOX: 'on', SANDBOX_RATE_LIMIT: '2' } });
    const call = async (xff: string) => {
      const res = await get(`${p.url}/v1.1/vehicle-type`, SANDBOX_TOKEN, { headers: { 'X-Forwarded-For': xff } });
      await res.arrayBuffer();
      return res.status;
    };
    t.same([await call('203.0.113.1'), await call('203.0.113.1'), await call('203.0.113.1')], [200, 200, 429], 'one client: its 60/min (here 2)');
    t.equal(await call('203.0.113.2'), 200, 'another client behind the same proxy has its own budget');
  });

  t.test("the portal's sign-in limit per client counts each client behind a trusted proxy apart", async (t) => {
    const p = await startTestPlatform(t, { fixture: baseFixture(), env: { TRUST_PROXY: '127.0.0.1' } });
    const c = portalClient(p);
    const signIn = async (xff: string, i: number) =>
      (await c.call('POST', '/portal/v1/sign-in', { email: `someone-${i}@example.org` }, { 'X-Forwarded-For': xff })).status;
    for (let i = 0; i < 20; i++) t.equal(await signIn('203.0.113.1', i), 202);
    t.equal(await signIn('203.0.113.1', 20), 429, 'the 21st from one client within 15 minutes is refused');
    t.equal(await signIn('203.0.113.2', 21), 202, 'another client behind the same proxy is not');
  });
});

t.test('rate-limit', async (t) => {
  const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));

  type Teardown = Parameters<typeof startTestPlatform>[0];

  /** A limiter on the local Redis under a prefix of its own; its keys go when the test ends. */
  async function limiter(t: Teardown, deadlineMs?: number, intervalMs?: number): Promise<{ limiter: RateLimiter; redis: Redis; prefix: string }> {
    const redis = await openRedis(TEST_REDIS_URL, 'rate-limit-test');
    const prefix = uniqueName('rl');
    t.teardown(async () => {
      const keys = await redis.keys(`${prefix}:*`);
      if (keys.length > 0) await redis.del(keys);
      await redis.close();
    });
    return { limiter: new RateLimiter(redis, prefix, deadlineMs, intervalMs), redis, prefix };
  }

  /** Just enough of a request for a guard. */
  function fakeRequest(id = 'mon-1'): Request {
    return {
      principal: { kind: 'originator', id, tokenId: '1', generation: 'import_v2' },
      responseHeaders: {},
    } as unknown as Request;
  }

  t.test('the limiter counts, and tells what is left and when it frees up', async (t) => {
    const { limiter: l, redis } = await limiter(t);
    const five: RateLimit[] = [{ limit: 5, windowSeconds: 60 }];
    for (let i = 1; i <= 5; i++) {
      const r = await l.hit('a', five);
      t.equal(r.allowed, true, `request ${i} is allowed`);
      t.equal(r.remaining, 5 - i, `${5 - i} left`);
      t.equal(r.limit.limit, 5);
      t.ok(r.resetSeconds >= 59 && r.resetSeconds <= 60, `reset ${r.resetSeconds} s: the oldest leaves a minute after it came`);
      t.equal(r.retryAfterSeconds, undefined);
    }
    const refused = await l.hit('a', five);
    t.equal(refused.allowed, false, 'the sixth is refused');
    t.equal(refused.remaining, 0);
    t.ok(refused.retryAfterSeconds! >= 59 && refused.retryAfterSeconds! <= 60, `Retry-After ${refused.retryAfterSeconds}`);
    t.equal(refused.resetSeconds, refused.retryAfterSeconds, 'with nothing left, reset is the wait');
    const key = l.redisKey('a', five[0]!);
    t.equal(await l.counted('a', five[0]!), 5, 'a refused request is not counted');
    const ttl = await redis.pTTL(key);
    t.ok(ttl > 0 && ttl <= 60_000, `the key expires (${ttl} ms)`);
    t.equal((await l.hit('b', five)).remaining, 4, 'another key has its own budget');
  });

  t.test('a check arms no command timeout of the client: its batch has its own deadline', async (t) => {
    const { limiter: l, redis } = await limiter(t);
    const five: RateLimit[] = [{ limit: 5, windowSeconds: 60 }];
    await l.hit('warm-up', five);
    const timeout = AbortSignal.timeout.bind(AbortSignal);
    let armed = 0;
    AbortSignal.timeout = (ms: number) => {
      armed++;
      return timeout(ms);
    };
    t.teardown(() => {
      AbortSignal.timeout = timeout;
    });
    await redis.get('any');
    t.equal(armed, 1, 'a command of the client arms its timeout (node-redis\'s own)');
    const results = await Promise.all([l.hit('a', five), l.hit('b', five), l.hit('a', five)]);
    t.same(results.map((r) => r.remaining), [4, 4, 3], 'the checks are made');
    t.equal(armed, 1, 'and armed none');
  });

  t.test('checks asked for in one turn share one script call and keep their order', async (t) => {
    const { limiter: l, redis, prefix } = await limiter(t);
    const three: RateLimit[] = [{ limit: 3, windowSeconds: 60 }];
    const two: RateLimit[] = [{ limit: 2, windowSeconds: 60 }, { limit: 10, windowSeconds: 3600, name: 'hour' }];
    await l.hit('warm-up', three); // the script is cached in Redis from here on
    const monitor = await redis.duplicate().connect();
    const evals: string[] = [];
    await monitor.monitor((line) => {
      if (line.includes(prefix)) evals.push(line);
    });
    t.teardown(() => monitor.close());
    const results = await Promise.all([
      l.hit('a', three),
      l.hit('b', two),
      l.hit('a', three),
      l.hit('a', three),
      l.hit('b', two),
      l.hit('a', three),
      l.hit('b', two),
    ]);
    t.same(
      results.map((r) => [r.allowed, r.remaining]),
      [
        [true, 2],
        [true, 1],
        [true, 1],
        [true, 0],
        [true, 0],
        [false, 0],
        [false, 0],
      ],
      'each check sees the ones before it, key by key',
    );
    t.equal(results[6]!.limit.limit, 2, 'the refusal names the limit that was hit');
    t.equal(await l.counted('a', three[0]!), 3);
    t.equal(await l.counted('b', two[1]!), 2, 'a refused request is counted against no limit');
    t.equal(await redis.zCard(l.redisKey('a', three[0]!)), 1, "a's checks of one turn share one member");
    await until('the monitor to see the script call', () => (evals.length > 0 ? true : undefined));
    t.equal(evals.filter((line) => /"EVALSHA"/i.test(line)).length, 1, 'one script call for the seven checks');
  });

  t.test('while a call is out or within a millisecond of the last, checks wait and go together', async (t) => {
    // Redis is held 200 ms below: a deadline of seconds, so a loaded machine cannot turn the hold into a failure.
    const { limiter: l, redis, prefix } = await limiter(t, 5_000);
    const many: RateLimit[] = [{ limit: 1000, windowSeconds: 60 }];
    await l.hit('warm-up', many);
    const monitor = await redis.duplicate().connect();
    const evals: string[] = [];
    await monitor.monitor((line) => {
      if (line.includes(prefix) && /"EVALSHA"/i.test(line)) evals.push(line);
    });
    t.teardown(() => monitor.close());
    const calls = async (expected: number, what: string) => {
      await until(what, () => (evals.length >= expected ? true : undefined));
      await sleep(50);
      t.equal(evals.length, expected, what);
    };
    // One check goes at once (the warm-up was long enough ago); five more, one per turn while it is out,
    // share the next call. Redis holds the first call 200 ms (CLIENT PAUSE from a connection of its own),
    // so that the five turns come while it is out however slowly a loaded machine runs them.
    await sleep(5);
    const pauser = await redis.duplicate().connect();
    t.teardown(() => pauser.close());
    await pauser.sendCommand(['CLIENT', 'PAUSE', '200', 'ALL']);
    const first = l.hit('k', many);
    const later: Promise<unknown>[] = [];
    for (let i = 0; i < 5; i++) {
      await new Promise((resolve) => setImmediate(resolve));
      later.push(l.hit('k', many));
    }
    await Promise.all([first, ...later]);
    await calls(2, 'six checks asked for in six turns: two script calls');
    t.equal(await l.counted('k', many[0]!), 6, 'each counted');

    // Forty checks of one turn, more than a full batch: one call for all of them.
    await l.hit('k', many);
    await calls(3, 'a seventh check: a third call');
    await Promise.all(Array.from({ length: 40 }, () => l.hit('k', many)));
    await calls(4, 'forty checks of one turn: one more script call');
    t.equal(await l.counted('k', many[0]!), 47);
  });

  t.test("a longer interval (the imports'): checks within it of the last call gather into one; after a quiet one a check goes at once", async (t) => {
    // An interval far above what the checks below take, so a loaded machine cannot stretch them past it.
    const intervalMs = 1_000;
    const { limiter: l, redis, prefix } = await limiter(t, 5_000, intervalMs);
    const many: RateLimit[] = [{ limit: 1000, windowSeconds: 60 }];
    const monitor = await redis.duplicate().connect();
    const evals: string[] = [];
    await monitor.monitor((line) => {
      if (line.includes(prefix) && /"EVALSHA"/i.test(line)) evals.push(line);
    });
    t.teardown(() => monitor.close());
    await l.hit('k', many);
    await until('the first call', () => (evals.length >= 1 ? true : undefined));
    // Five checks 10 ms apart, answered after the first call: with the default interval each would go
    // at once, in a call of its own.
    const later: Promise<unknown>[] = [];
    for (let i = 0; i < 5; i++) {
      later.push(l.hit('k', many));
      await sleep(10);
    }
    await Promise.all(later);
    await until('the second call', () => (evals.length >= 2 ? true : undefined));
    await sleep(50);
    t.equal(evals.length, 2, 'five checks within the interval: one more script call');
    t.equal(await l.counted('k', many[0]!), 6, 'each counted');
    // A check after a quiet interval goes at once: answered before the interval could have passed again.
    await sleep(intervalMs + 50);
    const asked = performance.now();
    await l.hit('k', many);
    t.ok(performance.now() - asked < intervalMs, 'answered without waiting for an interval');
    await until('the third call', () => (evals.length >= 3 ? true : undefined));
    await sleep(50);
    t.equal(evals.length, 3, 'a call of its own');
  });

  t.test('several limits: counted against all only when all allow', async (t) => {
    const { limiter: l, redis } = await limiter(t);
    const limits: RateLimit[] = [
      { limit: 3, windowSeconds: 60, name: 'burst' },
      { limit: 5, windowSeconds: 3600, name: 'sustained' },
    ];
    const [burst, sustained] = limits.map((x) => l.redisKey('u', x)) as [string, string];

    let r = await l.hit('u', limits);
    t.equal(r.limit.name, 'burst', 'the tightest limit is reported');
    t.equal(r.remaining, 2);
    t.same(r.limits.map((s) => s.remaining), [2, 4], 'and every limit\'s state');
    await l.hit('u', limits);
    await l.hit('u', limits);
    r = await l.hit('u', limits);
    t.equal(r.allowed, false, 'the burst limit refuses the fourth');
    t.equal(r.limit.name, 'burst');
    t.ok(r.retryAfterSeconds! <= 60 && r.retryAfterSeconds! >= 59);
    t.equal(await l.counted('u', limits[0]!), 3);
    t.equal(await l.counted('u', limits[1]!), 3, 'the refused request is not counted by the limit that allowed it');

    // The longer limit runs out first.
    const wide: RateLimit[] = [
      { limit: 10, windowSeconds: 60, name: 'burst' },
      { limit: 2, windowSeconds: 3600, name: 'sustained' },
    ];
    t.equal((await l.hit('v', wide)).limit.name, 'sustained', 'tightest: fewest left');
    t.equal((await l.hit('v', wide)).remaining, 0);
    r = await l.hit('v', wide);
    t.equal(r.allowed, false);
    t.equal(r.limit.name, 'sustained', 'refused by the exhausted limit');
    t.ok(r.retryAfterSeconds! > 3590 && r.retryAfterSeconds! <= 3600, `Retry-After ${r.retryAfterSeconds} s`);
    t.equal(await l.counted('v', wide[0]!), 2, 'the other limit does not count it');

    // Both exhausted: the wait is the longer one, and names its limit.
    const both: RateLimit[] = [
      { limit: 1, windowSeconds: 3600, name: 'hour' },
      { limit: 1, windowSeconds: 60, name: 'minute' },
    ];
    await l.hit('w', both);
    r = await l.hit('w', both);
    t.equal(r.limit.name, 'hour');
    t.ok(r.retryAfterSeconds! > 3590);
  });

  t.test('requests counted together: exact waits under a lowered limit, a lost counter recounted', async (t) => {
    const { limiter: l, redis } = await limiter(t);
    const ten: RateLimit[] = [{ limit: 10, windowSeconds: 60, name: 'minute' }];
    const all = (n: number, limits: RateLimit[]) => Promise.all(Array.from({ length: n }, () => l.hit('w', limits)));
    await all(4, ten);
    await sleep(300);
    await all(4, ten);
    t.equal(await redis.zCard(l.redisKey('w', ten[0]!)), 2, 'two turns, two members');
    t.equal(await l.counted('w', ten[0]!), 8);

    // An operator lowers the limit: the request that must leave first is then deeper in the log.
    const asked = performance.now();
    const five = await l.hit('w', [{ limit: 5, windowSeconds: 60, name: 'minute' }]);
    const three = await l.hit('w', [{ limit: 3, windowSeconds: 60, name: 'minute' }]);
    const between = performance.now() - asked;
    t.equal(five.allowed, false);
    t.equal(three.allowed, false);
    // Under 5, the 4th oldest (first turn) must leave; under 3, the 6th (second turn, 300 ms later).
    // The second wait is measured later, by however long the two calls took apart (a busy machine).
    const gap = three.retryAfterMs! - five.retryAfterMs!;
    t.ok(gap > 250 - between && gap < 400, `the waits are the two turns' ages apart (${gap.toFixed(0)} ms, ${between.toFixed(0)} ms between the calls)`);
    t.ok(five.retryAfterMs! > 59_000 && five.retryAfterMs! <= 60_000, `${five.retryAfterMs} ms`);

    await redis.del(l.counterKey('w', ten[0]!));
    await redis.zAdd(l.redisKey('w', ten[0]!), { score: Date.now() * 1000, value: 'an-entry-without-a-count' });
    const after = await l.hit('w', ten);
    t.equal(after.remaining, 0, 'the lost counter is recounted from the set (8 + 1 without a count + this one)');
    t.equal(await l.counted('w', ten[0]!), 10);
    t.equal((await l.hit('w', ten)).allowed, false);
  });

  t.test('Retry-After is exact: a request waiting it passes, one waiting less does not', async (t) => {
    const { limiter: l } = await limiter(t);
    // The shortest window that shows the rounding: over a second, so that waiting the whole second
    // Retry-After says frees the first request (at 1.5 s) before the two later ones leave (at 2.1 s).
    const limits: RateLimit[] = [{ limit: 3, windowSeconds: 1.5 }];
    await l.hit('k', limits);
    await sleep(600);
    await l.hit('k', limits);
    await l.hit('k', limits);
    const refused = await l.hit('k', limits);
    const at = Date.now();
    t.equal(refused.allowed, false);
    t.ok(refused.retryAfterMs! > 600 && refused.retryAfterMs! <= 900, `the first request leaves in ${refused.retryAfterMs} ms`);
    t.equal(refused.retryAfterSeconds, Math.ceil(refused.retryAfterMs! / 1000));
    t.equal(refused.retryAfterSeconds, 1);

    await sleep(at + refused.retryAfterMs! - 150 - Date.now());
    const early = await l.hit('k', limits);
    t.equal(early.allowed, false, 'just before the wait is over: still refused');
    t.equal(early.retryAfterSeconds, 1, 'and told to wait the rest, rounded up');

    await sleep(at + refused.retryAfterSeconds! * 1000 - Date.now());
    const late = await l.hit('k', limits);
    t.equal(late.allowed, true, 'after Retry-After seconds: allowed');
    t.equal(late.remaining, 0, 'the window slides: the two later requests still count');
    const next = await l.hit('k', limits);
    t.equal(next.allowed, false);
    t.ok(next.retryAfterMs! > 0 && next.retryAfterMs! < 1000, 'until the second request leaves the window');
  });

  t.test('an answer Redis gave within the deadline counts, though this process was held up past it', async (t) => {
    const { limiter: l } = await limiter(t, 100);
    const limits: RateLimit[] = [{ limit: 5, windowSeconds: 60 }];
    const counter = l.counterKey('held', limits[0]!);
    const hit = l.hit('held', limits);
    // The batch goes in the next check phase (setImmediate) and the client writes its command in the one
    // after: once both have run, the command is on its way to Redis.
    for (let i = 0; i < 2; i++) await new Promise((resolve) => setImmediate(resolve));
    const started = performance.now();
    // Now nothing else runs here, as with a long task or on a machine whose cores are taken: Redis is
    // asked from another process until it has counted the request (its answer then waits on the
    // socket, unread), and the hold lasts well past the deadline.
    const get = () => execFileSync('redis-cli', ['-u', TEST_REDIS_URL, '--raw', 'GET', counter], { encoding: 'utf8', timeout: 5000 }).trim();
    let counted = get();
    while (counted !== '1' && performance.now() - started < 5000) counted = get();
    t.equal(counted, '1', 'Redis counted the request while this process was held up');
    while (performance.now() - started < 300);
    const result = await hit;
    t.equal(result.allowed, true, 'the answer waiting on the socket is read before the deadline is called missed');
    t.equal(result.remaining, 4, 'and its count is told');
  });

  t.test('the guard lets requests through when Redis is unavailable, and warns once per outage', async (t) => {
    const logs = logCapture();
    const log = createLogger('warn', logs.stream);

    await t.test('a closed client', async (t) => {
      const redis = await openRedis(TEST_REDIS_URL, 'rate-limit-test');
      await redis.close();
      const guard = rateLimitGuard(new RateLimiter(redis, uniqueName('rl')), {
        limits: [{ limit: 1, windowSeconds: 60 }],
        key: () => 'x',
        style: DRF_ERRORS,
        log,
      });
      for (let i = 0; i < 3; i++) {
        const req = fakeRequest();
        await guard(req);
        t.same(req.responseHeaders, {}, 'passes, without rate-limit headers');
      }
      // A client that is not connected is the connection's outage, which watchRedis warns of once.
      t.equal(logs.lines.filter((l) => l.level === 40).length, 0, 'no warning of its own, whatever the number of requests');
    });

    await t.test('a Redis that stops answering', async (t) => {
      // Answers the client's handshake, then swallows every script call.
      const sockets = new Set<Socket>();
      const server = createServer((socket) => {
        sockets.add(socket);
        socket.on('data', (chunk) => {
          for (const [, name] of String(chunk).matchAll(/(?:^|\r\n)\*\d+\r\n\$\d+\r\n([A-Za-z]+)/g)) {
            if (!/^EVAL/i.test(name!)) socket.write('+OK\r\n');
          }
        });
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      const port = (server.address() as { port: number }).port;
      const redis = createClient({ url: `redis://127.0.0.1:${port}` }) as unknown as Redis;
      redis.on('error', () => {});
      await redis.connect();
      t.teardown(async () => {
        redis.destroy();
        for (const s of sockets) s.destroy();
        await new Promise((resolve) => server.close(resolve));
      });
      const warnings = logCapture();
      const guard = rateLimitGuard(new RateLimiter(redis, 'silent', 100), {
        limits: [{ limit: 1, windowSeconds: 60 }],
        key: () => 'x',
        style: DRF_ERRORS,
        log: createLogger('info', warnings.stream),
      });
      const started = Date.now();
      const req = fakeRequest();
      await guard(req);
      t.ok(Date.now() - started < 1000, 'does not wait longer than the timeout');
      t.same(req.responseHeaders, {});
      await guard(fakeRequest());
      t.match(warnings.lines, [{ level: 40, err: { message: /deadline \(100 ms\) passed before Redis answered/ } }], 'one warning for the outage');
      t.equal(warnings.lines.length, 1, 'and only one');
    });
  });

  /** The standard fixture plus a second originator with its own import v2 token. */
  function twoOriginators() {
    const fixture = baseFixture();
    fixture.originators.push({ id: 'mon-2', name: 'Monitoring Two', call_log_mode: 'errors' });
    fixture.tokens.push({ generation: 'import_v2', originator: 'mon-2', value: 'test-import-v2-token-0002' });
    return fixture;
  }

  const ACTIVE = '/import/v2/active-stations/';

  t.test('import v2 responses carry the rate-limit headers', async (t) => {
    const p = await startTestPlatform(t, {
      fixture: baseFixture(),
      routes: (server, { families }) => {
        server.route({
          method: 'GET',
          path: '/import/v2/refuse/',
          family: families.import_v2,
          handler: () => {
            throw new HttpError(400, 'invalid', 'Refused for the test.');
          },
        });
      },
    });
    for (let i = 1; i <= 3; i++) {
      const res = await get(`${p.url}${ACTIVE}`, TOKENS.import_v2);
      t.equal(res.status, 200);
      t.equal(res.headers.get('ratelimit-limit'), '300');
      t.equal(res.headers.get('ratelimit-remaining'), String(300 - i), 'remaining goes down');
      const reset = Number(res.headers.get('ratelimit-reset'));
      t.ok(reset >= 59 && reset <= 60, `reset ${reset}`);
      t.equal(res.headers.get('retry-after'), null);
      await res.arrayBuffer();
    }
    const error = await get(`${p.url}/import/v2/refuse/`, TOKENS.import_v2);
    t.equal(error.status, 400);
    t.equal(error.headers.get('ratelimit-remaining'), '296', 'errors after authentication carry them too, and count');
    t.same(await error.json(), { detail: 'Refused for the test.' });

    // Refused authentication is not counted, and says nothing about limits.
    for (const token of [undefined, 'no-such-token-anywhere', TOKENS.import_v1, TOKENS.export_v2]) {
      const res = await get(`${p.url}${ACTIVE}`, token);
      t.equal(res.status, 401);
      t.equal(res.headers.get('ratelimit-remaining'), null);
      await res.arrayBuffer();
    }
    const after = await get(`${p.url}${ACTIVE}`, TOKENS.import_v2);
    t.equal(after.headers.get('ratelimit-remaining'), '295', '401s were not counted');
    await after.arrayBuffer();

    // Other generations have budgets of their own: import v1/v1.1 (one for both), export v2 (export-policies.test.ts).
    const other = await get(`${p.url}/import/v1/fuel-type`, TOKENS.import_v1);
    t.equal(other.status, 200);
    t.equal(other.headers.get('ratelimit-limit'), '3000', 'import v1: its own limit, ten times v2\'s (legacy originators were never told of one)');
    t.equal(other.headers.get('ratelimit-remaining'), '2999', 'and its own budget, untouched by the import v2 requests');
    await other.arrayBuffer();
    const exportV2 = await get(`${p.url}/v2/fuel-type`, TOKENS.export_v2);
    t.equal(exportV2.headers.get('ratelimit-limit'), '60', 'export v2: its own limit, not the import one');
    await exportV2.arrayBuffer();
  });

  t.test('300 requests per minute per originator, across instances sharing Redis', async (t) => {
    const a = await startTestPlatform(t, { fixture: twoOriginators() });
    const b = await startTestPlatform(t, { sameStoreAs: a });
    const instances = [a, b];
    const remaining: number[] = [];
    const statuses = new Set<number>();
    for (let i = 0; i < 300; i++) {
      const res = await get(`${instances[i % 2]!.url}${ACTIVE}`, TOKENS.import_v2);
      statuses.add(res.status);
      remaining.push(Number(res.headers.get('ratelimit-remaining')));
      await res.arrayBuffer();
    }
    t.same([...statuses], [200], '300 requests alternating between two instances all pass');
    t.same(remaining, Array.from({ length: 300 }, (_, i) => 299 - i), 'one budget: remaining counts down 299 … 0');

    for (const p of [a, b]) {
      const res = await get(`${p.url}${ACTIVE}`, TOKENS.import_v2);
      t.equal(res.status, 429, 'the next request is throttled, whichever instance gets it');
      const retryAfter = Number(res.headers.get('retry-after'));
      t.ok(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 60, `Retry-After ${retryAfter}`);
      t.equal(res.headers.get('content-type'), 'application/json; charset=utf-8');
      t.same(await res.json(), {
        detail: `Request was throttled: at most 300 requests per minute per signal originator. Expected available in ${retryAfter} seconds.`,
      });
      t.equal(res.headers.get('ratelimit-limit'), '300');
      t.equal(res.headers.get('ratelimit-remaining'), '0');
      t.equal(res.headers.get('ratelimit-reset'), String(retryAfter));
    }

    const other = await get(`${b.url}${ACTIVE}`, 'test-import-v2-token-0002');
    t.equal(other.status, 200, 'another originator has its own budget');
    t.equal(other.headers.get('ratelimit-remaining'), '299');
    await other.arrayBuffer();

    const keys = await a.parts.redis.keys(`${a.parts.config.redisPrefix}:rl:*`);
    t.same(keys.sort(), [
      `${a.parts.config.redisPrefix}:rl:{import_v2:originator:mon-1}:minute`,
      `${a.parts.config.redisPrefix}:rl:{import_v2:originator:mon-1}:minute:n`,
      `${a.parts.config.redisPrefix}:rl:{import_v2:originator:mon-2}:minute`,
      `${a.parts.config.redisPrefix}:rl:{import_v2:originator:mon-2}:minute:n`,
    ]);
    t.equal(Number(await a.parts.redis.get(keys.sort()[1]!)), 300, 'throttled requests were not counted');
  });

  t.test('a small limit over HTTP: problem bodies, and waiting Retry-After is enough', async (t) => {
    const p = await startTestPlatform(t, {
      fixture: baseFixture(),
      routes: (server, services) => {
        const limiter = new RateLimiter(services.redis, services.config.redisPrefix);
        server.guard(
          services.families.export_v1,
          rateLimitGuard(limiter, {
            limits: [
              { limit: 3, windowSeconds: 1.5, name: 'burst' },
              { limit: 5, windowSeconds: 60, name: 'sustained' },
            ],
            key: (req) => (req.principal?.kind === 'client' ? `export_v1:token:${req.principal.tokenId}` : undefined),
            style: PROBLEM_ERRORS,
            per: 'token',
            log: services.log,
          }),
        );
        server.route({ method: 'GET', path: '/v1/ping', family: services.families.export_v1, handler: () => json(200, { pong: true }) });
      },
    });
    const hit = async (path = '/v1/fuel-type') => {
      const res = await get(`${p.url}${path}`, TOKENS.export_v1);
      return { res, body: await res.json() };
    };
    for (let i = 1; i <= 3; i++) {
      const { res } = await hit(i === 2 ? '/v1/ping' : '/v1/fuel-type');
      t.equal(res.status, 200);
      t.equal(res.headers.get('ratelimit-limit'), '3', 'the burst limit is the tightest');
      t.equal(res.headers.get('ratelimit-remaining'), String(3 - i), 'one budget across the family\'s routes');
    }
    let { res, body } = await hit();
    t.equal(res.status, 429);
    t.equal(res.headers.get('content-type'), 'application/problem+json; charset=utf-8');
    const wait = Number(res.headers.get('retry-after'));
    t.ok(wait === 1 || wait === 2, `Retry-After ${wait}`);
    t.match(body, {
      status: 429,
      code: 'throttled',
      title: 'Too Many Requests',
      detail: `Rate limit exceeded: at most 3 requests per 1.5 seconds per token. Retry in ${wait} second${wait === 1 ? '' : 's'}.`,
    });
    await sleep(wait * 1000);
    ({ res } = await hit());
    t.equal(res.status, 200, 'after Retry-After seconds the request passes');
    await sleep(1600);
    ({ res } = await hit());
    t.equal(res.status, 200);
    t.equal(res.headers.get('ratelimit-limit'), '5', 'the burst window is empty: the sustained limit is the tightest');
    t.equal(res.headers.get('ratelimit-remaining'), '0');
    ({ res, body } = await hit());
    t.equal(res.status, 429, 'the sustained limit refuses');
    const long = Number(res.headers.get('retry-after'));
    t.ok(long > 50 && long <= 60, `Retry-After ${long}`);
    t.equal(body.detail, `Rate limit exceeded: at most 5 requests per minute per token. Retry in ${long} seconds.`);
  });
});

t.test('email-rule', async (t) => {
  /**
   * One e-mail address rule (src/domain/text.ts `emailAddress`) wherever an address is accepted: sign-in,
   * the admin API's accounts and token owners, registry files' users, operators and station contacts,
   * and ADMIN_EMAILS. A domain label neither starts nor ends with a hyphen: `x@example-.org` was taken by
   * sign-in while `x@-example.org` was refused. The length is checked first (at most 254 characters).
   */
  const p = await startTestPlatform(t, { fixture: portalFixture() });

  const GOOD = ['alice@example.org', 'o\'neil+hrs@mail.example-h2.de', 'a_b-c.d@x1.example.co', 'x@1-2.org', `${'a'.repeat(64)}@${'b'.repeat(63)}.org`];
  const BAD = [
    'x@example-.org', // a label ending with a hyphen
    'x@-example.org', // a label starting with a hyphen
    'x@mail.-example.org',
    'x@mail-.example.org',
    'x@example.-org',
    `x@${'b'.repeat(64)}.org`, // a label of more than 63 characters
    'x@example', // no top-level label
    'x@example.o', // a top-level label of one letter
    'x@example..org',
    '.x@example.org',
    'x.@example.org',
    'x..y@example.org',
    'x@@example.org',
    'x y@example.org',
    '@example.org',
    'x@',
  ];

  t.test('the rule', async (t) => {
    const schema = emailAddress();
    for (const address of GOOD) t.ok(schema.safeParse(address).success, `${address}: accepted`);
    for (const address of BAD) t.same(schema.safeParse(address).error?.issues.map((i) => i.message), ['must be an e-mail address'], `${address}: refused`);
    const long = `${'a'.repeat(250)}@example.org`;
    t.same(schema.safeParse(long).error?.issues.map((i) => i.message), ['must be an e-mail address (at most 254 characters)'], 'the length first, alone');
    // Linear: the longest address the limit lets through, made to be refused as late as possible, at once.
    const started = performance.now();
    for (let i = 0; i < 200; i++) schema.safeParse(`${'a.'.repeat(60)}a@${'b-'.repeat(60)}-.org`);
    t.ok(performance.now() - started < 200, 'checked in well under a millisecond each');
  });

  t.test('no other e-mail check in the sources: every address goes through emailAddress', async (t) => {
    const found: string[] = [];
    const walk = async (dir: string): Promise<void> => {
      for (const entry of await readdir(dir, { withFileTypes: true })) {
        const path = join(dir, entry.name);
        if (entry.isDirectory()) await walk(path);
        else if (path.endsWith('.ts') && path !== join('src', 'domain', 'text.ts') && /\bz\.email\(|\.email\(\)/.test(await readFile(path, 'utf8'))) found.push(path);
      }
    };
    await walk('src');
    t.same(found, [], 'z.email is used only by src/domain/text.ts');
  });

  t.test('ADMIN_EMAILS: the same rule', async (t) => {
    t.throws(() => loadConfig({ ADMIN_EMAILS: 'ops@example.org,noc@example-.org' }), /ADMIN_EMAILS/);
    t.throws(() => loadConfig({ ADMIN_EMAILS: 'noc@-example.org' }), /ADMIN_EMAILS/);
    t.same(loadConfig({ ADMIN_EMAILS: 'ops@example.org, noc@h2-ops.example.org' }).adminEmails, ['ops@example.org', 'noc@h2-ops.example.org']);
  });

  t.test('sign-in, the admin API and registry files: both hyphen forms refused alike, in each one\'s format', async (t) => {
    const portal = portalClient(p);
    const admin = (path: string, body: unknown) =>
      fetch(`${p.url}${path}`, { method: 'POST', headers: { Authorization: `Bearer ${ADMIN_TOKEN}`, 'Content-Type': 'application/json' }, body: JSON.stringify(body) })
        .then(async (res) => ({ status: res.status, body: (await res.json()) as Record<string, unknown> }));
    const users = async () => (await p.sql`SELECT email FROM users ORDER BY email`).map((r) => r.email as string);
    const before = await users();
    for (const address of ['x@example-.org', 'x@-example.org']) {
      const signIn = await portal.call('POST', '/portal/v1/sign-in', { email: address });
      t.equal(signIn.status, 400, `sign-in ${address}: 400`);
      t.match(signIn.body, { code: 'invalid_body', detail: 'email: must be an e-mail address' }, `sign-in ${address}: a problem naming the field`);
      const account = await admin('/admin/v1/users', { email: address, name: 'X' });
      t.same(account, { status: 400, body: { detail: 'email: must be an e-mail address' } }, `admin account ${address}`);
      const owner = await admin('/admin/v1/personal-tokens', { email: address, token_name: 'laptop' });
      t.same(owner, { status: 400, body: { detail: 'email: must be an e-mail address' } }, `admin token owner ${address}`);
      for (const [where, change] of [
        ['users[0].email', (f: ReturnType<typeof portalFixture>) => ((f.users[0] as { email: string }).email = address)],
        ['operators[0].email', (f: ReturnType<typeof portalFixture>) => ((f.operators[0] as { email: string | null }).email = address)],
        ['stations[0].details.contact.email', (f: ReturnType<typeof portalFixture>) => ((f.stations[0] as { details: object }).details = { contact: { email: address } })],
      ] as const) {
        const fixture = portalFixture();
        change(fixture);
        const err = await loadFixture(p.sql, fixture, { baseDir: '.' }).catch((e: unknown) => e);
        t.ok(err instanceof FixtureError && err.problems.includes(`${where}: must be an e-mail address`), `registry file ${where} = ${address}: ${(err as Error).message}`);
      }
    }
    t.same(await users(), before, 'no account made');
    const good = await admin('/admin/v1/users', { email: 'x@example-h2.org', name: 'X' });
    t.equal(good.status, 201, 'a hyphen inside a label is fine');
    const signIn = await portal.call('POST', '/portal/v1/sign-in', { email: 'x@example-h2.org' });
    t.equal(signIn.status, 202, 'and that account can ask for a sign-in link');
  });
});

t.test('duplicate-items', async (t) => {
  /**
   * One rule for repeated values in a list (src/domain/lists.ts): a value twice in one list is refused
   * with a 400 in the family's format naming it, in every list field of every body and in registry files,
   * and nothing is written; the OpenAPI documents say `uniqueItems: true`. Before, webhook `kinds` and
   * `hrs_ids` and `v1_fuel_types` refused repeats while a station's `vehicle_types`, `amenities` and
   * `payment_methods` were stored and exported as sent, and an event broadcast's `hrs_ids` dropped them.
   */
  const p = await startTestPlatform(t, {
    fixture: portalFixture(),
    env: { WEBHOOK_SECRET_KEY: 'q3Jd0vXkZr8mWb2Yt5LpN7aHc4UeS1fGx6iKo9RwE-s', WEBHOOK_RATE_LIMIT: '1000' },
  });
  await grantPortalRoles(p);
  const staff = await signedIn(p, ACCOUNTS.staff);

  /** What a refused request must leave as it was. */
  async function snapshot(p: TestPlatform): Promise<string> {
    const rows = await Promise.all([
      p.sql`SELECT hrs_id, name, details, static_modified_at FROM stations ORDER BY hrs_id`,
      p.sql`SELECT hrs_id, id, description FROM station_events ORDER BY hrs_id, id`,
      p.sql`SELECT * FROM layouts ORDER BY 1, 2`,
      p.sql`SELECT * FROM operator_members ORDER BY 1, 2`,
      p.sql`SELECT * FROM originator_members ORDER BY 1, 2`,
      p.sql`SELECT count(*)::int AS n FROM webhook_subscriptions`,
      p.sql`SELECT count(*)::int AS n FROM audit_log`,
    ]);
    return JSON.stringify(rows);
  }

  const soon = () => new Date(Date.now() + 86_400_000).toISOString();
  const station = { name: 'Berlin Airport', heavy_duty: false, opening_hours: '24/7', details: { city: 'Berlin', vehicle_types: ['M1'] }, v1_fuel_types: ['700car', '350car'] };
  const layout = (options: string[]) => ({
    dispensers: [{ external_id: 'D1', is_certified: true, nozzles: [{ external_id: 'N1', connector_type: 'H70', vehicle_side: 'left', is_certified: true, fuelling_options: options }] }],
    storages: [],
    products: [{ external_id: 'P700', pressure_stage: 700, green_hydrogen_share: null, nozzle_external_ids: ['N1', 'N1'] }],
  });

  t.test('every list field: a repeated value is a 400 naming it, nothing written', async (t) => {
    const before = await snapshot(p);
    const cases: [string, string, string, unknown, RegExp][] = [
      ['vehicle_types', 'PUT', '/portal/v1/stations/BERLA', { ...station, details: { vehicle_types: ['M1', 'N3', 'M1'] } }, /^details\.vehicle_types\.2: duplicate vehicle category "M1"$/],
      ['amenities', 'PUT', '/portal/v1/stations/BERLA', { ...station, details: { amenities: ['shop', 'shop'] } }, /^details\.amenities\.1: duplicate amenity "shop"$/],
      ['payment_methods', 'PUT', '/portal/v1/stations/BERLA', { ...station, details: { payment_methods: ['card', 'app', 'card'] } }, /^details\.payment_methods\.2: duplicate payment method "card"$/],
      ['authorisation_methods', 'PUT', '/portal/v1/stations/BERLA', { ...station, details: { authorisation_methods: ['rfid', 'rfid'] } }, /^details\.authorisation_methods\.1: duplicate authorisation method "rfid"$/],
      ['v1_fuel_types', 'PUT', '/portal/v1/stations/BERLA', { ...station, v1_fuel_types: ['700car', '700car'] }, /^v1_fuel_types\.1: duplicate fuel type "700car"$/],
      ['broadcast hrs_ids', 'POST', '/portal/v1/operators/h2-demo/events', { kind: 'closure', starts_at: soon(), hrs_ids: ['BERLA', 'HAMBG', 'BERLA'] }, /^hrs_ids\.2: duplicate station "BERLA"$/],
      ['draft fuelling_options', 'PUT', '/portal/v1/stations/BERLA/layout/draft', layout(['700ld', '700ld']), /fuelling_options\.1: duplicate fuelling option "700ld"/],
      ['confirm v1_fuel_types', 'POST', '/portal/v1/stations/BERLA/layout/confirm', { v1_fuel_types: ['700car', '700car'] }, /^v1_fuel_types\.1: duplicate fuel type "700car"$/],
      ['webhook kinds', 'POST', '/portal/v1/webhooks', { url: 'https://93.184.215.14/hooks/hrs', kinds: ['events', 'events'] }, /kinds: names events more than once/],
      ['webhook hrs_ids', 'POST', '/portal/v1/webhooks', { url: 'https://93.184.215.14/hooks/hrs', kinds: ['events'], hrs_ids: ['BERLA', 'BERLA'] }, /hrs_ids: names BERLA more than once/],
    ];
    for (const [what, method, path, body, detail] of cases) {
      const res = await staff.call(method, path, body);
      t.equal(res.status, 400, `${what}: 400`);
      t.match(res.body, { status: 400, detail }, `${what}: names the repeated value (${res.body?.detail})`);
    }
    for (const list of ['operators', 'originators'] as const) {
      const res = await fetch(`${p.url}/admin/v1/users/${ACCOUNTS.none}/roles`, {
        method: 'PUT',
        headers: { Authorization: `Bearer ${ADMIN_TOKEN}`, 'Content-Type': 'application/json' },
        body: JSON.stringify({ admin: false, operators: [], originators: [], [list]: list === 'operators' ? ['h2-demo', 'h2-demo'] : ['mon-1', 'mon-1'] }),
      });
      t.equal(res.status, 400, `admin roles ${list}: 400`);
      t.match(await res.json(), { detail: new RegExp(`^${list}\\.1: duplicate ${list.slice(0, -1)} "`) }, `admin roles ${list}: in { detail }`);
    }
    t.equal(await snapshot(p), before, 'nothing written: no station, event, layout, role, webhook or audit entry');
  });

  t.test('the same lists without repeats are stored as sent', async (t) => {
    const res = await staff.call('PUT', '/portal/v1/stations/BERLA', { ...station, details: { vehicle_types: ['N3', 'M1'], amenities: ['shop', 'toilets'], payment_methods: ['card', 'app'] } });
    t.equal(res.status, 200);
    t.match(res.body.details, { vehicle_types: ['N3', 'M1'], amenities: ['shop', 'toilets'], payment_methods: ['card', 'app'] }, 'in the order sent');
  });

  t.test('registry files: the same rule, each repeat with its path, nothing loaded', async (t) => {
    const before = await snapshot(p);
    const fixture = portalFixture();
    (fixture.stations[0] as { details: object }).details = { city: 'Berlin', vehicle_types: ['M1', 'M1'], amenities: ['shop', 'shop'] };
    const err = await loadFixture(p.sql, fixture, { baseDir: '.' }).catch((e: unknown) => e);
    t.ok(err instanceof FixtureError, 'refused');
    t.same((err as FixtureError).problems, ['stations[0].details.amenities[1]: duplicate amenity "shop"', 'stations[0].details.vehicle_types[1]: duplicate vehicle category "M1"']);
    t.equal(await snapshot(p), before, 'nothing loaded');
  });

  /** Every array of texts or choices in a JSON Schema, with its path, `$ref`s into `document` followed (each once). */
  function stringLists(schema: unknown, document: Record<string, any>, path = '$', seen = new Set<unknown>()): { path: string; unique: boolean }[] {
    if (schema === null || typeof schema !== 'object' || seen.has(schema)) return [];
    seen.add(schema);
    const node = schema as Record<string, unknown>;
    if (typeof node.$ref === 'string' && node.$ref.startsWith('#/')) {
      const target = node.$ref.slice(2).split('/').reduce((at: any, key) => at?.[key], document);
      return stringLists(target, document, node.$ref, seen);
    }
    const found: { path: string; unique: boolean }[] = [];
    const items = node.items as Record<string, unknown> | undefined;
    if (node.type === 'array' && items && (items.type === 'string' || Array.isArray(items.enum))) found.push({ path, unique: node.uniqueItems === true });
    for (const [key, value] of Object.entries(node)) {
      if (key === 'examples' || key === 'example') continue;
      if (Array.isArray(value)) value.forEach((v, i) => found.push(...stringLists(v, document, `${path}.${key}[${i}]`, seen)));
      else if (typeof value === 'object') found.push(...stringLists(value, document, `${path}.${key}`, seen));
    }
    return found;
  }

  t.test('the OpenAPI documents: every list of texts or choices a request body takes says uniqueItems', async (t) => {
    const documents = ['/portal/v1/doc/schema', '/import/v2/doc/schema', '/import/v1/doc/schema', '/import/v1.1/doc/schema'];
    const lists: string[] = [];
    for (const at of documents) {
      const document = (await (await fetch(`${p.url}${at}`)).json()) as Record<string, any>;
      for (const [path, operations] of Object.entries(document.paths as Record<string, Record<string, any>>)) {
        for (const [method, operation] of Object.entries(operations)) {
          const schema = operation?.requestBody?.content?.['application/json']?.schema;
          for (const list of stringLists(schema, document)) {
            lists.push(`${method} ${path} ${list.path}`);
            if (!list.unique) t.fail(`${at}: ${method.toUpperCase()} ${path} ${list.path}: no uniqueItems`);
          }
        }
      }
    }
    t.ok(lists.length >= 10, `${lists.length} lists checked: ${[...new Set(lists.map((l) => l.split(' ').pop()))].join(', ')}`);
  });
});
