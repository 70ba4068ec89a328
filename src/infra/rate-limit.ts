import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import { RedisDeadlineError, redisUsable, type Redis } from './redis.js';
import { redisFailed, type RedisFailure } from './redis-outage.js';
import { loadScript, runScript } from './scripts.js';
import type { RateLimit, RateLimitResult, RateLimitState } from '../domain/rate-limits.js';

export type { RateLimit, RateLimitResult, RateLimitState };

/**
 * Rate limits shared by every instance through Redis.
 *
 * Algorithm: a sliding-window log. Each (key, limit) pair is one sorted set whose members are the
 * requests counted in the last `windowSeconds`, scored by the microsecond at which Redis counted them;
 * requests counted together (one client's requests of one event-loop turn) share one member that says
 * how many it stands for (`…#count`), and a counter beside the set holds the total. A request is allowed
 * when every limit has counted fewer than `limit` requests in the half-open window (now - window, now];
 * only then is it counted by every limit. So at most `limit` requests are ever counted in any window of
 * that length — no burst at a window edge as with fixed windows, no averaging as with a sliding-window
 * counter — and the wait is exact: the request that must leave a full window first is the one at rank
 * `count - limit` from the oldest, which leaves it at its member's score plus the window. Retry-After is
 * that instant (the latest over every full limit) rounded up to whole seconds, so after waiting it a
 * request is allowed, and one whole second less would not have been enough.
 *
 * Everything happens in one Lua script (./rate-limit.lua), so check-and-count is atomic across all limits of a call, and
 * the clock is Redis's (`TIME`), so all instances agree. Each set and counter expire one window after
 * the newest member. Memory is one small sorted-set entry per batch of a client's requests still in the
 * window; the work per batch does not grow with the number of requests it counts.
 */

/** The check-and-count script (./rate-limit.lua, where its KEYS, ARGV and reply are described). */
const SCRIPT = loadScript('rate-limit.lua');

const MICROS = 1_000_000;

/** Checks that go at once, whatever the interval since the last call: the round trip is shared enough. */
const FULL_BATCH = 32;

/**
 * Least time between two script calls (milliseconds) for requests answered from memory (the exports,
 * the map, the portal): under load a check waits at most this long for the next call.
 */
export const CHECK_INTERVAL_MS = 1;

/**
 * The same for requests whose answer waits for a COMMIT in any case (the imports: a group commit takes
 * milliseconds under load). Their checks gather for longer, so under load one script call stands for
 * about five times as many requests. A call is a write to Redis and a read of its answer, and where
 * waking another process is dear (tens of microseconds for each write on some virtual machines) that
 * is most of what a check costs. A check after a quiet moment still goes at once.
 */
export const STORING_CHECK_INTERVAL_MS = 5;

interface Call {
  key: string;
  limits: readonly RateLimit[];
  resolve: (result: RateLimitResult) => void;
  reject: (err: unknown) => void;
}

/**
 * Checks and counts requests against limits kept in Redis. The checks asked for within one turn of
 * the event loop go to Redis together, as one script call; while a call is out, and for at least
 * `minIntervalMs` after the last one went (CHECK_INTERVAL_MS; STORING_CHECK_INTERVAL_MS for the
 * imports), the checks asked for meanwhile wait and go together in the next (unless {@link FULL_BATCH}
 * checks are waiting already). Under load that is one round trip for many requests instead of one each
 * (each one a write and a read on the socket and a script run in Redis, most of a check's cost), at the
 * price of at most that interval of waiting; a check after a quiet moment goes at once. Each request is
 * still checked and counted atomically and in the order it asked. A check waits at most two timeouts:
 * the call ahead of it, then its own. (All keys of a batch are touched by one script, so the keys must
 * live on one Redis node, as they do with a single server or a primary with replicas.)
 */
export class RateLimiter {
  private readonly memberPrefix = randomBytes(6).toString('base64url');
  private sequence = 0;
  private pending: Call[] = [];
  /** Whether a script call is out (the next waits for its answer). */
  private calling = false;
  private scheduled = false;
  /** When the last script call went (performance.now()). */
  private sentAt = Number.NEGATIVE_INFINITY;
  /**
   * The client as the checks use it: without node-redis's own command timeout, which arms an
   * `AbortSignal.timeout` per command (a timer, and an exception made when it fires seconds after the
   * answer came). Each batch has its deadline here (`timeoutMs`), shorter than node-redis's.
   */
  private readonly checks: Redis;

