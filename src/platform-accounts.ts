import { randomBytes } from 'node:crypto';
import type { Queue } from 'bullmq';
import type { MailIntent } from '../db/queries/token-mail.js';
import { listOriginators } from '../db/queries/portal-registry.js';
import { scheduleMail, within } from '../workers/mail/outbox.js';
import { adminApi } from './api/admin/index.js';
import { portalApi } from './api/portal/index.js';
import type { TokenEvent } from './domain/token-events.js';
import { SANDBOX_ORIGINATOR } from './domain/sandbox.js';
import { HttpError } from './http/errors.js';
import type { Family } from './http/family.js';
import type { RateLimiter } from './http/rate-limit.js';
import type { HttpServer } from './http/server.js';
import { registryMessage } from './infra/bus.js';
import { redisUsable } from './infra/redis.js';
import { acknowledged } from './infra/registry-acks.js';
import type { PlatformParts } from './platform.js';
import { RegistryEditor, type RegistryChange } from './registry/editor.js';
import { PersonalTokens } from './registry/personal-tokens.js';

/**
 * The composition root's part for people (src/platform.ts builds the rest): the portal (token owners,
 * operator staff, originator managers) and the admin API, the registry editor they change the registry
 * through, and the mail they send (token e-mails through the outbox, sign-in and reveal links as plain
 * jobs).
 */

export interface AccountWiring {
  baseUrl: () => string;
  mailQueue: Queue;
  limiter: RateLimiter;
  tokensChanged: () => Promise<void>;
}

export function accountFamilies(parts: PlatformParts, server: HttpServer, wiring: AccountWiring): { admin: Family; portal: Family } {
  const { config, log, sql, redis } = parts;
  const { baseUrl, mailQueue, limiter, tokensChanged } = wiring;
  const personalTokens = new PersonalTokens(sql, { reminderOffsetsMs: config.tokenReminderOffsetsMs });
  const committed = async (change: { mail: readonly MailIntent[]; events: readonly TokenEvent[] }) => {
    await scheduleMail(mailQueue, change.mail, log, { isReady: redisUsable(redis) });
    await announceTokenEvents(parts, change.events);
  };
  // Plain mail jobs (sign-in and reveal links): their secrets live in the job only, gone once sent.
  const sendMail = async (to: string, mail: { subject: string; text: string; html: string }) => {
    const unqueued = () => new HttpError(503, 'mail_unavailable', 'The e-mail could not be queued (Redis is unavailable); nothing was sent: try again shortly.', { headers: { 'Retry-After': '5' } });
    if (!redisUsable(redis)) throw unqueued();
    await within(mailQueue.add('link', { to, ...mail }, { removeOnComplete: true, removeOnFail: { age: 3600 }, attempts: 5 }), 2000, unqueued);
  };
  const editor = new RegistryEditor(sql, (change) => announceRegistryChange(parts, change));
  const admin = adminApi(server, {
    adminToken: config.adminToken, sql, tokensChanged, personalTokens, committed, editor,
    baseUrl, revealLinkTtlMs: config.revealLinkTtlMs, timeZone: config.mailTimeZone, sendMail,
  });
  const portal = portalApi(server, {
    sql, log, limiter, personalTokens, sendMail, mailReady: () => redis.isReady, committed, tokensChanged, timeZone: config.mailTimeZone, editor,
    allOriginators: () => listOriginators(sql, SANDBOX_ORIGINATOR),
    history: { sql, stations: parts.registry, unknownAfterMs: config.statusUnknownAfterMs },
    baseUrl, idleMs: config.portalSessionIdleMs, maxMs: config.portalSessionMaxMs,
  });
  return { admin, portal };
}

/** How long a change made here waits for every instance to have applied it. */
const ACK_TIMEOUT_MS = 2000;

/**
 * A committed registry change made through the portal or the admin API: this instance applies it at
 * once (its registry reloaded, its token cache emptied), then every other instance is told over the
 * bus, and the answer waits until each has applied it (src/infra/registry-acks.ts; at most
 * ACK_TIMEOUT_MS). The change is committed before this runs; when Redis is away the others learn of it
 * with the next announcement (a warning says so), the change itself is never undone.
 */
async function announceRegistryChange({ tokens, registry, bus, log, redis, config }: PlatformParts, change: RegistryChange): Promise<void> {
  const reload = change.hrsIds.length > 0 || change.registry === true;
  if (change.tokens) tokens.invalidate();
  if (reload) await registry.reload();
  const id = randomBytes(12).toString('hex');
  try {
    const receivers = await bus.publish(registryMessage({ hrsIds: change.hrsIds, tokens: change.tokens === true, registry: reload, change: id, from: bus.instanceId }));
    const acks = await acknowledged(redis, config.redisPrefix, id, receivers, ACK_TIMEOUT_MS);
    if (acks < receivers) {
      log.warn({ stations: change.hrsIds, receivers, acks }, `registry change not acknowledged by every instance within ${ACK_TIMEOUT_MS} ms: the others apply it as they get to it`);
    }
  } catch (err) {
    log.warn({ err, stations: change.hrsIds }, 'registry change not announced to other instances (Redis unavailable): they apply it with the next announcement');
  }
}

/** Tells every instance's admins' feed (this one's too, through Redis; locally when Redis is away) of token events. */
async function announceTokenEvents({ bus, log }: PlatformParts, events: readonly TokenEvent[]): Promise<void> {
  if (events.length === 0) return;
  const message = { type: 'tokens' as const, events: [...events] };
  try {
    await bus.publish(message);
  } catch (err) {
    bus.deliverLocally(message);
    log.debug({ err }, 'token events not announced to other instances (Redis unavailable)');
  }
}
