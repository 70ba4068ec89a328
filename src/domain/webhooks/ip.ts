/**
 * IP addresses as bytes, for the request-forgery rules (./addresses.ts): an address is judged by its
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