  /** @param prefix the platform's Redis prefix; keys are `${prefix}:rl:{key}:name`. */
  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
    /** How long a batch may wait for Redis before its checks fail (the guard then lets them through): RATE_LIMIT_TIMEOUT. */
    private readonly timeoutMs = 500,
    /** Least time between two script calls, in milliseconds (CHECK_INTERVAL_MS or STORING_CHECK_INTERVAL_MS). */
    private readonly minIntervalMs = CHECK_INTERVAL_MS,
  ) {
    this.checks = redis.withCommandOptions({ timeout: 0 }) as unknown as Redis;
  }

  /**
   * Whether the Redis client is connected and Redis answers (while it is not, commands would wait for
   * a reconnect; while a frozen Redis leaves commands unanswered, each batch would wait its timeout).
   */
  get ready(): boolean {
    return redisUsable(this.redis);
  }

  /**
   * Logs a check that failed (limits not enforced) under the process's one Redis outage report
   * (src/infra/redis-outage.ts): a debug line during an outage or when only the batch timeout ran out
   * (Redis is then asked whether it is down), a warning for any other failure.
   */
  failed(log: Logger, err: unknown, msg: string): RedisFailure {
    return redisFailed(this.redis, log, err, msg);
  }

  /** The Redis key of one limit of a key (the braces keep all limits of a key in one cluster slot). */
  redisKey(key: string, limit: RateLimit): string {
    return `${this.prefix}:rl:{${key}}:${limit.name ?? `${limit.windowSeconds}s`}`;
  }

  /** The key of the counter beside a limit's set: how many requests the set stands for. */
  counterKey(key: string, limit: RateLimit): string {
    return `${this.redisKey(key, limit)}:n`;
  }

  /** How many requests of `key` the limit counts now (as of the last check; expired ones are dropped at the next). */
  async counted(key: string, limit: RateLimit): Promise<number> {
    return Number((await this.redis.get(this.counterKey(key, limit))) ?? 0);
  }

  /**
   * Checks every limit for `key` and, only if all allow it, counts the request against all of them.
   * Rejects when Redis fails or gives no answer within the timeout.
   */
  hit(key: string, limits: readonly RateLimit[]): Promise<RateLimitResult> {
    if (limits.length === 0) throw new Error('a rate limit check needs at least one limit');
    for (const l of limits) {
      if (!(Number.isInteger(l.limit) && l.limit > 0)) throw new Error(`rate limit must be a positive integer (got ${l.limit})`);
      if (!(l.windowSeconds >= 0.001)) throw new Error(`rate limit window must be at least 1 ms (got ${l.windowSeconds} s)`);
    }
    return new Promise((resolve, reject) => {
      this.pending.push({ key, limits, resolve, reject });
      this.schedule();
    });
  }

  /**
   * Sends what is pending at the end of this turn, unless a call is out (then once it is answered) or
   * the last went less than `minIntervalMs` ago (then when that has passed).
   */
  private schedule(): void {
    if (this.scheduled || this.calling || this.pending.length === 0) return;
    this.scheduled = true;
    const send = () => {
      this.scheduled = false;
      this.calling = true;
      this.sentAt = performance.now();
      void this.flush().finally(() => {
        this.calling = false;
        this.schedule();
      });
    };
    const wait = this.sentAt + this.minIntervalMs - performance.now();
    if (wait > 0 && this.pending.length < FULL_BATCH) setTimeout(send, wait);
    else setImmediate(send);
  }

  private async flush(): Promise<void> {
    const groups = group(this.pending);
    this.pending = [];
    const keys: string[] = [];
    const args = [String(groups.length)];
    for (const g of groups) {
      args.push(`${this.memberPrefix}${(++this.sequence).toString(36)}`, String(g.calls.length), String(g.limits.length));
      for (const l of g.limits) {
        keys.push(this.redisKey(g.key, l), this.counterKey(g.key, l));
        args.push(String(l.limit), String(Math.round(l.windowSeconds * 1000) * 1000));
      }
    }
    let timer: NodeJS.Timeout | undefined;
    try {
      // A command already sent cannot be withdrawn; past the timeout its answer is just ignored.
      const timeout = new Promise<never>((_, reject) => {
        // Timers run before the event loop polls for I/O: after the process itself was held up (a long
        // task, a busy machine) past the deadline, an answer Redis gave in time may be waiting unread on
        // the socket. setImmediate runs after that poll, so such an answer is read first and counts: the
        // deadline measures Redis's lateness, not this process's.
        const expire = () => reject(new RedisDeadlineError(`the rate limits' deadline (${this.timeoutMs} ms) passed before Redis answered`));
        timer = setTimeout(() => setImmediate(expire), this.timeoutMs);
      });
      const reply = (await Promise.race([this.run(keys, args), timeout])) as number[];
      let at = 0;
      for (const g of groups) {
        settle(g, reply, at);
        at += 3 + 2 * g.limits.length;
      }
    } catch (err) {
      for (const g of groups) for (const call of g.calls) call.reject(err);
    } finally {
      clearTimeout(timer);
    }
  }

  private run(keys: string[], args: string[]): Promise<unknown> {
    return runScript(this.checks, SCRIPT, keys, args);
  }
}

