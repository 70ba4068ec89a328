import { isIP } from 'node:net';

/**
 * The client's address behind trusted proxies (TRUST_PROXY).
 *
 * The peer of the connection is the client unless it is trusted. A trusted peer is a proxy, and what it
 * says it forwarded is read: `X-Forwarded-For` (as nginx, HAProxy and most load balancers send it), or,
 * when a request has none, the `for=` parameters of `Forwarded` (RFC 7239). The list is walked from the
 * right, the hop nearest the platform first: each trusted address hands over to the one it names, and
 * the first address not trusted is the client. So a client cannot choose its address by sending its
 * own `X-Forwarded-For`: a trusted proxy appends the address it saw, and what the client wrote stays to
 * the left of it, never read; from an untrusted peer neither header is read at all.
 *
 * When the list runs out (every hop trusted) the leftmost is the client. An entry that is no IP address
 * (`unknown`, an obfuscated `_node`, garbage) ends the walk: the hop that named it, trusted, is then the
 * client. Ports (`192.0.2.1:4711`, `"[2001:db8::1]:4711"`) are dropped, IPv4-mapped IPv6 addresses
 * (`::ffff:192.0.2.1`) become IPv4, and IPv6 is lower case, so one client has one spelling.
 *
 * Which proxies are trusted is the function this core is handed: TRUST_PROXY as the settings parse it
 * (src/config/trust-proxy.ts).
 */

/** The port the core is handed: whether the address at `hop` (0: the peer; 1: the last one it forwarded, ...) is a trusted proxy. */
export type TrustProxy = (address: string, hop: number) => boolean;

/** The client's address: the peer's, or, when the peer is a trusted proxy, the one it forwarded (see above). */
export function clientAddress(peer: string, headers: Readonly<Record<string, string | undefined>>, trust: TrustProxy | undefined): string {
  const address = normalize(peer) ?? peer;
  if (!trust || !trust(address, 0)) return address;
  const xff = headers['x-forwarded-for'];
  const forwarded = xff === undefined ? forwardedFor(headers.forwarded) : xff.split(',');
  let client = address;
  for (let i = forwarded.length - 1, hop = 1; i >= 0; i--, hop++) {
    const next = normalize(forwarded[i]!);
    if (next === undefined) break;
    client = next;
    if (!trust(next, hop)) break;
  }
  return client;
}

/** The `for=` values of a `Forwarded` header, first element first (quotes removed, nodes kept as written). */
export function forwardedFor(header: string | undefined): string[] {
  if (header === undefined) return [];
  const found: string[] = [];
  // Elements are separated by commas and pairs by semicolons, outside quoted strings.
  for (const element of splitOutsideQuotes(header, ',')) {
    let value: string | undefined;
    for (const pair of splitOutsideQuotes(element, ';')) {
      const eq = pair.indexOf('=');
      if (eq < 0 || pair.slice(0, eq).trim().toLowerCase() !== 'for') continue;
      value = unquote(pair.slice(eq + 1).trim());
    }
    // An element without `for=` says nothing of its client: as `unknown`, it ends the walk.
    found.push(value ?? 'unknown');
  }
  return found;
}

function splitOutsideQuotes(text: string, separator: string): string[] {
  const parts: string[] = [];
  let start = 0;
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '\\' && quoted) i++;
    else if (c === '"') quoted = !quoted;
    else if (c === separator && !quoted) {
      parts.push(text.slice(start, i));
      start = i + 1;
    }
  }
  parts.push(text.slice(start));
  return parts.filter((part) => part.trim() !== '');
}

function unquote(value: string): string {
  if (value.length >= 2 && value.startsWith('"') && value.endsWith('"')) return value.slice(1, -1).replace(/\\(.)/g, '$1');
  return value;
}

/** An address as one spelling (port and brackets dropped, IPv4-mapped as IPv4, IPv6 lower case); undefined: no IP address. */
export function normalize(text: string): string | undefined {
  let value = text.trim();
  const bracketed = /^\[([^\]]+)\](?::\d+)?$/.exec(value);
  if (bracketed) value = bracketed[1]!;
  else if (/^[\d.]+:\d+$/.test(value)) value = value.slice(0, value.lastIndexOf(':'));
  const version = isIP(value);
  if (version === 4) return value;
  if (version !== 6) return undefined;
  const short = compressIPv6(value.toLowerCase());
  const mapped = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(short);
  if (!mapped) return short;
  const [high, low] = [parseInt(mapped[1]!, 16), parseInt(mapped[2]!, 16)];
  return `${high >> 8}.${high & 255}.${low >> 8}.${low & 255}`;
}

/** An IPv6 address in its shortest form (RFC 5952): leading zeros dropped, the longest run of zero groups as `::`. */
function compressIPv6(address: string): string {
  let text = address;
  // A trailing dotted quad becomes two groups.
  const quad = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (quad) {
    const [a, b, c, d] = quad.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, quad.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.includes('::') ? text.split('::') as [string, string] : [text, undefined];
  const left = head === '' ? [] : head.split(':');
  const right = tail === undefined || tail === '' ? [] : tail.split(':');
  const groups = tail === undefined ? left : [...left, ...Array<string>(8 - left.length - right.length).fill('0'), ...right];
  const short = groups.map((g) => parseInt(g, 16).toString(16));
  let best = -1;
  let bestLength = 1;
  for (let i = 0; i < 8; ) {
    if (short[i] !== '0') {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && short[j] === '0') j++;
    if (j - i > bestLength) {
      best = i;
      bestLength = j - i;
    }
    i = j;
  }
  if (best < 0) return short.join(':');
  return `${short.slice(0, best).join(':')}::${short.slice(best + bestLength).join(':')}`;
}
