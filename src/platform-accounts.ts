import type { Queue } from 'bullmq';
import type { MailIntent } from '../db/queries/token-mail.js';
import { listOriginators } from '../db/queries/portal-registry.js';
import { MailProducer, type LinkMail } from '../workers/mail/producer.js';
import { adminApi } from './api/admin/index.js';
import { portalApi } from './api/portal/index.js';
import { queued } from './api/unavailable.js';
import type { TokenEvent } from './domain/token-events.js';
import { SANDBOX_ORIGINATOR } from './domain/sandbox.js';
import type { Family } from './http/family.js';
import type { RateLimiter } from './infra/rate-limit.js';
import type { HttpServer } from './http/server.js';
import type { PlatformParts } from './platform-parts.js';
import type { Forecasts } from './api/forecast.js';
import { RegistryEditor } from './registry/editor.js';
import { redisUsable } from './infra/redis.js';
import { boundedResolver } from './infra/name-resolver.js';
import { PersonalTokens } from './registry/personal-tokens.js';

/**
 * The composition root's part for people (src/platform.ts builds the rest): the portal (token owners,
 * operator staff, originator managers) and the admin API, the registry editor they change the registry
 * through, and the mail they send (workers/mail/producer.ts).
 */

export interface AccountWiring {
  baseUrl: () => string;
  mailQueue: Queue;
  limiter: RateLimiter;
  /** The availability forecasts, export v2's and the map's (the Signals pane shows a station's). */
  forecasts: Forecasts;
}

export function accountFamilies(parts: PlatformParts, server: HttpServer, wiring: AccountWiring): { admin: Family; portal: Family } {
  const { config, log, sql, redis, announcements } = parts;
  const { baseUrl, mailQueue, limiter, forecasts } = wiring;
  const personalTokens = new PersonalTokens(sql, { reminderOffsetsMs: config.tokenReminderOffsetsMs });
  const mail = new MailProducer(mailQueue, redis, log, config.mailRetryMs);
  const committed = async (change: { mail: readonly MailIntent[]; events: readonly TokenEvent[] }) => {
    await mail.schedule(change.mail);
    await announcements.tokenEvents(change.events);
  };
  // A link e-mail Redis did not take: the 503 that says nothing was sent.
  const sendMail = (to: string, link: LinkMail) => queued('mail', mail.sendLink(to, link));
  const tokensChanged = () => announcements.tokensChanged();
  const editor = new RegistryEditor(sql, async (change) => {
    await announcements.registryChanged(change);
  }, parts.clock);
  const admin = adminApi(server, {
    adminToken: config.adminToken, sql, tokensChanged, personalTokens, committed, editor,
    baseUrl, revealLinkTtlMs: config.revealLinkTtlMs, timeZone: config.mailTimeZone, sendMail,
    silentAfterMs: config.statusStaleAfterMs,
  });
  const portal = portalApi(server, {
    sql, log, limiter, personalTokens, sendMail, mailReady: () => mail.ready(), committed, tokensChanged, timeZone: config.mailTimeZone, editor,
    allOriginators: () => listOriginators(sql, SANDBOX_ORIGINATOR),
    history: { sql, stations: parts.registry, unknownAfterMs: config.statusUnknownAfterMs },
    forecasts,
    baseUrl, idleMs: config.portalSessionIdleMs, maxMs: config.portalSessionMaxMs, clock: parts.clock, requestTimeoutMs: config.portalRequestTimeoutMs,
    recordTokenUse: () => parts.tokens.flushLastUsed(),
    verdicts: parts.verdicts,
    webhooks: {
      secretKey: config.webhookSecretKey, allowLoopback: config.webhookAllowLoopback, overlapMs: config.webhookSecretOverlapMs,
      resolver: boundedResolver({ timeoutMs: config.webhookResolveTimeoutMs }), limiter, perMinute: config.webhookRateLimit,
    },
  });
  return { admin, portal };
}
