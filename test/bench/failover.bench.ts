/**
 * failover: what a PostgreSQL standby costs and what asynchronous replication loses. For each mode
 * (asynchronous, then synchronous: `synchronous_standby_names` on the primary, `synchronous_commit = on`)
 * a primary and a streaming replica of the bench's own (test/helpers/postgres-cluster.ts) serve the
 * platform (./lib/platform-server.ts) through a host list DATABASE_URL (target_session_attrs=read-write):
 *
 * 1. the import v2 cost: one transmission per request under wrk's load, as the import-v2 scenario
 *    measures it, with the replica's lag sampled every 50 ms meanwhile (bytes of WAL the replica had
 *    not yet replayed, and pg_stat_replication's write/flush/replay lags);
 * 2. BENCH_FAILOVERS failovers (default 3), each on a fresh pair: a steady load of 32 clients posting
 *    two transmissions per request, the primary killed with SIGKILL, the replica promoted 1 s later;
 *    then the acknowledged (204) requests missing on the new primary are counted: with synchronous
 *    replication there must be none, with asynchronous replication they are what it loses.
 */
import { availableParallelism, cpus } from 'node:os';
import postgres from 'postgres';
import { importLoad, storedRequests, summary } from '../helpers/failover-load.js';
import { TOKENS } from '../helpers/fixtures.js';
import { startPostgresPair, type PostgresPair } from '../helpers/postgres-cluster.js';
import { Child } from './lib/child.js';
import { CPU_HEADERS, CPU_LEGEND, cpuCells, loaderLine } from './lib/cpu-report.js';
import { IMPORT_V2_STATIONS, stationIds } from './lib/fixtures.js';
import { measure, type Measurement } from './lib/load.js';
import { dropRedisKeys } from './lib/redis-keys.js';
import type { BenchOptions, Scenario } from './lib/scenario.js';
import { fixed, integer, table } from './lib/table.js';
import { wrkVersion } from './lib/wrk.js';

const PATH = '/import/v2/signal/availability/';
const RATE_LIMIT = '100000000';
const NOW = '@@now@@';
const STATIONS = stationIds(IMPORT_V2_STATIONS);
const FAILOVERS = Number(process.env.BENCH_FAILOVERS || 3);
const CLIENTS = 32;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface Lag {
  maxBytes: number;
  meanBytes: number;
  maxReplayMs: number;
  maxFlushMs: number;
}

/** Samples the replica's lag on the primary every 50 ms until `stop()`. */
function lagSampler(primaryUrl: string): { stop(): Promise<Lag> } {
  const sql = postgres(primaryUrl, { max: 1, onnotice: () => {} });
  const bytes: number[] = [];
  let replay = 0;
  let flush = 0;
  let running = true;
  const sampling = (async () => {
    while (running) {
      const [row] = await sql<{ behind: string | null; replay_ms: number | null; flush_ms: number | null }[]>`
        SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), replay_lsn)::text AS behind,
               extract(epoch FROM replay_lag) * 1000 AS replay_ms, extract(epoch FROM flush_lag) * 1000 AS flush_ms
        FROM pg_stat_replication`;
      if (row) {
        bytes.push(Number(row.behind ?? 0));
        replay = Math.max(replay, Number(row.replay_ms ?? 0));
        flush = Math.max(flush, Number(row.flush_ms ?? 0));
      }
      await sleep(50);
    }
  })();
  return {
    async stop() {
      running = false;
      await sampling.catch(() => {});
      await sql.end({ timeout: 1 });
      return {
        maxBytes: Math.max(0, ...bytes),
        meanBytes: bytes.length ? bytes.reduce((a, b) => a + b, 0) / bytes.length : 0,
        maxReplayMs: replay,
        maxFlushMs: flush,
      };
    },
  };
}

/** The platform in a child process on the pair's host list, with the import-v2 stations. */
async function platformOn(pair: PostgresPair, prefix: string) {
  const { child, ready } = await Child.start('platform', new URL('./lib/platform-server.ts', import.meta.url), {
    env: {
      BENCH_DATABASE_URL: pair.url,
      BENCH_REDIS_PREFIX: prefix,
      BENCH_FIXTURE: 'import-v2',
      BENCH_PLATFORM_ENV: JSON.stringify({ IMPORT_V2_RATE_LIMIT: RATE_LIMIT, DATABASE_TIMEOUT: '1' }),
    },
  });
  return { child, url: `http://127.0.0.1:${ready.port as number}` };
}

interface Failover {
  acknowledged: number;
  lost: number;
  /** Requests stored whole or not at all: those stored with one transmission only. */
  half: number;
  statuses: Record<string, number>;
  longestMs: number;
  servedAgainMs: number | undefined;
  lagBeforeKillBytes: number;
}

/** Runs `fn` with a fresh pair and a platform on it; stops both, whatever happens. */
async function withPair<T>(synchronous: boolean, round: number, fn: (pair: PostgresPair, platform: { child: Child; url: string }) => Promise<T>): Promise<T> {
  const pair = await startPostgresPair({ synchronous });
  const prefix = `hrs_bench_failover_${process.pid}_${round}`;
  let platform: { child: Child; url: string } | undefined;
  try {
    platform = await platformOn(pair, prefix);
    return await fn(pair, platform);
  } finally {
    await platform?.child.stop();
    await pair.stop();
    await dropRedisKeys(prefix).catch(() => {});
  }
}

/** WAL bytes the replica has not replayed yet, as the primary sees it now. */
async function replicaBehind(primaryUrl: string): Promise<number> {
  const sql = postgres(primaryUrl, { max: 1, onnotice: () => {} });
  try {
    const [row] = await sql<{ behind: string }[]>`SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), replay_lsn)::text AS behind FROM pg_stat_replication`;
    return Number(row?.behind ?? Number.NaN);
  } finally {
    await sql.end({ timeout: 1 });
  }
}

