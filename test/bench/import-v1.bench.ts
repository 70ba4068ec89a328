/**
 * import-v1: what receiving a signal over the legacy import costs, beside import v2 and the storage
 * floor. Three targets, measured one after the other under the same load against the same database:
 * the storage floor (./lib/floor-server.ts: a bare uWS endpoint storing each posted transmission
 * through the platform's own group-commit writer, with no token, rate limit or validation: what
 * durability alone costs on this machine); the platform's `POST /import/v2/signal/availability/` with
 * one transmission per request; and its `POST /import/v1.1/hrs-availability` with one signal per
 * request. Stations are taken in turn; each signal reports two fuelling options (v2: nozzles N1 and N2,
 * v1.1: 700ld and 350ld, the same nozzles' options) and the station flags, dated when its request is
 * built. The platform runs with IMPORT_V2_RATE_LIMIT and IMPORT_V1_RATE_LIMIT raised far beyond the
 * load, against the `import-v1` fixture: 50 stations with BERLA's layout, each live for mon-1 on
 * import v2 availability and on the legacy import.
 *
 * Reported per target: requests and signals per second, latency, the share of the floor's rate, and
 * the CPU each request costs in the server process and in PostgreSQL (cores busy / requests per second).
 *
 * Each run drains (no request left half done when the time is up). After each target the rows added
 * to `signal_history` must be exactly its 2xx responses (one signal each, every station live; the
 * answer goes out only after COMMIT); otherwise the scenario fails.
 */
import { availableParallelism, cpus } from 'node:os';
import { connect, type Sql } from '../../db/connect.js';
import { TOKENS } from '../helpers/fixtures.js';
import { Child } from './lib/child.js';
import { IMPORT_V2_STATIONS, stationIds } from './lib/fixtures.js';
import { measure, type Measurement } from './lib/load.js';
import { MachineCpu } from './lib/machine-cpu.js';
import { ProcessCpu } from './lib/process-cpu.js';
import type { BenchOptions, Scenario } from './lib/scenario.js';
import { fixed, integer, percentOf, table } from './lib/table.js';
import { autocannonVersion, tearDown, workspace } from './lib/workspace.js';

/** Far above anything one load generator reaches, so no request is throttled. */
const RATE_LIMIT = '100000000';
/** In the bodies, stands for the time the request is built (see LoadRequest.nowPlaceholder). */
const NOW = '@@now@@';

const STATIONS = stationIds(IMPORT_V2_STATIONS);

/** One import v2 availability transmission; a few nozzles report unavailable. */
function v2Transmission(hrsId: string, i: number) {
  return {
    hrs: hrsId,
    datetime: NOW,
    nozzles: [
      { id: 'N1', available: i % 7 !== 0 },
      { id: 'N2', available: true },
    ],
    station: { maintenance: false, limitedly_available: false },
  };
}

/** The same reading as a v1.1 signal: the two nozzles' fuelling options (700ld on N1, 350ld on N2). */
function v11Signal(hrsId: string, i: number) {
  return {
    hrs: hrsId,
    datetime: NOW,
    dispensers: [
      { fuel_type: '700ld', available: i % 7 !== 0 },
      { fuel_type: '350ld', available: true },
    ],
    maintenance: false,
    limitedly_available: false,
  };
}

interface Target {
  /** How the notes name it. */
  name: string;
  label: string;
  server: 'floor' | 'platform';
  path: string;
  headers?: Record<string, string>;
  bodies: string[];
  /** The rate limit the platform must announce for this path (RateLimit-Limit), none for the floor. */
  rateLimitVariable?: string;
}

const json = { 'Content-Type': 'application/json' };

const TARGETS: Target[] = [
  {
    name: 'the floor',
    label: 'storage floor: bare uWS + the same group-committed statement, 1 transmission',
    server: 'floor',
    path: '/',
    bodies: STATIONS.map((hrsId, i) => JSON.stringify([v2Transmission(hrsId, i)])),
  },
  {
    name: 'import v2',
    label: `platform POST /import/v2/signal/availability/, 1 transmission (${STATIONS.length} stations in turn)`,
    server: 'platform',
    path: '/import/v2/signal/availability/',
    headers: { Authorization: `Bearer ${TOKENS.import_v2}`, ...json },
    bodies: STATIONS.map((hrsId, i) => JSON.stringify([v2Transmission(hrsId, i)])),
    rateLimitVariable: 'IMPORT_V2_RATE_LIMIT',
  },
  {
    name: 'import v1.1',
    label: `platform POST /import/v1.1/hrs-availability, 1 signal (${STATIONS.length} stations in turn)`,
    server: 'platform',
    path: '/import/v1.1/hrs-availability',
    headers: { Authorization: `Bearer ${TOKENS.import_v1}`, ...json },
    bodies: STATIONS.map((hrsId, i) => JSON.stringify([v11Signal(hrsId, i)])),
    rateLimitVariable: 'IMPORT_V1_RATE_LIMIT',
  },
];

