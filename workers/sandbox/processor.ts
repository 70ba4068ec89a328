import { Worker, type Job } from 'bullmq';
import type { Logger } from 'pino';
import type { Sql } from '../../db/connect.js';
import { storeTransmissions, type StoredTransmission } from '../../db/queries/signals.js';
import { SANDBOX_ORIGINATOR, simulatedReadings } from '../../src/domain/sandbox.js';
import type { Bus } from '../../src/infra/bus.js';
import type { Redis } from '../../src/infra/redis.js';
import { QUEUES, bullPrefix, bullConnection } from '../queues.js';
import { logWorkerErrors } from '../connection-errors.js';

/**
 * The sandbox simulator: every minute (a BullMQ job scheduler, so one instance does it however many
 * run), the export v1.1 sandbox's sample stations send the availability readings their scenarios give
 * for that minute (src/domain/sandbox.ts). They are stored as live v1.1 availability readings of the
 * `sandbox-simulator` originator, the same statement import stores signals with, then announced on
 * the bus, so every instance's live status and freshness actors take them as any other signal.
 */

export interface SandboxSimulation {
  sql: Sql;
  /** Announces the committed readings to every instance. */
  bus: Pick<Bus, 'publish'>;
}

/** Stores and announces the readings of the minute starting at `at`; resolves to how many were sent. */
export async function simulateMinute(deps: SandboxSimulation, at: Date, receivedAt = new Date()): Promise<number> {
  const rows: StoredTransmission[] = simulatedReadings(at).map((reading) => ({
    originatorId: SANDBOX_ORIGINATOR,
    hrsId: reading.hrsId,
    category: 'availability',
    state: 'live',
    measuredAt: reading.measuredAt,
    receivedAt,
    transmissionId: null,
    payload: reading.payload,
  }));
  await storeTransmissions(deps.sql, rows);
  await deps.bus.publish({
    type: 'signals',
    // Not an instance: every instance, the one running this job included, applies them.
    from: SANDBOX_ORIGINATOR,
    signals: rows.map((row) => ({
      hrs_id: row.hrsId,
      category: row.category,
      originator_id: row.originatorId,
      measured_at: row.measuredAt.toISOString(),
      received_at: row.receivedAt.toISOString(),
      payload: row.payload,
    })),
  });
  return rows.length;
}

export interface SandboxWorkerOptions extends SandboxSimulation {
  redis: Redis;
  redisPrefix: string;
  log: Logger;
}

/** Runs the scheduled simulation jobs; a job that fails (PostgreSQL or Redis away) is retried by BullMQ. */
export function startSandboxWorker(options: SandboxWorkerOptions): Worker {
  const log = options.log.child({ worker: QUEUES.sandbox });
  const worker = new Worker(
    QUEUES.sandbox,
    async (job: Job) => {
      // A retried job simulates the minute it was due for: readings older than that are no use.
      const sent = await simulateMinute(options, new Date(Math.max(job.timestamp, Date.now() - 60_000)));
      log.debug({ job_id: job.id, readings: sent }, 'sandbox readings sent');
      return { readings: sent };
    },
    { connection: bullConnection(options.redis), prefix: bullPrefix(options.redisPrefix), concurrency: 1 },
  );
  worker.on('failed', (job, err) => log.warn({ job_id: job?.id, err }, 'sandbox simulation failed'));
  logWorkerErrors(worker, options.redis, log, 'sandbox worker');
  return worker;
}
