import { DelayedError, type Job } from 'bullmq';
import type { Logger } from 'pino';
import type { Sql } from '../../db/connect.js';
import {
  changesFor,
  claimDelivery,
  markDelivered,
  markDisabled,
  markFailed,
  markUnsubscribed,
  recordAttempt,
  releaseDelivery,
  skipTo,
  stationDetails,
  storePending,
  type DeliverySubscription,
} from '../../db/queries/webhook-delivery.js';
import type { StationLookup } from '../../src/domain/stations.js';
import { coordinatesOf } from '../../src/domain/coordinates.js';
import {
  changeOf,
  changesBody,
  changesMessageId,
  MAX_CHANGES_PER_MESSAGE,
  passes,
  retryDelayMs,
  topicsOf,
  type Backoff,
  type Change,
} from '../../src/domain/webhooks/messages.js';
import type { Resolver } from '../../src/domain/webhooks/addresses.js';
import { openSecret } from '../../src/domain/webhooks/secrets.js';
import { sendMessage, type AttemptOutcome } from './send.js';

/**
 * A `deliver` job: the subscription's messages one after another, in seq order, until it has caught
 * up. Each message is formed once (up to 100 wanted changes past the cursor) and stored as pending
 * before its first attempt, so every retry sends the same webhook-id and body. A 2xx moves the cursor
 * and forms the next; a 410 unsubscribes; any other failure is retried with exponential backoff and
 * full jitter (the same job, delayed), until WEBHOOK_GIVE_UP_AFTER after the first failure: then the
 * subscription is disabled and its owner e-mailed.
 */

export interface DeliveryContext {
  sql: Sql;
  log: Logger;
  secretKey: Buffer;
  baseUrl: string;
  timeoutMs: number;
  allowLoopback: boolean;
  /** How receivers' host names are resolved (src/infra/name-resolver.ts). */
  resolver: Resolver;
  giveUpAfterMs: number;
  backoff: Backoff;
  /** The registry now, for the coordinates a bbox filter needs. */
  stations?: () => StationLookup | Promise<StationLookup>;
  /** Gives a committed e-mail intent its job (the outbox sweep makes up for one missed). */
  scheduleMail(intent: { key: string; dueAt: Date }): Promise<void>;
}

/** Messages one job sends before it yields its place to other subscriptions' jobs (it carries on after them). */
const MESSAGES_PER_TURN = 20;
/** Log rows read at a time while forming a message. */
const PAGE = 500;

/** The secrets that sign now: the current one, and the previous one during a rotation's overlap. */
export function signingSecrets(key: Buffer, sub: Pick<DeliverySubscription, 'id' | 'secret_sealed' | 'previous_secret_sealed' | 'previous_valid'>): string[] {
  const secrets = [openSecret(key, sub.secret_sealed, sub.id)];
  if (sub.previous_valid && sub.previous_secret_sealed) secrets.push(openSecret(key, sub.previous_secret_sealed, sub.id));
  return secrets;
}

interface Pending {
  id: string;
  body: string;
  changes: number;
}

/** The subscription's next message, formed and stored as pending; undefined when nothing is wanted. */
async function formNext(ctx: DeliveryContext, sub: DeliverySubscription): Promise<Pending | undefined> {
  const topics = topicsOf(sub.kinds);
  if (topics.length === 0) return undefined;
  const lookup = sub.bbox === null || !ctx.stations ? undefined : await ctx.stations();
  // A station the registry at hand does not know yet (its creation committed a moment ago, the
  // registry not reloaded since) is placed from its row.
  const places = new Map<string, { lat: number; lon: number } | null>();
  const pointOf = (hrsId: string) => lookup?.station(hrsId)?.point ?? places.get(hrsId);
  const filter = { hrsIds: sub.hrs_ids, bbox: sub.bbox };
  const wanted: Change[] = [];
  let scanned = sub.cursor_seq;
  scan: for (;;) {
    const rows = await changesFor(ctx.sql, sub, topics, scanned, PAGE);
    if (sub.bbox !== null) {
      const unknown = [...new Set(rows.map((r) => r.hrs_id))].filter((id) => !lookup?.station(id)?.point && !places.has(id));
      const details = await stationDetails(ctx.sql, unknown);
      for (const id of unknown) places.set(id, validPoint(details.get(id)));
    }
    for (const row of rows) {
      if (passes(row, filter, pointOf)) wanted.push(changeOf(row, ctx.baseUrl));
      scanned = row.seq;
      if (wanted.length === MAX_CHANGES_PER_MESSAGE) break scan;
    }
    if (rows.length < PAGE) break;
  }
  if (wanted.length === 0) {
    if (scanned !== sub.cursor_seq) await skipTo(ctx.sql, sub.id, scanned);
    return undefined;
  }
  const message = {
    id: changesMessageId(sub.id, wanted[0]!.seq, wanted[wanted.length - 1]!.seq),
    body: changesBody(sub.id, wanted, new Date()),
    firstSeq: wanted[0]!.seq,
    lastSeq: scanned,
    changes: wanted.length,
  };
  if (!(await storePending(ctx.sql, sub.id, message))) throw new Error(`subscription ${sub.id} got a pending message meanwhile`);
  return message;
}

/** The coordinates a station's details give, when they are a valid WGS 84 point. */
function validPoint(details: Record<string, unknown> | undefined): { lat: number; lon: number } | null {
  const point = details ? coordinatesOf(details) : undefined;
  return point && Math.abs(point.lat) <= 90 && Math.abs(point.lon) <= 180 ? point : null;
}