/** One request before the load: a 204 with no body, and (platform) the raised rate limit. */
async function check(url: string, target: Target): Promise<void> {
  const res = await fetch(url, { method: 'POST', headers: target.headers, body: target.bodies[0]!.split(NOW).join(new Date().toISOString()) });
  const text = await res.text();
  if (res.status !== 204 || text !== '') throw new Error(`${target.label} answered ${res.status} ${text.slice(0, 300)}; not benchmarking that`);
  if (target.rateLimitVariable && res.headers.get('ratelimit-limit') !== RATE_LIMIT) {
    throw new Error(
      `${target.label}: RateLimit-Limit is ${res.headers.get('ratelimit-limit')}, not ${RATE_LIMIT}: ` +
        `the platform did not take ${target.rateLimitVariable} and would throttle the load`,
    );
  }
}

async function countHistory(sql: Sql): Promise<number> {
  const [row] = await sql<{ n: string }[]>`SELECT count(*) AS n FROM signal_history`;
  return Number(row!.n);
}

interface Row {
  target: Target;
  result: Measurement;
  /** Cores busy in PostgreSQL, in Redis and on the whole machine during the measured load. */
  databaseCpu: number;
  redisCpu: number;
  machineCpu: number;
  /** Rows signal_history gained during the measured load. */
  historyAdded: number;
}

/** CPU per request in microseconds, from cores busy and requests per second. */
const microsPerRequest = (cores: number, requestsPerSecond: number) => (requestsPerSecond > 0 ? (cores / requestsPerSecond) * 1e6 : Number.NaN);

