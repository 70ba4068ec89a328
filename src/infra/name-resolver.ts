import { promises as dns, type LookupAddress } from 'node:dns';
import { isIP } from 'node:net';
import { addressesRefusal, isIpLiteral, refusalOf, urlShapeRefusal } from '../domain/webhooks/addresses.js';

/**
 * Webhook host names: how they are resolved, and what resolving them means for a subscription's URL
 * (urlRefusal) and for a delivery's connection (guardedLookup), on the rules of
 * src/domain/webhooks/addresses.ts.
 *
 * They are resolved by c-ares (`dns.promises.Resolver`: DNS queries on the event
 * loop, no thread), never by `dns.lookup`, whose getaddrinfo takes one of libuv's four threads for as
 * long as the name's servers stay silent (5 s times 2 attempts by default, then again for each search
 * domain) and so starves everything else that needs them, PostgreSQL's and Redis's own name look-ups
 * included. Each name is bounded:
 *
 * - in time: A and AAAA are asked together and the name fails with ETIMEOUT when no answer came within
 *   `timeoutMs` (WEBHOOK_RESOLVE_TIMEOUT), its waiting for a turn included; its queries are then
 *   cancelled;
 * - in number: at most `concurrency` names are resolved at once per resolver, at most `waiting` more
 *   wait for a turn, and a name past that fails at once with EBUSY.
 *
 * Like every resolver query of c-ares, this asks the servers of /etc/resolv.conf and does not read
 * /etc/hosts (nor any other source of nsswitch.conf): a receiver's name must be in the DNS. `localhost`
 * and the names under `.localhost` are the exception: they stand for 127.0.0.1 and ::1 without any
 * query (RFC 6761), so a test or development receiver (WEBHOOK_ALLOW_LOOPBACK) can be named so.
 */

export interface NameResolverOptions {
  /** How long one name may take, waiting for its turn included (WEBHOOK_RESOLVE_TIMEOUT). */
  timeoutMs: number;
  /** Names resolved at once (16). */
  concurrency?: number;
  /** Names that may wait for a turn (64); one more fails at once with EBUSY. */
  waiting?: number;
  /** The DNS servers to ask (`address:port`), for tests; those of /etc/resolv.conf when absent. */
  servers?: string[];
}

/**
 * How names are resolved: every address of a name, or an error with the resolver's `code` (ENOTFOUND
 * and ENODATA: the name has no address; anything else, ETIMEOUT say: no answer could be had now).
 */
export type Resolver = (hostname: string, family: 0 | 4 | 6, callback: (err: NodeJS.ErrnoException | null, addresses: LookupAddress[]) => void) => void;

const failure = (code: string, message: string, hostname: string): NodeJS.ErrnoException => Object.assign(new Error(message), { code, hostname });

/** `localhost` and its subdomains, with or without the final dot (RFC 6761, 6.3). */
const LOCALHOST = /^(?:.+\.)?localhost\.?$/i;

const LOOPBACK: LookupAddress[] = [
  { address: '127.0.0.1', family: 4 },
  { address: '::1', family: 6 },
];

/** A place taken among {@link Turns}: `ready` when it is this caller's turn; `leave` gives it up, taken or not. */
interface Turn {
  ready: Promise<void>;
  leave(): void;
}

/** Turns: at most `size` at once, at most `waiting` in line. */
class Turns {
  private active = 0;
  private readonly line: { start: () => void }[] = [];

  constructor(
    private readonly size: number,
    private readonly waiting: number,
  ) {}

  /** A place, or false at once when the line is full. */
  take(): Turn | false {
    let granted = this.active < this.size;
    if (granted) {
      this.active++;
      return { ready: Promise.resolve(), leave: () => this.next() };
    }
    if (this.line.length >= this.waiting) return false;
    let start!: () => void;
    const ready = new Promise<void>((resolve) => (start = resolve));
    const entry = { start: () => ((granted = true), start()) };
    this.line.push(entry);
    return {
      ready,
      leave: () => {
        if (granted) return this.next();
        const at = this.line.indexOf(entry);
        if (at >= 0) this.line.splice(at, 1);
      },
    };
  }