/** Moves the job to the delayed set until `at` (epoch ms) and ends this run of it. */
async function later(job: Job, token: string | undefined, at: number): Promise<never> {
  await job.moveToDelayed(Math.max(at, Date.now()), token);
  throw new DelayedError();
}

const duration = (ms: number) => (ms % 3_600_000 === 0 ? `${ms / 3_600_000} h` : ms % 60_000 === 0 ? `${ms / 60_000} min` : `${Math.round(ms / 1000)} s`);

/** Runs a `deliver` job for one subscription. */
export async function deliver(ctx: DeliveryContext, job: Job, token: string | undefined, subscriptionId: string): Promise<Record<string, unknown>> {
  // Longer than any attempt (its deadline) and the writes around it; a dead worker's claim lapses after it.
  const leaseMs = ctx.timeoutMs + 30_000;
  for (let sent = 0; ; ) {
    const claim = await claimDelivery(ctx.sql, subscriptionId, leaseMs);
    if (!claim) return { outcome: 'gone', sent };
    if ('busyForMs' in claim) return later(job, token, Date.now() + claim.busyForMs + 500);
    const sub = claim;
    let wait: number | undefined;
    try {
      if (sub.state !== 'active') return { outcome: sub.state, sent };
      if (sub.next_attempt_at && sub.next_attempt_at.getTime() > sub.now.getTime()) {
        // A retry's backoff is kept in PostgreSQL: a job made again by the sweep waits it out too.
        wait = Date.now() + (sub.next_attempt_at.getTime() - sub.now.getTime());
      } else {
        const pending: Pending | undefined =
          sub.pending_message_id !== null ? { id: sub.pending_message_id, body: sub.pending_body!, changes: sub.pending_changes! } : await formNext(ctx, sub);
        if (!pending) return { outcome: 'caught up', sent };
        // Attempts count within a series of failures: one forgotten (enabled again) starts a new series.
        const attempt = sub.pending_message_id !== null && sub.failing_since !== null ? sub.pending_attempts + 1 : 1;
        const outcome = await attemptDelivery(ctx, sub, pending);
        await recordAttempt(ctx.sql, { subscriptionId, messageId: pending.id, kind: 'changes', changes: pending.changes, attempt, ...outcome });
        const code = outcome.statusCode ?? 0;
        if (code >= 200 && code < 300) {
          await markDelivered(ctx.sql, subscriptionId, pending.id);
          sent++;
          if (sent >= MESSAGES_PER_TURN) wait = Date.now();
        } else if (code === 410) {
          await markUnsubscribed(ctx.sql, subscriptionId, 'the endpoint answered 410 Gone');
          ctx.log.info({ subscription: subscriptionId, message_id: pending.id }, 'webhook unsubscribed by a 410 answer');
          return { outcome: 'unsubscribed', sent };
        } else {
          wait = await failed(ctx, sub, pending, attempt, outcome);
          if (wait === undefined) return { outcome: 'disabled', sent };
        }
      }
    } finally {
      await releaseDelivery(ctx.sql, subscriptionId);
    }
    if (wait !== undefined) return later(job, token, wait);
  }
}

/** Signs and sends; a secret that does not open is a failed attempt (WEBHOOK_SECRET_KEY changed). */
async function attemptDelivery(ctx: DeliveryContext, sub: DeliverySubscription, pending: Pending): Promise<AttemptOutcome> {
  let secrets: string[];
  try {
    secrets = signingSecrets(ctx.secretKey, sub);
  } catch {
    return { statusCode: null, error: 'the signing secret does not open with WEBHOOK_SECRET_KEY', latencyMs: null };
  }
  return sendMessage(sub.url, pending.id, pending.body, secrets, { timeoutMs: ctx.timeoutMs, allowLoopback: ctx.allowLoopback, resolver: ctx.resolver });
}

/**
 * A failed attempt: the next one after a backoff (never later than the give-up time, so the last
 * attempt is made then), or, at the give-up time, the subscription disabled and its owner e-mailed.
 * Returns when to try again (epoch ms), or undefined when it gave up.
 */
async function failed(ctx: DeliveryContext, sub: DeliverySubscription, pending: Pending, attempt: number, outcome: AttemptOutcome): Promise<number | undefined> {
  const now = Date.now();
  const failingSince = sub.failing_since?.getTime() ?? now;
  const giveUpAt = failingSince + ctx.giveUpAfterMs;
  if (now >= giveUpAt) {
    const reason = `no delivery succeeded for ${duration(ctx.giveUpAfterMs)} (last attempt: ${outcome.error ?? `answered ${outcome.statusCode}`})`;
    const mail = await markDisabled(ctx.sql, sub.id, reason);
    ctx.log.warn({ subscription: sub.id, message_id: pending.id, reason }, 'webhook disabled');
    if (mail) await ctx.scheduleMail(mail);
    return undefined;
  }
  const delay = Math.min(retryDelayMs(attempt, ctx.backoff), giveUpAt - now);
  await markFailed(ctx.sql, sub.id, pending.id, attempt, delay);
  ctx.log.debug({ subscription: sub.id, message_id: pending.id, attempt, error: outcome.error, retry_in_ms: delay }, 'webhook delivery failed');
  return now + delay;
}
