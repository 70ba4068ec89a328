import type { Queue } from 'bullmq';
import type { Logger } from 'pino';
import type { Sql } from '../../db/connect.js';
import { unsentMail } from '../../db/queries/token-mail.js';
import { RedisDeadlineError, redisUsable, type Redis } from '../../src/infra/redis.js';
import { redisFailed } from '../../src/infra/redis-outage.js';
import { addJobs } from '../queues.js';
import { OUTBOX_JOB, SWEEP_JOB, outboxJobId, type OutboxJob } from './job.js';

/**
 * The producer side of the token e-mails: after the COMMIT that wrote their intents, each gets a
 * BullMQ job under a deterministic id, delayed until it is due (reminders: 30 and 7 days ahead). The
 * outbox in PostgreSQL is the truth; a job lost (Redis down at the commit, or flushed since) is made
 * again by the sweep, a repeatable job that walks every unsent e-mail.
 */

const SWEEP_SCHEDULER = 'mail-sweep';
const SWEEP_PAGE = 5000;

/** The first retry's delay of an e-mail whose delivery failed for the moment, unless MAIL_RETRY_DELAY says otherwise. */
export const MAIL_RETRY_MS = 5000;

/** A due e-mail's job options: deterministic id, its delay, and the retries with exponential backoff from `retryMs`. */
function jobOf(key: string, dueAt: Date, now: number, retryMs: number) {
  return {
    name: OUTBOX_JOB,
    data: { key } satisfies OutboxJob,
    opts: {
      jobId: outboxJobId(key),
      delay: Math.max(0, dueAt.getTime() - now),
      attempts: 10,
      backoff: { type: 'exponential', delay: retryMs },
      removeOnComplete: { age: 24 * 3600, count: 10_000 },
      removeOnFail: { age: 14 * 24 * 3600 },
    },
  };
}

/** How long scheduling may keep the request that caused it waiting; the sweep makes up for what it misses. */
const SCHEDULE_WAIT_MS = 2000;

/**
 * Gives each intent its job; never throws and never waits long: with Redis away (not ready, or no
 * answer within two seconds) the intents stay in the outbox and the sweep gives them their jobs.
 * `retryMs`: the first retry's delay after a temporary failure (MAIL_RETRY_DELAY). Returns how many were added.
 */
export async function scheduleMail(
  queue: Queue,
  intents: readonly { key: string; dueAt: Date }[],
  log: Logger,
  redis?: Redis,
  retryMs = MAIL_RETRY_MS,
): Promise<number> {
  if (intents.length === 0) return 0;
  if (redis && !redisUsable(redis)) {
    log.debug({ mails: intents.length }, 'token e-mails not scheduled now (Redis not connected): the sweep will schedule them');
    return 0;
  }
  try {
    const now = Date.now();
    await within(addJobs(queue, intents.map((i) => jobOf(i.key, i.dueAt, now, retryMs))), SCHEDULE_WAIT_MS, () => new RedisDeadlineError(`the e-mails' deadline (${SCHEDULE_WAIT_MS} ms) passed before Redis answered`));
    return intents.length;
  } catch (err) {
    // During a Redis outage its one warning says so (src/infra/redis-outage.ts): a debug line.
    const msg = 'token e-mails not scheduled now: the sweep will schedule them';
    if (redis) redisFailed(redis, log, err, msg, { mails: intents.length });
    else log.warn({ err, mails: intents.length }, msg);
    return 0;
  }
}

/** The promise's outcome, or `timedOut()`'s error after `ms` (the promise is left to settle unobserved). */
export async function within<T>(promise: Promise<T>, ms: number, timedOut: () => Error): Promise<T> {
  promise.catch(() => {});
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([promise, new Promise<never>((_, reject) => (timer = setTimeout(() => reject(timedOut()), ms)))]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Makes sure every unsent e-mail of the outbox has its job: adds the ones missing (an existing job,
 * waiting or delayed, is left as it is, since ids are deterministic). Returns how many it looked at
 * and how many it added. The jobs added retry after `retryMs` first, as `scheduleMail`'s do.
 */
export async function sweepMail(sql: Sql, queue: Queue, redis: Redis, retryMs = MAIL_RETRY_MS): Promise<{ unsent: number; added: number }> {
  let after = '0';
  let unsent = 0;
  let added = 0;
  for (;;) {
    const page = await unsentMail(sql, after, SWEEP_PAGE);
    if (page.length === 0) break;
    after = page[page.length - 1]!.id;
    unsent += page.length;
    const ids = page.map((row) => outboxJobId(row.key));
    // Which of these jobs exist: one pipeline for the page.
    const pipeline = redis.multi();
    for (const id of ids) pipeline.exists(queue.toKey(id));
    const exists = (await pipeline.execAsPipeline()) as unknown as number[];
    const missing = page.filter((_, i) => Number(exists[i]) === 0);
    if (missing.length > 0) {
      const now = Date.now();
      await addJobs(queue, missing.map((row) => jobOf(row.key, row.due_at, now, retryMs)));
      added += missing.length;
    }
  }
  return { unsent, added };
}

/** A sweep now, besides the schedule's (Redis is back: jobs added just before it went may be lost). */
export async function sweepNow(queue: Queue): Promise<void> {
  await queue.add(SWEEP_JOB, {}, { attempts: 3, removeOnComplete: { count: 10 }, removeOnFail: { count: 50 } });
}

/** The sweep's schedule: every `everyMs` (an hour by default), and once at once. */
export async function scheduleSweep(queue: Queue, everyMs: number): Promise<void> {
  await queue.upsertJobScheduler(SWEEP_SCHEDULER, { every: everyMs }, { name: SWEEP_JOB, opts: { attempts: 3, removeOnComplete: { count: 10 }, removeOnFail: { count: 50 } } });
}
