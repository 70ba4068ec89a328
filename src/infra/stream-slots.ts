import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import { redisUsable, withinRedis, type Redis } from './redis.js';
import { redisFailed } from './redis-outage.js';
import { loadScript, runScript, type RedisScript } from './scripts.js';

/**
 * How many status streams each user holds open, across every instance: one Redis sorted set per user
 * whose members are the open streams, scored by the instant (Redis time, ms) their lease runs out.
 * Opening takes a slot atomically when fewer than the limit are held; closing gives it back; every
 * instance renews its streams' leases every third of the lease, so the slots of an instance that died
 * without closing free themselves within one lease (LEASE_MS).
 */

const LEASE_MS = 60_000;
const RENEW_MS = LEASE_MS / 3;

/**
 * The `Retry-After` of a refused stream: a stream the user closes frees its slot at once, a stream of
 * an instance that died frees it within one lease, so a lease is the longest wait worth advising.
 */
export const STREAM_RETRY_AFTER_SECONDS = LEASE_MS / 1000;

/** Takes a slot when fewer than the limit are held (./stream-slot-take.lua). */
const TAKE = loadScript('stream-slot-take.lua');
/** Renews the leases of the slots held (./stream-slot-renew.lua). */
const RENEW = loadScript('stream-slot-renew.lua');

export interface Slot {
  key: string;
  member: string;
}

export class StreamSlots {
  private readonly held = new Set<Slot>();
  private readonly instance = randomBytes(6).toString('base64url');
  private sequence = 0;
  private timer: NodeJS.Timeout | undefined;
  private closed = false;
  private lastWarning = -Infinity;

  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
    private readonly limit: number,
    private readonly log: Logger,
  ) {}

  /** Starts renewing the leases of the slots held (every RENEW_MS); after `close`, nothing. */
  start(): void {
    if (this.closed || this.timer) return;
    this.timer = setInterval(() => void this.renew(), RENEW_MS).unref();
  }

  /**
   * Takes one of the user's slots: the slot, or false when the user holds `limit` already. When
   * Redis cannot answer, the stream is let through without a slot (as the rate limits fail open).
   */
  async take(user: string): Promise<Slot | false | undefined> {
    const slot = { key: `${this.prefix}:streams:{${user}}`, member: `${this.instance}:${(++this.sequence).toString(36)}` };
    try {
      if (!redisUsable(this.redis)) throw new Error('Redis client not connected or not answering');
      const [taken] = (await withinRedis(this.redis, this.run(TAKE, [slot.key], [slot.member, String(this.limit), String(LEASE_MS)]))) as number[];
      if (taken !== 1) return false;
    } catch (err) {
      this.warn(err);
      return undefined;
    }
    this.held.add(slot);
    return slot;
  }

  /** Gives a slot back (the stream closed). */
  release(slot: Slot | undefined): void {
    if (!slot || !this.held.delete(slot)) return;
    this.redis.zRem(slot.key, slot.member).catch((err: unknown) => this.warn(err));
  }

  /** Stops renewing; the slots still held are given back. */
  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.timer);
    const slots = [...this.held];
    this.held.clear();
    await Promise.all(slots.map((slot) => this.redis.zRem(slot.key, slot.member).catch(() => undefined)));
  }

  private async renew(): Promise<void> {
    if (this.held.size === 0 || !redisUsable(this.redis)) return;
    const slots = [...this.held];
    try {
      for (let i = 0; i < slots.length; i += 500) {
        const chunk = slots.slice(i, i + 500);
        await withinRedis(this.redis, this.run(RENEW, chunk.map((s) => s.key), [String(LEASE_MS), ...chunk.map((s) => s.member)]));
      }
    } catch (err) {
      this.warn(err);
    }
  }

  private run(script: RedisScript, keys: string[], args: string[]): Promise<unknown> {
    return runScript(this.redis, script, keys, args);
  }

  /** A failure other than the process's Redis outage (src/infra/redis-outage.ts, a debug line then) is a warning at most once a minute. */
  private warn(err: unknown): void {
    if (Date.now() - this.lastWarning < 60_000) return;
    if (redisFailed(this.redis, this.log, err, 'stream limits not enforced: Redis unavailable') === 'fault') this.lastWarning = Date.now();
  }
}
