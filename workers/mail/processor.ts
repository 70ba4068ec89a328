import { createRequire } from 'node:module';
import { DelayedError, Worker, UnrecoverableError, type Job, type Queue } from 'bullmq';
import type { Logger } from 'pino';
import type { Sql } from '../../db/connect.js';
import { claimMail, failMail, markMailSent, releaseMail, type ClaimedMail } from '../../db/queries/token-mail.js';
import { claimWebhookMail, isWebhookMailKey, type ClaimedWebhookMail } from '../../db/queries/webhook-mail.js';
import { claimAlertMail, isAlertMailKey, type ClaimedAlertMail } from '../../db/queries/alert-mail.js';
import { alertLinks, renderAlertExpiring, renderAlertTransition, unsubscribeHeaders } from '../../src/domain/alerts/mail.js';
import { renderWebhookDisabledMail } from '../../src/domain/webhook-mail.js';
import type { Redis } from '../../src/infra/redis.js';
import { QUEUES, bullPrefix, bullConnection } from '../queues.js';
import { renderCredentialReminder, renderTokenMail } from '../../src/domain/token-mail.js';
import { daysLeftAt } from '../../src/domain/token-reminders.js';
import { writeCredentialReminders } from '../../src/registry/credential-reminders.js';
import { mailJobSchema, OUTBOX_JOB, outboxJobSchema, outboxMessageId, SWEEP_JOB } from './job.js';
import { sweepMail } from './outbox.js';
import { logWorkerErrors } from '../connection-errors.js';

const require = createRequire(import.meta.url);

/**
 * The mail processor: the worker that delivers mail jobs over SMTP.
 * - A plain job carries its message (`to`, `subject`, `text`, `html`): sign-in and reveal links,
 *   whose secrets are never written to PostgreSQL.
 * - An `outbox` job names a token e-mail of the outbox by its key: claimed in the ledger, rendered
 *   from the token and its owner as they are now, sent with a deterministic Message-ID, marked sent.
 *   A reminder for a revoked token or an expiry since changed is cancelled, not sent; one sent is not
 *   sent again; one claimed by another worker (sending it, or dead) is tried again when the claim lapses.
 * - The `sweep` job gives every unsent outbox e-mail its job again.
 * A temporary SMTP failure (4xx, a connection error) is retried with exponential backoff; a permanent
 * one (5xx), or the last attempt failing, marks the e-mail failed, listed for admins.
 */

/** How long a claim holds by default: longer than any SMTP conversation, short enough that a dead worker's e-mail goes out soon after. */
const CLAIM_MS = 2 * 60_000;
/** BullMQ's own lock duration and stalled-job check interval, which a shorter claim shortens. */
const BULLMQ_LOCK_MS = 30_000;

/** An e-mail of the outbox, claimed: about a token, a webhook subscription, or a driver's alert. */
export type OutboxMail = ClaimedMail | ClaimedWebhookMail | ClaimedAlertMail;

export interface RenderedMail {
  subject: string;
  text: string;
  html: string;
  /** Headers of its own (a driver alert's `List-Unsubscribe`). */
  headers?: Record<string, string>;
}

export interface MailWorkerOptions {
  redis: Redis;
  redisPrefix: string;
  smtpUrl: string;
  mailFrom: string;
  log: Logger;
  /** The outbox (token e-mails) and what renders them; without it only plain jobs are sent. */
  outbox?: {
    sql: Sql;
    queue: Queue;
    render: (mail: OutboxMail) => RenderedMail;
    sent?: (mail: OutboxMail) => void;
    /**
     * The expiry reminders of import and legacy export tokens, found by each sweep
     * (src/registry/credential-reminders.ts): the schedule (TOKEN_REMINDERS) and the ADMIN_EMAILS
     * addresses. Without it the sweep finds none.
     */
    reminders?: { offsetsMs: readonly [number, number]; adminEmails: readonly string[] };
  };
  /**
   * How long a claim on a token e-mail holds (MAIL_CLAIM_SECONDS; 2 minutes by default). The jobs'
   * BullMQ lock and stalled check follow it when it is shorter than BullMQ's 30 s, so the job of a
   * worker that died comes back to another about when its claim lapses.
   */
  claimMs?: number;
  /** The first retry's delay of the jobs the sweep gives token e-mails (MAIL_RETRY_DELAY; 5 s by default). */
  retryMs?: number;
  /** How many jobs this worker processes at once (each its own SMTP conversation); MAIL_WORKER_CONCURRENCY unless given. */
  concurrency?: number;
}

