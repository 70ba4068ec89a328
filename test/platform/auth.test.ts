import t from 'tap';
import { until } from '../helpers/wait.js';
import { failedAuthLimit, MESSAGES } from '../../src/api/auth.js';
import { DRF_ERRORS, HttpError, unauthorized } from '../../src/http/errors.js';
import { RateLimiter } from '../../src/infra/rate-limit.js';
import type { Request } from '../../src/http/request.js';
import { openRedis } from '../../src/infra/redis.js';
import { createLogger } from '../../src/config/log.js';
import { baseFixture, TOKENS } from '../helpers/fixtures.js';
import { ADMIN_TOKEN, get, startTestPlatform, uniqueName } from '../helpers/platform.js';
import { TEST_REDIS_URL } from '../helpers/services.js';

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
  const attempts = failedAuthLimit(new RateLimiter(redis, prefix), createLogger('silent'), { limit: 3, windowSeconds: 2, name: 'af' });
  const attacker = request('203.0.113.7');
  const honest = request('198.51.100.1');
  const invalid = unauthorized('Invalid token.');
  for (let i = 0; i < 3; i++) {
    t.equal(await attempts.failed(attacker, invalid, DRF_ERRORS), undefined, `failure ${i + 1} keeps its 401`);
    t.equal(await attempts.failed(honest, new Error('a fault, not a refusal'), DRF_ERRORS), undefined);
    t.equal(await attempts.failed(honest, new HttpError(403, 'forbidden', 'no'), DRF_ERRORS), undefined);
  }
  const refused = await attempts.failed(attacker, invalid, DRF_ERRORS);
  t.match(refused, { status: 429, code: 'throttled', options: { headers: { 'Retry-After': '2' } } }, 'the fourth failure is answered 429');
  t.equal(await attempts.failed(honest, invalid, DRF_ERRORS), undefined, 'another address is never affected; non-401 failures do not count');
  await new Promise((resolve) => setTimeout(resolve, 2200));
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
