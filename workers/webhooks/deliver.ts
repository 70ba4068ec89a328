import type { Logger } from 'pino';
import type { Sql } from '../../db/connect.js';
import {
  changesFor,
  recordAttempt,
  recordOutcome,
  skipTo,
  stationDetails,
  type ClaimedSubscription,
  type DeliverySubscription,
  type Outcome,
} from '../../db/queries/webhook-delivery.js';
import type { StationLookup } from '../../src/domain/stations.js';
import { coordinatesOf } from '../../src/domain/coordinates.js';
import {
  changesBody,
  changesMessageId,
  MAX_CHANGES_PER_MESSAGE,
  passes,
  pingBody,
  retryDelayMs,
  topicsOf,
  writtenChange,
  type Backoff,
  type WrittenChange,
} from '../../src/domain/webhooks/messages.js';
import type { Resolver } from '../../src/infra/name-resolver.js';
import { openSecret } from '../../src/domain/webhooks/secrets.js';
import { DeliveredRecorder } from './delivered.js';
import { sendMessage, signingKey, type AttemptOutcome } from './send.js';

/**
 * One turn of a claimed subscription (./processor.ts claims it): its pings, then one message of its
 * changes, in seq order. A message (up to 100 wanted changes past the cursor) is formed, sent, and its
 * outcome recorded in one statement; a failed one is stored as pending then, so every retry sends the
 * same webhook-id and body (formNext says why nothing is stored before the first attempt). A 2xx
 * moves the cursor (the subscription is then due again if more is wanted); a 410 unsubscribes; any
 * other failure is retried after an exponential backoff with full jitter, kept in PostgreSQL as the
 * subscription's next due time, until WEBHOOK_GIVE_UP_AFTER after the first failure: then the
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
  /** Records delivered attempts, those of turns ending together in one statement (./delivered.ts). */
  delivered: DeliveredRecorder;
}

/** Log rows the claim reads with a subscription (a whole message's worth when no box filters them). */
export const CLAIM_PAGE = MAX_CHANGES_PER_MESSAGE;
/** Log rows read at a time after those, while forming a message a box filters. */
const PAGE = 500;

/** The keys opened per WEBHOOK_SECRET_KEY and subscription, with the seals they were opened from. */
const OPENED = new WeakMap<Buffer, Map<string, { sealed: Buffer; previous: Buffer | null; keys: Buffer[] }>>();
/** Subscriptions whose keys a worker keeps opened (beyond it, the kept ones are let go and opened again as they come). */
const OPENED_KEPT = 10_000;

/**
 * The keys that sign now: the current secret's, and the previous one's during a rotation's overlap.
 * Opened (AES-256-GCM) once per seal: a subscription's next message reuses them while its row holds
 * the same seals (a rotation or the overlap's end makes others). Throws when a seal does not open.
 */
export function signingKeys(key: Buffer, sub: Pick<DeliverySubscription, 'id' | 'secret_sealed' | 'previous_secret_sealed' | 'previous_valid'>): Buffer[] {
  let opened = OPENED.get(key);
  if (!opened) OPENED.set(key, (opened = new Map()));
  const previous = sub.previous_valid ? sub.previous_secret_sealed : null;
  const kept = opened.get(sub.id);
  if (kept && kept.sealed.equals(sub.secret_sealed) && (kept.previous === null ? previous === null : previous !== null && kept.previous.equals(previous))) return kept.keys;
  const keys = [signingKey(openSecret(key, sub.secret_sealed, sub.id))];
  if (previous) keys.push(signingKey(openSecret(key, previous, sub.id)));
  if (opened.size >= OPENED_KEPT) opened.clear();
  opened.set(sub.id, { sealed: Buffer.from(sub.secret_sealed), previous: previous && Buffer.from(previous), keys });
  return keys;
}

/** A message to send: the one pending (a retry), or one formed now and not yet stored (`fresh`). */
interface Pending {
  id: string;
  body: string;
  changes: number;
  fresh?: { firstSeq: string; lastSeq: string; cursor: string };
}

