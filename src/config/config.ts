import { z } from 'zod';
import { databaseHosts, redactUrl } from './database-url.js';
import { emailAddress } from '../domain/text.js';
import { compileTrust, trustEntries } from './trust-proxy.js';
import { LOG_LEVELS, type Config } from './shape.js';
import { redisSentinelEnv, redisSentinelOf } from './redis-settings.js';

/** Raised when the environment does not describe a usable configuration. */
export class ConfigError extends Error {
  readonly code = 'CONFIG_INVALID';
}

const seconds = (fallback: number) =>
  z.coerce
    .number({ error: 'must be a number of seconds' })
    .int('must be a whole number of seconds')
    .positive('must be greater than zero')
    .default(fallback);

const requests = (fallback: number) =>
  z.coerce
    .number({ error: 'must be a number of requests' })
    .int('must be a whole number of requests')
    .min(1, 'must be at least 1')
    .default(fallback);

const url = (protocols: string[]) =>
  z
    .string()
    .refine((value) => {
      try {
        return protocols.includes(new URL(value).protocol);
      } catch {
        return false;
      }
    }, `must be a URL starting with ${protocols.map((p) => `${p}//`).join(' or ')}`);

const blankAsUnset = (value: unknown) => (value === '' ? undefined : value);

/** Where the platform looks when DATABASE_URL / REDIS_URL are not set (and, if nothing answers there, starts its own). */
export const DEFAULT_DATABASE_URL = 'postgres://postgres@127.0.0.1:5432/hrs';
export const DEFAULT_REDIS_URL = 'redis://127.0.0.1:6379';

/** Every setting the platform reads, in one schema over `process.env`. */
export const envSchema = z
  .object({
    PORT: z.coerce.number({ error: 'must be a port number' }).int().min(0).max(65535).default(8080),
    HOST: z.string().min(1).default('127.0.0.1'),
    DATABASE_URL: z
      .string()
      .refine(
        (value) => databaseHosts(value) !== undefined,
        'must be a URL starting with postgres:// or postgresql:// (several hosts: postgres://h1:5432,h2:5432/hrs?target_session_attrs=read-write)',
      )
      .default(DEFAULT_DATABASE_URL),
    REDIS_URL: url(['redis:', 'rediss:']).default(DEFAULT_REDIS_URL),
    // Unset: derived from the database's identity (src/infra/namespace.ts), so platforms differ by default.
    REDIS_PREFIX: z.preprocess(
      blankAsUnset,
      z
        .string()
        .regex(/^[A-Za-z0-9_.-]+$/, 'may hold only letters, digits, ".", "_" and "-"')
        .optional(),
    ),
    ...redisSentinelEnv,
    BASE_URL: z.preprocess(blankAsUnset, url(['http:', 'https:']).optional()),
    LOG_LEVEL: z.enum(LOG_LEVELS).default('info'),
    MAX_BODY_BYTES: z.coerce
      .number({ error: 'must be a number of bytes' })
      .int()
      .min(1024, 'must be at least 1024')
      .default(1024 * 1024),
    ADMIN_TOKEN: z.preprocess(
      blankAsUnset,
      z.string().min(16, 'must be at least 16 characters long').optional(),
    ),
    STATUS_STALE_AFTER: seconds(300),
    STATUS_UNKNOWN_AFTER: seconds(1800),
    STATUS_PRICING_STALE_AFTER: seconds(25 * 3600),
    SMTP_URL: z.preprocess(blankAsUnset, url(['smtp:', 'smtps:']).optional()),
    MAIL_FROM: z.string().min(3).default('HRS signal platform <no-reply@localhost>'),
    MAIL_TIME_ZONE: z
      .string()
      .refine((zone) => {
        try {
          new Intl.DateTimeFormat('en-GB', { timeZone: zone });
          return true;
        } catch {
          return false;
        }
      }, 'must be an IANA time zone, e.g. Europe/Berlin')
      .default('UTC'),
    TOKEN_REMINDERS: z
      .string()
      .regex(/^\s*\d*[1-9]\d*[smhd]\s*,\s*\d*[1-9]\d*[smhd]\s*$/, 'must be two durations before expiry, the first longer, e.g. "30d,7d" (s, m, h or d)')
      .default('30d,7d'),
    MAIL_SWEEP_EVERY: seconds(3600),
    ADMIN_EMAILS: z
      .string()
      .default('')
      .transform((text) => text.split(',').map((part) => part.trim()).filter((part) => part !== ''))
      .pipe(z.array(emailAddress('must be e-mail addresses separated by commas, e.g. "ops@example.org,noc@example.org"')).max(50, 'must name at most 50 addresses')),
    PORTAL_SESSION_IDLE: seconds(1800),
    PORTAL_SESSION_MAX: seconds(12 * 3600),
    REVEAL_LINK_TTL: seconds(7 * 24 * 3600),
    MAIL_CLAIM_SECONDS: seconds(120),
    MAIL_RETRY_DELAY: z.coerce
      .number({ error: 'must be a number of seconds' })
      .min(0.1, 'must be at least 0.1')
      .max(3600, 'must be at most 3600')
      .default(5),
    IMPORT_V2_RATE_LIMIT: requests(300),
    IMPORT_V1_RATE_LIMIT: requests(3000),
    EXPORT_V1_RATE_LIMIT: requests(600),
    SANDBOX: z.enum(['on', 'off'], { error: 'must be "on" or "off"' }).default('on'),
    SANDBOX_RATE_LIMIT: requests(60),
    PUBLIC_MAP: z.enum(['true', 'false'], { error: 'must be "true" or "false"' }).default('true'),
    MAP_STYLE_URL: z.url({ protocol: /^https?$/, error: 'must be an http(s) URL of a MapLibre style document' }).optional(),
    MAP_RATE_LIMIT: requests(120),
    MAP_RATE_LIMIT_DAY: requests(2000),
    MAP_STREAMS_PER_ADDRESS: requests(4),
    EXPORT_V2_RATE_LIMIT_MINUTE: requests(60),
    EXPORT_V2_RATE_LIMIT_DAY: requests(5000),
    EXPORT_V2_RATE_LIMIT_DAY_WINDOW: z.coerce
      .number({ error: 'must be a number of seconds' })
      .int('must be a whole number of seconds')
      .min(1, 'must be at least 1')
      .max(86_400, 'must be at most 86400 (a day)')
      .default(86_400),
    PUSH_STREAMS_PER_USER: requests(5),
    PUSH_AUTH_TIMEOUT: seconds(5),
    PUSH_IDLE_TIMEOUT: z.coerce
      .number({ error: 'must be a number of seconds' })
      .int('must be a whole number of seconds')
      .min(8, 'must be at least 8')
      .max(960, 'must be at most 960')
      .default(60),
    PUSH_MAX_AGE: z.coerce
      .number({ error: 'must be a number of seconds' })
      .int('must be a whole number of seconds')
      .min(2, 'must be at least 2')
      .max(604_800, 'must be at most 604800 (a week)')
      .default(3600),
    PUSH_MAX_BACKLOG: z.coerce
      .number({ error: 'must be a number of bytes' })
      .int('must be a whole number of bytes')
      .min(16 * 1024, 'must be at least 16384')
      .default(1024 * 1024),
    METRICS_TOKEN: z.preprocess(
      blankAsUnset,
      z.string().min(16, 'must be at least 16 characters long').optional(),
    ),
    DATABASE_TIMEOUT: z.coerce
      .number({ error: 'must be a number of seconds' })
      .positive('must be more than 0')
      .max(60, 'must be at most 60')
      .default(2),
    REDIS_TIMEOUT: z.coerce
      .number({ error: 'must be a number of seconds' })
      .positive('must be more than 0')
      .max(60, 'must be at most 60')
      .default(2),
    RATE_LIMIT_TIMEOUT: z.coerce
      .number({ error: 'must be a number of seconds' })
      .min(0.01, 'must be at least 0.01')
      .max(60, 'must be at most 60')
      .default(0.5),
    HISTORY_RETENTION_DAYS: z.coerce
      .number({ error: 'must be a number of days' })
      .int('must be a whole number of days')
      .min(8, 'must be at least 8')
      .max(3660, 'must be at most 3660')
      .default(400),
    HISTORY_EVERY: seconds(60),
    HISTORY_LAG: seconds(60),
    DATEX2_COUNTRY: z
      .string()
      .regex(/^[A-Z]{2}$/, 'must be two capital letters (ISO 3166-1 alpha-2), e.g. DE')
      .default('DE'),
    DATEX2_PUBLISHER: z
      .string()
      .min(1, 'must not be empty')
      .max(1024, 'must be at most 1024 characters')
      .default('hrs-signal-platform'),
    TRUST_PROXY: z
      .string()
      .default('')
      .refine((text) => {
        try {
          compileTrust(trustEntries(text));
          return true;
        } catch {
          return false;
        }
      }, 'must list IP addresses or CIDR ranges (or loopback, linklocal, uniquelocal), separated by commas, e.g. "10.0.0.0/8, ::1"'),
    DELETED_RETENTION_DAYS: z.coerce
      .number({ error: 'must be a number of days' })
      .int('must be a whole number of days')
      .min(1, 'must be at least 1')
      .max(3660, 'must be at most 3660')
      .default(30),
    WEBHOOK_SECRET_KEY: z.preprocess(
      blankAsUnset,
      z
        .string()
        .regex(/^[A-Za-z0-9+/_-]{43}=?$|^[0-9a-fA-F]{64}$/, 'must be 32 random bytes, as 64 hex digits or base64 (e.g. `openssl rand -base64 32`)')
        .optional(),
    ),
    WEBHOOK_ALLOW_LOOPBACK: z.enum(['true', 'false'], { error: 'must be true or false' }).default('false'),
    WEBHOOK_GIVE_UP_AFTER: seconds(86_400),
    WEBHOOK_SECRET_OVERLAP: seconds(86_400),
    WEBHOOK_TIMEOUT: z.coerce
      .number({ error: 'must be a number of seconds' })
      .positive('must be more than 0')
      .max(60, 'must be at most 60')
      .default(10),
    WEBHOOK_RESOLVE_TIMEOUT: z.coerce
      .number({ error: 'must be a number of seconds' })
      .min(0.1, 'must be at least 0.1')
      .max(30, 'must be at most 30')
      .default(3),
    WEBHOOK_RATE_LIMIT: requests(10),
    ALERT_SETTLE: seconds(300),
    ALERT_LIFETIME: seconds(30 * 86_400),
    ALERT_REMINDER_BEFORE: seconds(3 * 86_400),
    ALERT_CONFIRM_WITHIN: seconds(86_400),
    ALERTS_PER_ADDRESS: requests(10),
    ALERTS_PER_STATION: requests(2000),
    ALERT_REQUESTS_PER_HOUR: requests(10),
    PORTAL_REQUEST_TIMEOUT: z.coerce
      .number({ error: 'must be a number of seconds' })
      .positive('must be more than 0')
      .max(600, 'must be at most 600')
      .default(15),
    SHUTDOWN_DELAY: z.coerce.number().min(0).max(120).default(0),
    SHUTDOWN_TIMEOUT: z.coerce.number().positive().max(600).default(10),
    EVENT_LOOP_STALL: z.coerce.number({ error: 'must be a number of seconds' }).min(0.01, 'must be at least 0.01').max(600, 'must be at most 600').default(1),
  })
  .refine((env) => env.STATUS_STALE_AFTER < env.STATUS_UNKNOWN_AFTER, {
    path: ['STATUS_STALE_AFTER'],
    message: 'must be smaller than STATUS_UNKNOWN_AFTER',
  });

export type Env = z.infer<typeof envSchema>;

export type { Config } from './shape.js';

/** Parses the environment once; throws a ConfigError naming every bad variable. */
export function loadConfig(source: Record<string, string | undefined> = process.env): Config {
  const relevant = Object.fromEntries(
    Object.keys(envSchema.shape).map((key) => [key, source[key]]),
  );
  const parsed = envSchema.safeParse(relevant);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) => {
      const name = String(issue.path[0] ?? 'environment');
      const given = source[name];
      // A URL's password is never repeated (an unparseable one may hold it anywhere: not repeated at all).
      const value = name.endsWith('_URL') && given !== undefined ? redactUrl(given) : given;
      const shown = name === 'ADMIN_TOKEN' || name === 'METRICS_TOKEN' || value === undefined ? '' : ` (got "${value}")`;
      return `${name} ${issue.message}${shown}`;
    });
    throw new ConfigError(`invalid configuration: ${problems.join('; ')}`);
  }
  const env = parsed.data;
  return {
    port: env.PORT,
    host: env.HOST,
    databaseUrl: env.DATABASE_URL,
    redisUrl: env.REDIS_URL,
    redisSentinel: redisSentinelOf(env),
    redisPrefix: env.REDIS_PREFIX ?? '',
    redisPrefixSet: env.REDIS_PREFIX !== undefined,
    platformId: undefined,
    baseUrl: (env.BASE_URL ?? `http://${env.HOST}:${env.PORT}`).replace(/\/+$/, ''),
    baseUrlDerived: env.BASE_URL === undefined,
    logLevel: env.LOG_LEVEL,
    maxBodyBytes: env.MAX_BODY_BYTES,
    adminToken: env.ADMIN_TOKEN,
    statusStaleAfterMs: env.STATUS_STALE_AFTER * 1000,
    statusUnknownAfterMs: env.STATUS_UNKNOWN_AFTER * 1000,
    statusPricingStaleAfterMs: env.STATUS_PRICING_STALE_AFTER * 1000,
    smtpUrl: env.SMTP_URL,
    mailFrom: env.MAIL_FROM,
    mailTimeZone: env.MAIL_TIME_ZONE,
    tokenReminderOffsetsMs: durations(env.TOKEN_REMINDERS),
    mailSweepEveryMs: env.MAIL_SWEEP_EVERY * 1000,
    adminEmails: [...new Set(env.ADMIN_EMAILS.map((address) => address.toLowerCase()))],
    portalSessionIdleMs: env.PORTAL_SESSION_IDLE * 1000,
    portalSessionMaxMs: env.PORTAL_SESSION_MAX * 1000,
    revealLinkTtlMs: env.REVEAL_LINK_TTL * 1000,
    mailClaimMs: env.MAIL_CLAIM_SECONDS * 1000,
    mailRetryMs: Math.round(env.MAIL_RETRY_DELAY * 1000),
    metricsToken: env.METRICS_TOKEN,
    databaseTimeoutMs: env.DATABASE_TIMEOUT * 1000,
    redisTimeoutMs: env.REDIS_TIMEOUT * 1000,
    rateLimitTimeoutMs: Math.round(env.RATE_LIMIT_TIMEOUT * 1000),
    shutdownDelayMs: env.SHUTDOWN_DELAY * 1000,
    shutdownTimeoutMs: env.SHUTDOWN_TIMEOUT * 1000,
    eventLoopStallMs: env.EVENT_LOOP_STALL * 1000,
    trustProxy: trustEntries(env.TRUST_PROXY),
    historyRetentionDays: env.HISTORY_RETENTION_DAYS,
    historyEveryMs: env.HISTORY_EVERY * 1000,
    historyLagMs: env.HISTORY_LAG * 1000,
    datex2Publisher: { country: env.DATEX2_COUNTRY, nationalIdentifier: env.DATEX2_PUBLISHER },
    deletedRetentionDays: env.DELETED_RETENTION_DAYS,
    webhookSecretKey: env.WEBHOOK_SECRET_KEY === undefined ? undefined : secretKey(env.WEBHOOK_SECRET_KEY),
    webhookAllowLoopback: env.WEBHOOK_ALLOW_LOOPBACK === 'true',
    webhookGiveUpAfterMs: env.WEBHOOK_GIVE_UP_AFTER * 1000,
    webhookSecretOverlapMs: env.WEBHOOK_SECRET_OVERLAP * 1000,
    webhookTimeoutMs: env.WEBHOOK_TIMEOUT * 1000,
    webhookResolveTimeoutMs: env.WEBHOOK_RESOLVE_TIMEOUT * 1000,
    webhookRateLimit: env.WEBHOOK_RATE_LIMIT,
    alertSettleMs: env.ALERT_SETTLE * 1000,
    alertLifetimeMs: env.ALERT_LIFETIME * 1000,
    alertReminderMs: env.ALERT_REMINDER_BEFORE * 1000,
    alertConfirmMs: env.ALERT_CONFIRM_WITHIN * 1000,
    alertsPerAddress: env.ALERTS_PER_ADDRESS,
    alertsPerStation: env.ALERTS_PER_STATION,
    alertRequestsPerHour: env.ALERT_REQUESTS_PER_HOUR,
    portalRequestTimeoutMs: env.PORTAL_REQUEST_TIMEOUT * 1000,
    importV2RateLimit: env.IMPORT_V2_RATE_LIMIT,
    importV1RateLimit: env.IMPORT_V1_RATE_LIMIT,
    exportV1RateLimit: env.EXPORT_V1_RATE_LIMIT,
    sandbox: env.SANDBOX === 'on',
    sandboxRateLimit: env.SANDBOX_RATE_LIMIT,
    publicMap: env.PUBLIC_MAP === 'true',
    mapStyleUrl: env.MAP_STYLE_URL,
    mapRateLimit: env.MAP_RATE_LIMIT,
    mapRateLimitDay: env.MAP_RATE_LIMIT_DAY,
    mapStreamsPerAddress: env.MAP_STREAMS_PER_ADDRESS,
    exportV2RateLimitMinute: env.EXPORT_V2_RATE_LIMIT_MINUTE,
    exportV2RateLimitDay: env.EXPORT_V2_RATE_LIMIT_DAY,
    exportV2RateLimitDayWindowSeconds: env.EXPORT_V2_RATE_LIMIT_DAY_WINDOW,
    pushStreamsPerUser: env.PUSH_STREAMS_PER_USER,
    pushAuthTimeoutMs: env.PUSH_AUTH_TIMEOUT * 1000,
    pushIdleTimeoutSeconds: env.PUSH_IDLE_TIMEOUT,
    pushMaxAgeSeconds: env.PUSH_MAX_AGE,
    pushMaxBacklogBytes: env.PUSH_MAX_BACKLOG,
  };
}

/** WEBHOOK_SECRET_KEY's 32 bytes: 64 hex digits, else base64 or base64url. */
function secretKey(text: string): Buffer {
  return /^[0-9a-fA-F]{64}$/.test(text) ? Buffer.from(text, 'hex') : Buffer.from(text.replace(/-/g, '+').replace(/_/g, '/'), 'base64');
}

const UNIT_MS = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;

/** `30d,7d` → the two durations in milliseconds, longest first. */
function durations(text: string): [number, number] {
  const [a, b] = text.split(',').map((part) => {
    const match = /^(\d+)([smhd])$/.exec(part.trim())!;
    return Number(match[1]) * UNIT_MS[match[2] as keyof typeof UNIT_MS];
  }) as [number, number];
  return a >= b ? [a, b] : [b, a];
}

/** A URL fit for messages and logs: the password is replaced. */
export { redactUrl };
