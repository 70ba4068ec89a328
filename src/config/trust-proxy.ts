import proxyaddr from 'proxy-addr';

/**
 * TRUST_PROXY parsed: which peers are proxies whose forwarded client address is read. The HTTP core
 * (src/http/client-address.ts) is handed the compiled function and walks the forwarded headers with it;
 * the matching is proxy-addr's (addresses, CIDR ranges, the names `loopback`, `linklocal`, `uniquelocal`).
 */

/** Whether the address at `hop` (0: the peer; 1: the last one it forwarded, ...) is a trusted proxy. */
export type TrustedProxy = (address: string, hop: number) => boolean;

/**
 * TRUST_PROXY's entries (addresses, CIDRs such as `10.0.0.0/8` or `fd00::/8`, and `loopback`,
 * `linklocal`, `uniquelocal`) as a trust function; undefined when there are none (nobody is trusted).
 * Throws on an entry that is none of these.
 */
export function compileTrust(entries: readonly string[]): TrustedProxy | undefined {
  if (entries.length === 0) return undefined;
  const trust = proxyaddr.compile([...entries]);
  return (address, hop) => trust(address, hop);
}

/** `TRUST_PROXY`'s text (entries separated by commas or white space) → its entries. */
export function trustEntries(text: string | undefined): string[] {
  return (text ?? '').split(/[\s,]+/).filter((entry) => entry !== '');
}