interface Group {
  key: string;
  limits: readonly RateLimit[];
  calls: Call[];
}

/**
 * Consecutive checks of a key under the same limits, in the order asked. A key checked under other
 * limits in between starts a new group, so the script still decides every key's checks in order.
 */
function group(calls: readonly Call[]): Group[] {
  const groups: Group[] = [];
  const current = new Map<string, Group>();
  for (const call of calls) {
    const open = current.get(call.key);
    if (open && open.limits === call.limits) {
      open.calls.push(call);
      continue;
    }
    const created = { key: call.key, limits: call.limits, calls: [call] };
    groups.push(created);
    current.set(call.key, created);
  }
  return groups;
}

/** Every check of a group answered from the group's entry at `at` in the script's reply. */
function settle(g: Group, reply: number[], at: number): void {
  const allowed = Number(reply[at]);
  const hit = Number(reply[at + 1]);
  const waitMicros = Number(reply[at + 2]);
  const n = g.limits.length;
  const before = g.limits.map((_, i) => Number(reply[at + 3 + i]));
  const oldest = g.limits.map((_, i) => Number(reply[at + 3 + n + i]));
  g.calls.forEach((call, j) => {
    // Requests counted up to and including this one (a refused one adds nothing).
    const added = Math.min(j + 1, allowed);
    const states: RateLimitState[] = g.limits.map((limit, i) => {
      const windowMicros = Math.round(limit.windowSeconds * 1000) * 1000;
      const reset = oldest[i]! >= 0 ? oldest[i]! : added > 0 ? windowMicros : 0;
      return { limit, remaining: Math.max(0, limit.limit - (before[i]! + added)), resetMicros: Math.max(0, reset) };
    });
    call.resolve(j < allowed ? allowedResult(states) : refusedResult(states, hit, waitMicros));
  });
}

function refusedResult(states: RateLimitState[], hit: number, waitMicros: number): RateLimitResult {
  const state = states[hit - 1]!;
  const retryAfterSeconds = Math.max(1, Math.ceil(waitMicros / MICROS));
  return {
    allowed: false,
    limit: state.limit,
    remaining: 0,
    resetSeconds: retryAfterSeconds,
    retryAfterSeconds,
    retryAfterMs: waitMicros / 1000,
    limits: states,
  };
}

function allowedResult(states: RateLimitState[]): RateLimitResult {
  // The tightest limit: fewest requests left; among equals, the one that frees up last.
  let tightest = states[0]!;
  for (const s of states.slice(1)) {
    if (s.remaining < tightest.remaining || (s.remaining === tightest.remaining && s.resetMicros > tightest.resetMicros)) {
      tightest = s;
    }
  }
  return {
    allowed: true,
    limit: tightest.limit,
    remaining: tightest.remaining,
    resetSeconds: Math.ceil(tightest.resetMicros / MICROS),
    limits: states,
  };
}