/** Jobs processed at once unless `MailWorkerOptions.concurrency` says otherwise: SMTP conversations are waiting, not computing, so sixteen keep one core busy. */
export const MAIL_WORKER_CONCURRENCY = 16;

/**
 * SMTP_URL with `pool=true` unless it says otherwise: the worker keeps a few SMTP connections open and
 * sends one message after another on them, rather than a connection (and its greeting) per e-mail.
 */
export function pooled(smtpUrl: string): string {
  const url = new URL(smtpUrl);
  if (!url.searchParams.has('pool')) url.searchParams.set('pool', 'true');
  return url.toString();
}

const isAlertMail = (m: OutboxMail): m is ClaimedAlertMail => m.kind === 'alert_transition' || m.kind === 'alert_expiring';

/**
 * How outbox e-mails are rendered: the token (or webhook) e-mail of its kind, linking to the portal,
 * times in the zone; a driver alert's in the driver's language, times in the station's zone, linking to
 * the map and the alert's pages under `alerts.baseUrl`, with RFC 8058's one-click unsubscribe headers.
 */
export function tokenMailRenderer(portalUrl: string, timeZone: string, alerts?: { baseUrl: string; settleMs: number }): (mail: OutboxMail) => RenderedMail {
  return (m) => {
    if (isAlertMail(m)) {
      const baseUrl = alerts?.baseUrl ?? new URL(portalUrl).origin;
      const links = alertLinks(baseUrl, m.station.hrsId, m.manageToken);
      const input = { email: m.recipient, language: m.language, station: m.station, fuellingOption: m.fuellingOption, wants: m.wants };
      const rendered =
        m.kind === 'alert_transition' && m.side !== null && m.since !== null
          ? renderAlertTransition({ ...input, side: m.side, since: m.since, settleMs: alerts?.settleMs ?? 0, expiresAt: m.expiresAt, links })
          : renderAlertExpiring({ ...input, expiresAt: m.expiresAt, links });
      return { ...rendered, headers: unsubscribeHeaders(links) };
    }
    if (m.kind === 'webhook_disabled') return renderWebhookDisabledMail({ recipient: m.owner, subscription: m.subscription, portalUrl, timeZone });
    // A reminder sent more than a day late (the platform was down) names the days really left.
    const daysLeft =
      m.daysBefore === null ? undefined : m.expiresAt ? daysLeftAt({ daysBefore: m.daysBefore, dueAt: m.dueAt, expiresAt: m.expiresAt }, m.claimedAt) : m.daysBefore;
    if (m.kind === 'expiring' && m.recipientAs !== null && m.expiresAt && daysLeft !== undefined) {
      return renderCredentialReminder({
        recipient: m.owner,
        as: m.recipientAs,
        token: { ...m.token, expiresAt: m.expiresAt },
        daysLeft,
        portalUrl,
        timeZone,
      });
    }
    return renderTokenMail({
      kind: m.kind,
      recipient: m.owner,
      token: { name: m.token.name, hint: m.token.hint ?? '????', expiresAt: m.expiresAt, createdAt: m.token.createdAt },
      revokedBy: m.revokedBy ?? undefined,
      daysLeft,
      portalUrl,
      timeZone,
    });
  };
}

/** Whether an SMTP failure is final: the server refused with a 5xx. */
function permanent(err: unknown): boolean {
  const code = (err as { responseCode?: unknown }).responseCode;
  return typeof code === 'number' && code >= 500 && code < 600;
}

const describe = (err: unknown) => {
  const e = err as { responseCode?: number; response?: string; message?: string };
  return e.response ? `${e.responseCode ?? ''} ${e.response}`.trim() : (e.message ?? String(err));
};

