/**
 * import-v1: what receiving a signal over the legacy import costs, beside import v2 and the storage
 * floor. Four targets, measured one after the other under the same load against the same database:
 * the storage floor (./lib/floor-server.ts: a bare uWS endpoint storing each posted transmission
 * through the platform's own group-commit writer, with no token, rate limit or validation: what
 * durability alone costs on this machine); the platform's `POST /import/v2/signal/availability/` with
 * one transmission per request; its `POST /import/v1.1/hrs-availability` and its
 * `POST /import/v1/hrs-availability` with one signal per request. Stations are taken in turn; each
 * signal reports two fuelling options (v2: nozzles N1 and N2, v1.1: 700ld and 350ld, v1: the v1 fuel
 * types 700car and 350car, the same nozzles' options) and the station flags, dated when its request
 * is built. The platform runs with IMPORT_V2_RATE_LIMIT and IMPORT_V1_RATE_LIMIT raised far beyond the
 * load, against the `import-v1` fixture: 50 stations with BERLA's layout, each live for mon-1 on
 * import v2 availability and on the legacy import.
 *
 * Reported per target: requests and signals per second, latency, the share of the floor's rate, and
 * the CPU each request costs in the server process and in PostgreSQL (cores busy / requests per second).
 *
 * Each run drains (no request left half done when the time is up). After each target the rows added
 * to `signal_history` must be exactly its 2xx responses (one signal each, every station live; the
 * answer goes out only after COMMIT), and every request sent must have been answered; otherwise the
 * scenario fails. Goal: each legacy import at most 90 µs of server CPU per single-signal request, as
 * import v2.
 */
import { availableParallelism, cpus } from 'node:os';
import { connect, type Sql } from '../../db/connect.js';
import { TOKENS } from '../helpers/fixtures.js';
import { Child } from './lib/child.js';
import { IMPORT_V2_STATIONS, stationIds } from './lib/fixtures.js';
import { measure, type Measurement } from './lib/load.js';
import { MachineCpu } from './lib/machine-cpu.js';
import { CPU_HEADERS, CPU_LEGEND, cpuCells, loaderLine, printGoals, serverMicros } from './lib/cpu-report.js';
import { wrkVersion } from './lib/wrk.js';
import type { BenchOptions, Scenario } from './lib/scenario.js';
import { fixed, integer, percentOf, table } from './lib/table.js';
import { tearDown, workspace } from './lib/workspace.js';

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

/** The same reading as a v1 signal: the v1 fuel types of the two nozzles. */
function v1Signal(hrsId: string, i: number) {
  return {
    hrs: hrsId,
    datetime: NOW,
    dispensers: [
      { fuel_type: '700car', available: i % 7 !== 0 },
      { fuel_type: '350car', available: true },
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
  {
    name: 'import v1',
    label: `platform POST /import/v1/hrs-availability, 1 signal (${STATIONS.length} stations in turn)`,
    server: 'platform',
    path: '/import/v1/hrs-availability',
    headers: { Authorization: `Bearer ${TOKENS.import_v1}`, ...json },
    bodies: STATIONS.map((hrsId, i) => JSON.stringify([v1Signal(hrsId, i)])),
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
  /** Cores busy on the whole machine during the measured seconds. */
  machineCpu: number;
  /** Rows signal_history gained over the whole run (warm-up and drain included). */
  historyAdded: number;
}

/** Server CPU per single-signal request the legacy import should stay within, as import v2's goal. */
const GOAL_MICROS = 90;

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
      const machine = new MachineCpu();
      let machineCpu = Number.NaN;
      const history = { before: 0, after: 0 };
      const result = await measure(
        server.child,
        { url, method: 'POST', headers: target.headers, bodies: target.bodies, nowPlaceholder: NOW, label: target.label },
        options,
        {
          beforeLoad: async () => void (history.before = await countHistory(counter)),
          windowStart: () => machine.start(),
          windowEnd: () => void (machineCpu = machine.stop()),
          afterLoad: async () => void (history.after = await countHistory(counter)),
        },
      );
      rows.push({ target, result, machineCpu, historyAdded: history.after - history.before });
    }
  } finally {
    await sql?.end({ timeout: 1 });
    await tearDown(space, Object.values(servers));
  }

  const floor = rows[0]!.result;
  options.print(loaderLine(`wrk ${wrkVersion()}`, options.connections, options.durationSeconds, options.warmupSeconds));
  options.print(`machine: ${availableParallelism()} CPUs (${cpus()[0]?.model.trim() ?? 'unknown'}), Node.js ${process.version}`);
  options.print(
    `platform: ${STATIONS.length} benchmark stations live on import v2 availability and on import v1, ` +
      `IMPORT_V2_RATE_LIMIT=IMPORT_V1_RATE_LIMIT=${RATE_LIMIT}; each signal is dated when its request is built`,
  );
  options.print();
  options.print(
    table(
      ['target', 'signals/s', 'p50 ms', 'p99 ms', 'non-2xx', 'errors', '% of floor', ...CPU_HEADERS, 'machine CPU'],
      rows.map(({ target, result: r, machineCpu }, i) => [
        target.label,
        integer(r.requestsPerSecond),
        fixed(r.p50Ms, 3),
        fixed(r.p99Ms, 3),
        integer(r.non2xx),
        integer(r.errors),
        i === 0 ? 'floor' : percentOf(r.requestsPerSecond, floor.requestsPerSecond),
        ...cpuCells(r),
        fixed(machineCpu, 2),
      ]),
    ),
  );
  options.print();
  options.print('signals/s: answers received within the measured seconds, per second (one signal per request, so also req/s).');
  options.print("% of floor: as a percentage of the storage floor's rate in this run. Latency: wrk's, over every request of the run.");
  options.print(`${CPU_LEGEND} machine CPU: every process (n/a without /proc).`);

  options.print();
  printGoals(
    options.print,
    rows.slice(1).map(({ target, result }) => ({
      what: `${target.name}, 1 signal: server CPU per request`,
      measured: `${fixed(serverMicros(result), 0)} µs (the storage floor's: ${fixed(serverMicros(floor), 0)} µs)`,
      goal: `at most ${GOAL_MICROS} µs`,
      met: serverMicros(result) <= GOAL_MICROS,
    })),
  );
  const busy = rows.flatMap(({ target, result, machineCpu }) => {
    const others = machineCpu - result.serverCpu - result.loaderCpu - result.databaseCpu - result.redisCpu;
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
  options.print('durability: every request sent was answered, and the rows added to signal_history over each run = 2xx responses (one live signal each)');
  const failures: string[] = [];
  options.print(
    table(
      ['target', 'sent', 'answered', '2xx', 'rows added', 'check'],
      rows.map(({ target, result, historyAdded }) => {
        const ok = historyAdded === result.responses2xx && result.sent === result.answered;
        if (result.sent !== result.answered) failures.push(`${target.label}: ${result.sent} requests sent, ${result.answered} answered`);
        if (historyAdded !== result.responses2xx) {
          failures.push(
            `${target.label}: ${historyAdded} rows added to signal_history, ${result.responses2xx} expected` +
              (result.errors > 0 ? ` (${result.errors} requests got no answer: connection errors or timeouts)` : ''),
          );
        }
        return [target.label, integer(result.sent), integer(result.answered), integer(result.responses2xx), integer(historyAdded), ok ? 'ok' : 'FAILED'];
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
