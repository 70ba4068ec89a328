import type { Queue } from 'bullmq';
import { claimDue } from '../../db/queries/webhook-delivery.js';
import type { Redis } from '../../src/infra/redis.js';
import { DEFAULT_BACKOFF, type Backoff } from '../../src/domain/webhooks/messages.js';
import { scheduleMail } from '../mail/outbox.js';
import { QUEUES, openQueue } from '../queues.js';
import { DeliveredRecorder } from './delivered.js';
import { LogRowCache } from './row-cache.js';
import { CLAIM_PAGE, turn, type DeliveryContext } from './deliver.js';

/**
 * The webhook worker. PostgreSQL is its queue: it claims due subscriptions (FOR UPDATE SKIP LOCKED, so
 * several workers share them and each subscription is delivered by one at a time) and gives each a
 * turn (./deliver.ts). It looks for due ones when a change commits (LISTEN `hrs_change_log`), when the
 * portal asks for a ping or enables a subscription again (LISTEN `hrs_webhooks`), when a retry of its
 * own falls due, when a turn ends (the subscription may want more, a slot is free), and every few
 * seconds besides: the safety net for a notification missed while its connection was down, another
 * worker's retries, and a claim a dead worker left to lapse. Started by startWorkers when
 * WEBHOOK_SECRET_KEY is set. Redis is used only to give a disabled subscription's e-mail its job in the
 * mail queue (the outbox's sweep makes up for it when Redis is away).
 */

/** The worker's name (`hrs worker`, its log lines); it has no BullMQ queue. */
export const WEBHOOK_WORKER = 'webhooks';

/** The worker's timing; tests shorten it (these are not settings of the deployment). */
export interface WebhookTiming {
  /** The retries' backoff (5 s doubling up to 10 min, full jitter). */
  backoff: Backoff;
  /** How often the worker looks for due subscriptions without being told (3 s). */
  pollEveryMs: number;
  /** Give up after this long of failures (WEBHOOK_GIVE_UP_AFTER unless given). */
  giveUpAfterMs?: number;
}

export const DEFAULT_WEBHOOK_TIMING: WebhookTiming = { backoff: DEFAULT_BACKOFF, pollEveryMs: 3000 };

/** Subscriptions delivered to at once by one worker (each waits on its receiver, never on the CPU). */
const CONCURRENCY = 64;
/**
 * A claim's statement looks at every due subscription whatever it takes, so claims take several at
 * once: when a turn ends the worker claims again at once only when this many slots are free, and
 * otherwise after GATHER_MS, by when more turns have ended (one claim per ended turn cost PostgreSQL
 * about 1.8 ms per message with 100 subscriptions, most of its share of delivering).
 */
const CLAIM_AT_ONCE = 16;
const GATHER_MS = 5;

/** What a delivery needs (./deliver.ts), Redis for the mail queue, and the timing. */
export interface WebhookWorkerOptions extends Pick<DeliveryContext, 'sql' | 'log' | 'secretKey' | 'baseUrl' | 'timeoutMs' | 'allowLoopback' | 'resolver' | 'giveUpAfterMs' | 'stations'> {
  redis: Redis;
  redisPrefix: string;
  timing?: Partial<WebhookTiming>;
  /** The first retry's delay of a disabled subscription's e-mail after a temporary failure (MAIL_RETRY_DELAY). */
  mailRetryMs?: number;
}

export interface WebhookWorker {
  name: string;
  /** Looks for due subscriptions now; resolves when no more are found (those found may still be in their turns). */
  wake(): Promise<void>;
  /** Stops claiming and waits for the turns under way. */
  close(): Promise<void>;
}

