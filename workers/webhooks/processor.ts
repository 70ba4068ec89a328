import { Worker, createNodeRedisClient, UnrecoverableError, type Job, type Queue } from 'bullmq';
import { readSubscription, recordAttempt } from '../../db/queries/webhook-delivery.js';
import type { Redis } from '../../src/infra/redis.js';
import { DEFAULT_BACKOFF, pingBody, type Backoff } from '../../src/domain/webhooks/messages.js';
import { closerOf, logWorkerErrors } from '../connection-errors.js';
import { scheduleMail } from '../mail/outbox.js';
import { QUEUES, bullPrefix, openQueue } from '../queues.js';
import { deliver, signingSecrets, type DeliveryContext } from './deliver.js';
import { startDispatcher } from './dispatcher.js';
import { DELIVER_JOB, deliverJobSchema, PING_JOB, pingJobSchema, scheduleWebhookSweep, SWEEP_JOB } from './jobs.js';
import { sendMessage } from './send.js';

/**
 * The webhook worker: the `webhooks` queue's processor (deliver, ping, sweep) and the dispatcher that
 * kicks deliveries as the change log grows. Started by startWorkers when WEBHOOK_SECRET_KEY is set.
 * Nothing here is on the signal path: the log is written by triggers and the servers, and read here.
 */

/** The worker's timing; tests shorten it (these are not settings of the deployment). */
export interface WebhookTiming {
  /** The retries' backoff (5 s doubling up to 10 min, full jitter). */
  backoff: Backoff;
  /** How often the dispatcher reads the log without a notification (3 s). */
  pollEveryMs: number;
  /** How often the sweep runs (1 min). */
  sweepEveryMs: number;
  /** Give up after this long of failures (WEBHOOK_GIVE_UP_AFTER unless given). */
  giveUpAfterMs?: number;
}

export const DEFAULT_WEBHOOK_TIMING: WebhookTiming = { backoff: DEFAULT_BACKOFF, pollEveryMs: 3000, sweepEveryMs: 60_000 };

/** Subscriptions delivered to at once by one worker (each waits on its receiver, never on the CPU). */
const CONCURRENCY = 16;

/** What a delivery needs (./deliver.ts), and the queue's Redis and the timing. */
export interface WebhookWorkerOptions extends Pick<DeliveryContext, 'sql' | 'log' | 'secretKey' | 'baseUrl' | 'timeoutMs' | 'allowLoopback' | 'resolver' | 'giveUpAfterMs' | 'stations'> {
  redis: Redis;
  redisPrefix: string;
  timing?: Partial<WebhookTiming>;
}

export interface WebhookWorker {
  name: string;
  /** Reads the change log now (the dispatcher's wake). */
  wake(): Promise<void>;
  close(): Promise<void>;
}

/** Starts the processor and the dispatcher; the sweep runs at once and then on its schedule. */
export async function startWebhookWorker(options: WebhookWorkerOptions): Promise<WebhookWorker> {
  const timing = { ...DEFAULT_WEBHOOK_TIMING, ...options.timing };
  const log = options.log.child({ worker: QUEUES.webhooks });
  const queue = openQueue(QUEUES.webhooks, options.redis, options.redisPrefix, log);
  const mailQueue: Queue = openQueue(QUEUES.mail, options.redis, options.redisPrefix, log);
  const ctx: DeliveryContext = {
    sql: options.sql,
    log,
    secretKey: options.secretKey,
    baseUrl: options.baseUrl,
    timeoutMs: options.timeoutMs,
    allowLoopback: options.allowLoopback,
    resolver: options.resolver,
    giveUpAfterMs: timing.giveUpAfterMs ?? options.giveUpAfterMs,
    backoff: timing.backoff,
    stations: options.stations,
    scheduleMail: async (intent) => void (await scheduleMail(mailQueue, [intent], log, options.redis)),
  };
  const dispatcher = await startDispatcher({ sql: options.sql, queue, log, pollEveryMs: timing.pollEveryMs, redis: options.redis });

  const ping = async (job: Job) => {
    const parsed = pingJobSchema.safeParse(job.data);
    if (!parsed.success) throw new UnrecoverableError(`invalid ping job: ${parsed.error.message}`);
    const { subscriptionId, messageId } = parsed.data;
    const sub = await readSubscription(options.sql, subscriptionId);
    if (!sub || sub.state === 'unsubscribed') return { outcome: sub ? 'unsubscribed' : 'gone' };
    let secrets: string[] | undefined;
    try {
      secrets = signingSecrets(options.secretKey, sub);
    } catch {
      secrets = undefined;
    }
    const outcome = secrets
      ? await sendMessage(sub.url, messageId, pingBody(sub.id, new Date()), secrets, { timeoutMs: options.timeoutMs, allowLoopback: options.allowLoopback, resolver: options.resolver })
      : { statusCode: null, error: 'the signing secret does not open with WEBHOOK_SECRET_KEY', latencyMs: null };
    await recordAttempt(options.sql, { subscriptionId, messageId, kind: 'ping', changes: 0, attempt: job.attemptsMade + 1, ...outcome });
    return { outcome: outcome.error ?? 'delivered', status_code: outcome.statusCode };
  };

  const worker = new Worker(
    QUEUES.webhooks,
    async (job: Job, token?: string) => {
      if (job.name === DELIVER_JOB) {
        const parsed = deliverJobSchema.safeParse(job.data);
        if (!parsed.success) throw new UnrecoverableError(`invalid deliver job: ${parsed.error.message}`);
        return deliver(ctx, job, token, parsed.data.subscriptionId);
      }
      if (job.name === PING_JOB) return ping(job);
      if (job.name === SWEEP_JOB) {
        const kicked = await dispatcher.sweep();
        if (kicked > 0) log.debug({ subscriptions: kicked }, 'webhook sweep: deliveries kicked');
        return { kicked };
      }
      throw new UnrecoverableError(`unknown webhooks job ${job.name}`);
    },
    { connection: createNodeRedisClient(options.redis), prefix: bullPrefix(options.redisPrefix), concurrency: CONCURRENCY },
  );
  worker.on('failed', (job, err) => log.warn({ job_id: job?.id, err }, 'webhooks job failed'));
  logWorkerErrors(worker, options.redis, log, 'webhooks worker');
  const closeWorker = closerOf(worker);

  // The sweep's schedule, made again whenever Redis comes back (a restarted Redis has forgotten it and
  // every job), and a sweep at once then: nothing waits for the next period.
  const resume = () => {
    void scheduleWebhookSweep(queue, timing.sweepEveryMs).catch((err: unknown) => log.warn({ err }, 'scheduling the webhook sweep failed'));
    void dispatcher.sweep().catch((err: unknown) => log.debug({ err }, 'webhook sweep failed: the scheduled one makes up for it'));
  };
  options.redis.on('ready', resume);
  resume();

  return {
    name: worker.name,
    wake: () => dispatcher.wake(),
    async close() {
      options.redis.off('ready', resume);
      await dispatcher.close();
      await closeWorker();
      await queue.close();
      await mailQueue.close();
    },
  };
}
