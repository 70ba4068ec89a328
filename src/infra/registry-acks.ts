import { RedisDeadlineError, RedisNotConnectedError, redisUsable, withinRedis, type Redis } from './redis.js';

/**
 * Registry changes acknowledged by every instance. A change made through the portal or the admin API
 * is announced with an id; every instance, once it has applied it (its registry reloaded, its token
 * cache emptied), adds its own id to the change's set in Redis. The instance that made the change waits
 * until as many have acknowledged as there are instances of its platform to hear it, so its answer means
 * "in effect everywhere". The sets expire by themselves.
 *
 * How many that is: Redis answers a publish with the number of subscribers that got it, counted over
 * the whole server (pub/sub ignores database numbers), so a platform that shares the namespace's channels
 * (another given the same REDIS_PREFIX) would be counted too and never acknowledge. Every instance that
 * listens for registry changes is therefore also present under its platform (`presence`): a sorted set
 * in the namespace, one member per instance, scored with when its presence lapses unless renewed. The
 * number waited for is the smaller of the two counts: an instance of this platform that stopped without
 * leaving is no longer a subscriber, one of another platform is never present here.
 */

const ACK_TTL_SECONDS = 60;
const POLL_MS = 2;
/** How long an instance counts as present without renewing it, and how often it renews. */
export const PRESENCE_TTL_MS = 30_000;
export const PRESENCE_EVERY_MS = 10_000;

const key = (prefix: string, change: string) => `${prefix}:registry-acks:${change}`;
const presenceKey = (prefix: string, platform: string) => `${prefix}:listeners:${platform}`;

/** This instance has applied the change. */
export async function acknowledgeChange(redis: Redis, prefix: string, change: string, instanceId: string): Promise<void> {
  await withinRedis(redis, redis.multi().sAdd(key(prefix, change), instanceId).expire(key(prefix, change), ACK_TTL_SECONDS).exec());
}

/** This instance listens for the platform's registry changes (renewed every PRESENCE_EVERY_MS); lapsed members are swept. */
export async function markPresent(redis: Redis, prefix: string, platform: string, instanceId: string, now = Date.now()): Promise<void> {
  const k = presenceKey(prefix, platform);
  await withinRedis(
    redis,
    redis
      .multi()
      .zAdd(k, { score: now + PRESENCE_TTL_MS, value: instanceId })
      .zRemRangeByScore(k, '-inf', now)
      .pExpire(k, PRESENCE_TTL_MS)
      .exec(),
  );
}

/** This instance no longer listens (it stops). */
export async function markAbsent(redis: Redis, prefix: string, platform: string, instanceId: string): Promise<void> {
  await withinRedis(redis, redis.zRem(presenceKey(prefix, platform), instanceId));
}

/** How many instances of `platform` are present in the namespace now. */
export async function presentListeners(redis: Redis, prefix: string, platform: string, now = Date.now()): Promise<number> {
  return withinRedis(redis, redis.zCount(presenceKey(prefix, platform), now, '+inf'));
}

/**
 * Waits until `receivers` instances have acknowledged the change, or `timeoutMs` passed; how many had
 * (as Redis last said). Polls Redis: changes are rare and a confirmation is applied within milliseconds.
 * Rejects only when Redis is down (not connected, or a command unanswered for REDIS_TIMEOUT): the
 * timeout running out during a look is the end of the wait, not an outage.
 */
export async function acknowledged(redis: Redis, prefix: string, change: string, receivers: number, timeoutMs: number): Promise<number> {
  const deadline = Date.now() + timeoutMs;
  let count = 0;
  for (;;) {
    // Each look waits no longer than what is left of the timeout (a Redis that stopped answering).
    if (!redisUsable(redis)) throw new RedisNotConnectedError('Redis is not connected or not answering');
    try {
      count = await withinRedis(redis, redis.sCard(key(prefix, change)), Math.max(1, deadline - Date.now()));
    } catch (err) {
      if (err instanceof RedisDeadlineError) return count;
      throw err;
    }
    if (count >= receivers || Date.now() >= deadline) return count;
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}
