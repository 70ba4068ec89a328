import t from 'tap';
import { compileTrust, trustEntries } from '../../src/config/trust-proxy.js';
import { clientAddress, forwardedFor, normalize } from '../../src/http/client-address.js';
import { loadConfig } from '../../src/config/config.js';
import { SANDBOX_TOKEN } from '../../src/domain/sandbox.js';
import { baseFixture, TOKENS } from '../helpers/fixtures.js';
import { get, startTestPlatform } from '../helpers/platform.js';
import { portalClient } from '../helpers/portal.js';

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
