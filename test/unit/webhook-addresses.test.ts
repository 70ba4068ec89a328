/**
 * Where webhooks may be delivered (src/domain/webhooks/addresses.ts), names included: a name that
 * resolves to a private, link-local or reserved address is refused when a subscription is made; a
 * name resolving to loopback only with WEBHOOK_ALLOW_LOOPBACK; and a name that resolved to a public
 * address then and to a private one at delivery (DNS rebinding) is refused at the connection, before
 * anything is sent. Names resolve through a resolver the test gives, as the system's would answer.
 */
import { createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import t from 'tap';
import { addressKind } from '../../src/domain/webhooks/addresses.js';
import { guardedLookup, urlRefusal, type Resolver } from '../../src/infra/name-resolver.js';

/** A resolver answering from a table (a name it does not know: ENOTFOUND). */
function resolverOf(table: Record<string, string[] | (() => string[])>): Resolver {
  return (hostname, _family, callback) => {
    const entry = table[hostname];
    if (!entry) return callback(Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' }), []);
    const addresses = typeof entry === 'function' ? entry() : entry;
    callback(null, addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 })));
  };
}

t.test('address kinds', async (t) => {
  const kinds: [string, string][] = [
    ['127.0.0.1', 'loopback'], ['::1', 'loopback'], ['10.1.2.3', 'private'], ['172.16.5.4', 'private'], ['192.168.1.1', 'private'],
    ['100.64.0.1', 'private'], ['fd12::1', 'private'], ['169.254.169.254', 'link-local'], ['fe80::1', 'link-local'],
    ['0.0.0.0', 'reserved'], ['224.0.0.1', 'reserved'], ['::', 'reserved'], ['::ffff:10.0.0.1', 'private'], ['::ffff:127.0.0.1', 'loopback'],
    ['93.184.216.34', 'public'], ['2606:4700::1111', 'public'],
  ];
  for (const [address, kind] of kinds) t.equal(addressKind(address), kind, `${address}: ${kind}`);
});

t.test('a name is refused for any address it resolves to that may not be reached', async (t) => {
  const resolver = resolverOf({
    'hooks.internal.test': ['10.1.2.3'],
    'metadata.cloud.test': ['169.254.169.254'],
    'v6.internal.test': ['fd00::5'],
    'mixed.example.test': ['93.184.216.34', '192.168.0.10'],
    'loop.example.test': ['127.0.0.1'],
    'public.example.test': ['93.184.216.34'],
  });
  t.match(await urlRefusal('https://hooks.internal.test/hook', false, resolver), /hooks\.internal\.test resolves to 10\.1\.2\.3 is a private address/, 'to a private address');
  t.match(await urlRefusal('https://metadata.cloud.test/latest', true, resolver), /link-local/, 'to a link-local one, loopback allowed or not');
  t.match(await urlRefusal('https://v6.internal.test/', false, resolver), /fd00::5 is a private address/, 'to a unique-local IPv6 address');
  t.match(await urlRefusal('https://mixed.example.test/', false, resolver), /192\.168\.0\.10 is a private address/, 'one private address among public ones is enough');
  t.match(await urlRefusal('https://loop.example.test/', false, resolver), /loopback/, 'to loopback without the setting');
  t.equal(await urlRefusal('https://loop.example.test/', true, resolver), undefined, 'to loopback with it');
  t.equal(await urlRefusal('http://loop.example.test:9000/', true, resolver), undefined, 'plain http to loopback with it');
  t.equal(await urlRefusal('https://public.example.test/hook', false, resolver), undefined, 'a public address over https');
  t.match(await urlRefusal('http://public.example.test/hook', true, resolver), /must be an https:\/\/ URL/, 'never plain http to a public address');
  t.match(await urlRefusal('https://nowhere.example.test/', false, resolver), /does not resolve/, 'a name that does not resolve');
});

t.test('at delivery, the connection is refused before anything is sent when the name now resolves elsewhere', async (t) => {
  let requests = 0;
  const server = createServer((_req, res) => {
    requests++;
    res.writeHead(200).end('ok');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const { port } = server.address() as AddressInfo;
  let answer = ['93.184.216.34'];
  const resolver = resolverOf({ 'rebind.example.test': () => answer, 'loop.example.test': ['127.0.0.1'] });
  t.equal(await urlRefusal('https://rebind.example.test/hook', false, resolver), undefined, 'public when the subscription is made');

  const post = (host: string, allowLoopback: boolean) =>
    new Promise<{ status?: number; code?: string }>((resolve) => {
      const req = request({ host, port, path: '/hook', method: 'POST', lookup: guardedLookup(allowLoopback, resolver) as never }, (res) => {
        res.resume();
        res.on('end', () => resolve({ status: res.statusCode }));
      });
      req.on('error', (err: NodeJS.ErrnoException) => resolve({ code: err.code }));
      req.end('{}');
    });
  answer = ['127.0.0.1'];
  t.same(await post('rebind.example.test', false), { code: 'EWEBHOOKADDRESS' }, 'rebound to loopback: refused at the connection');
  answer = ['10.0.0.7'];
  t.same(await post('rebind.example.test', true), { code: 'EWEBHOOKADDRESS' }, 'rebound to a private address: refused even with loopback allowed');
  t.equal(requests, 0, 'nothing reached the server');
  t.same(await post('loop.example.test', true), { status: 200 }, 'loopback with the setting: delivered');
  t.equal(requests, 1, 'that one request only');
});
