import { createHash, randomBytes } from 'node:crypto';
import { redisUsable, type Redis } from '../infra/redis.js';

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
 * Everything happens in one Lua script, so check-and-count is atomic across all limits of a call, and
 * the clock is Redis's (`TIME`), so all instances agree. Each set and counter expire one window after
 * the newest member. Memory is one small sorted-set entry per batch of a client's requests still in the
 * window; the work per batch does not grow with the number of requests it counts.
 */

export interface RateLimit {
  /** Requests allowed within the window. */
  limit: number;
  /** Window length in seconds (fractions allowed; whole milliseconds). */
  windowSeconds: number;
  /** Distinguishes the limits of one key in Redis; defaults to the window, e.g. `60s`. */
  name?: string;
  /** How a refusal names the limit, e.g. `at most 300 requests per minute per signal originator`. */
  description?: string;
}

export interface RateLimitState {
  limit: RateLimit;
  /** Requests still allowed now under this limit. */
  remaining: number;
  /** Microseconds until the oldest request counted in this window leaves it (0 when none is counted). */
  resetMicros: number;
}

export interface RateLimitResult {
  allowed: boolean;
  /** The tightest limit: when refused, the one that keeps the request waiting longest. */
  limit: RateLimit;
  remaining: number;
  /**
   * Seconds (rounded up) until the tightest limit's oldest counted request leaves its window, i.e.
   * until `remaining` next grows; 0 when that limit counts nothing. When `remaining` is 0 this is
   * exactly the Retry-After the next request would get.
   */
  resetSeconds: number;
  /** When refused: whole seconds (at least 1, rounded up) until a request would be allowed. */
  retryAfterSeconds?: number;
  /** When refused: the exact wait in milliseconds (fractional). */
  retryAfterMs?: number;
  /** Every limit's state, in the order given. */
  limits: RateLimitState[];
}

/**
 * One script call checks a whole batch of requests, in order. The batch comes as groups: consecutive
 * checks of one key under the same limits (what one busy client sends within one event-loop turn)
 * form one group. KEYS: per group and limit, the sorted set and its counter. ARGV[1]: the number of
 * groups; then per group its member (unique to the group), its number of checks, its number of limits
 * and, per limit, the limit and the window in microseconds.
 *
 * A group's checks are decided one after the other as if sent separately: the first `k` are allowed,
 * k being the smallest number of requests any limit still has room for (at most the group's size),
 * and the rest refused. Returns per group {k, hit, wait_us, then per limit the count before the group,
 * then per limit the microseconds until the oldest counted request leaves the window (-1: none)}, all
 * flattened into one array; `hit` and `wait_us` describe the group's refusals (0 when none).
 *
 * Each key is trimmed, counted and its oldest member read once per batch, however many groups name
 * it; what the batch counts is added at the end (one member per group and key, scored with the batch's
 * instant, so after every member already stored), with one INCRBY and the expiries per key. A member
 * without a `#count` (or a counter lost while its set remained) is recounted from the set.
 */
const SCRIPT = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local counts, stored, oldest, adds, added, windows, counters, order = {}, {}, {}, {}, {}, {}, {}, {}
local function countOf(member)
  return tonumber(string.match(member, '#(%d+)$')) or 1
