import { COMPILED, dottedQuad, embeddedIpv4, GLOBAL_UNICAST, ipBytes, within, type AddressKind } from './special-ranges.js';

/**
 * Where a webhook may be delivered (server-side request forgery): never to a private, link-local,
 * reserved or otherwise special-purpose address (./special-ranges.ts: every block of IANA's
 * special-purpose registries, multicast, and the IPv6 forms that embed an IPv4 address), and to a
 * loopback address only when WEBHOOK_ALLOW_LOOPBACK says so (tests and development). A name is
 * checked for every address it resolves to when a subscription is made, and again at every
 * connection, so a name that later resolves elsewhere (DNS rebinding) is refused at delivery too.
 * These are the rules alone, on addresses given: resolving names and guarding connections is
 * src/infra/name-resolver.ts's.
 */

export type { AddressKind } from './special-ranges.js';

/** What an address is: its kind, the block that makes it so, and the IPv4 address it carries, if any. */
export interface AddressVerdict {
  kind: AddressKind;
  name?: string;
  embedded?: string;
}

const isMapped = (bytes: Uint8Array) => bytes.length === 16 && bytes.subarray(0, 10).every((b) => b === 0) && bytes[10] === 0xff && bytes[11] === 0xff;

/** What an IP address is (IPv4-mapped IPv6 is judged as the IPv4 address it maps); text that is no address is reserved. */
export function addressVerdict(address: string): AddressVerdict {
  const bytes = ipBytes(address);
  if (!bytes) return { kind: 'reserved', name: 'not an IP address' };
  if (isMapped(bytes)) {
    const v4 = dottedQuad(bytes.subarray(12));
    return { ...addressVerdict(v4), embedded: v4 };
  }
  const range = COMPILED.find((r) => within(bytes, r.prefix));
  if (range) return { kind: range.kind, ...(range.name ? { name: range.name } : {}), ...(range.embeds ? { embedded: embeddedIpv4(bytes, range.embeds) } : {}) };
  if (bytes.length === 16 && !within(bytes, GLOBAL_UNICAST)) return { kind: 'reserved', name: 'outside the global unicast space 2000::/3' };
  return { kind: 'public' };
}

/** The kind of an IP address. */
export function addressKind(address: string): AddressKind {
  return addressVerdict(address).kind;
}

/** Why a delivery to this address is refused, or undefined when it may go there. */
export function refusalOf(address: string, allowLoopback: boolean): string | undefined {
  const verdict = addressVerdict(address);
  if (verdict.kind === 'public' || (verdict.kind === 'loopback' && allowLoopback)) return undefined;
  const notes = [verdict.name, verdict.embedded && `it embeds the IPv4 address ${verdict.embedded}`].filter(Boolean);
  return `${address} is a ${verdict.kind} address${notes.length > 0 ? ` (${notes.join('; ')})` : ''}`;
}

/** Whether the text is an IP address (brackets allowed), not a name. */
export function isIpLiteral(host: string): boolean {
  return ipBytes(host) !== undefined;
}

/**
 * What a subscription's URL may not be, before its host is resolved: HTTP(S) only, no credentials,
 * no fragment. The reason, or undefined.
 */
export function urlShapeRefusal(url: URL): string | undefined {
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return 'must be an https:// URL';
  if (url.username || url.password) return 'must not hold a user name or password';
  if (url.hash) return 'must not have a fragment (#…)';
  return undefined;
}

/**
 * What a subscription's URL may not be, given every address its host resolves to: an address that
 * may not be reached, or plain HTTP to anything but loopback (and that only with
 * WEBHOOK_ALLOW_LOOPBACK). The reason, or undefined.
 */
export function addressesRefusal(url: URL, addresses: readonly string[], allowLoopback: boolean): string | undefined {
  for (const address of addresses) {
    const refused = refusalOf(address, allowLoopback);
    if (refused) return isIpLiteral(url.hostname) ? `refused: ${refused}` : `refused: ${url.hostname} resolves to ${refused}`;
  }
  if (url.protocol === 'http:' && !(allowLoopback && addresses.every((a) => addressKind(a) === 'loopback'))) {
    return 'must be an https:// URL (plain http:// only to loopback addresses, when WEBHOOK_ALLOW_LOOPBACK is true)';
  }
  return undefined;
}
