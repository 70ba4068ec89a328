import type { Queue } from 'bullmq';

/** The one job scheduler of the sandbox simulator: a job every minute while the sandbox is on. */
export const SANDBOX_SCHEDULER = 'sandbox-minute';
const EVERY_MS = 60_000;

/**
 * Starts (or, when off, removes) the minute's simulation on the `sandbox` queue. Upserting is
 * idempotent: every instance does it at start and one scheduler results.
 */
export async function scheduleSandbox(queue: Queue, on: boolean): Promise<void> {
  if (on) {
    await queue.upsertJobScheduler(SANDBOX_SCHEDULER, { every: EVERY_MS }, {
      name: 'simulate',
      opts: { attempts: 2, backoff: { type: 'fixed', delay: 10_000 }, removeOnComplete: { count: 10 }, removeOnFail: { age: 24 * 3600, count: 100 } },
    });
  } else {
    await queue.removeJobScheduler(SANDBOX_SCHEDULER);
  }
}
