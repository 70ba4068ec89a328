import type { RedisSentinelSettings } from './redis-settings.js';

/** LOG_LEVEL's values: pino's levels, and `silent`. */
export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/**
 * The platform's configuration as the rest of the code reads it: what src/config/config.ts's one zod schema
 * makes of the environment (its mapping, loadConfig, is there), frozen once loaded.
 */
export interface Config {
  port: number;
  host: string;
  databaseUrl: string;
  redisUrl: string;
  /** REDIS_SENTINELS and REDIS_SENTINEL_NAME: the master is found through them (REDIS_URL's host and port are not used). */
  redisSentinel?: RedisSentinelSettings;
  /**
   * The platform's Redis namespace: every key, channel, stream and queue begins with it and ":".
   * REDIS_PREFIX when set; otherwise "" here until `resolveNamespace` (src/infra/namespace.ts) derives it
   * from the database's identity once the database is open.
   */
  redisPrefix: string;
  /** Whether REDIS_PREFIX named the namespace (rather than the database's identity). */
  redisPrefixSet: boolean;
  /**
   * The platform's identity, from its PostgreSQL database (src/infra/namespace.ts): every message on the
   * bus carries it, and one carrying another is dropped. Set by `resolveNamespace`; undefined before.
   */
  platformId: string | undefined;
  /** Absolute base for links the API returns; no trailing slash. */
  baseUrl: string;
  /** True when BASE_URL was not given and baseUrl follows HOST and the port actually bound. */
  baseUrlDerived: boolean;
  logLevel: LogLevel;
  maxBodyBytes: number;
  adminToken: string | undefined;
  /** Freshness deadlines in milliseconds. */
  statusStaleAfterMs: number;
  statusUnknownAfterMs: number;
  /** Pricing turns stale when its daily heartbeat is missed (never unknown). */
  statusPricingStaleAfterMs: number;
  smtpUrl: string | undefined;
  mailFrom: string;
  /** The zone token e-mails state times in (MAIL_TIME_ZONE, default UTC). */
  mailTimeZone: string;
  /** How long before a personal token's expiry its two reminders go out (TOKEN_REMINDERS: 30 and 7 days). */
  tokenReminderOffsetsMs: [thirtyDays: number, sevenDays: number];
  /** How often the mail sweep gives unsent token e-mails their jobs again (MAIL_SWEEP_EVERY, an hour). */
  mailSweepEveryMs: number;
  /**
   * Addresses told of expiring import and legacy export tokens besides the accounts with the admin role
   * (ADMIN_EMAILS, comma-separated; none by default).
   */
  adminEmails: string[];
  /** A portal session ends after this long unused (PORTAL_SESSION_IDLE, 30 minutes) and this long at most (PORTAL_SESSION_MAX, 12 hours). */
  portalSessionIdleMs: number;
  portalSessionMaxMs: number;
  /** How long a link revealing an admin-issued token works (REVEAL_LINK_TTL, 7 days). */
  revealLinkTtlMs: number;
  /**
   * How long a mail worker's claim on a token e-mail holds (MAIL_CLAIM_SECONDS, 2 minutes): longer
   * than any SMTP conversation, since another worker may send the e-mail once it lapses. A worker that
   * died mid-send has its e-mails sent by another after about this long (BullMQ's job lock follows it,
   * up to BullMQ's 30 s); tests shorten it.
   */
  mailClaimMs: number;
  /**
   * The delay before a token e-mail's first retry after a temporary failure (an SMTP 4xx, a connection
   * error), doubling with each further one (MAIL_RETRY_DELAY; 5 s by default); tests shorten it.
   */
  mailRetryMs: number;
  /** A second bearer token for `/metrics` only (scrapers); ADMIN_TOKEN is always accepted there too. */
  metricsToken: string | undefined;
  /** How long a request waits for PostgreSQL (connecting, a statement) before it is answered 503. */
  databaseTimeoutMs: number;
  /** How long a request waits for Redis to answer a command (a frozen Redis) before going on without it. */
  redisTimeoutMs: number;
  /**
   * How long a batch of rate-limit checks waits for Redis before its requests pass unlimited, without
   * the `RateLimit-*` headers (RATE_LIMIT_TIMEOUT, 500 ms): the caller's own deadline, below REDIS_TIMEOUT.
   */
  rateLimitTimeoutMs: number;
  shutdownDelayMs: number;
  shutdownTimeoutMs: number;
  /** A blocked event loop at least this long is reported in the log and `/metrics` (EVENT_LOOP_STALL, 1 s). */
  eventLoopStallMs: number;
  /**
   * The proxies whose `X-Forwarded-For` / `Forwarded` name the client (TRUST_PROXY: addresses, CIDR
   * ranges; none by default): see src/http/client-address.ts.
   */
  trustProxy: string[];
  /** Readings, intervals and roll-ups older than this many days are dropped (HISTORY_RETENTION_DAYS, 400). */
  historyRetentionDays: number;
  /** How often the status history is brought up to date (HISTORY_EVERY, a minute). */
  historyEveryMs: number;
  /**
   * How far behind real time the history is materialised (HISTORY_LAG, a minute): a reading is written
   * with the time it was received, and the write may take a moment to commit.
   */
  historyLagMs: number;
  /** How long a removed station's or event's tombstone stays in export v2's delta (DELETED_RETENTION_DAYS, 30). */
  deletedRetentionDays: number;
  /**
   * The key webhook secrets are encrypted with (WEBHOOK_SECRET_KEY: 32 bytes, hex or base64); unset:
   * webhooks cannot be created (the portal's webhook endpoints answer 503 saying so).
   */
  webhookSecretKey: Buffer | undefined;
  /** Webhook URLs may be plain HTTP to loopback addresses (WEBHOOK_ALLOW_LOOPBACK; tests and development). */
  webhookAllowLoopback: boolean;
  /** A subscription whose deliveries have failed this long is disabled and its owner told (WEBHOOK_GIVE_UP_AFTER, 24 hours). */
  webhookGiveUpAfterMs: number;
  /** After a secret's rotation, how long messages are signed with the previous secret as well (WEBHOOK_SECRET_OVERLAP, 24 hours). */
  webhookSecretOverlapMs: number;
  /** How long one delivery waits for the receiver's answer (WEBHOOK_TIMEOUT, 10 seconds). */
  webhookTimeoutMs: number;
  /**
   * How long resolving a webhook URL's host name may take, its wait for a turn included
   * (WEBHOOK_RESOLVE_TIMEOUT, 3 seconds): see src/infra/name-resolver.ts.
   */
  webhookResolveTimeoutMs: number;
  /** Webhook subscriptions made, URLs changed and test pings sent per minute per account (WEBHOOK_RATE_LIMIT, 10). */
  webhookRateLimit: number;
  /**
   * Driver alerts (docs/alerts.md): how long a new status must hold before its alerts' e-mails go
   * (ALERT_SETTLE, 300 s); how long a confirmed alert lives unless kept longer (ALERT_LIFETIME, 30 days);
   * how long before that its reminder goes (ALERT_REMINDER_BEFORE, 3 days); how long a confirmation link
   * holds (ALERT_CONFIRM_WITHIN, 24 hours); the caps per address (ALERTS_PER_ADDRESS, 10) and per station
   * (ALERTS_PER_STATION, 2000); alert requests per hour per client address (ALERT_REQUESTS_PER_HOUR, 10).
   */
  alertSettleMs: number;
  alertLifetimeMs: number;
  alertReminderMs: number;
  alertConfirmMs: number;
  alertsPerAddress: number;
  alertsPerStation: number;
  alertRequestsPerHour: number;
  /**
   * How long a portal request may go without an answer once its body has arrived (PORTAL_REQUEST_TIMEOUT,
   * 15 seconds): past it the answer is a 503 with Retry-After, whatever the request still waits on.
   */
  portalRequestTimeoutMs: number;
  /** The DATEX II publications' `publicationCreator`: its country (DATEX2_COUNTRY, ISO 3166-1 alpha-2) and identifier (DATEX2_PUBLISHER). */
  datex2Publisher: { country: string; nationalIdentifier: string };
  /** Import v2 requests per minute per signal originator (the spec's 300 unless an operator raises it). */
  importV2RateLimit: number;
  /**
   * Import v1 and v1.1 requests per minute per signal originator, one budget for both: 3000 by default, ten
   * times import v2's, as export v1's is ten times export v2's burst (legacy clients were never told of a limit).
   */
  importV1RateLimit: number;
  /** Export v1 and v1.1 requests per minute per token, one budget for both (the spec sets none; 600 protects the service). */
  exportV1RateLimit: number;
  /** Whether the export v1.1 sandbox is served: its sample stations, simulated signals and shared token. */
  sandbox: boolean;
  /** Sandbox requests per minute per client address (the token is shared by everyone). */
  sandboxRateLimit: number;
  /** Whether the public map (`/`) and its feed (`/map/v1/…`) are served (PUBLIC_MAP, default true). */
  publicMap: boolean;
  /** A MapLibre style document replacing the built-in offline basemap (MAP_STYLE_URL). */
  mapStyleUrl: string | undefined;
  /** Requests per minute per client address on the public map's data: feed, details, photos, streams' upgrades (MAP_RATE_LIMIT). */
  mapRateLimit: number;
  /** Requests per day (24 hours) per client address on the same endpoints (MAP_RATE_LIMIT_DAY). */
  mapRateLimitDay: number;
  /** Open public streams per client address (MAP_STREAMS_PER_ADDRESS). */
  mapStreamsPerAddress: number;
  /** Export v2 requests per minute per user (burst; the spec's 60). */
  exportV2RateLimitMinute: number;
  /** Export v2 requests per day per user (sustained; the spec's 5000). */
  exportV2RateLimitDay: number;
  /** Length of the sustained window in seconds: a day (86400), shorter only to test it. */
  exportV2RateLimitDayWindowSeconds: number;
  /** Open status streams one user may hold across all instances. */
  pushStreamsPerUser: number;
  /** How long a WebSocket without an Authorization header has to send its auth message. */
  pushAuthTimeoutMs: number;
  /** Seconds without traffic before a WebSocket (status stream, admins' feed, map stream) is closed; pings are sent before that. */
  pushIdleTimeoutSeconds: number;
  /** The longest a WebSocket stays open: each is closed (1001) at a moment between 90 % of this and this. */
  pushMaxAgeSeconds: number;
  /** Bytes a subscriber may have waiting (beyond its last snapshot) before it is closed as too slow. */
  pushMaxBacklogBytes: number;
}