export async function startWebhookWorker(options: WebhookWorkerOptions): Promise<WebhookWorker> {
  const timing = { ...DEFAULT_WEBHOOK_TIMING, ...options.timing };
  const { sql } = options;
  const log = options.log.child({ worker: WEBHOOK_WORKER });
  const mailQueue: Queue = openQueue(QUEUES.mail, options.redis, options.redisPrefix, log);
  const ctx: DeliveryContext = {
    sql,
    log,
    secretKey: options.secretKey,
    baseUrl: options.baseUrl,
    timeoutMs: options.timeoutMs,
    allowLoopback: options.allowLoopback,
    resolver: options.resolver,
    giveUpAfterMs: timing.giveUpAfterMs ?? options.giveUpAfterMs,
    backoff: timing.backoff,
    stations: options.stations,
    scheduleMail: async (intent) => void (await scheduleMail(mailQueue, [intent], log, options.redis, options.mailRetryMs)),
    delivered: new DeliveredRecorder(sql, CONCURRENCY),
  };
  // A claim outlasts any attempt (its deadline) and the writes around it; a dead worker's lapses after it.
  const leaseMs = options.timeoutMs + 30_000;
  const turns = new Set<Promise<void>>();
  const changeRows = new LogRowCache(sql, options.baseUrl);
  let claiming: Promise<void> | undefined;
  let again = false;
  let closed = false;

  // The earliest retry of this worker's own, and its timer.
  let retryTimer: NodeJS.Timeout | undefined;
  let retryAt = Infinity;
  const wakeAt = (at: number) => {
    if (closed || at >= retryAt) return;
    clearTimeout(retryTimer);
    retryAt = at;
    retryTimer = setTimeout(() => {
      retryAt = Infinity;
      void wake();
    }, Math.max(0, at - Date.now()));
    retryTimer.unref();
  };

  let gathering: NodeJS.Timeout | undefined;
  const turnEnded = () => {
    if (CONCURRENCY - turns.size >= CLAIM_AT_ONCE) void wake();
    else if (!gathering) {
      gathering = setTimeout(() => {
        gathering = undefined;
        void wake();
      }, GATHER_MS);
      gathering.unref();
    }
  };

  const run = (claimed: Parameters<typeof turn>[1]) => {
    const running: Promise<void> = turn(ctx, claimed)
      .then((result) => {
        if (result.retryAt !== undefined) wakeAt(result.retryAt);
      })
      .catch((err: unknown) => log.warn({ err, subscription: claimed.id }, 'webhook delivery failed: tried again when its claim lapses'))
      .finally(() => {
        turns.delete(running);
        turnEnded();
      });
    turns.add(running);
  };

  /** Claims as many due subscriptions as there are free slots, until fewer are found. */
  const claim = async () => {
    for (;;) {
      const free = CONCURRENCY - turns.size;
      if (free <= 0 || closed) return;
      const claimed = await changeRows.attach(await claimDue(sql, free, leaseMs, CLAIM_PAGE));
      for (const sub of claimed) run(sub);
      if (claimed.length < free) return;
    }
  };

  const wake = (): Promise<void> => {
    if (closed) return Promise.resolve();
    if (claiming) {
      again = true;
      return claiming;
    }
    claiming = (async () => {
      try {
        do {
          again = false;
          await claim();
        } while (again && !closed);
      } catch (err) {
        log.warn({ err }, 'looking for due webhook deliveries failed: tried again at the next change or poll');
      } finally {
        claiming = undefined;
      }
    })();
    return claiming;
  };

  const listen = (channel: string) =>
    sql.listen(channel, () => void wake()).catch((err: unknown) => {
      log.warn({ err, channel }, `LISTEN ${channel} failed: due webhook deliveries are found by polling only`);
      return undefined;
    });
  const listening = await Promise.all([listen('hrs_change_log'), listen('hrs_webhooks')]);
  const poll = setInterval(() => void wake(), timing.pollEveryMs);
  poll.unref();
  void wake();

  return {
    name: WEBHOOK_WORKER,
    wake,
    async close() {
      closed = true;
      clearInterval(poll);
      clearTimeout(gathering);
      clearTimeout(retryTimer);
      await claiming;
      await Promise.all(turns);
      await Promise.all(listening.map((l) => l?.unlisten().catch(() => {})));
      await mailQueue.close();
    },
  };
}
