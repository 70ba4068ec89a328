/**
 * Webhook addresses: the rules and the resolver; and the messages' bodies and signatures.
 *
 * One file, one process: its parts share the loaded platform code. Each part is a subtest named after
 * what it covers.
 */
import { createSocket, type Socket } from 'node:dgram';
import type { LookupAddress } from 'node:dns';
import { createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import t, { type Test } from 'tap';
import { addressKind } from '../../src/domain/webhooks/addresses.js';
import { changeOf, changesBody, writtenChange, type ChangeRow } from '../../src/domain/webhooks/messages.js';
import type { Sql } from '../../db/connect.js';
import type { ClaimedRow } from '../../db/queries/webhook-delivery.js';
import { LogRowCache } from '../../workers/webhooks/row-cache.js';
import { sendMessage, signatures, signingKey } from '../../workers/webhooks/send.js';
import { signingKeys } from '../../workers/webhooks/deliver.js';
import { newWebhookSecret, sealSecret } from '../../src/domain/webhooks/secrets.js';
import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { boundedResolver, guardedLookup, type Resolver, urlRefusal } from '../../src/infra/name-resolver.js';

t.test('webhook-addresses', async (t) => {
  /**
   * Where webhooks may be delivered (src/domain/webhooks/addresses.ts), names included: a name that
   * resolves to a private, link-local or reserved address is refused when a subscription is made; a
   * name resolving to loopback only with WEBHOOK_ALLOW_LOOPBACK; and a name that resolved to a public
   * address then and to a private one at delivery (DNS rebinding) is refused at the connection, before
   * anything is sent. Names resolve through a resolver the test gives, as the system's would answer.
   */
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
});

t.test('webhook-address-ranges', async (t) => {
  /**
   * The request-forgery rules against every special-purpose range (src/domain/webhooks/special-ranges.ts):
   * an address inside each block of IANA's IPv4 and IPv6 Special-Purpose Address Registries, the
   * multicast blocks, the IPv6 forms that embed an IPv4 address (IPv4-compatible `::/96`, SIIT
   * `::ffff:0:0:0/96`, NAT64, 6to4, Teredo) and site-local, beside public neighbours that must pass.
   * Each is checked as a registration checks it (an IP literal in the URL, and a name resolving to it)
   * and as a delivery's connection checks it (guardedLookup); a refusal names the IPv4 address an IPv6
   * form embeds. Then the forms an attacker would try: IPv4 in the notations the WHATWG URL parser
   * normalises (hex, octal, one number, shortened), IPv6 in upper case, uncompressed, with a zone id.
   */
  type Kind = 'loopback' | 'private' | 'link-local' | 'reserved' | 'public';

  /** [an address inside the range, the range, its expected kind, the IPv4 address it embeds (named in the refusal)]. */
  const TABLE: [string, string, Kind, string?][] = [
    // IANA IPv4 Special-Purpose Address Registry.
    ['0.1.2.3', '0.0.0.0/8 this network', 'reserved'],
    ['0.0.0.0', '0.0.0.0/32 this host', 'reserved'],
    ['10.1.2.3', '10.0.0.0/8', 'private'],
    ['100.64.0.1', '100.64.0.0/10 shared address space', 'private'],
    ['100.127.255.254', '100.64.0.0/10, its end', 'private'],
    ['127.0.0.1', '127.0.0.0/8', 'loopback'],
    ['127.255.255.254', '127.0.0.0/8, its end', 'loopback'],
    ['169.254.169.254', '169.254.0.0/16', 'link-local'],
    ['172.16.0.1', '172.16.0.0/12', 'private'],
    ['172.31.255.254', '172.16.0.0/12, its end', 'private'],
    ['192.0.0.1', '192.0.0.0/29 DS-Lite', 'reserved'],
    ['192.0.0.8', '192.0.0.8/32 dummy', 'reserved'],
    ['192.0.0.9', '192.0.0.9/32 PCP anycast', 'reserved'],
    ['192.0.0.10', '192.0.0.10/32 TURN anycast', 'reserved'],
    ['192.0.0.170', '192.0.0.170/32 NAT64 discovery', 'reserved'],
    ['192.0.0.171', '192.0.0.171/32 NAT64 discovery', 'reserved'],
    ['192.0.0.200', '192.0.0.0/24 IETF protocol assignments', 'reserved'],
    ['192.0.2.1', '192.0.2.0/24 TEST-NET-1', 'reserved'],
    ['192.31.196.1', '192.31.196.0/24 AS112-v4', 'reserved'],
    ['192.52.193.1', '192.52.193.0/24 AMT', 'reserved'],
    ['192.88.99.1', '192.88.99.0/24 6to4 relay anycast', 'reserved'],
    ['192.88.99.2', '192.88.99.2/32 6a44 relay', 'reserved'],
    ['192.168.1.1', '192.168.0.0/16', 'private'],
    ['192.175.48.1', '192.175.48.0/24 AS112 direct delegation', 'reserved'],
    ['198.18.0.1', '198.18.0.0/15 benchmarking', 'reserved'],
    ['198.19.255.254', '198.18.0.0/15, its end', 'reserved'],
    ['198.51.100.1', '198.51.100.0/24 TEST-NET-2', 'reserved'],
    ['203.0.113.1', '203.0.113.0/24 TEST-NET-3', 'reserved'],
    ['240.0.0.1', '240.0.0.0/4 reserved', 'reserved'],
    ['255.255.255.255', '255.255.255.255/32 limited broadcast', 'reserved'],
    // IPv4 multicast.
    ['224.0.0.1', '224.0.0.0/4 multicast', 'reserved'],
    ['239.255.255.250', '224.0.0.0/4 multicast, its end', 'reserved'],
    // IPv4 neighbours of the ranges: public.
    ['1.1.1.1', 'public', 'public'],
    ['93.184.216.34', 'public', 'public'],
    ['9.255.255.255', 'below 10.0.0.0/8', 'public'],
    ['100.63.255.255', 'below 100.64.0.0/10', 'public'],
    ['100.128.0.0', 'above 100.64.0.0/10', 'public'],
    ['172.15.255.255', 'below 172.16.0.0/12', 'public'],
    ['172.32.0.0', 'above 172.16.0.0/12', 'public'],
    ['192.0.1.1', 'between 192.0.0.0/24 and 192.0.2.0/24', 'public'],
    ['192.88.98.255', 'below 192.88.99.0/24', 'public'],
    ['198.17.255.255', 'below 198.18.0.0/15', 'public'],
    ['198.20.0.0', 'above 198.18.0.0/15', 'public'],
    ['223.255.255.255', 'below 224.0.0.0/4', 'public'],
    // IANA IPv6 Special-Purpose Address Registry.
    ['::1', '::1/128 loopback', 'loopback'],
    ['::', '::/128 unspecified', 'reserved'],
    ['::ffff:10.0.0.1', '::ffff:0:0/96 IPv4-mapped, judged as its IPv4 address', 'private', '10.0.0.1'],
    ['::ffff:127.0.0.1', '::ffff:0:0/96 IPv4-mapped loopback', 'loopback', '127.0.0.1'],
    ['::ffff:169.254.169.254', '::ffff:0:0/96 IPv4-mapped link-local', 'link-local', '169.254.169.254'],
    ['64:ff9b::a00:1', '64:ff9b::/96 NAT64', 'reserved', '10.0.0.1'],
    ['64:ff9b::93.184.216.34', '64:ff9b::/96 NAT64 of a public address', 'reserved', '93.184.216.34'],
    ['64:ff9b:1::a00:1', '64:ff9b:1::/48 local-use NAT64', 'reserved'],
    ['100::1', '100::/64 discard-only', 'reserved'],
    ['100:0:0:1::1', '100:0:0:1::/64 dummy prefix', 'reserved'],
    ['2001:0:4136:e378:8000:63bf:f5ff:fffe', '2001::/32 Teredo', 'reserved', '10.0.0.1'],
    ['2001:1::1', '2001:1::1/128 PCP anycast', 'reserved'],
    ['2001:1::2', '2001:1::2/128 TURN anycast', 'reserved'],
    ['2001:1::3', '2001:1::3/128 DNS-SD SRP anycast', 'reserved'],
    ['2001:2::1', '2001:2::/48 benchmarking', 'reserved'],
    ['2001:3::1', '2001:3::/32 AMT', 'reserved'],
    ['2001:4:112::1', '2001:4:112::/48 AS112-v6', 'reserved'],
    ['2001:10::1', '2001:10::/28 ORCHID', 'reserved'],
    ['2001:20::1', '2001:20::/28 ORCHIDv2', 'reserved'],
    ['2001:30::1', '2001:30::/28 DRIP entity tags', 'reserved'],
    ['2001:1ff::1', '2001::/23 IETF protocol assignments, its end', 'reserved'],
    ['2001:db8::1', '2001:db8::/32 documentation', 'reserved'],
    ['2002:a00:1::1', '2002::/16 6to4', 'reserved', '10.0.0.1'],
    ['2002:5db8:d822::1', '2002::/16 6to4 of a public address', 'reserved', '93.184.216.34'],
    ['2620:4f:8000::1', '2620:4f:8000::/48 AS112 direct delegation', 'reserved'],
    ['3fff::1', '3fff::/20 documentation', 'reserved'],
    ['3fff:fff::1', '3fff::/20 documentation, its end', 'reserved'],
    ['5f00::1', '5f00::/16 SRv6 SIDs', 'reserved'],
    ['fc00::1', 'fc00::/7 unique local', 'private'],
    ['fd12:3456::1', 'fc00::/7 unique local', 'private'],
    ['fe80::1', 'fe80::/10 link-local', 'link-local'],
    ['febf::1', 'fe80::/10 link-local, its end', 'link-local'],
    // IPv6 beside the registry: forms embedding IPv4, site-local, multicast, space outside 2000::/3.
    ['::a00:1', '::/96 IPv4-compatible', 'reserved', '10.0.0.1'],
    ['::7f00:1', '::/96 IPv4-compatible loopback', 'reserved', '127.0.0.1'],
    ['::5db8:d822', '::/96 IPv4-compatible public', 'reserved', '93.184.216.34'],
    ['::ffff:0:a00:1', '::ffff:0:0:0/96 SIIT', 'reserved', '10.0.0.1'],
    ['fec0::1', 'fec0::/10 site-local', 'private'],
    ['feff::1', 'fec0::/10 site-local, its end', 'private'],
    ['ff02::1', 'ff00::/8 multicast', 'reserved'],
    ['ff0e::1', 'ff00::/8 multicast, global scope', 'reserved'],
    ['4000::1', 'outside 2000::/3', 'reserved'],
    ['e000::1', 'outside 2000::/3', 'reserved'],
    // IPv6 neighbours: public.
    ['::ffff:93.184.216.34', '::ffff:0:0/96 IPv4-mapped public', 'public'],
    ['2606:4700::1111', 'public', 'public'],
    ['2a00:1450:4001::1', 'public', 'public'],
    ['2001:200::1', 'above 2001::/23', 'public'],
    ['2003::1', 'above 2002::/16', 'public'],
    ['3fff:1000::1', 'above 3fff::/20', 'public'],
  ];

  /** A resolver answering every name with one address. */
  const resolvingTo = (address: string): Resolver => (_hostname, _family, callback) => callback(null, [{ address, family: address.includes(':') ? 6 : 4 }]);

  /** What a delivery's connection gets from guardedLookup for a name resolving to `address`. */
  function connectTo(address: string, allowLoopback: boolean): Promise<{ code?: string; message?: string; addresses?: LookupAddress[] }> {
    return new Promise((resolve) => {
      guardedLookup(allowLoopback, resolvingTo(address))('hook.example.test', { all: true }, (err, addresses) =>
        resolve(err ? { code: err.code, message: err.message } : { addresses: addresses as LookupAddress[] }),
      );
    });
  }

  const literal = (address: string) => (address.includes(':') ? `[${address}]` : address);

  let accepted = 0;
  t.test('every special-purpose range: its kind, refused at registration and at connection, the embedded IPv4 address named', async (t) => {
    for (const [address, range, kind, embedded] of TABLE) {
      const refused = kind !== 'public';
      const asLiteral = await urlRefusal(`https://${literal(address)}/hook`, false, resolvingTo(address));
      const asName = await urlRefusal('https://hook.example.test/hook', false, resolvingTo(address));
      const connection = await connectTo(address, false);
      if (refused && (asLiteral === undefined || asName === undefined || connection.code === undefined)) accepted++;
      t.equal(addressKind(address), kind, `${address} (${range}): ${kind}`);
      if (!refused) {
        t.same([asLiteral, asName, connection.code], [undefined, undefined, undefined], `${address} (${range}): may be delivered to`);
        continue;
      }
      const written = new URL(`https://${literal(address)}/`).hostname.replace(/^\[|\]$/g, ''); // as the URL parser writes it
      t.match(asLiteral, `refused: ${written} is a ${kind} address`, `${address} (${range}): a URL with it is refused`);
      t.match(asName, `hook.example.test resolves to ${address} is a ${kind} address`, `${address} (${range}): a name resolving to it is refused`);
      t.match(connection, { code: 'EWEBHOOKADDRESS', message: `hook.example.test: ${address} is a ${kind} address` }, `${address} (${range}): a delivery's connection is refused`);
      if (embedded) t.match(asLiteral, `it embeds the IPv4 address ${embedded}`, `${address}: the refusal names ${embedded}`);
    }
    t.comment(`special-purpose addresses accepted somewhere (a URL, a name or a connection): ${accepted} of ${TABLE.filter(([, , kind]) => kind !== 'public').length}`);
  });

  t.test('with WEBHOOK_ALLOW_LOOPBACK, loopback is allowed and nothing else: no IPv6 form embedding 127.0.0.1', async (t) => {
    for (const [address, , kind] of TABLE) {
      const allowed = kind === 'public' || kind === 'loopback';
      const connection = await connectTo(address, true);
      t.equal(connection.code, allowed ? undefined : 'EWEBHOOKADDRESS', `${address}: ${allowed ? 'allowed' : 'refused'} with loopback allowed`);
    }
  });

  t.test('the forms an attacker would try: refused however the address is written', async (t) => {
    const forms: [string, RegExp][] = [
      ['https://0x7f.1/hook', /127\.0\.0\.1 is a loopback address/],
      ['https://2130706433/hook', /127\.0\.0\.1 is a loopback address/],
      ['https://0177.0.0.1/hook', /127\.0\.0\.1 is a loopback address/],
      ['https://127.1/hook', /127\.0\.0\.1 is a loopback address/],
      ['https://0x7f000001/hook', /127\.0\.0\.1 is a loopback address/],
      ['https://0xa9.0xfe.0xa9.0xfe/latest', /169\.254\.169\.254 is a link-local address/],
      ['https://2852039166/latest', /169\.254\.169\.254 is a link-local address/],
      ['https://10.1/hook', /10\.0\.0\.1 is a private address/],
      ['https://[::FFFF:A9FE:A9FE]/latest', /link-local address.*169\.254\.169\.254/],
      ['https://[0:0:0:0:0:ffff:169.254.169.254]/latest', /link-local address.*169\.254\.169\.254/],
      ['https://[0000:0000:0000:0000:0000:0000:0000:0001]/hook', /::1 is a loopback address/],
      ['https://[FE80::1]/hook', /fe80::1 is a link-local address/],
      ['https://[FEC0::1]/hook', /fec0::1 is a private address/],
      ['https://[2002:0A00:0001:0000:0000:0000:0000:0001]/hook', /reserved address.*10\.0\.0\.1/],
      ['https://[::10.0.0.1]/hook', /reserved address.*10\.0\.0\.1/],
      ['https://[::ffff:0:10.0.0.1]/hook', /reserved address.*10\.0\.0\.1/],
      ['https://[64:FF9B::10.0.0.1]/hook', /reserved address.*10\.0\.0\.1/],
      ['https://[fe80::1%25eth0]/hook', /must be an absolute URL/],
      ['https://[fe80::1%eth0]/hook', /must be an absolute URL/],
    ];
    let through = 0;
    for (const [url, reason] of forms) {
      const refusal = await urlRefusal(url, false, resolvingTo('93.184.216.34'));
      if (refusal === undefined) through++;
      t.match(refusal, reason, `${url}: refused`);
    }
    t.comment(`attacker's forms accepted: ${through} of ${forms.length}`);
    // Names resolving to the same addresses written otherwise (a resolver's answer is judged by value, zone ids and case aside).
    for (const address of ['FE80::1', 'fe80::1%eth0', '::FFFF:7F00:1', '0:0:0:0:0:0:0:1', '2002:0a00:0001::', '::ffff:0:0a00:0001']) {
      t.equal((await connectTo(address, false)).code, 'EWEBHOOKADDRESS', `a name resolving to ${address}: refused at the connection`);
    }
  });
});

t.test('webhook-name-resolver', async (t) => {
  /**
   * The resolver of webhook host names (src/infra/name-resolver.ts) against a DNS server of the test's
   * own on 127.0.0.1 (c-ares asks it instead of /etc/resolv.conf's): A and AAAA answers together, a
   * name without an address refused as such, a name whose server never answers failing with ETIMEOUT
   * within its bound, at most `concurrency` names at once with `waiting` more in line and the next
   * refused at once (EBUSY), and `localhost` without any query. (That libuv's threads are left alone is
   * shown where it matters, with PostgreSQL behind a host name: test/system/webhooks-hung-names.test.ts.)
   */
  /** The question's name and type (1 A, 28 AAAA) and where the question ends. */
  function question(packet: Buffer): { name: string; type: number; end: number } {
    const labels: string[] = [];
    let at = 12;
    for (; packet[at]! > 0; at += packet[at]! + 1) labels.push(packet.subarray(at + 1, at + 1 + packet[at]!).toString('latin1'));
    return { name: labels.join('.'), type: packet.readUInt16BE(at + 1), end: at + 5 };
  }

  /** An answer to `packet`: its rcode (0, or 3 for NXDOMAIN) and these A or AAAA records. */
  function answer(packet: Buffer, rcode: number, records: Buffer[], type: number): Buffer {
    const q = question(packet);
    const header = Buffer.alloc(12);
    packet.copy(header, 0, 0, 2);
    header.writeUInt16BE(0x8180 | rcode, 2);
    header.writeUInt16BE(1, 4);
    header.writeUInt16BE(records.length, 6);
    const rrs = records.map((rdata) => {
      const rr = Buffer.alloc(12);
      rr.writeUInt16BE(0xc00c, 0);
      rr.writeUInt16BE(type, 2);
      rr.writeUInt16BE(1, 4);
      rr.writeUInt32BE(60, 6);
      rr.writeUInt16BE(rdata.length, 10);
      return Buffer.concat([rr, rdata]);
    });
    return Buffer.concat([header, packet.subarray(12, q.end), ...rrs]);
  }

  const ZONE: Record<string, { a?: number[][]; aaaa?: number[][] }> = {
    'public.hooks.test': { a: [[93, 184, 216, 34]], aaaa: [[0x26, 0x06, 0x47, 0, ...Array(11).fill(0), 1]] },
    'v4only.hooks.test': { a: [[93, 184, 216, 35]] },
  };

  /** A DNS server on a free port: names of ZONE answered, `*.hang.test` never, anything else NXDOMAIN. */
  async function dnsServer(t: Test): Promise<{ port: number; asked: string[] }> {
    const asked: string[] = [];
    const server: Socket = createSocket('udp4');
    server.on('message', (packet, peer) => {
      const q = question(packet);
      asked.push(`${q.name}/${q.type === 1 ? 'A' : 'AAAA'}`);
      if (q.name.endsWith('.hang.test')) return;
      const entry = ZONE[q.name];
      const records = (q.type === 1 ? entry?.a : entry?.aaaa) ?? [];
      server.send(answer(packet, entry ? 0 : 3, records.map((r) => Buffer.from(r)), q.type), peer.port, peer.address);
    });
    await new Promise<void>((resolve) => server.bind(0, '127.0.0.1', resolve));
    t.teardown(() => server.close());
    return { port: (server.address() as AddressInfo).port, asked };
  }

  const resolve = (resolver: ReturnType<typeof boundedResolver>, name: string, family: 0 | 4 | 6 = 0) =>
    new Promise<{ code?: string; message?: string; addresses?: LookupAddress[]; ms: number }>((done) => {
      const started = performance.now();
      resolver(name, family, (err, addresses) => done(err ? { code: err.code, message: err.message, ms: performance.now() - started } : { addresses, ms: performance.now() - started }));
    });

  t.test('answers, a name without an address, a name that never answers, localhost', async (t) => {
    const dns = await dnsServer(t);
    const resolver = boundedResolver({ timeoutMs: 500, servers: [`127.0.0.1:${dns.port}`] });
    t.same((await resolve(resolver, 'public.hooks.test')).addresses, [{ address: '93.184.216.34', family: 4 }, { address: '2606:4700::1', family: 6 }], 'A and AAAA together');
    t.same((await resolve(resolver, 'public.hooks.test', 6)).addresses, [{ address: '2606:4700::1', family: 6 }], 'one family when asked for one');
    t.same((await resolve(resolver, 'v4only.hooks.test')).addresses, [{ address: '93.184.216.35', family: 4 }], 'no AAAA: the A records');
    t.equal((await resolve(resolver, 'nowhere.hooks.test')).code, 'ENOTFOUND', 'NXDOMAIN: ENOTFOUND');
    const hung = await resolve(resolver, 'x.hang.test');
    t.equal(hung.code, 'ETIMEOUT', 'a server that never answers: ETIMEOUT');
    t.match(hung.message, /no answer for x\.hang\.test within 500 ms/);
    t.ok(hung.ms >= 450 && hung.ms < 5000, `within its bound, generously (${Math.round(hung.ms)} ms)`);
    const before = dns.asked.length;
    t.same((await resolve(resolver, 'localhost')).addresses, [{ address: '127.0.0.1', family: 4 }, { address: '::1', family: 6 }], 'localhost: loopback');
    t.same((await resolve(resolver, 'Receiver.LOCALHOST.', 4)).addresses, [{ address: '127.0.0.1', family: 4 }], 'a name under .localhost, any case, a final dot');
    t.equal(dns.asked.length, before, 'without any query');
  });

  t.test('at most `concurrency` names at once, `waiting` more in line, the next refused at once; a turn freed is taken', async (t) => {
    const dns = await dnsServer(t);
    const resolver = boundedResolver({ timeoutMs: 800, concurrency: 2, waiting: 1, servers: [`127.0.0.1:${dns.port}`] });
    let settled = 0;
    const hung = ['a', 'b', 'c'].map((n) => resolve(resolver, `${n}.hang.test`).finally(() => settled++));
    const refused = await resolve(resolver, 'public.hooks.test');
    t.equal(refused.code, 'EBUSY', 'a fourth name is refused');
    t.equal(settled, 0, 'at once: before any of the three hung ones gave up');
    const [a, b, c] = await Promise.all(hung);
    t.same([a!.code, b!.code, c!.code], ['ETIMEOUT', 'ETIMEOUT', 'ETIMEOUT'], 'the waiting one times out with the others: its wait counts');
    t.same((await resolve(resolver, 'public.hooks.test', 4)).addresses, [{ address: '93.184.216.34', family: 4 }], 'the turns are given back');
  });
});

t.test('webhook-message-bodies', async (t) => {
  /**
   * A message's body is written from each change's JSON, written once per log row (a worker keeps the
   * written change, not the parsed row, and hands every subscription that wants the row the same one):
   * byte for byte what JSON.stringify writes of the whole, whatever the text, and the written change
   * keeps what the filters read and nothing of the row besides.
   */
  const at = new Date('2026-12-06T03:15:00.123Z');
  const rows: ChangeRow[] = [
    { seq: '41', topic: 'status', hrs_id: 'BERAP', change: 'changed', at, payload: { verdict: 'AVAILABLE', reason: 'reported_available', note: 'quote " backslash \\ line\nend \u2028 ü 🚗' } },
    { seq: '42', topic: 'option', hrs_id: 'HAMPT', change: 'changed', at, payload: { fuelling_option: '700ld', verdict: 'CLOSED', reason: 'outside_opening_hours', price: null } },
    { seq: '43', topic: 'station', hrs_id: 'B/R"X', change: 'changed', at, payload: null },
    { seq: '44', topic: 'station', hrs_id: 'GONE1', change: 'deleted', at, payload: null },
    { seq: '45', topic: 'event', hrs_id: 'BERAP', change: 'created', at, payload: { id: 'ev_1', text: 'Wartung: 06:00–08:00' } },
  ];
  const base = 'https://hrs.example';
  const written = rows.map((row) => writtenChange(row, base));
  for (const ids of [[], [0], [0, 1, 2, 3, 4], [4, 2, 0]]) {
    const expected = JSON.stringify({ type: 'hrs.changes', timestamp: at.toISOString(), data: { subscription_id: 'wh_"q\\', changes: ids.map((i) => changeOf(rows[i]!, base)) } });
    t.equal(changesBody('wh_"q\\', ids.map((i) => written[i]!), at), expected, `changes ${ids.join(',') || 'none'}: as JSON.stringify writes it`);
  }
  for (const [i, row] of rows.entries()) {
    t.same(Object.keys(written[i]!).sort(), ['at', 'change', 'hrs_id', 'json', 'seq', 'topic'], `row ${row.seq}: only what the filters and the message read is kept`);
    t.same({ ...written[i], json: undefined }, { seq: row.seq, topic: row.topic, hrs_id: row.hrs_id, change: row.change, at: at.toISOString(), json: undefined });
  }
  t.match(JSON.parse(writtenChange(rows[2]!, 'https://other.example').json), { record_url: 'https://other.example/v2/hrs/B%2FR%22X' }, 'the base URL makes the record URL');
});

t.test('webhook-signatures', async (t) => {
  /**
   * The worker signs with Node's HMAC (workers/webhooks/send.ts): the same `v1,…` the standardwebhooks
   * package makes and verifies, for any secret, id, time and body (multi-byte text, a body given as
   * text or as its UTF-8 bytes), one signature per key during a rotation's overlap. The keys are opened
   * once per seal: the same seals give the kept keys, a rotation or the overlap's end others, and a
   * seal made for another subscription or under another WEBHOOK_SECRET_KEY does not open.
   */
  const bodies = ['', '{"a":1}', 'ü 🚗 \u2028 "quoted"', 'x'.repeat(70_000)];
  for (let i = 0; i < 20; i++) {
    const secret = newWebhookSecret();
    const id = `msg_wh_${i}_1_${i + 1}`;
    const at = new Date(Date.UTC(2026, 11, 6, 12, 0, i, 987));
    const body = bodies[i % bodies.length]!;
    const theirs = new Webhook(secret).sign(id, at, body);
    t.equal(signatures([signingKey(secret)], id, at, body), theirs, `secret ${i}: as standardwebhooks signs`);
    t.equal(signatures([signingKey(secret)], id, at, Buffer.from(body, 'utf8')), theirs, `secret ${i}: the body as bytes`);
  }
  const [now, before] = [newWebhookSecret(), newWebhookSecret()];
  const at = new Date();
  const header = signatures([signingKey(now), signingKey(before)], 'msg_x', at, '{"b":2}');
  t.equal(header.split(' ').length, 2, 'two keys, two signatures');
  for (const secret of [now, before]) {
    t.same(new Webhook(secret).verify('{"b":2}', { 'webhook-id': 'msg_x', 'webhook-timestamp': String(Math.floor(at.getTime() / 1000)), 'webhook-signature': header }), { b: 2 }, 'each secret verifies');
  }
  t.throws(() => signingKey('whsec_'), /empty/, 'an empty secret does not sign');

  const key = randomBytes(32);
  const sub = { id: 'wh_keys', secret_sealed: sealSecret(key, now, 'wh_keys'), previous_secret_sealed: sealSecret(key, before, 'wh_keys'), previous_valid: true };
  const keys = signingKeys(key, sub);
  t.same(keys.map((k) => k.toString('base64')), [signingKey(now), signingKey(before)].map((k) => k.toString('base64')), 'the current key, then the previous one');
  t.equal(signingKeys(key, { ...sub, secret_sealed: Buffer.from(sub.secret_sealed) }), keys, 'the same seals: the kept keys');
  t.same(signingKeys(key, { ...sub, previous_valid: false }).length, 1, 'the overlap over: one key');
  const rotated = newWebhookSecret();
  t.same(signingKeys(key, { ...sub, secret_sealed: sealSecret(key, rotated, 'wh_keys'), previous_valid: false })[0]!.toString('base64'), signingKey(rotated).toString('base64'), 'rotated: the new key');
  t.throws(() => signingKeys(key, { ...sub, id: 'wh_other' }), 'sealed for another subscription: does not open');
  t.throws(() => signingKeys(randomBytes(32), sub), 'under another WEBHOOK_SECRET_KEY: does not open');
});

t.test('webhook-send-targets', async (t) => {
  /**
   * Each URL's target is made once and kept per loopback rule (workers/webhooks/send.ts): the same URL
   * is refused or sent to as the rule of each attempt says, whichever came first; a URL that does not
   * parse, or is not HTTP, is refused each time; a receiver's answer comes back as its status.
   */
  const received: string[] = [];
  const server = createServer((req, res) => {
    received.push(String(req.headers['webhook-id']));
    res.writeHead(204).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise((resolve) => server.close(resolve)));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  const keys = [signingKey(newWebhookSecret())];
  const resolver: Resolver = (_host, _family, callback) => callback(null, [{ address: '127.0.0.1', family: 4 }]);
  const send = (to: string, allowLoopback: boolean, id: string) => sendMessage(to, id, '{}', keys, { timeoutMs: 2000, allowLoopback, resolver });
  const first = await send(url, false, 'msg_1');
  t.match(first, { statusCode: null, error: /^refused: 127\.0\.0\.1 is a loopback address/ }, 'loopback refused without the allowance');
  t.match(await send(url, true, 'msg_2'), { statusCode: 204, error: null }, 'the same URL sent to with it');
  t.match(await send(url, false, 'msg_3'), { statusCode: null, error: /^refused: 127\.0\.0\.1/ }, 'and refused again without it');
  t.match(await send(url, true, 'msg_4'), { statusCode: 204 }, 'kept: sent to again with it');
  t.same(received, ['msg_2', 'msg_4'], 'only the allowed attempts reached the receiver');
  for (let i = 0; i < 2; i++) {
    t.same(await send('not a url', true, 'msg_x'), { statusCode: null, error: 'refused: the URL is not valid', latencyMs: null }, `an invalid URL refused (${i + 1})`);
    t.same(await send('ftp://127.0.0.1/x', true, 'msg_x'), { statusCode: null, error: 'refused: ftp: is not HTTP', latencyMs: null }, `a URL not HTTP refused (${i + 1})`);
  }
  t.match(await send(`http://localhost:${(server.address() as AddressInfo).port}/hook`, false, 'msg_5'), { statusCode: null, error: /^refused: localhost: 127\.0\.0\.1 is a loopback address/ }, 'a name is checked at its connection');
});

t.test('webhook-log-row-cache', async (t) => {
  /**
   * The log rows a delivery worker keeps (workers/webhooks/row-cache.ts): a claim's subscriptions get
   * their rows in their seqs' order, each row read once for all of them (one statement for those not
   * kept), a seq the log no longer holds ends that subscription's list, and the oldest rows are let go
   * beyond the bound. PostgreSQL is stood in for by the statement's values (the seqs asked for).
   */
  const log = new Map(['1', '2', '3', '4', '5', '6'].map((seq) => [seq, { seq, topic: 'status', hrs_id: 'BERAP', change: 'changed', at: new Date(0), payload: { category: 'availability' } }]));
  const asked: string[][] = [];
  const sql = ((_strings: TemplateStringsArray, ...values: unknown[]) => {
    const seqs = values[0] as string[];
    asked.push([...seqs]);
    return Promise.resolve(seqs.flatMap((seq) => (log.has(seq) ? [log.get(seq)!] : [])));
  }) as unknown as Sql;
  const claimed = (id: string, seqs: string[]) => ({ id, change_seqs: seqs }) as unknown as ClaimedRow;
  const rows = new LogRowCache(sql, 'https://hrs.example', 4);
  const first = await rows.attach([claimed('a', ['1', '2', '3']), claimed('b', ['2', '3', '4']), claimed('c', [])]);
  t.same(first.map((sub) => [sub.id, sub.changes.map((row) => row.seq)]), [['a', ['1', '2', '3']], ['b', ['2', '3', '4']], ['c', []]]);
  t.same(asked, [['1', '2', '3', '4']], 'one statement, each seq once');
  t.equal(first[0]!.changes[1], first[1]!.changes[0], 'the same written change for both subscriptions');
  t.same(JSON.parse(first[0]!.changes[0]!.json), { seq: '1', type: 'status.changed', hrs_id: 'BERAP', at: new Date(0).toISOString(), category: 'availability' }, 'written once, as the message carries it');
  t.notOk('change_seqs' in first[0]!, 'the seqs are not handed on');
  const second = await rows.attach([claimed('a', ['3', '4', '5'])]);
  t.same(second[0]!.changes.map((row) => row.seq), ['3', '4', '5']);
  t.same(asked[1], ['5'], 'only the seq not kept is read');
  t.equal(rows.size, 4, 'the oldest let go beyond the bound');
  log.delete('6');
  const pruned = await rows.attach([claimed('a', ['5', '6', '7'])]);
  t.same(pruned[0]!.changes.map((row) => row.seq), ['5'], 'a seq the log no longer holds ends the list: the rest wait for the next claim');
  t.same(asked[2], ['6', '7']);
});
