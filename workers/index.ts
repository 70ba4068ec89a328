import type { Logger } from 'pino';
import type { Sql } from '../db/connect.js';
import { unbounded } from '../db/deadline.js';
import type { Config } from '../src/config/config.js';
import type { Redis } from '../src/infra/redis.js';
import { redisFailed } from '../src/infra/redis-outage.js';
import { startCallLogWorker } from './call-log/processor.js';
import { startMailWorker, tokenMailRenderer } from './mail/processor.js';
import { scheduleSweep, sweepNow } from './mail/outbox.js';
import { QUEUES, openQueue } from './queues.js';
import { closerOf } from './connection-errors.js';
import { startSandboxWorker } from './sandbox/processor.js';
import { startHistoryWorker } from './history/processor.js';
import { historyJobs } from './history/jobs.js';
import { startChangeLogWorker } from './change-log/processor.js';

export { scheduleChangeLog } from './change-log/processor.js';
import type { StationLookup } from '../src/domain/stations.js';
import { Bus } from '../src/infra/bus.js';
import { platformIdOf } from '../src/infra/namespace.js';
import { databaseIdentity } from '../db/queries/platform.js';
import { boundedResolver } from '../src/infra/name-resolver.js';
import { startWebhookWorker, WEBHOOK_WORKER, type WebhookTiming } from './webhooks/processor.js';
import { ALERT_WORKER, startAlertWorker, type AlertTiming } from './alerts/processor.js';

export interface Workers {
  names: string[];
  close(): Promise<void>;
}

export interface WorkerPorts {
  /**
   * The registry as it is now, for the status history's summary (opening hours, layouts, options).
   * Without it the history worker does not run here.
   */
  stations?: () => StationLookup | Promise<StationLookup>;
  /** The webhook worker's retry backoff, polling period, give-up time (tests shorten them). */
  webhookTiming?: Partial<WebhookTiming>;
  /** The alerts worker's polling and upkeep periods (tests shorten them). */
  alertTiming?: Partial<AlertTiming>;
}

