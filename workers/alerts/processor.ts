import type { Queue } from 'bullmq';
import type { Logger } from 'pino';
import type { Sql } from '../../db/connect.js';
import { alertUpkeep, followAlerts, type AlertMailIntent } from '../../db/queries/driver-alerts.js';
import type { Redis } from '../../src/infra/redis.js';
import { scheduleMail } from '../mail/outbox.js';
import { QUEUES, openQueue } from '../queues.js';

/**
 * The alerts worker: follows the change log's `option` rows for the options drivers wait on, settles a
 * change once it has held for ALERT_SETTLE, and writes each alert it tells its e-mail in the outbox
 * (db/queries/driver-alerts.ts followAlerts), which the mail worker sends (exactly once: the outbox's
 * ledger). PostgreSQL is its state and its queue: a pass runs when a change commits (LISTEN
 * `hrs_change_log`, changes within a second sharing one pass, and only while an alert is active), when
 * the next settling change is due (a timer), and every few seconds besides (a
 * notification missed while the connection was down, another worker's pass); workers on several
 * machines take turns under one lock. Its upkeep (unconfirmed and expired alerts deleted, reminders
 * written) runs every minute. Redis only hands the e-mails to the mail queue; the outbox's sweep makes
 * up for it when Redis is away.
 */

export const ALERT_WORKER = 'alerts';

export interface AlertTiming {
  /** Passes without being told (3 s). */
  pollEveryMs: number;
  /**
   * Changes told within this long of each other share one pass (1 s), and while no alert is active a
   * change is not followed at once at all (the poll moves the cursor on): a busy change log, one
   * notification per recorded batch, costs a pass per second at most, not one per batch. A change's
   * settling is timed from when it was recorded, so this delays no e-mail past its settle time.
   */
  changesWithinMs: number;
  /** The upkeep's period (60 s). */
  upkeepEveryMs: number;
  /** The clock settling and expiry are held to (the system's; tests step their own). */
  now?: () => Date;
}

export const DEFAULT_ALERT_TIMING: AlertTiming = { pollEveryMs: 3000, changesWithinMs: 1000, upkeepEveryMs: 60_000 };

export interface AlertWorkerOptions {
  sql: Sql;
  redis: Redis;
  redisPrefix: string;
  log: Logger;
  settleMs: number;
  reminderMs: number;
  mailRetryMs?: number;
  timing?: Partial<AlertTiming>;
}

export interface AlertWorker {
  name: string;
  /** A pass now; resolves when it (and any asked for meanwhile) is done. */
  wake(): Promise<void>;
  /** The upkeep now. */
  upkeep(): Promise<void>;
  close(): Promise<void>;
}

export async function startAlertWorker(options: AlertWorkerOptions): Promise<AlertWorker> {
  const timing = { ...DEFAULT_ALERT_TIMING, ...options.timing };
  const { sql } = options;
  const log = options.log.child({ worker: ALERT_WORKER });
  const now = timing.now ?? (() => new Date());
  const mailQueue: Queue = openQueue(QUEUES.mail, options.redis, options.redisPrefix, log);
  const schedule = async (intents: AlertMailIntent[]) => {
    if (intents.length > 0) await scheduleMail(mailQueue, intents, log, options.redis, options.mailRetryMs);
  };
  let closed = false;
  let running: Promise<void> | undefined;
  let again = false;

  let dueTimer: NodeJS.Timeout | undefined;
  let dueAt = Infinity;
  const wakeAt = (at: number) => {
    if (closed || at >= dueAt) return;
    clearTimeout(dueTimer);
    dueAt = at;
    dueTimer = setTimeout(() => {
      dueAt = Infinity;
      void wake();
    }, Math.max(0, at - now().getTime()));
    dueTimer.unref();
  };

  // Whether the last pass found an active alert (until the first pass: assumed).
  let active = true;
  let changeTimer: NodeJS.Timeout | undefined;
  const changed = () => {
    if (closed || !active || changeTimer !== undefined) return;
    changeTimer = setTimeout(() => {
      changeTimer = undefined;
      void wake();
    }, timing.changesWithinMs);
    changeTimer.unref();
  };

  const pass = async () => {
    for (;;) {
      const result = await followAlerts(sql, options.settleMs, now());
      active = result.active;
      await schedule(result.intents);
      if (result.settled > 0) log.info({ transitions: result.settled, mails: result.intents.length }, 'alert transitions settled');
      if (result.nextDueAt !== undefined) wakeAt(result.nextDueAt);
      // A full page read: more rows wait.
      if (result.read < 5000 || closed) return;
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
          await pass();
        } while (again && !closed);
      } catch (err) {
        log.warn({ err }, 'following the alerts failed: tried again at the next change or poll');
      } finally {
        running = undefined;
      }
    })();
    return running;
  };

  let upkeeping: Promise<void> | undefined;
  const upkeep = (): Promise<void> => {
    upkeeping ??= (async () => {
      try {
        const result = await alertUpkeep(sql, options.reminderMs, now());
        await schedule(result.intents);
        if (result.unconfirmed + result.expired + result.intents.length > 0) {
          log.info({ unconfirmed: result.unconfirmed, expired: result.expired, reminders: result.intents.length }, 'alerts upkeep');
        }
      } catch (err) {
        log.warn({ err }, 'the alerts upkeep failed: tried again at its next run');
      } finally {
        upkeeping = undefined;
      }
    })();
    return upkeeping;
  };

  const listening = await sql.listen('hrs_change_log', changed).catch((err: unknown) => {
    log.warn({ err }, 'LISTEN hrs_change_log failed: alert transitions are found by polling only');
    return undefined;
  });
  const poll = setInterval(() => void wake(), timing.pollEveryMs);
  poll.unref();
  const upkeepTimer = setInterval(() => void upkeep(), timing.upkeepEveryMs);
  upkeepTimer.unref();
  void wake();
  void upkeep();

  return {
    name: ALERT_WORKER,
    wake,
    upkeep,
    async close() {
      closed = true;
      clearInterval(poll);
      clearInterval(upkeepTimer);
      clearTimeout(dueTimer);
      clearTimeout(changeTimer);
      await running;
      await upkeeping;
      await listening?.unlisten().catch(() => {});
      await mailQueue.close();
    },
  };
}
