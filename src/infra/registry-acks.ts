import { RedisDeadlineError, RedisNotConnectedError, redisUsable, withinRedis, type Redis } from './redis.js';

/**
 * Registry changes acknowledged by every instance. A change made through the portal or the admin API
 * is announced with an id; every instance, once it has applied it (its registry reloaded, its token
 * cache emptied), adds its own id to the change's set in Redis. The instance that made the change
 * knows how many instances received the announcement (Redis answers the publish with the number of
 * subscribers that got it) and waits until as many have acknowledged, so its answer means "in effect
 * everywhere". The sets expire by themselves.
 */

const ACK_TTL_SECONDS = 60;
const POLL_MS = 2;

const key = (prefix: string, change: string) => `${prefix}:registry-acks:${change}`;

/** This instance has applied the change. */
export async function acknowledgeChange(redis: Redis, prefix: string, change: string, instanceId: string): Promise<void> {
  await withinRedis(redis, redis.multi().sAdd(key(prefix, change), instanceId).expire(key(prefix, change), ACK_TTL_SECONDS).exec());
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