end
local function load(key, counter, window)
  if counts[key] ~= nil then return end
  local expired = redis.call('ZRANGEBYSCORE', key, '-inf', now - window)
  local n = tonumber(redis.call('GET', counter) or '-1')
  if #expired > 0 then
    redis.call('ZREMRANGEBYSCORE', key, '-inf', now - window)
    if n >= 0 then
      for _, member in ipairs(expired) do n = n - countOf(member) end
    end
  end
  local first = redis.call('ZRANGE', key, 0, 0, 'WITHSCORES')
  if not first[2] then
    n = 0
  elseif n < 0 then
    n = 0
    for _, member in ipairs(redis.call('ZRANGE', key, 0, -1)) do n = n + countOf(member) end
  end
  if #expired > 0 or n == 0 then redis.call('SET', counter, n, 'PX', math.ceil(window / 1000)) end
  counts[key], stored[key] = n, n
  oldest[key] = first[2] and tonumber(first[2]) or false
  adds[key], added[key], windows[key], counters[key] = {}, 0, window, counter
  order[#order + 1] = key
end
-- The score of the member holding the request at 0-based rank r from the oldest.
local function scoreAt(key, r)
  if r >= stored[key] then return now end
  local seen, from = 0, 0
  while true do
    local chunk = redis.call('ZRANGE', key, from, from + 99, 'WITHSCORES')
    if #chunk == 0 then return now end
    for i = 1, #chunk, 2 do
      seen = seen + countOf(chunk[i])
      if seen > r then return tonumber(chunk[i + 1]) end
    end
    from = from + 100
  end
end
local out = {}
local a, k = 2, 0
for _ = 1, tonumber(ARGV[1]) do
  local member = ARGV[a]
  local n = tonumber(ARGV[a + 1])
  local l = tonumber(ARGV[a + 2])
  a = a + 3
  local keys, limits, windowsOf = {}, {}, {}
  local allowed = n
  for i = 1, l do
    local key = KEYS[k + 2 * i - 1]
    keys[i], limits[i], windowsOf[i] = key, tonumber(ARGV[a]), tonumber(ARGV[a + 1])
    a = a + 2
    load(key, KEYS[k + 2 * i], windowsOf[i])
    local room = limits[i] - counts[key]
    if room < allowed then allowed = math.max(room, 0) end
  end
  k = k + 2 * l
  local before = {}
  for i = 1, l do
    local key = keys[i]
    before[i] = counts[key]
    before[l + i] = oldest[key] and (oldest[key] + windowsOf[i] - now) or -1
    if allowed > 0 then
      local list = adds[key]
      list[#list + 1] = member .. '#' .. allowed
      counts[key] = counts[key] + allowed
      added[key] = added[key] + allowed
      if not oldest[key] then oldest[key] = now end
    end
  end
  local hit, wait = 0, 0
  if allowed < n then
    for i = 1, l do
      local key = keys[i]
      if counts[key] >= limits[i] then
        local w = scoreAt(key, counts[key] - limits[i]) + windowsOf[i] - now
        if hit == 0 or w > wait then hit, wait = i, w end
      end
    end
  end
  out[#out + 1] = allowed
  out[#out + 1] = hit
  out[#out + 1] = wait
  for i = 1, 2 * l do out[#out + 1] = before[i] end
end
for _, key in ipairs(order) do
  local members = adds[key]
  if #members > 0 then
    local args = {}
    for _, m in ipairs(members) do
      args[#args + 1] = now
      args[#args + 1] = m
    end
    redis.call('ZADD', key, unpack(args))
    local ttl = math.ceil(windows[key] / 1000)
    redis.call('PEXPIRE', key, ttl)
    redis.call('SET', counters[key], counts[key], 'PX', ttl)
  end
end
return out
`;

const MICROS = 1_000_000;
const SCRIPT_SHA = createHash('sha1').update(SCRIPT).digest('hex');

/** Checks that go at once, whatever the interval since the last call: the round trip is shared enough. */
const FULL_BATCH = 32;

interface Call {
  key: string;
  limits: readonly RateLimit[];
  resolve: (result: RateLimitResult) => void;
  reject: (err: unknown) => void;
}

/**
 * Checks and counts requests against limits kept in Redis. The checks asked for within one turn of
 * the event loop go to Redis together, as one script call; while a call is out, and for at least
 * `minIntervalMs` (1 ms) after the last one went, the checks asked for meanwhile wait and go together
 * in the next (unless {@link FULL_BATCH} checks are waiting already). Under load that is one round trip
 * for many requests instead of one each (each one a write and a read on the socket and a script run in
 * Redis, most of a check's cost), at the price of at most that interval of waiting; a check after a
 * quiet moment goes at once. Each request is still
 * checked and counted atomically and in the order it asked. A check waits at most two timeouts: the
 * call ahead of it, then its own. (All keys of a batch are touched by one script, so the keys must live on one Redis
 * node, as they do with a single server or a primary with replicas.)
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

  /** @param prefix the platform's Redis prefix; keys are `${prefix}:rl:{key}:name`. */
  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
    /** How long a batch may wait for Redis before its checks fail (the guard then lets them through). */
    private readonly timeoutMs = 500,
    /** Least time between two script calls, in milliseconds. */
    private readonly minIntervalMs = 1,
  ) {}

  /**
   * Whether the Redis client is connected and Redis answers (while it is not, commands would wait for
   * a reconnect; while a frozen Redis leaves commands unanswered, each batch would wait its timeout).
   */
  get ready(): boolean {
    return redisUsable(this.redis);
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
        timer = setTimeout(() => reject(new Error(`Redis gave no answer within ${this.timeoutMs} ms`)), this.timeoutMs);
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

  private async run(keys: string[], args: string[]): Promise<unknown> {
    try {
      return await this.redis.evalSha(SCRIPT_SHA, { keys, arguments: args });
    } catch (err) {
      // Not loaded yet (or gone after SCRIPT FLUSH or a failover): EVAL runs and caches it.
      if (!(err instanceof Error && err.message.startsWith('NOSCRIPT'))) throw err;
      return this.redis.eval(SCRIPT, { keys, arguments: args });
    }
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
