import postgres from 'postgres';
import { loadConfig, type Config } from '../../src/config/config.js';
import { createLogger } from '../../src/config/log.js';
import { startPlatform, type RunningPlatform } from '../../src/platform.js';
import { loadFixture } from '../../src/registry/file/load.js';
import { baseFixture, TOKENS } from './fixtures.js';
import { ADMIN_TOKEN, dropRedisKeys, uniqueName } from './platform.js';
import { TEST_REDIS_URL } from './services.js';
import type { PostgresPair } from './postgres-cluster.js';

/**
 * A steady import v2 load on a platform whose DATABASE_URL is a PostgreSQL pair's host list, and what
 * it saw through a failover: for test/system/postgres-failover.test.ts and the `failover` bench.
 */

export const STATIONS = Array.from({ length: 20 }, (_, i) => `FOV${String.fromCharCode(65 + Math.floor(i / 26))}${String.fromCharCode(65 + (i % 26))}`);

interface Teardown {
  teardown(fn: () => unknown): void;
}

/** The platform in this process on the pair's host list (migrated by itself at start), with 20 stations of mon-1. */
export async function platformOnPair(t: Teardown, pair: PostgresPair, env: Record<string, string> = {}): Promise<RunningPlatform & { url: string; config: Config }> {
  const prefix = uniqueName('hrs_failover');
  const config = loadConfig({
    PORT: '0',
    LOG_LEVEL: 'silent',
    DATABASE_URL: pair.url,
    REDIS_URL: TEST_REDIS_URL,
    REDIS_PREFIX: prefix,
    ADMIN_TOKEN,
    SANDBOX: 'off',
    REDIS_TIMEOUT: '10',
    // The load is steady and above the per-token default: what is measured is the database's part.
    IMPORT_V2_RATE_LIMIT: '1000000',
    ...env,
  });
  t.teardown(() => dropRedisKeys(prefix));
  const platform = await startPlatform(config, createLogger('silent'), { workers: false });
  t.teardown(() => platform.stop('test over'));
  const f = baseFixture();
  const layout = (f.stations[0] as { layout: unknown }).layout;
  f.stations.push(...STATIONS.map((hrs_id) => ({ hrs_id, operator: 'h2-demo', name: `Station ${hrs_id}`, layout }) as never));
  f.assignments.push(...STATIONS.map((hrs_id) => ({ originator: 'mon-1', hrs_id, signal_type: 'availability', state: 'live' })));
  const sql = postgres(pair.primaryUrl, { max: 1, onnotice: () => {} });
  try {
    await loadFixture(sql, f, { baseDir: process.cwd() });
  } finally {
    await sql.end({ timeout: 1 });
  }
  platform.parts.tokens.invalidate();
  await platform.parts.registry.reload();
  return { ...platform, url: `http://127.0.0.1:${platform.port}`, config };
}

/** One request the load made. */
export interface Answered {
  request: number;
  /** performance.now() when it was sent and answered. */
  sentAt: number;
  answeredAt: number;
  /** The HTTP status, or 0 when the request itself failed. */
  status: number;
  retryAfter: string | null;
}

export interface ImportLoad {
  answers: Answered[];
  /** Requests answered 204: each carries two transmissions, `req-N`. */
  acknowledged: Set<number>;
  stop(): Promise<void>;
}

/**
 * `clients` clients each posting two transmissions (two of `stations`, mon-1's) per request, one
 * request after the other: a steady load, its answers recorded.
 */
export function importLoad(baseUrl: string, clients: number, stations: readonly string[] = STATIONS): ImportLoad {
  const answers: Answered[] = [];
  const acknowledged = new Set<number>();
  let next = 0;
  let running = true;
  const transmission = (hrs: string, request: number) => ({
    hrs,
    datetime: new Date().toISOString(),
    transmission_id: `req-${request}`,
    nozzles: [{ id: 'N1', available: request % 2 === 0 }],
    station: { maintenance: false, limitedly_available: false },
  });
  const client = async () => {
    while (running) {
      const request = next++;
      const pair = [stations[request % stations.length]!, stations[(request + 7) % stations.length]!];
      const sentAt = performance.now();
      let status = 0;
      let retryAfter: string | null = null;
      try {
        const res = await fetch(`${baseUrl}/import/v2/signal/availability/`, {
          method: 'POST',
          headers: { Authorization: `Bearer ${TOKENS.import_v2}`, 'Content-Type': 'application/json' },
          body: JSON.stringify(pair.map((hrs) => transmission(hrs, request))),
        });
        status = res.status;
        retryAfter = res.headers.get('retry-after');
        await res.arrayBuffer();
      } catch {
        status = 0;
      }
      answers.push({ request, sentAt, answeredAt: performance.now(), status, retryAfter });
      if (status === 204) acknowledged.add(request);
    }
  };
  const running_ = Array.from({ length: clients }, client);
  return {
    answers,
    acknowledged,
    async stop() {
      running = false;
      await Promise.all(running_);
    },
  };
}

/** How many transmissions of each request a server holds (`req-N` → count). */
export async function storedRequests(url: string): Promise<Map<number, number>> {
  const sql = postgres(url, { max: 1, onnotice: () => {} });
  try {
    const rows = await sql<{ transmission_id: string; n: number }[]>`
      SELECT transmission_id, count(*)::int AS n FROM signal_history WHERE transmission_id LIKE 'req-%' GROUP BY transmission_id`;
    return new Map(rows.map((r) => [Number(r.transmission_id.slice(4)), r.n]));
  } finally {
    await sql.end({ timeout: 1 });
  }
}

/** What the clients saw from `from` (performance.now()) on: status counts, Retry-After values, the longest request, when 204s came back. */
export function summary(answers: Answered[], from: number) {
  const after = answers.filter((a) => a.answeredAt >= from);
  const statuses: Record<string, number> = {};
  const retryAfters: Record<string, number> = {};
  for (const a of after) {
    statuses[a.status] = (statuses[a.status] ?? 0) + 1;
    if (a.status !== 204) retryAfters[String(a.retryAfter)] = (retryAfters[String(a.retryAfter)] ?? 0) + 1;
  }
  const longestMs = Math.max(0, ...answers.map((a) => a.answeredAt - a.sentAt));
  const lastFailure = Math.max(from, ...after.filter((a) => a.status !== 204).map((a) => a.answeredAt));
  const firstBack = after.filter((a) => a.status === 204 && a.answeredAt > lastFailure).map((a) => a.answeredAt).sort((a, b) => a - b)[0];
  return { statuses, retryAfters, longestMs, servedAgainMs: firstBack === undefined ? undefined : firstBack - from };
}
