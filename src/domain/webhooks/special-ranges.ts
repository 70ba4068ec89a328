import { dottedQuad, prefix, type IpBytes, type Prefix } from './ip.js';

/**
 * Every block of IANA's IPv4 and IPv6 Special-Purpose Address Registries (RFC 6890 and the entries
 * since, to the 2025 updates), with the multicast blocks and the IPv6 forms that embed an IPv4
 * address beside them: a webhook receiver is never at such an address, so each is refused, whether or
 * not the registry calls it globally reachable (anycast services, ORCHIDs and the like are no one's
 * receiver). IPv4-mapped IPv6 (`::ffff:a.b.c.d`) is not listed: it is the IPv4 address it maps and is
 * judged as that. An IPv6 address outside every block here is public only inside 2000::/3, the space
 * IANA allocates for global unicast; anything else is reserved by the IETF.
 */

/** What kind of address an IP address is, for the refusal's words. */
export type AddressKind = 'loopback' | 'private' | 'link-local' | 'reserved' | 'public';

/** Where an IPv6 form carries an IPv4 address. */
type Embedding = 'last-32-bits' | '6to4' | 'teredo';

export interface SpecialRange {
  cidr: string;
  kind: Exclude<AddressKind, 'public'>;
  /** The registry's name for the block, said in the refusal; none for the familiar kinds. */
  name?: string;
  embeds?: Embedding;
}

export const SPECIAL_RANGES: readonly SpecialRange[] = [
  // IPv4 Special-Purpose Address Registry.
  { cidr: '0.0.0.0/8', kind: 'reserved', name: '"this network"' },
  { cidr: '10.0.0.0/8', kind: 'private' },
  { cidr: '100.64.0.0/10', kind: 'private', name: 'shared address space, carrier-grade NAT' },
  { cidr: '127.0.0.0/8', kind: 'loopback' },
  { cidr: '169.254.0.0/16', kind: 'link-local' },
  { cidr: '172.16.0.0/12', kind: 'private' },
  { cidr: '192.0.0.0/24', kind: 'reserved', name: 'IETF protocol assignments' },
  { cidr: '192.0.2.0/24', kind: 'reserved', name: 'documentation' },
  { cidr: '192.31.196.0/24', kind: 'reserved', name: 'AS112' },
  { cidr: '192.52.193.0/24', kind: 'reserved', name: 'AMT' },
  { cidr: '192.88.99.0/24', kind: 'reserved', name: '6to4 relay anycast, deprecated' },
  { cidr: '192.168.0.0/16', kind: 'private' },
  { cidr: '192.175.48.0/24', kind: 'reserved', name: 'AS112 direct delegation' },
  { cidr: '198.18.0.0/15', kind: 'reserved', name: 'benchmarking' },
  { cidr: '198.51.100.0/24', kind: 'reserved', name: 'documentation' },
  { cidr: '203.0.113.0/24', kind: 'reserved', name: 'documentation' },
  { cidr: '224.0.0.0/4', kind: 'reserved', name: 'multicast' },
  { cidr: '240.0.0.0/4', kind: 'reserved', name: 'reserved for future use' },
  { cidr: '255.255.255.255/32', kind: 'reserved', name: 'limited broadcast' },
  // IPv6 Special-Purpose Address Registry.
  { cidr: '::1/128', kind: 'loopback' },
  { cidr: '::/128', kind: 'reserved', name: 'unspecified' },
  { cidr: '64:ff9b::/96', kind: 'reserved', name: 'NAT64', embeds: 'last-32-bits' },
  { cidr: '64:ff9b:1::/48', kind: 'reserved', name: 'local-use NAT64' },
  { cidr: '100::/64', kind: 'reserved', name: 'discard-only' },
  { cidr: '100:0:0:1::/64', kind: 'reserved', name: 'dummy prefix' },
  { cidr: '2001::/23', kind: 'reserved', name: 'IETF protocol assignments' },
  { cidr: '2001::/32', kind: 'reserved', name: 'Teredo', embeds: 'teredo' },
  { cidr: '2001:2::/48', kind: 'reserved', name: 'benchmarking' },
  { cidr: '2001:10::/28', kind: 'reserved', name: 'ORCHID, deprecated' },
  { cidr: '2001:20::/28', kind: 'reserved', name: 'ORCHIDv2' },
  { cidr: '2001:db8::/32', kind: 'reserved', name: 'documentation' },
  { cidr: '2002::/16', kind: 'reserved', name: '6to4', embeds: '6to4' },
  { cidr: '2620:4f:8000::/48', kind: 'reserved', name: 'AS112 direct delegation' },
  { cidr: '3fff::/20', kind: 'reserved', name: 'documentation' },
  { cidr: '5f00::/16', kind: 'reserved', name: 'SRv6 SIDs' },
  { cidr: 'fc00::/7', kind: 'private', name: 'unique local' },
  { cidr: 'fe80::/10', kind: 'link-local' },
  // Beside the registry: deprecated forms that embed IPv4, site-local, multicast.
  { cidr: '::/96', kind: 'reserved', name: 'IPv4-compatible, deprecated', embeds: 'last-32-bits' },
  { cidr: '::ffff:0:0:0/96', kind: 'reserved', name: 'SIIT IPv4-translated', embeds: 'last-32-bits' },
  { cidr: 'fec0::/10', kind: 'private', name: 'site-local, deprecated' },
  { cidr: 'ff00::/8', kind: 'reserved', name: 'multicast' },
];

/** IPv6's global unicast space (RFC 4291 and IANA's IPv6 address space): every other address is reserved. */
export const GLOBAL_UNICAST = prefix('2000::/3');

/** The ranges with their prefixes, most specific first: the first that holds an address names it. */
export const COMPILED: readonly (SpecialRange & { prefix: Prefix })[] = SPECIAL_RANGES.map((range) => ({ ...range, prefix: prefix(range.cidr) })).sort(
  (a, b) => b.prefix.length - a.prefix.length,
);

/** The IPv4 address an IPv6 form carries (for Teredo, the client's: its last 32 bits inverted). */
export function embeddedIpv4(bytes: IpBytes, embeds: Embedding): string {
  if (embeds === '6to4') return dottedQuad(bytes.subarray(2, 6));
  if (embeds === 'teredo') return dottedQuad(bytes.subarray(12, 16).map((b) => b ^ 0xff));
  return dottedQuad(bytes.subarray(12, 16));
}
