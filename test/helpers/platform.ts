import { createServer, type AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { basename } from 'node:path';
import { connect, ensureDatabase, type Sql } from '../../db/connect.js';
import { unbounded } from '../../db/deadline.js';
import { migrate } from '../../db/migrate.js';
import { closeRedis, openRedis, type Redis } from '../../src/infra/redis.js';
import { loadConfig, type Config } from '../../src/config/config.js';
import { loadFixture } from '../../src/registry/file/load.js';
import { TOKENS } from './fixtures.js';
import { TEST_DATABASE_ROOT, TEST_REDIS_URL } from './services.js';
import { copyTemplate, dropDatabase as dropOnServer, releaseDatabase } from './databases.js';
import { createLogger } from '../../src/config/log.js';
import { SteppedClock } from './clock.js';
import { startPlatform, type RunningPlatform } from '../../src/platform.js';
import type { HttpServer } from '../../src/http/server.js';
import type { Families, PlatformParts } from '../../src/platform.js';
import { historyJobs, materialize, rollUpHours } from '../../workers/history/jobs.js';

export const ADMIN_TOKEN = 'test-admin-token-0123456789';
const ROOT_URL = TEST_DATABASE_ROOT;

interface Teardown {
  teardown(fn: () => unknown): void;
}

let counter = 0;

/** A database name of this test file's own, so test files run in parallel. */
export function uniqueName(prefix: string): string {
  const file = basename(process.argv[1] ?? 'test').replace(/\.test\.ts$/, '').replace(/[^a-z0-9]/gi, '_').toLowerCase();
  return `${prefix}_${process.pid}_${++counter}_${file}`.slice(0, 60);
}

/**
 * A config for a fresh database and Redis prefix; when the test ends (after everything it started
 * later has stopped: teardowns run last registered first) the database is dropped (by test/run.ts,
 * meanwhile, when it runs the suite) and every Redis key under the prefix deleted.
 */
export function testConfig(t: Teardown, env: Record<string, string> = {}): Config {
  const db = uniqueName('hrs_test');
  const url = new URL(ROOT_URL);
  url.pathname = `/${db}`;
  const config = loadConfig({
    PORT: '0',
    LOG_LEVEL: 'silent',
    DATABASE_URL: url.toString(),
    REDIS_URL: TEST_REDIS_URL,
    REDIS_PREFIX: db,
    ADMIN_TOKEN,
    // The export v1.1 sandbox (its stations, simulator and token) only where a test asks for it.
    SANDBOX: 'off',
    // The suite shares two cores with up to two test files at once: a Redis answer can take over the
    // 2 s default there, which would count Redis as down and let limits fail open in a test about them.
    // The frozen-Redis tests set their own.
    REDIS_TIMEOUT: '10',
    ...env,
  });
  t.teardown(async () => {
    await dropRedisKeys(config.redisPrefix);
    await releaseDatabase(ROOT_URL, db);
  });
  return config;
}

/**
 * A migrated database of the test's own and a pool on it (with the config it was made from): a copy of
 * the run's template, or migrated here when the run has none.
 */
export async function freshDatabase(t: Teardown, env: Record<string, string> = {}): Promise<{ sql: Sql; config: Config }> {
  const config = testConfig(t, env);
  const copied = await copyTemplate(config.databaseUrl);
  if (!copied) await ensureDatabase(config.databaseUrl);
  const sql = connect(config.databaseUrl);
  t.teardown(() => sql.end({ timeout: 1 }));
  if (!copied) await migrate(sql);
  return { sql, config };
}

export function dropDatabase(name: string): Promise<void> {
  return dropOnServer(ROOT_URL, name);
}

const REDIS_URL = TEST_REDIS_URL;

/** A Redis glob matching exactly the keys under `prefix:` (glob characters in the prefix taken literally). */
function keyPattern(prefix: string): string {
  return `${prefix.replace(/[*?[\]\\]/g, '\\$&')}:*`;
}

/** Runs `fn` with a connection of its own to the test Redis. */
async function withRedis<T>(fn: (redis: Redis) => Promise<T>): Promise<T> {
  const redis = await openRedis(REDIS_URL, 'hrs-test-cleanup');
  try {
    return await fn(redis);
  } finally {
    await closeRedis(redis);
  }
}

/** Every key under a Redis prefix (`${prefix}:…`), sorted; found with SCAN, never KEYS. */
export function redisKeys(prefix: string): Promise<string[]> {
  return withRedis(async (redis) => {
    const keys: string[] = [];
    for await (const found of redis.scanIterator({ MATCH: keyPattern(prefix), COUNT: 1000 })) {
      keys.push(...((Array.isArray(found) ? found : [found]) as string[]));
    }
    return keys.sort();
  });
}

/** Deletes every key under a Redis prefix (rate limits, queues, stream slots a test's platform made). */
export async function dropRedisKeys(prefix: string): Promise<void> {
  // No REDIS_PREFIX: the namespace is the database's (src/infra/namespace.ts), dropped by the test that knows it.
  if (prefix === '') return;
  const keys = await redisKeys(prefix);
  if (keys.length === 0) return;
  await withRedis(async (redis) => {
    for (let i = 0; i < keys.length; i += 1000) await redis.del(keys.slice(i, i + 1000));
  });
}

/** Captures log lines as parsed JSON objects. */
export function logCapture(): { lines: Record<string, unknown>[]; stream: Writable; raw: string[] } {
  const lines: Record<string, unknown>[] = [];
  const raw: string[] = [];
  const stream = new Writable({
    write(chunk, _enc, done) {
      for (const line of String(chunk).split('\n').filter(Boolean)) {
        raw.push(line);
        lines.push(JSON.parse(line));
      }
      done();
    },
  });
  return { lines, stream, raw };
}

export interface TestPlatform extends RunningPlatform {
  url: string;
  sql: Sql;
  logs: ReturnType<typeof logCapture>;
  /**
   * The platform's clock, the system's until stepped: `clock.advance(1000)` moves the versions and
   * dates it publishes (Last-Modified has whole seconds) without waiting for a new second.
   */
  clock: SteppedClock;
  load(fixture: unknown): ReturnType<typeof loadFixture>;
}

/** The whole platform in this process on a free port, against its own database and Redis prefix. */
export async function startTestPlatform(
  t: Teardown,
  options: {
    env?: Record<string, string>;
    fixture?: unknown;
    routes?: (server: HttpServer, parts: PlatformParts & { families: Families }) => void;
    /** Another instance on the same database and Redis prefix. */
    sameStoreAs?: TestPlatform;
    /** With `sameStoreAs`: the port to listen on (a restart on the old one); any free one by default. */
    port?: number;
    /** With `sameStoreAs`: settings that differ from the other instance's. */
    overrides?: Partial<Config>;
  } = {},
): Promise<TestPlatform> {
  const config = options.sameStoreAs ? { ...options.sameStoreAs.parts.config, port: options.port ?? 0, ...options.overrides } : testConfig(t, options.env);
  // The platform migrates a database it finds empty; a copy of the run's template has nothing left to apply.
  if (!options.sameStoreAs) await copyTemplate(config.databaseUrl);
  const logs = logCapture();
  const log = createLogger(options.env?.LOG_LEVEL ?? 'info', logs.stream);
  // Instances on one store share one clock, as instances share the system's.
  const clock = options.sameStoreAs?.clock ?? new SteppedClock();
  const platform = await startPlatform(config, log, { workers: false, routes: options.routes, clock });
  t.teardown(() => platform.stop('test over'));
  const load = async (fixture: unknown) => {
    const summary = await loadFixture(unbounded(platform.parts.sql), fixture, { baseDir: process.cwd(), clock });
    platform.parts.tokens.invalidate();
    await platform.parts.registry.reload();
    // And what the reload started (the map's static fields): a test reads what it loaded.
    await platform.parts.registry.reloadFollowed();
    return summary;
  };
  if (options.fixture !== undefined) await load(options.fixture);
  return { ...platform, url: `http://127.0.0.1:${platform.port}`, sql: platform.parts.sql, logs, clock, load };
}

/** A port nothing listens on now (a platform started on it explicitly can be restarted on it at once). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/**
 * Posts import v2 transmissions of one signal type with mon-1's token; throws unless answered 204.
 * Resolves with the instant the 204 arrived (epoch ms).
 */
export async function postSignals(p: { url: string }, category: string, body: unknown): Promise<number> {
  const res = await fetch(`${p.url}/import/v2/signal/${category}/`, {
    method: 'POST',
    body: JSON.stringify(body),
    headers: { Authorization: `Bearer ${TOKENS.import_v2}`, 'Content-Type': 'application/json' },
  });
  if (res.status !== 204) throw new Error(`POST ${category} answered ${res.status}: ${await res.text()}`);
  return Date.now();
}

/** fetch with a bearer token. */
export function get(url: string, token?: string, init: RequestInit = {}): Promise<Response> {
  const headers = new Headers(init.headers);
  if (token !== undefined) headers.set('Authorization', `Bearer ${token}`);
  return fetch(url, { ...init, headers });
}

/**
 * Runs the history worker's jobs once on a test platform (its workers do not run), as `hrs history run`
 * does: the history is then published, so its routes answer with figures rather than 503.
 */
export async function publishHistory(p: TestPlatform): Promise<void> {
  const { config } = p.parts;
  const jobs = historyJobs(unbounded(p.sql), () => p.parts.registry, config);
  await materialize(jobs, Number.MAX_SAFE_INTEGER);
  await rollUpHours(jobs, Number.MAX_SAFE_INTEGER);
}
