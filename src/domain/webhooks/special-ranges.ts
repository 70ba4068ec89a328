/**
 * Every block of IANA's IPv4 and IPv6 Special-Purpose Address Registries (RFC 6890 and the entries
 * since, to the 2025 updates), with the multicast blocks and the IPv6 forms that embed an IPv4
 * address beside them: a webhook receiver is never at such an address, so each is refused, whether or
 * not the registry calls it globally reachable (anycast services, ORCHIDs and the like are no one's
 * receiver). IPv4-mapped IPv6 (`::ffff:a.b.c.d`) is not listed: it is the IPv4 address it maps and is
 * judged as that. An IPv6 address outside every block here is public only inside 2000::/3, the space
 * IANA allocates for global unicast; anything else is reserved by the IETF.
 */

/*
 * IP addresses as bytes, for the blocks below and the rules of ./addresses.ts: an address is judged by its
 * value, never by how it is written, so `::FFFF:7F00:1`, `::ffff:127.0.0.1` and
 * `0:0:0:0:0:ffff:7f00:0001` are one address, and a zone id (`fe80::1%eth0`) does not hide its kind.
 */

/** An address's bytes: 4 for IPv4, 16 for IPv6. */
export type IpBytes = Uint8Array;

const IPV4 = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/;

/** The 4 bytes of a dotted-quad IPv4 address (no leading zeros, each part at most 255), or undefined. */
function ipv4Bytes(text: string): IpBytes | undefined {
  const match = IPV4.exec(text);
  if (!match) return undefined;
  const parts = match.slice(1).map((part) => (part.length > 1 && part.startsWith('0') ? NaN : Number(part)));
  return parts.every((n) => n <= 255) ? Uint8Array.from(parts) : undefined;
}

/** The 16-bit groups of one side of `::` (an IPv4 tail counts as two), or undefined when one is not hex. */
function groupsOf(text: string, last: boolean): number[] | undefined {
  if (text === '') return [];
  const parts = text.split(':');
  const groups: number[] = [];
  for (const [i, part] of parts.entries()) {
    if (last && i === parts.length - 1 && part.includes('.')) {
      const v4 = ipv4Bytes(part);
      if (!v4) return undefined;
      groups.push((v4[0]! << 8) | v4[1]!, (v4[2]! << 8) | v4[3]!);
    } else if (/^[0-9a-f]{1,4}$/i.test(part)) {
      groups.push(parseInt(part, 16));
    } else {
      return undefined;
    }
  }
  return groups;
}

/** The 16 bytes of an IPv6 address in any of its written forms, its zone id left out; undefined when it is none. */
function ipv6Bytes(text: string): IpBytes | undefined {
  const bare = text.replace(/%.*$/, '');
  const halves = bare.split('::');
  if (halves.length > 2) return undefined;
  const head = groupsOf(halves[0]!, halves.length === 1);
  const tail = halves.length === 2 ? groupsOf(halves[1]!, true) : [];
  if (!head || !tail) return undefined;
  const missing = 8 - head.length - tail.length;
  if (halves.length === 1 ? missing !== 0 : missing < 1) return undefined;
  const groups = [...head, ...Array<number>(halves.length === 2 ? missing : 0).fill(0), ...tail];
  const bytes = new Uint8Array(16);
  groups.forEach((group, i) => {
    bytes[2 * i] = group >> 8;
    bytes[2 * i + 1] = group & 0xff;
  });
  return bytes;
}

/** An IP address's bytes (IPv4 dotted quad, or IPv6 in any form, brackets and zone id allowed), or undefined. */
export function ipBytes(text: string): IpBytes | undefined {
  const bare = text.replace(/^\[|\]$/g, '');
  return bare.includes(':') ? ipv6Bytes(bare) : ipv4Bytes(bare);
}

/** An IPv4 address written as a dotted quad. */
export function dottedQuad(bytes: ArrayLike<number>): string {
  return Array.from(bytes).join('.');
}

/** A prefix (`10.0.0.0/8`, `2002::/16`) as its bytes and length. */
export interface Prefix {
  bytes: IpBytes;
  length: number;
}

export function prefix(cidr: string): Prefix {
  const [address, length] = cidr.split('/');
  const bytes = ipBytes(address!);
  if (!bytes || length === undefined || Number(length) > bytes.length * 8) throw new Error(`not a prefix: ${cidr}`);
  return { bytes, length: Number(length) };
}

/** Whether the address (of the prefix's family) lies inside the prefix. */
export function within(address: IpBytes, range: Prefix): boolean {
  if (address.length !== range.bytes.length) return false;
  const whole = range.length >> 3;
  for (let i = 0; i < whole; i++) if (address[i] !== range.bytes[i]) return false;
  const bits = range.length & 7;
  if (bits === 0) return true;
  const mask = (0xff << (8 - bits)) & 0xff;
  return (address[whole]! & mask) === (range.bytes[whole]! & mask);
}

/* The special-purpose blocks. */

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