/** Starts every BullMQ worker this configuration allows; `close` lets active jobs finish. */
export function startWorkers(config: Config, redis: Redis, pool: Sql, log: Logger, ports: WorkerPorts = {}): Workers {
  // Jobs answer no request: their transactions may run longer than one may wait (statements stay bounded by the server).
  const sql = unbounded(pool);
  const workers: { name: string; close(): Promise<void> }[] = [];
  // Publishes only: simulated sandbox readings and token events reach every instance over the bus.
  // The platform id of a configuration not resolved here yet (REDIS_PREFIX set) is read from the database.
  const bus = new Bus(redis, config.redisPrefix, config.platformId ?? databaseIdentity(pool).then(platformIdOf), log);
  if (config.smtpUrl) {
    const queue = openQueue(QUEUES.mail, redis, config.redisPrefix, log);
    const portalUrl = `${config.baseUrl}/portal/`;
    const mail = startMailWorker({
      redis,
      redisPrefix: config.redisPrefix,
      smtpUrl: config.smtpUrl,
      mailFrom: config.mailFrom,
      log,
      claimMs: config.mailClaimMs,
      retryMs: config.mailRetryMs,
      outbox: {
        sql,
        queue,
        render: tokenMailRenderer(portalUrl, config.mailTimeZone, { baseUrl: config.baseUrl, settleMs: config.alertSettleMs }),
        reminders: { offsetsMs: config.tokenReminderOffsetsMs, adminEmails: config.adminEmails },
        // A reminder sent is a token event on the admins' feed.
        sent: (m) => {
          if (m.kind !== 'expiring' || m.token.userId === null) return;
          const event = {
            kind: 'expiring' as const,
            token_id: m.token.id,
            user_id: m.token.userId,
            name: m.token.name,
            hint: m.token.hint,
            at: new Date().toISOString(),
            expires_at: m.expiresAt?.toISOString() ?? null,
            days_before: m.daysBefore ?? undefined,
          };
          bus.publish({ type: 'tokens', events: [event] }).catch((err: unknown) => log.debug({ err }, 'token event not announced'));
        },
      },
    });
    const closeMail = closerOf(mail);
    // The sweep runs where e-mails can be sent: it gives unsent ones their jobs again. Its schedule is
    // made again, and a sweep run at once, whenever Redis comes back: a restarted Redis has forgotten
    // every job and the schedule, a replica promoted by Sentinel lacks what the master took in its last
    // instant, and a token e-mail whose job was lost should not wait for the next period.
    void scheduleSweep(queue, config.mailSweepEveryMs).catch((err: unknown) => redisFailed(redis, log, err, 'scheduling the mail sweep failed'));
    const resume = () => {
      void scheduleSweep(queue, config.mailSweepEveryMs)
        .then(() => sweepNow(queue))
        .catch((err: unknown) => redisFailed(redis, log, err, 'scheduling the mail sweep failed'));
    };
    redis.on('ready', resume);
    workers.push({
      name: mail.name,
      async close() {
        redis.off('ready', resume);
        await closeMail();
        await queue.close();
      },
    });
  } else {
    log.warn('SMTP_URL is not set: mail jobs stay queued until a worker with SMTP_URL runs');
  }
  workers.push(startCallLogWorker({ redis, redisPrefix: config.redisPrefix, sql, log }));
  if (ports.stations) {
    const jobs = historyJobs(sql, ports.stations, config);
    const history = startHistoryWorker({ redis, redisPrefix: config.redisPrefix, log, jobs });
    workers.push({ name: history.name, close: closerOf(history) });
  }
  // The change log's upkeep (events' ends, pruning): needs PostgreSQL only.
  const changeLog = startChangeLogWorker({ redis, redisPrefix: config.redisPrefix, sql, log, settings: config });
  workers.push({ name: changeLog.name, close: closerOf(changeLog) });
  // The webhook worker: its queue is PostgreSQL (Redis only hands a disabled subscription's e-mail to the mail queue).
  if (config.webhookSecretKey) {
    const started = startWebhookWorker({
      redis,
      redisPrefix: config.redisPrefix,
      sql,
      log,
      secretKey: config.webhookSecretKey,
      baseUrl: config.baseUrl,
      timeoutMs: config.webhookTimeoutMs,
      allowLoopback: config.webhookAllowLoopback,
      resolver: boundedResolver({ timeoutMs: config.webhookResolveTimeoutMs }),
      giveUpAfterMs: config.webhookGiveUpAfterMs,
      mailRetryMs: config.mailRetryMs,
      stations: ports.stations,
      timing: ports.webhookTiming,
    });
    started.catch((err: unknown) => log.error({ err }, 'the webhook worker did not start'));
    workers.push({ name: WEBHOOK_WORKER, close: async () => (await started.catch(() => undefined))?.close() });
  }
  // Driver alerts: their transitions settle here (PostgreSQL is the queue); their e-mails go by the mail queue.
  const alerts = startAlertWorker({
    sql,
    redis,
    redisPrefix: config.redisPrefix,
    log,
    settleMs: config.alertSettleMs,
    reminderMs: config.alertReminderMs,
    mailRetryMs: config.mailRetryMs,
    timing: ports.alertTiming,
  });
  alerts.catch((err: unknown) => log.error({ err }, 'the alerts worker did not start'));
  workers.push({ name: ALERT_WORKER, close: async () => (await alerts.catch(() => undefined))?.close() });
  if (config.sandbox) {
    const sandbox = startSandboxWorker({ redis, redisPrefix: config.redisPrefix, sql, bus, log });
    workers.push({ name: sandbox.name, close: closerOf(sandbox) });
  }
  return {
    names: workers.map((w) => w.name),
    async close() {
      await Promise.all(workers.map((w) => w.close()));
    },
  };
}
