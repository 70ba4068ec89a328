import { Worker, type Job, type Queue } from 'bullmq';
import type { Logger } from 'pino';
import type { Sql } from '../../db/connect.js';
import { pruneChangeLog, sweepEndedEvents } from '../../db/queries/change-log.js';
import type { Config } from '../../src/config/config.js';
import type { Redis } from '../../src/infra/redis.js';
import { QUEUES, bullPrefix, bullConnection } from '../queues.js';
import { logWorkerErrors } from '../connection-errors.js';

/**
 * The change log's upkeep (db/migrations/0014_change_log.sql, db/queries/change-log.ts), one job every
 * 30 seconds on the `change-log` queue: the `ended` rows of events whose end passed (so webhooks see an
 * end within 30 seconds; the events delta also sweeps before it reads), then pruning: station and event
 * rows older than DELETED_RETENTION_DAYS, status and option rows older than WEBHOOK_GIVE_UP_AFTER plus
 * an hour (nothing retries a delivery that old). Both are idempotent, so workers on several machines
 * (and a job repeated after a failure) do no harm.
 */

export const CHANGE_LOG_SCHEDULER = 'change-log-upkeep';
export const CHANGE_LOG_EVERY_MS = 30_000;
const HOUR_MS = 3600_000;

const JOB_OPTIONS = { attempts: 3, backoff: { type: 'exponential', delay: 5_000 }, removeOnComplete: { count: 20 }, removeOnFail: { age: 7 * 24 * 3600, count: 200 } };

/** Upserts the scheduler (idempotent: every instance does it at start, one results). */
export async function scheduleChangeLog(queue: Queue): Promise<void> {
  await queue.upsertJobScheduler(CHANGE_LOG_SCHEDULER, { every: CHANGE_LOG_EVERY_MS }, { name: 'upkeep', opts: JOB_OPTIONS });
}

/** The settings the upkeep needs. */
export type ChangeLogSettings = Pick<Config, 'deletedRetentionDays' | 'webhookGiveUpAfterMs'>;

/** One run of the upkeep: the events' ends, then pruning. What it did. */
export async function changeLogUpkeep(sql: Sql, settings: ChangeLogSettings): Promise<{ ended: number; pruned: number; pruned_statuses: number }> {
  const ended = await sweepEndedEvents(sql, settings.deletedRetentionDays);
  const pruned = await pruneChangeLog(sql, settings.deletedRetentionDays, settings.webhookGiveUpAfterMs + HOUR_MS);
  return { ended, pruned: pruned.records, pruned_statuses: pruned.statuses };
}

export interface ChangeLogWorkerOptions {
  redis: Redis;
  redisPrefix: string;
  sql: Sql;
  log: Logger;
  settings: ChangeLogSettings;
}

/** Runs the upkeep as its scheduler fires; a failed run is retried by BullMQ, and the next one does it anyway. */
export function startChangeLogWorker(options: ChangeLogWorkerOptions): Worker {
  const log = options.log.child({ worker: QUEUES.changeLog });
  const worker = new Worker(
    QUEUES.changeLog,
    async (job: Job) => {
      if (job.name !== 'upkeep') throw new Error(`unknown change-log job ${job.name}`);
      const started = performance.now();
      const result = await changeLogUpkeep(options.sql, options.settings);
      log.debug({ job: job.name, ms: Math.round(performance.now() - started), ...result }, 'change log upkeep done');
      return result;
    },
    { connection: bullConnection(options.redis), prefix: bullPrefix(options.redisPrefix), concurrency: 1 },
  );
  worker.on('failed', (job, err) => log.warn({ job: job?.name, err }, 'change log upkeep failed'));
  logWorkerErrors(worker, options.redis, log, 'change-log worker');
  return worker;
}
