import { Worker, type Job, type Queue } from 'bullmq';
import type { Logger } from 'pino';
import type { Redis } from '../../src/infra/redis.js';
import { QUEUES, bullPrefix, bullConnection } from '../queues.js';
import { maintainPartitions, materialize, rollUpHours, type HistoryJobs } from './jobs.js';
import { logWorkerErrors } from '../connection-errors.js';

/**
 * The `history` queue's worker: runs the status history's jobs (jobs.ts) as their job schedulers fire.
 * One job at a time per worker; across workers, the jobs' advisory lock takes them in turn.
 */

export const HISTORY_SCHEDULERS = {
  materialize: 'history-materialize',
  rollUp: 'history-roll-up',
  partitions: 'history-partitions',
} as const;

const JOB_OPTIONS = { attempts: 3, backoff: { type: 'exponential', delay: 10_000 }, removeOnComplete: { count: 20 }, removeOnFail: { age: 7 * 24 * 3600, count: 200 } };

/**
 * Upserts the three schedulers (idempotent: every instance does it at start, one of each results):
 * the materialiser every `everyMs` (each run rolls up the hours it completed, so an hour is published
 * within HISTORY_LAG + HISTORY_EVERY of its end), the roll-up every ten minutes besides (it rolls up
 * whatever complete hours are materialised and not yet rolled up), the partitions every six hours.
 */
export async function scheduleHistory(queue: Queue, everyMs: number): Promise<void> {
  await queue.upsertJobScheduler(HISTORY_SCHEDULERS.materialize, { every: everyMs }, { name: 'materialize', opts: JOB_OPTIONS });
  await queue.upsertJobScheduler(HISTORY_SCHEDULERS.rollUp, { every: 10 * 60_000 }, { name: 'roll-up', opts: JOB_OPTIONS });
  await queue.upsertJobScheduler(HISTORY_SCHEDULERS.partitions, { every: 6 * 3600_000 }, { name: 'partitions', opts: JOB_OPTIONS });
}

export interface HistoryWorkerOptions {
  redis: Redis;
  redisPrefix: string;
  log: Logger;
  jobs: HistoryJobs;
}

/** Runs the history jobs; each logs what it did, and a failed one is retried by BullMQ. */
export function startHistoryWorker(options: HistoryWorkerOptions): Worker {
  const log = options.log.child({ worker: QUEUES.history });
  const worker = new Worker(
    QUEUES.history,
    async (job: Job) => {
      const started = performance.now();
      let result: object;
      // A materialisation that completes an hour publishes it at once rather than at the next roll-up.
      if (job.name === 'materialize') result = { ...(await materialize(options.jobs)), rolled_up: await rollUpHours(options.jobs) };
      else if (job.name === 'roll-up') result = await rollUpHours(options.jobs);
      else if (job.name === 'partitions') result = await maintainPartitions(options.jobs);
      else throw new Error(`unknown history job ${job.name}`);
      log.debug({ job: job.name, ms: Math.round(performance.now() - started), ...result }, 'history job done');
      return result;
    },
    { connection: bullConnection(options.redis), prefix: bullPrefix(options.redisPrefix), concurrency: 1 },
  );
  worker.on('failed', (job, err) => log.warn({ job: job?.name, err }, 'history job failed'));
  logWorkerErrors(worker, options.redis, log, 'history worker');
  return worker;
}