/**
 * The subscription's next message, formed from the log past its cursor; undefined when nothing is
 * wanted. It is not stored before its first attempt: a delivered one only moves the cursor, a failed
 * one is stored as pending with the failure (recordOutcome), so every retry sends it as it was. A turn
 * cut short before its outcome is recorded (the worker dies, PostgreSQL goes) leaves the cursor where
 * it was, and the next claim forms the same message again from the same rows: the same id (its first
 * and last seq) and the same body (its `timestamp` is its newest change's, not the time it was formed).
 */
async function formNext(ctx: DeliveryContext, sub: ClaimedSubscription): Promise<Pending | undefined> {
  const topics = topicsOf(sub.kinds);
  if (topics.length === 0) return void (await skipTo(ctx.sql, sub.id, sub.cursor_seq));
  const lookup = sub.bbox === null || !ctx.stations ? undefined : await ctx.stations();
  // A station the registry at hand does not know yet (its creation committed a moment ago, the
  // registry not reloaded since) is placed from its row.
  const places = new Map<string, { lat: number; lon: number } | null>();
  const pointOf = (hrsId: string) => lookup?.station(hrsId)?.point ?? places.get(hrsId);
  const filter = { hrsIds: sub.hrs_ids, bbox: sub.bbox };
  const wanted: WrittenChange[] = [];
  let scanned = sub.cursor_seq;
  let rows: WrittenChange[] = sub.changes;
  let page = CLAIM_PAGE;
  scan: for (;;) {
    if (sub.bbox !== null) {
      const unknown = [...new Set(rows.map((r) => r.hrs_id))].filter((id) => !lookup?.station(id)?.point && !places.has(id));
      const details = await stationDetails(ctx.sql, unknown);
      for (const id of unknown) places.set(id, validPoint(details.get(id)));
    }
    for (const row of rows) {
      if (passes(row, filter, pointOf)) wanted.push(row);
      scanned = row.seq;
      if (wanted.length === MAX_CHANGES_PER_MESSAGE) break scan;
    }
    if (rows.length < page) break;
    rows = (await changesFor(ctx.sql, sub, topics, scanned, (page = PAGE))).map((row) => writtenChange(row, ctx.baseUrl));
  }
  if (wanted.length === 0) {
    // Lets the claim go too.
    await skipTo(ctx.sql, sub.id, scanned);
    return undefined;
  }
  const newest = wanted[wanted.length - 1]!;
  return {
    id: changesMessageId(sub.id, wanted[0]!.seq, newest.seq),
    body: changesBody(sub.id, wanted, new Date(newest.at)),
    changes: wanted.length,
    fresh: { firstSeq: wanted[0]!.seq, lastSeq: scanned, cursor: sub.cursor_seq },
  };
}

/** The coordinates a station's details give, when they are a valid WGS 84 point. */
function validPoint(details: Record<string, unknown> | undefined): { lat: number; lon: number } | null {
  const point = details ? coordinatesOf(details) : undefined;
  return point && Math.abs(point.lat) <= 90 && Math.abs(point.lon) <= 180 ? point : null;
}

const duration = (ms: number) => (ms % 3_600_000 === 0 ? `${ms / 3_600_000} h` : ms % 60_000 === 0 ? `${ms / 60_000} min` : `${Math.round(ms / 1000)} s`);

/** What a turn came to, and when the subscription is due again when that is known here (epoch ms). */
export interface TurnResult {
  outcome: 'delivered' | 'caught up' | 'retry' | 'unsubscribed' | 'disabled' | 'pings';
  retryAt?: number;
}

