import type { Queue } from 'bullmq';
import { z } from 'zod';

/**
 * The jobs of the `webhooks` queue. They are kicks: the change log, the cursors and the pending
 * messages live in PostgreSQL, so a job lost (Redis flushed or restarted) is made again by the sweep
 * and loses nothing.
 * - `deliver` {subscriptionId}, job id `deliver-<id>`: delivers the subscription's messages in order
 *   until it has caught up (one job per subscription at a time: its id is deterministic).
 * - `ping` {subscriptionId, messageId}: one `webhook.ping` message, outside the change sequence.
 * - `sweep` (repeatable): a `deliver` job for every active subscription behind the log.
 */

export const DELIVER_JOB = 'deliver';
export const PING_JOB = 'ping';
export const SWEEP_JOB = 'sweep';

export const deliverJobSchema = z.strictObject({ subscriptionId: z.string().min(1).max(100) });
export const pingJobSchema = z.strictObject({ subscriptionId: z.string().min(1).max(100), messageId: z.string().min(1).max(200) });

/**
 * The id of a subscription's `deliver` job: at most one waits or runs at a time. (`deliver-`, not
 * `deliver:`: BullMQ refuses a custom id with one colon, its own separator.)
 */
export function deliverJobId(subscriptionId: string): string {
  return `deliver-${subscriptionId}`;
}

/**
 * A `deliver` job, removed once it ends either way: a kick made after it ended must not find its id
 * still taken.
 */
export function deliverJob(subscriptionId: string) {
  return {
    name: DELIVER_JOB,
    data: { subscriptionId },
    opts: { jobId: deliverJobId(subscriptionId), removeOnComplete: true, removeOnFail: true, attempts: 1 },
  };
}

const SWEEP_SCHEDULER = 'webhooks-sweep';

/** The sweep's schedule: every `everyMs`. Made again whenever Redis comes back (a restart forgets it). */
export async function scheduleWebhookSweep(queue: Queue, everyMs: number): Promise<void> {
  await queue.upsertJobScheduler(SWEEP_SCHEDULER, { every: everyMs }, { name: SWEEP_JOB, opts: { attempts: 1, removeOnComplete: { count: 10 }, removeOnFail: { count: 50 } } });
}