async function failover(pair: PostgresPair, url: string): Promise<Failover> {
  const load = importLoad(url, CLIENTS, STATIONS);
  await sleep(2000);
  const behind = await replicaBehind(pair.primaryUrl);
  const killedAt = performance.now();
  await pair.killPrimary();
  await sleep(1000);
  await pair.promoteReplica();
  const promotedAt = performance.now();
  for (let waited = 0; waited < 20_000; waited += 100) {
    const back = load.answers.find((a) => a.status === 204 && a.sentAt > promotedAt);
    if (back && performance.now() - back.answeredAt > 1000) break;
    await sleep(100);
  }
  await load.stop();
  const stored = await storedRequests(pair.replicaUrl);
  const seen = summary(load.answers, killedAt);
  return {
    acknowledged: load.acknowledged.size,
    lost: [...load.acknowledged].filter((r) => stored.get(r) !== 2).length,
    half: [...stored.values()].filter((n) => n !== 2).length,
    statuses: seen.statuses,
    longestMs: seen.longestMs,
    servedAgainMs: seen.servedAgainMs,
    lagBeforeKillBytes: behind,
  };
}

async function run(options: BenchOptions): Promise<void> {
  const costs: { mode: string; result: Measurement; lag: Lag }[] = [];
  const failovers: { mode: string; round: number; f: Failover }[] = [];
  let round = 0;
  for (const synchronous of [false, true]) {
    const mode = synchronous ? 'synchronous' : 'asynchronous';
    await withPair(synchronous, round++, async (pair, platform) => {
      const bodies = STATIONS.map((hrs, i) =>
        JSON.stringify([{ hrs, datetime: NOW, nozzles: [{ id: 'N1', available: i % 7 !== 0 }], station: { maintenance: false, limitedly_available: false } }]),
      );
      let sampler: ReturnType<typeof lagSampler> | undefined;
      let lag: Lag | undefined;
      const result = await measure(
        platform.child,
        { url: `${platform.url}${PATH}`, method: 'POST', headers: { Authorization: `Bearer ${TOKENS.import_v2}`, 'Content-Type': 'application/json' }, bodies, nowPlaceholder: NOW, label: `import v2 ${mode}` },
        options,
        { windowStart: () => (sampler = lagSampler(pair.primaryUrl)), windowEnd: () => void sampler?.stop().then((l) => (lag = l)) },
      );
      while (!lag) await sleep(20);
      costs.push({ mode, result, lag });
    });
    for (let i = 0; i < FAILOVERS; i++) {
      const f = await withPair(synchronous, round++, (pair, platform) => failover(pair, platform.url));
      failovers.push({ mode, round: i + 1, f });
      options.print(`${mode} failover ${i + 1}: ${f.acknowledged} acknowledged, ${f.lost} lost`);
    }
  }

  options.print();
  options.print(loaderLine(`wrk ${wrkVersion()}`, options.connections, options.durationSeconds, options.warmupSeconds));
  options.print(`machine: ${availableParallelism()} CPUs (${cpus()[0]?.model.trim() ?? 'unknown'}), Node.js ${process.version}; PostgreSQL primary + streaming replica on this machine`);
  options.print();
  options.print('import v2, 1 transmission per request, through the host list DATABASE_URL:');
  options.print(
    table(
      ['replication', 'req/s', 'p50 ms', 'p99 ms', 'non-2xx', ...CPU_HEADERS, 'lag max B', 'lag mean B', 'flush lag max ms', 'replay lag max ms'],
      costs.map(({ mode, result: r, lag }) => [
        mode, integer(r.requestsPerSecond), fixed(r.p50Ms, 3), fixed(r.p99Ms, 3), integer(r.non2xx), ...cpuCells(r),
        integer(lag.maxBytes), integer(lag.meanBytes), fixed(lag.maxFlushMs, 1), fixed(lag.maxReplayMs, 1),
      ]),
    ),
  );
  options.print(CPU_LEGEND + ' PG counts both servers of the pair (and any other PostgreSQL on this machine).');
  options.print('lag: WAL bytes the replica had not replayed, sampled every 50 ms on the primary over the measured seconds.');
  options.print();
  options.print(`failovers: ${CLIENTS} clients, 2 transmissions per request; SIGKILL of the primary, promotion 1 s later, DATABASE_TIMEOUT=1:`);
  options.print(
    table(
      ['replication', '#', 'acknowledged', 'lost', 'half-stored', 'replica behind at kill B', 'statuses after the kill', 'longest ms', 'served again after ms'],
      failovers.map(({ mode, round, f }) => [
        mode, String(round), integer(f.acknowledged), integer(f.lost), integer(f.half), integer(f.lagBeforeKillBytes),
        Object.entries(f.statuses).map(([s, n]) => `${s}: ${n}`).join(', '), integer(f.longestMs), f.servedAgainMs === undefined ? 'never' : integer(f.servedAgainMs),
      ]),
    ),
  );
  const syncLost = failovers.filter((x) => x.mode === 'synchronous').reduce((n, x) => n + x.f.lost, 0);
  const asyncLost = failovers.filter((x) => x.mode === 'asynchronous').reduce((n, x) => n + x.f.lost, 0);
  options.print();
  options.print(`acknowledged requests lost: asynchronous ${asyncLost}, synchronous ${syncLost} (must be 0)`);
  if (syncLost > 0) throw new Error(`synchronous replication lost ${syncLost} acknowledged requests`);
}

const scenario: Scenario = {
  description: 'PostgreSQL primary + streaming replica: import v2 cost, replica lag, and what a failover loses (async vs sync)',
  run,
};
export default scenario;
