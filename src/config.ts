import { z } from 'zod';

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
    DATABASE_URL: url(['postgres:', 'postgresql:']).default(DEFAULT_DATABASE_URL),
    REDIS_URL: url(['redis:', 'rediss:']).default(DEFAULT_REDIS_URL),
    REDIS_PREFIX: z
      .string()
      .regex(/^[A-Za-z0-9_.-]+$/, 'may hold only letters, digits, ".", "_" and "-"')
      .default('hrs'),
    BASE_URL: z.preprocess(blankAsUnset, url(['http:', 'https:']).optional()),
    LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
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
    IMPORT_V2_RATE_LIMIT: requests(300),
    IMPORT_V1_RATE_LIMIT: requests(300),
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
    SHUTDOWN_DELAY: z.coerce.number().min(0).max(120).default(0),
    SHUTDOWN_TIMEOUT: z.coerce.number().positive().max(600).default(10),
  })
  .refine((env) => env.STATUS_STALE_AFTER < env.STATUS_UNKNOWN_AFTER, {
    path: ['STATUS_STALE_AFTER'],
    message: 'must be smaller than STATUS_UNKNOWN_AFTER',
  });

export type Env = z.infer<typeof envSchema>;

export interface Config {
  port: number;
  host: string;
  databaseUrl: string;
  redisUrl: string;
  redisPrefix: string;
  /** Absolute base for links the API returns; no trailing slash. */
  baseUrl: string;
  /** True when BASE_URL was not given and baseUrl follows HOST and the port actually bound. */
  baseUrlDerived: boolean;
  logLevel: Env['LOG_LEVEL'];
  maxBodyBytes: number;
  adminToken: string | undefined;
  /** Freshness deadlines in milliseconds. */
  statusStaleAfterMs: number;
  statusUnknownAfterMs: number;
  /** Pricing turns stale when its daily heartbeat is missed (never unknown). */
  statusPricingStaleAfterMs: number;
  smtpUrl: string | undefined;
  mailFrom: string;
  /** A second bearer token for `/metrics` only (scrapers); ADMIN_TOKEN is always accepted there too. */
  metricsToken: string | undefined;
  /** How long a request waits for PostgreSQL (connecting, a statement) before it is answered 503. */
  databaseTimeoutMs: number;
  shutdownDelayMs: number;
  shutdownTimeoutMs: number;
  /** Import v2 requests per minute per signal originator (the spec's 300 unless an operator raises it). */
  importV2RateLimit: number;
  /** Import v1 and v1.1 requests per minute per signal originator, one budget for both (v2's 300 by default). */
  importV1RateLimit: number;
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
  /** Seconds without traffic before a WebSocket is closed; pings are sent before that. */
  pushIdleTimeoutSeconds: number;
  /** Bytes a subscriber may have waiting (beyond its last snapshot) before it is closed as too slow. */
  pushMaxBacklogBytes: number;
}

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
      const shown = name === 'ADMIN_TOKEN' || name === 'METRICS_TOKEN' || given === undefined ? '' : ` (got "${given}")`;
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
    redisPrefix: env.REDIS_PREFIX,
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
    metricsToken: env.METRICS_TOKEN,
    databaseTimeoutMs: env.DATABASE_TIMEOUT * 1000,
    shutdownDelayMs: env.SHUTDOWN_DELAY * 1000,
    shutdownTimeoutMs: env.SHUTDOWN_TIMEOUT * 1000,
    importV2RateLimit: env.IMPORT_V2_RATE_LIMIT,
    importV1RateLimit: env.IMPORT_V1_RATE_LIMIT,
    exportV2RateLimitMinute: env.EXPORT_V2_RATE_LIMIT_MINUTE,
    exportV2RateLimitDay: env.EXPORT_V2_RATE_LIMIT_DAY,
    exportV2RateLimitDayWindowSeconds: env.EXPORT_V2_RATE_LIMIT_DAY_WINDOW,
    pushStreamsPerUser: env.PUSH_STREAMS_PER_USER,
    pushAuthTimeoutMs: env.PUSH_AUTH_TIMEOUT * 1000,
    pushIdleTimeoutSeconds: env.PUSH_IDLE_TIMEOUT,
    pushMaxBacklogBytes: env.PUSH_MAX_BACKLOG,
  };
}

/** A URL fit for messages and logs: the password is replaced. */
export function redactUrl(value: string): string {
  try {
    const parsed = new URL(value);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return '(unparseable URL)';
  }
}