/** Sends queued mails over SMTP; failed deliveries are retried with backoff by BullMQ. */
export function startMailWorker(options: MailWorkerOptions): Worker {
  // Loaded here, by a process that sends mail, not by every one that imports the workers (60 ms at its start).
  const nodemailer = require('nodemailer') as typeof import('nodemailer');
  const transport = nodemailer.createTransport(pooled(options.smtpUrl));
  const log = options.log.child({ worker: QUEUES.mail });
  const outbox = options.outbox;
  const claimMs = options.claimMs ?? CLAIM_MS;
  const lockMs = Math.min(BULLMQ_LOCK_MS, claimMs);

  const sendOutbox = async (job: Job, token: string | undefined) => {
    if (!outbox) throw new UnrecoverableError('outbox mail job, but this worker has no outbox');
    const parsed = outboxJobSchema.safeParse(job.data);
    if (!parsed.success) throw new UnrecoverableError(`invalid outbox job: ${parsed.error.message}`);
    const { key } = parsed.data;
    const claim = isWebhookMailKey(key)
      ? await claimWebhookMail(outbox.sql, key, claimMs)
      : isAlertMailKey(key)
        ? await claimAlertMail(outbox.sql, key, claimMs)
        : await claimMail(outbox.sql, key, claimMs, { adminEmails: outbox.reminders?.adminEmails });
    if (claim.outcome === 'skip' && claim.reason === 'claimed') {
      // Another worker holds the claim. Alive, it sends the e-mail; dead (its job came back as stalled
      // before its claim lapsed), nobody would: ending the job here would leave the e-mail unsent, its
      // completed job keeping the sweep from making another. So the job waits until the claim has
      // lapsed (a second more for the clocks), without using an attempt, and finds it sent or takes it.
      log.debug({ key, lapses_in_ms: claim.lapsesInMs }, 'token e-mail claimed by another worker: tried again when the claim lapses');
      await job.moveToDelayed(Date.now() + claim.lapsesInMs + 1000, token);
      throw new DelayedError();
    }
    if (claim.outcome !== 'claimed') {
      log.debug({ key, outcome: claim.outcome, reason: claim.outcome === 'skip' ? claim.reason : undefined }, 'token e-mail not sent');
      return { key, outcome: claim.outcome === 'skip' ? claim.reason : 'cancelled' };
    }
    const rendered = outbox.render(claim.mail);
    const messageId = outboxMessageId(key, options.mailFrom);
    try {
      const info = await transport.sendMail({ from: options.mailFrom, to: claim.mail.recipient, messageId, ...rendered });
      await markMailSent(outbox.sql, key, info.messageId ?? messageId);
      outbox.sent?.(claim.mail);
      log.info({ job_id: job.id, key, message_id: info.messageId }, 'token e-mail sent');
      return { key, outcome: 'sent', messageId: info.messageId };
    } catch (err) {
      const last = job.attemptsMade + 1 >= (job.opts.attempts ?? 1);
      if (permanent(err) || last) {
        await failMail(outbox.sql, key, describe(err));
        throw new UnrecoverableError(`token e-mail ${key} failed for good: ${describe(err)}`);
      }
      await releaseMail(outbox.sql, key, describe(err));
      throw err;
    }
  };

  const worker = new Worker(
    QUEUES.mail,
    async (job: Job, token?: string) => {
      if (job.name === OUTBOX_JOB) return sendOutbox(job, token);
      if (job.name === SWEEP_JOB) {
        if (!outbox) return { unsent: 0, added: 0 };
        // The reminders of import and legacy export tokens now due are written first: the sweep gives them their jobs.
        const reminded = outbox.reminders
          ? (await writeCredentialReminders(outbox.sql, { ...outbox.reminders, log })).written.length
          : 0;
        const swept = await sweepMail(outbox.sql, outbox.queue, options.redis, options.retryMs);
        if (reminded > 0) log.info({ reminders: reminded }, 'expiry reminders of import and legacy export tokens written');
        if (swept.added > 0) log.info(swept, 'token e-mails given their jobs again');
        return { ...swept, reminded };
      }
      const parsed = mailJobSchema.safeParse(job.data);
      if (!parsed.success) throw new UnrecoverableError(`invalid mail job: ${parsed.error.message}`);
      const info = await transport.sendMail({ from: options.mailFrom, ...parsed.data });
      log.info({ job_id: job.id, message_id: info.messageId }, 'mail sent');
      return { messageId: info.messageId };
    },
    {
      connection: bullConnection(options.redis),
      prefix: bullPrefix(options.redisPrefix),
      concurrency: options.concurrency ?? MAIL_WORKER_CONCURRENCY,
      lockDuration: lockMs,
      stalledInterval: lockMs,
    },
  );
  worker.on('failed', (job, err) => log.warn({ job_id: job?.id, err }, 'mail delivery failed'));
  logWorkerErrors(worker, options.redis, log, 'mail worker');
  worker.on('closed', () => transport.close());
  return worker;
}
