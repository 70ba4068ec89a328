import { Worker, UnrecoverableError, type Job } from 'bullmq';
import type { Logger } from 'pino';
import type { Sql } from '../../db/connect.js';
import { insertCallLogs, type CallLogRow } from '../../db/queries/call-logs.js';
import type { Redis } from '../../src/infra/redis.js';
import { QUEUES, bullPrefix, bullConnection } from '../queues.js';
import { callLogJobSchema } from './job.js';
import { logWorkerErrors } from '../connection-errors.js';

/** The call-log processor: the worker that writes queued call-log jobs to `call_logs`. */

export interface CallLogWorkerOptions {
  redis: Redis;
  redisPrefix: string;
  sql: Sql;
  log: Logger;
  /** Entries per INSERT: a batch is written as soon as it has this many (default 200). */
  batchSize?: number;
  /** The longest an entry waits for its batch to fill before it is written anyway (default 200 ms). */
  maxWaitMs?: number;
}

export interface CallLogWorkerStats {
  /** INSERT statements committed, rows they wrote, entries skipped (originator gone), failed INSERTs. */
  flushes: number;
  rows: number;
  skipped: number;
  failedFlushes: number;
}

export interface CallLogWorker {
  readonly name: string;
  readonly worker: Worker;
  readonly stats: Readonly<CallLogWorkerStats>;
  /** Writes what is gathered, lets active jobs finish, stops. */
  close(): Promise<void>;
}

/** Raised to every job of a batch whose INSERT failed; BullMQ retries them with backoff. */
class CallLogWriteError extends Error {}

interface Waiting {
  row: CallLogRow;
  resolve: () => void;
  reject: (err: Error) => void;
}

/** Rows gathered into batches: `add` resolves once its row is committed, `flush` writes the batch now. */
interface Batches {
  add(row: CallLogRow): Promise<void>;
  flush(): void;
}

/**
 * Writes call-log jobs to PostgreSQL in batches. The worker takes up to `batchSize` jobs at once;
 * each waits for its batch, which is written in one INSERT when full or `maxWaitMs` after its first
 * entry. A job completes only once its row is committed; when the INSERT fails, every job of the
 * batch fails and is retried.
 */
export function startCallLogWorker(options: CallLogWorkerOptions): CallLogWorker {
  const batchSize = options.batchSize ?? 200;
  const log = options.log.child({ worker: QUEUES.callLog });
  const stats: CallLogWorkerStats = { flushes: 0, rows: 0, skipped: 0, failedFlushes: 0 };
  const batches = gatherBatches(options.sql, log, stats, batchSize, options.maxWaitMs ?? 200);

  const worker = new Worker(
    QUEUES.callLog,
    async (job: Job) => {
      const parsed = callLogJobSchema.safeParse(job.data);
      if (!parsed.success) throw new UnrecoverableError(`invalid call log job: ${parsed.error.message}`);
      await batches.add(parsed.data);
    },
    {
      connection: bullConnection(options.redis),
      prefix: bullPrefix(options.redisPrefix),
      // As many jobs in hand as one batch holds: a full batch is written at once.
      concurrency: batchSize,
    },
  );
  worker.on('failed', (job, err) => {
    // A failed batch was logged once, not once per job.
    if (!(err instanceof CallLogWriteError)) log.warn({ job_id: job?.id, err }, 'call log job failed');
  });
  logWorkerErrors(worker, options.redis, log, 'call log worker');

  return { name: worker.name, worker, stats, close: () => closeWorker(worker, batches) };
}

/** Batches of `batchSize` rows, or fewer once the first has waited `maxWaitMs`. */
function gatherBatches(sql: Sql, log: Logger, stats: CallLogWorkerStats, batchSize: number, maxWaitMs: number): Batches {
  let waiting: Waiting[] = [];
  let timer: NodeJS.Timeout | undefined;
  const flush = (): void => {
    clearTimeout(timer);
    timer = undefined;
    if (waiting.length === 0) return;
    const batch = waiting;
    waiting = [];
    writeBatch(sql, log, stats, batch);
  };
  const add = (row: CallLogRow) =>
    new Promise<void>((resolve, reject) => {
      waiting.push({ row, resolve, reject });
      if (waiting.length >= batchSize) flush();
      else timer ??= setTimeout(flush, maxWaitMs);
    });
  return { add, flush };
}

/** One INSERT for the batch; settles each of its jobs with the outcome. */
function writeBatch(sql: Sql, log: Logger, stats: CallLogWorkerStats, batch: Waiting[]): void {
  insertCallLogs(sql, batch.map((w) => w.row)).then(
    (written) => {
      stats.flushes++;
      stats.rows += written;
      stats.skipped += batch.length - written;
      if (written < batch.length) log.info({ skipped: batch.length - written }, 'call log entries of removed originators skipped');
      for (const w of batch) w.resolve();
    },
    (err: unknown) => {
      stats.failedFlushes++;
      log.warn({ err, entries: batch.length }, 'writing call log entries failed; the jobs will be retried');
      const failure = new CallLogWriteError(`writing call log entries failed: ${err instanceof Error ? err.message : String(err)}`);
      for (const w of batch) w.reject(failure);
    },
  );
}

/** Stops taking jobs, writes what is gathered, and waits for the active jobs to finish. */
async function closeWorker(worker: Worker, batches: Batches): Promise<void> {
  // Closed while its blocking connection is still opening, a worker can leave that connection
  // open; let it finish opening first (briefly: an unreachable Redis must not hold up shutdown).
  await Promise.race([worker.waitUntilReady().catch(() => {}), sleep(2000)]);
  const closing = worker.close();
  batches.flush();
  await closing;
  batches.flush();
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}
