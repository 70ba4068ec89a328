import { promises as dns, type LookupAddress } from 'node:dns';
import { isIP } from 'node:net';
import type { Resolver } from '../domain/webhooks/addresses.js';

/**
 * How webhook host names are resolved: by c-ares (`dns.promises.Resolver`: DNS queries on the event
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
