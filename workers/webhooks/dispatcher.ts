import type { Queue } from 'bullmq';
import type { Logger } from 'pino';
import type { Sql } from '../../db/connect.js';
import type { Redis } from '../../src/infra/redis.js';
import { redisDown, redisFailed } from '../../src/infra/redis-outage.js';
import { logHead, newChanges, subscriptionsBehind, subscriptionsWanting } from '../../db/queries/webhook-delivery.js';
import { KIND_TOPICS } from '../../src/domain/webhooks/messages.js';
import { deliverJob, deliverJobId } from './jobs.js';

/**
 * The dispatcher: wakes on every `hrs_change_log` notification (LISTEN; one per committing
 * transaction) and every few seconds besides (a notification missed while its connection was down),
 * reads the log rows past the last it has seen, and gives each active subscription that wants one of
 * them a `deliver` job. A subscription whose job is running as it is kicked (the job may have just
 * found nothing more and be ending) is kicked again at the next wake, so no change waits for the sweep.
 */

export interface Dispatcher {
  /** Reads the log now (tests, and Redis coming back). */
  wake(): Promise<void>;
  /** A `deliver` job for every active subscription behind the log (the sweep's work). */
  sweep(): Promise<number>;
  close(): Promise<void>;
}

/** Rows read at a time. */
const PAGE = 5000;

const KINDS_OF_TOPIC = new Map(Object.entries(KIND_TOPICS).map(([kind, topic]) => [topic as string, kind]));

export async function startDispatcher(options: { sql: Sql; queue: Queue; log: Logger; pollEveryMs: number; redis?: Redis }): Promise<Dispatcher> {
  const { sql, queue, log } = options;
  // Rows before now are covered by the sweep the worker runs at its start.
  let seen = await logHead(sql);
  const recheck = new Set<string>();
  let running: Promise<void> | undefined;
  let again = false;
  let closed = false;

  const kick = async (ids: Iterable<string>): Promise<number> => {
    const all = [...new Set([...ids, ...recheck])];
    if (all.length === 0) return 0;
    const states = await Promise.all(all.map((id) => queue.getJobState(deliverJobId(id))));
    all.forEach((id, i) => (states[i] === 'active' ? recheck.add(id) : recheck.delete(id)));
    // One add each, not addBulk: BullMQ's bulk add runs its scripts in a MULTI, which fails for good
    // (NOSCRIPT) against a Redis restarted since the scripts were loaded; a single add loads them again.
    await Promise.all(all.map((id) => {
      const job = deliverJob(id);
      return queue.add(job.name, job.data, job.opts);
    }));
    return all.length;
  };

  const readLog = async () => {
    for (;;) {
      const rows = await newChanges(sql, seen, PAGE);
      if (rows.length === 0) {
        if (recheck.size > 0) await kick([]);
        return;
      }
      const kinds = [...new Set(rows.map((r) => KINDS_OF_TOPIC.get(r.topic)).filter((k) => k !== undefined))];
      const hrsIds = [...new Set(rows.map((r) => r.hrs_id))];
      const head = rows[rows.length - 1]!.seq;
      await kick(await subscriptionsWanting(sql, kinds, hrsIds, head));
      seen = head;
      if (rows.length < PAGE) return;
    }
  };

  const wake = (): Promise<void> => {
    if (closed) return Promise.resolve();
    if (running) {
      again = true;
      return running;
    }
    running = (async () => {
      try {
        do {
          again = false;
          await readLog();
        } while (again && !closed);
      } catch (err) {
        // During a Redis outage (its queue unreachable) the process's one outage warning says so: a debug line at each poll.
        const msg = 'webhook dispatch failed: tried again at the next change or poll';
        if (options.redis && redisDown(options.redis)) redisFailed(options.redis, log, err, msg);
        else log.warn({ err }, msg);
      } finally {
        running = undefined;
      }
    })();
    return running;
  };

  const listening = await sql.listen('hrs_change_log', () => void wake()).catch((err: unknown) => {
    log.warn({ err }, 'LISTEN hrs_change_log failed: webhook changes are found by polling only');
    return undefined;
  });
  const timer = setInterval(() => void wake(), options.pollEveryMs);
  timer.unref();

  return {
    wake,
    sweep: async () => kick(await subscriptionsBehind(sql)),
    async close() {
      closed = true;
      clearInterval(timer);
      await running;
      await listening?.unlisten().catch(() => {});
    },
  };
}
