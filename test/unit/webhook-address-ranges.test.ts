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
import t from 'tap';
import type { LookupAddress } from 'node:dns';
import { addressKind } from '../../src/domain/webhooks/addresses.js';
import { guardedLookup, urlRefusal, type Resolver } from '../../src/infra/name-resolver.js';

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