async function run(options: BenchOptions): Promise<void> {
  const space = workspace('import_v1');
  const { database, databaseUrl } = space;
  const servers: Partial<Record<Target['server'], { child: Child; port: number }>> = {};
  const rows: Row[] = [];
  let sql: Sql | undefined;
  try {
    const platform = await Child.start('platform', new URL('./lib/platform-server.ts', import.meta.url), {
      env: {
        BENCH_DATABASE_URL: databaseUrl.toString(),
        BENCH_REDIS_PREFIX: database,
        BENCH_FIXTURE: 'import-v1',
        BENCH_PLATFORM_ENV: JSON.stringify({ IMPORT_V2_RATE_LIMIT: RATE_LIMIT, IMPORT_V1_RATE_LIMIT: RATE_LIMIT }),
      },
    });
    servers.platform = { child: platform.child, port: platform.ready.port as number };
    // After the platform: it migrates the database and loads the stations the floor writes for.
    const floor = await Child.start('storage floor', new URL('./lib/floor-server.ts', import.meta.url), {
      env: { BENCH_DATABASE_URL: databaseUrl.toString() },
    });
    servers.floor = { child: floor.child, port: floor.ready.port as number };
    const counter = connect(databaseUrl.toString(), { max: 1 });
    sql = counter;

    for (const target of TARGETS) {
      const server = servers[target.server]!;
      const url = `http://127.0.0.1:${server.port}${target.path}`;
      await check(url, target);
      const databaseCpu = new ProcessCpu(['postgres']);
      const redisCpu = new ProcessCpu(['redis-server']);
      const machineCpu = new MachineCpu();
      const cpu = { database: Number.NaN, redis: Number.NaN, machine: Number.NaN };
      const history = { before: 0, after: 0 };
      const result = await measure(
        server.child,
        { url, method: 'POST', headers: target.headers, bodies: target.bodies, nowPlaceholder: NOW, drain: true },
        options,
        {
          beforeLoad: async () => {
            history.before = await countHistory(counter);
            databaseCpu.start();
            redisCpu.start();
            machineCpu.start();
          },
          afterLoad: async () => {
            cpu.database = databaseCpu.stop();
            cpu.redis = redisCpu.stop();
            cpu.machine = machineCpu.stop();
            history.after = await countHistory(counter);
          },
        },
      );
      rows.push({ target, result, databaseCpu: cpu.database, redisCpu: cpu.redis, machineCpu: cpu.machine, historyAdded: history.after - history.before });
    }
  } finally {
    await sql?.end({ timeout: 1 });
    await tearDown(space, Object.values(servers));
  }

  const floor = rows[0]!.result;
  options.print(
    `load generator: autocannon ${autocannonVersion()} in its own process, ${options.connections} connections, ` +
      `${options.durationSeconds} s per target` +
      (options.warmupSeconds > 0 ? ` after ${options.warmupSeconds} s of warm-up` : ' without warm-up') +
      '; each run drains (no request left unanswered at its end)',
  );
  options.print(`machine: ${availableParallelism()} CPUs (${cpus()[0]?.model.trim() ?? 'unknown'}), Node.js ${process.version}`);
  options.print(
    `platform: ${STATIONS.length} benchmark stations live on import v2 availability and on import v1, ` +
      `IMPORT_V2_RATE_LIMIT=IMPORT_V1_RATE_LIMIT=${RATE_LIMIT}; each signal is dated when its request is built`,
  );
  options.print();
  options.print(
    table(
      ['target', 'signals/s', 'p50 ms', 'p99 ms', 'non-2xx', 'errors', '% of floor', 'server CPU', 'server µs/req', 'PG CPU', 'PG µs/req', 'Redis CPU', 'loader CPU', 'machine CPU'],
      rows.map(({ target, result: r, databaseCpu, redisCpu, machineCpu }, i) => [
        target.label,
        integer(r.requestsPerSecond),
        fixed(r.p50Ms, 3),
        fixed(r.p99Ms, 3),
        integer(r.non2xx),
        integer(r.errors),
        i === 0 ? 'floor' : percentOf(r.requestsPerSecond, floor.requestsPerSecond),
        fixed(r.serverCpu, 2),
        integer(microsPerRequest(r.serverCpu, r.requestsPerSecond)),
        fixed(databaseCpu, 2),
        integer(microsPerRequest(databaseCpu, r.requestsPerSecond)),
        fixed(redisCpu, 2),
        fixed(r.loaderCpu, 2),
        fixed(machineCpu, 2),
      ]),
    ),
  );
  options.print();
  options.print('signals/s: answers received within the measured seconds, per second (one signal per request, so also req/s).');
  options.print('% of floor: as a percentage of the storage floor\'s rate in this run. Latency: over every 2xx response.');
  options.print(
    'CPU: cores busy during the measurement (1.00 = one core all the time); µs/req: that CPU per request answered. ' +
      'PG and Redis: all PostgreSQL and Redis processes on this machine; machine: every process (n/a without /proc).',
  );

  const v2 = rows[1]!.result;
  const v11 = rows[2]!.result;
  options.print();
  options.print(
    `import v1.1: ${integer(v11.requestsPerSecond)} signals/s, ${(v11.requestsPerSecond / floor.requestsPerSecond * 100).toFixed(0)}% of the floor's ` +
      `and ${(v11.requestsPerSecond / v2.requestsPerSecond * 100).toFixed(0)}% of import v2's ${integer(v2.requestsPerSecond)}; ` +
      `server CPU ${integer(microsPerRequest(v11.serverCpu, v11.requestsPerSecond))} µs per request against ` +
      `${integer(microsPerRequest(v2.serverCpu, v2.requestsPerSecond))} µs for import v2 and ` +
      `${integer(microsPerRequest(floor.serverCpu, floor.requestsPerSecond))} µs for the floor`,
  );
  const busy = rows.flatMap(({ target, result, databaseCpu, redisCpu, machineCpu }) => {
    const others = machineCpu - result.serverCpu - result.loaderCpu - databaseCpu - redisCpu;
    return others >= 0.25 ? [`${target.name} (${others.toFixed(2)} cores)`] : [];
  });
  if (busy.length > 0) {
    options.print(
      `Note: other processes kept the machine busy during ${busy.join(', ')}: the rates are lower than on a quiet ` +
        'machine and vary from run to run; CPU per request is the steadier comparison.',
    );
  }
  const bound = rows.flatMap(({ target, result }) => (result.loaderCpu >= 0.9 ? [target.name] : []));
  if (bound.length > 0) {
    options.print(`Note: the load generator used a whole core for ${bound.join(', ')}: that figure is bounded by the generator, not by the server.`);
  }
  for (const { target, result } of rows) {
    if (result.non2xx === 0) continue;
    const codes = Object.entries(result.statusCodes)
      .filter(([code]) => !code.startsWith('2'))
      .map(([code, n]) => `${code}: ${n}`)
      .join(', ');
    options.print(`Note: ${target.name} got non-2xx answers (${codes}).`);
  }

  options.print();
  options.print('durability: rows added to signal_history during each run = 2xx responses (one live signal each)');
  const failures: string[] = [];
  options.print(
    table(
      ['target', '2xx', 'rows added', 'check'],
      rows.map(({ target, result, historyAdded }) => {
        const ok = historyAdded === result.responses2xx;
        if (!ok) {
          failures.push(
            `${target.label}: ${historyAdded} rows added to signal_history, ${result.responses2xx} expected` +
              (result.errors > 0 ? ` (${result.errors} requests got no answer: connection errors or timeouts)` : ''),
          );
        }
        return [target.label, integer(result.responses2xx), integer(historyAdded), ok ? 'ok' : 'FAILED'];
      }),
    ),
  );
  if (failures.length > 0) throw new Error(`durability check failed:\n  ${failures.join('\n  ')}`);
}

const scenario: Scenario = {
  description:
    'import v1.1: POST /import/v1.1/hrs-availability (1 signal per request) beside import v2 (1 transmission) and the storage floor',
  run,
};
export default scenario;
