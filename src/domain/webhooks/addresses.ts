import { isIP } from 'node:net';
import type { LookupAddress } from 'node:dns';
import { dottedQuad, ipBytes, within } from './ip.js';
import { COMPILED, embeddedIpv4, GLOBAL_UNICAST, type AddressKind } from './special-ranges.js';

/**
 * Where a webhook may be delivered (server-side request forgery): never to a private, link-local,
 * reserved or otherwise special-purpose address (./special-ranges.ts: every block of IANA's
 * special-purpose registries, multicast, and the IPv6 forms that embed an IPv4 address), and to a
 * loopback address only when WEBHOOK_ALLOW_LOOPBACK says so (tests and development). A name is
 * checked for every address it resolves to when a subscription is made, and again at every
 * connection (`guardedLookup`), so a name that later resolves elsewhere (DNS rebinding) is refused at
 * delivery too. How names are resolved is a port (`Resolver`): src/infra/name-resolver.ts is the
 * platform's, bounded in time and in how many run at once.
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

/** The error a refused address gives a connection (its `code` tells it from network errors). */
export class RefusedAddressError extends Error {
  readonly code = 'EWEBHOOKADDRESS';
}

/**
 * How names are resolved: every address of a name, or an error with the resolver's `code` (ENOTFOUND
 * and ENODATA: the name has no address; anything else, ETIMEOUT say: no answer could be had now).
 */
export type Resolver = (hostname: string, family: 0 | 4 | 6, callback: (err: NodeJS.ErrnoException | null, addresses: LookupAddress[]) => void) => void;

/** Resolver errors that say the name has no address (anything else says no answer could be had). */
const NO_ADDRESS = new Set(['ENOTFOUND', 'ENODATA', 'EBADNAME']);

/**
 * A name that could not be resolved now (no answer within the bound, the resolver failing, too many
 * names being resolved at once): not the URL's fault, so not a refusal of it; try again later.
 */
export class NameUnavailableError extends Error {
  constructor(
    readonly hostname: string,
    readonly failure: NodeJS.ErrnoException,
  ) {
    super(`${hostname} could not be resolved now (${failure.code ?? 'error'}: ${failure.message})`);
  }
}

/**
 * A `lookup` for http(s).request: resolves through `resolver`, then refuses the connection when any
 * address the name resolves to may not be reached.
 */
export function guardedLookup(allowLoopback: boolean, resolver: Resolver) {
  return (
    hostname: string,
    options: { family?: number | string; all?: boolean } | number,
    callback: (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void,
  ): void => {
    const opts = typeof options === 'number' ? { family: options } : options;
    const family = Number(String(opts.family ?? 0).replace(/^IPv/, '')) || 0;
    resolver(hostname, family as 0 | 4 | 6, (err, addresses) => {
      if (err) return callback(err, []);
      const refused = addresses.map((a) => refusalOf(a.address, allowLoopback)).find((reason) => reason !== undefined);
      if (refused) return callback(new RefusedAddressError(`${hostname}: ${refused}`), []);
      if (opts.all) return callback(null, addresses);
      const first = addresses[0]!;
      callback(null, first.address, first.family);
    });
  };
}

/** Every address a host name (or IP literal) stands for; a name that could not be resolved now rejects with NameUnavailableError. */
export function resolveAll(host: string, resolver: Resolver): Promise<string[]> {
  const bare = host.replace(/^\[|\]$/g, '');
  if (isIP(bare)) return Promise.resolve([bare]);
  return new Promise((resolve, reject) => {
    resolver(bare, 0, (err, addresses) => {
      if (!err) return resolve(addresses.map((a) => a.address));
      reject(err.code !== undefined && NO_ADDRESS.has(err.code) ? err : new NameUnavailableError(bare, err));
    });
  });
}

/**
 * Whether a subscription may be made for this URL: HTTPS (plain HTTP only to loopback, with
 * WEBHOOK_ALLOW_LOOPBACK), no credentials in it, and a host whose every address may be reached.
 * Resolves to the reason it may not, or undefined; rejects with NameUnavailableError when its host
 * could not be resolved now.
 */
export async function urlRefusal(text: string, allowLoopback: boolean, resolver: Resolver): Promise<string | undefined> {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return 'must be an absolute URL (https://…)';
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return 'must be an https:// URL';
  if (url.username || url.password) return 'must not hold a user name or password';
  if (url.hash) return 'must not have a fragment (#…)';
  let addresses: string[];
  try {
    addresses = await resolveAll(url.hostname, resolver);
  } catch (err) {
    if (err instanceof NameUnavailableError) throw err;
    return `the host ${url.hostname} does not resolve`;
  }
  for (const address of addresses) {
    const refused = refusalOf(address, allowLoopback);
    if (refused) return isIP(url.hostname.replace(/^\[|\]$/g, '')) ? `refused: ${refused}` : `refused: ${url.hostname} resolves to ${refused}`;
  }
  if (url.protocol === 'http:' && !(allowLoopback && addresses.every((a) => addressKind(a) === 'loopback'))) {
    return 'must be an https:// URL (plain http:// only to loopback addresses, when WEBHOOK_ALLOW_LOOPBACK is true)';
  }
  return undefined;
}