/** A claimed subscription's turn: its pings, then, when its delivery was claimed, one message. */
export async function turn(ctx: DeliveryContext, sub: ClaimedSubscription): Promise<TurnResult> {
  for (const messageId of sub.pings) await ping(ctx, sub, messageId);
  if (!sub.deliver) return { outcome: 'pings' };
  const pending: Pending | undefined =
    sub.pending_message_id !== null ? { id: sub.pending_message_id, body: sub.pending_body!, changes: sub.pending_changes! } : await formNext(ctx, sub);
  if (!pending) return { outcome: 'caught up' };
  // Attempts count within a series of failures: one forgotten (enabled again) starts a new series.
  const attempt = sub.pending_message_id !== null && sub.failing_since !== null ? sub.pending_attempts + 1 : 1;
  const sent = await attemptDelivery(ctx, sub, pending);
  const code = sent.statusCode ?? 0;
  const record = { subscriptionId: sub.id, messageId: pending.id, kind: 'changes' as const, changes: pending.changes, attempt, ...sent };
  const fresh = pending.fresh && { body: pending.body, ...pending.fresh };
  if (code >= 200 && code < 300) {
    await ctx.delivered.record({ attempt: record, fresh });
    return { outcome: 'delivered' };
  }
  if (code === 410) {
    await recordOutcome(ctx.sql, record, { kind: 'gone', reason: 'the endpoint answered 410 Gone' }, fresh);
    ctx.log.info({ subscription: sub.id, message_id: pending.id }, 'webhook unsubscribed by a 410 answer');
    return { outcome: 'unsubscribed' };
  }
  const outcome = failed(ctx, sub, attempt, sent);
  const mail = await recordOutcome(ctx.sql, record, outcome, fresh);
  if (outcome.kind === 'disabled') {
    ctx.log.warn({ subscription: sub.id, message_id: pending.id, reason: outcome.reason }, 'webhook disabled');
    if (mail) await ctx.scheduleMail(mail);
    return { outcome: 'disabled' };
  }
  const delayMs = outcome.kind === 'retry' ? outcome.delayMs : 0;
  ctx.log.debug({ subscription: sub.id, message_id: pending.id, attempt, error: sent.error, retry_in_ms: delayMs }, 'webhook delivery failed');
  return { outcome: 'retry', retryAt: Date.now() + delayMs };
}

/** A `webhook.ping` message, outside the change sequence: one attempt, recorded. */
async function ping(ctx: DeliveryContext, sub: DeliverySubscription, messageId: string): Promise<void> {
  let keys: Buffer[] | undefined;
  try {
    keys = signingKeys(ctx.secretKey, sub);
  } catch {
    keys = undefined;
  }
  const sent = keys
    ? await sendMessage(sub.url, messageId, pingBody(sub.id, new Date()), keys, { timeoutMs: ctx.timeoutMs, allowLoopback: ctx.allowLoopback, resolver: ctx.resolver })
    : { statusCode: null, error: 'the signing secret does not open with WEBHOOK_SECRET_KEY', latencyMs: null };
  await recordAttempt(ctx.sql, { subscriptionId: sub.id, messageId, kind: 'ping', changes: 0, attempt: 1, ...sent });
}

/** Signs and sends; a secret that does not open is a failed attempt (WEBHOOK_SECRET_KEY changed). */
async function attemptDelivery(ctx: DeliveryContext, sub: DeliverySubscription, pending: Pending): Promise<AttemptOutcome> {
  let keys: Buffer[];
  try {
    keys = signingKeys(ctx.secretKey, sub);
  } catch {
    return { statusCode: null, error: 'the signing secret does not open with WEBHOOK_SECRET_KEY', latencyMs: null };
  }
  return sendMessage(sub.url, pending.id, pending.body, keys, { timeoutMs: ctx.timeoutMs, allowLoopback: ctx.allowLoopback, resolver: ctx.resolver });
}

/**
 * A failed attempt: the next one after a backoff (never later than the give-up time, so the last
 * attempt is made then), or, at the give-up time, the subscription disabled.
 */
function failed(ctx: DeliveryContext, sub: DeliverySubscription, attempt: number, sent: AttemptOutcome): Outcome {
  const now = Date.now();
  const giveUpAt = (sub.failing_since?.getTime() ?? now) + ctx.giveUpAfterMs;
  if (now >= giveUpAt) {
    return { kind: 'disabled', reason: `no delivery succeeded for ${duration(ctx.giveUpAfterMs)} (last attempt: ${sent.error ?? `answered ${sent.statusCode}`})` };
  }
  return { kind: 'retry', attempts: attempt, delayMs: Math.min(retryDelayMs(attempt, ctx.backoff), giveUpAt - now) };
}
