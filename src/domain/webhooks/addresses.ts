import { BlockList, isIP } from 'node:net';
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';

/**
 * Where a webhook may be delivered (server-side request forgery): never to a private, link-local,
 * unspecified, multicast or otherwise reserved address, and to a loopback address only when
 * WEBHOOK_ALLOW_LOOPBACK says so (tests and development). A name is checked for every address it
 * resolves to when a subscription is made, and again at every connection (`guardedLookup`), so a name
 * that later resolves elsewhere (DNS rebinding) is refused at delivery too.
 */

/** What kind of address an IP address is, for the refusal's words. */
export type AddressKind = 'loopback' | 'private' | 'link-local' | 'reserved' | 'public';

const RANGES: [AddressKind, string, number, 'ipv4' | 'ipv6'][] = [
  ['loopback', '127.0.0.0', 8, 'ipv4'],
  ['loopback', '::1', 128, 'ipv6'],
  ['private', '10.0.0.0', 8, 'ipv4'],
  ['private', '172.16.0.0', 12, 'ipv4'],
  ['private', '192.168.0.0', 16, 'ipv4'],
  ['private', '100.64.0.0', 10, 'ipv4'], // carrier-grade NAT
  ['private', 'fc00::', 7, 'ipv6'], // unique local
  ['link-local', '169.254.0.0', 16, 'ipv4'], // cloud metadata services live here
  ['link-local', 'fe80::', 10, 'ipv6'],
  ['reserved', '0.0.0.0', 8, 'ipv4'],
  ['reserved', '192.0.0.0', 24, 'ipv4'],
  ['reserved', '192.0.2.0', 24, 'ipv4'],
  ['reserved', '198.18.0.0', 15, 'ipv4'],
  ['reserved', '198.51.100.0', 24, 'ipv4'],
  ['reserved', '203.0.113.0', 24, 'ipv4'],
  ['reserved', '224.0.0.0', 3, 'ipv4'], // multicast and 240/4
  ['reserved', '::', 128, 'ipv6'],
  ['reserved', 'ff00::', 8, 'ipv6'],
  ['reserved', '2001:db8::', 32, 'ipv6'],
  ['reserved', '64:ff9b::', 96, 'ipv6'], // NAT64 can reach IPv4 private space
];

const LISTS = new Map<AddressKind, BlockList>();
for (const [kind, net, prefix, family] of RANGES) {
  let list = LISTS.get(kind);
  if (!list) LISTS.set(kind, (list = new BlockList()));
  list.addSubnet(net, prefix, family);
}

/** The kind of an IP address (IPv4-mapped IPv6 is judged as the IPv4 address it maps). */
export function addressKind(address: string): AddressKind {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  const ip = mapped ? mapped[1]! : address;
  const family = isIP(ip) === 6 ? 'ipv6' : 'ipv4';
  for (const [kind, list] of LISTS) if (list.check(ip, family)) return kind;
  return 'public';
}

/** Why a delivery to this address is refused, or undefined when it may go there. */
export function refusalOf(address: string, allowLoopback: boolean): string | undefined {
  const kind = addressKind(address);
  if (kind === 'public' || (kind === 'loopback' && allowLoopback)) return undefined;
  return `${address} is a ${kind} address`;
}

/** The error a refused address gives a connection (its `code` tells it from network errors). */
export class RefusedAddressError extends Error {
  readonly code = 'EWEBHOOKADDRESS';
}

/**
 * A `lookup` for http(s).request: resolves like dns.lookup, then refuses the connection when any
 * address the name resolves to may not be reached.
 */
export function guardedLookup(allowLoopback: boolean, resolver: Resolver = systemResolver) {
  return (
    hostname: string,
    options: { family?: number | string; all?: boolean } | number,
    callback: (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void,
  ): void => {
    const opts = typeof options === 'number' ? { family: options } : options;
    resolver(hostname, Number(opts.family ?? 0) as 0 | 4 | 6, (err, addresses) => {
      if (err) return callback(err, []);
      const refused = addresses.map((a) => refusalOf(a.address, allowLoopback)).find((reason) => reason !== undefined);
      if (refused) return callback(new RefusedAddressError(`${hostname}: ${refused}`), []);
      if (opts.all) return callback(null, addresses);
      const first = addresses[0]!;
      callback(null, first.address, first.family);
    });
  };
}

/** How names are resolved: every address of a name (the system's resolver, dns.lookup, unless a test gives its own). */
export type Resolver = (hostname: string, family: 0 | 4 | 6, callback: (err: NodeJS.ErrnoException | null, addresses: LookupAddress[]) => void) => void;

const systemResolver: Resolver = (hostname, family, callback) => dnsLookup(hostname, { family, all: true }, callback);

/** Every address a host name (or IP literal) stands for. */
export function resolveAll(host: string, resolver: Resolver = systemResolver): Promise<string[]> {
  const bare = host.replace(/^\[|\]$/g, '');
  if (isIP(bare)) return Promise.resolve([bare]);
  return new Promise((resolve, reject) => {
    resolver(bare, 0, (err, addresses) => (err ? reject(err) : resolve(addresses.map((a) => a.address))));
  });
}

/**
 * Whether a subscription may be made for this URL: HTTPS (plain HTTP only to loopback, with
 * WEBHOOK_ALLOW_LOOPBACK), no credentials in it, and a host whose every address may be reached.
 * Resolves to the reason it may not, or undefined.
 */
export async function urlRefusal(text: string, allowLoopback: boolean, resolver: Resolver = systemResolver): Promise<string | undefined> {
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
  } catch {
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