  /** A turn ends: the first in line gets it. */
  private next(): void {
    const first = this.line.shift();
    if (first) first.start();
    else this.active--;
  }
}

/** The addresses of one family, [] when the name has none of it; rejects on any other failure. */
async function ask(resolver: dns.Resolver, hostname: string, family: 4 | 6): Promise<LookupAddress[]> {
  try {
    const addresses = family === 4 ? await resolver.resolve4(hostname) : await resolver.resolve6(hostname);
    return addresses.map((address) => ({ address, family }));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENODATA') return [];
    throw err;
  }
}

/** A's and AAAA's answers together: the addresses either gave; with none, the failure that says most. */
function combine(hostname: string, results: PromiseSettledResult<LookupAddress[]>[]): LookupAddress[] {
  const addresses = results.flatMap((r) => (r.status === 'fulfilled' ? r.value : []));
  if (addresses.length > 0) return addresses;
  const errors = results.flatMap((r) => (r.status === 'rejected' ? [r.reason as NodeJS.ErrnoException] : []));
  const telling = errors.find((e) => e.code !== 'ENOTFOUND') ?? errors[0];
  if (telling) throw telling;
  throw failure('ENODATA', `${hostname} has no address`, hostname);
}

/** The platform's resolver of webhook host names (see above). */
export function boundedResolver(options: NameResolverOptions): Resolver {
  const turns = new Turns(options.concurrency ?? 16, options.waiting ?? 64);
  return (hostname, family, callback) => {
    // Answered after this turn, as dns.lookup answers: a connection attaches its listeners first.
    const soon = (err: NodeJS.ErrnoException | null, addresses: LookupAddress[]) => process.nextTick(callback, err, addresses);
    if (isIP(hostname)) return soon(null, [{ address: hostname, family: isIP(hostname) }]);
    if (LOCALHOST.test(hostname)) return soon(null, LOOPBACK.filter((a) => family === 0 || a.family === family));
    const turn = turns.take();
    if (turn === false) return soon(failure('EBUSY', `too many host names are being resolved at once; ${hostname} was not tried`, hostname), []);
    resolveBounded(hostname, family, options, turn).then(
      (addresses) => callback(null, addresses),
      (err: NodeJS.ErrnoException) => callback(err, []),
    );
  };
}

/** One name: its turn, then its queries, all within `timeoutMs` of the call. */
async function resolveBounded(hostname: string, family: 0 | 4 | 6, options: NameResolverOptions, turn: Turn): Promise<LookupAddress[]> {
  const { timeoutMs } = options;
  // c-ares's own timeout is per try and grows with each; the bound below is the one that holds.
  const resolver = new dns.Resolver({ timeout: Math.max(100, Math.ceil(timeoutMs / 2)), tries: 2 });
  if (options.servers) resolver.setServers(options.servers);
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      resolver.cancel();
      reject(failure('ETIMEOUT', `no answer for ${hostname} within ${timeoutMs} ms`, hostname));
    }, timeoutMs);
  });
  try {
    await Promise.race([turn.ready, expired]);
    const families: (4 | 6)[] = family === 0 ? [4, 6] : [family];
    const results = await Promise.race([Promise.allSettled(families.map((f) => ask(resolver, hostname, f))), expired]);
    return combine(hostname, results);
  } finally {
    clearTimeout(timer);
    turn.leave();
  }
}

/** The error a refused address gives a connection (its `code` tells it from network errors). */
export class RefusedAddressError extends Error {
  readonly code = 'EWEBHOOKADDRESS';
}

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
  if (isIpLiteral(bare)) return Promise.resolve([bare]);
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
  const shape = urlShapeRefusal(url);
  if (shape) return shape;
  let addresses: string[];
  try {
    addresses = await resolveAll(url.hostname, resolver);
  } catch (err) {
    if (err instanceof NameUnavailableError) throw err;
    return `the host ${url.hostname} does not resolve`;
  }
  return addressesRefusal(url, addresses, allowLoopback);
}
