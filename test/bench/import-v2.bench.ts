/**
 * import-v2: what receiving signals costs. Four targets, measured one after the other under the same
 * load: a hello-world uWS server (`GET /`, the baseline); the storage floor (./lib/floor-server.ts: a
 * bare uWS endpoint storing each posted transmission through the platform's own group-commit writer,
 * with no token, rate limit or validation: what durability alone costs on this machine); the platform's
 * `POST /import/v2/signal/availability/` with one transmission per request (spread over the stations in
 * turn) and the same with 50 transmissions, one per station, per request. Every transmission's
 * `datetime` is the moment its request is built. The platform runs with IMPORT_V2_RATE_LIMIT raised far
 * beyond the load, against a registry of 50 stations with BERLA's layout, each live for availability
 * with the originator mon-1.
 *
 * Each run drains: when the time is up, every connection waits for its last answer and stops, so no
 * request is left half done. After each storing target the rows added to `signal_history` must be
 * exactly the 2xx responses times the transmissions per request (the answer goes out only after COMMIT,
 * and each live transmission is one history row); otherwise the scenario fails.
 */
import { availableParallelism, cpus } from 'node:os';
import { connect, type Sql } from '../../db/connect.js';
import { TOKENS } from '../helpers/fixtures.js';
import { checkTarget, NOW } from './lib/check.js';
import { Child } from './lib/child.js';
import { IMPORT_V2_STATIONS, stationIds } from './lib/fixtures.js';
import { measure, type Measurement } from './lib/load.js';
import { CPU_HEADERS, CPU_LEGEND, cpuCells, loaderLine, printGoals, serverMicros } from './lib/cpu-report.js';
import { wrkVersion } from './lib/wrk.js';
import type { BenchOptions, Scenario } from './lib/scenario.js';
import { tearDown, workspace } from './lib/workspace.js';
import { fixed, integer, table } from './lib/table.js';

const PATH = '/import/v2/signal/availability/';
/** Far above anything one load generator reaches, so no request is throttled. */
const RATE_LIMIT = '100000000';
/** In the bodies, stands for the time the request is built (see LoadRequest.nowPlaceholder). */
/** Server CPU per one-transmission request the platform should stay within, as a multiple of the storage floor's in the same run. */
const GOAL_SINGLE_TIMES_FLOOR = 2;
/** Single-transmission req/s as a share of the storage floor's that the platform should reach. */
const GOAL_FLOOR_PERCENT = 80;
/** Transmissions per second the platform should take in batches. */
const GOAL_BATCH_RATE = 50_000;

const STATIONS = stationIds(IMPORT_V2_STATIONS);

/** One availability transmission of a benchmark station; a few nozzles report unavailable. */
function transmission(hrsId: string, i: number) {
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

interface Target {
  label: string;
  server: 'hello' | 'floor' | 'platform';
  method: 'GET' | 'POST';
  path: string;
  headers?: Record<string, string>;
  bodies?: string[];
  /** Transmissions per request: rows each 2xx adds to signal_history (0: not a signal endpoint). */
  transmissions: number;
  status: number;
  /** What a correct answer's body looks like; checked once before the load starts. */
  expect: (body: string) => boolean;
}

const SIGNAL_HEADERS = { Authorization: `Bearer ${TOKENS.import_v2}`, 'Content-Type': 'application/json' };

const TARGETS: Target[] = [
  {
    label: 'hello world GET /',
    server: 'hello',
    method: 'GET',
    path: '/',
    transmissions: 0,
    status: 200,
    expect: (body) => body === 'Hello World!',
  },
  {
    label: `storage floor: bare uWS + the same group-committed statement, 1 transmission`,
    server: 'floor',
    method: 'POST',
    path: '/',
    bodies: STATIONS.map((hrsId, i) => JSON.stringify([transmission(hrsId, i)])),
    transmissions: 1,
    status: 204,
    expect: (body) => body === '',
  },
  {
    label: `platform POST availability, 1 transmission (${STATIONS.length} stations in turn)`,
    server: 'platform',
    method: 'POST',
    path: PATH,
    headers: SIGNAL_HEADERS,
    bodies: STATIONS.map((hrsId, i) => JSON.stringify([transmission(hrsId, i)])),
    transmissions: 1,
    status: 204,
    expect: (body) => body === '',
  },
  {
    label: `platform POST availability, ${STATIONS.length} transmissions (1 per station)`,
    server: 'platform',
    method: 'POST',
    path: PATH,
    headers: SIGNAL_HEADERS,
    bodies: [JSON.stringify(STATIONS.map((hrsId, i) => transmission(hrsId, i)))],
    transmissions: STATIONS.length,
    status: 204,
    expect: (body) => body === '',
  },
];

async function check(url: string, target: Target): Promise<void> {
  const res = await checkTarget(url, target);
  if (target.server === 'platform' && res.headers.get('ratelimit-limit') !== RATE_LIMIT) {
    throw new Error(
      `${target.label}: RateLimit-Limit is ${res.headers.get('ratelimit-limit')}, not ${RATE_LIMIT}: ` +
        'the platform did not take IMPORT_V2_RATE_LIMIT and would throttle the load',
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
  /** Rows signal_history gained over the whole run, warm-up and drain included (signal targets). */
  historyAdded?: number;
}

async function run(options: BenchOptions): Promise<void> {
  const space = workspace('import_v2');
  const { database, databaseUrl } = space;
  const servers: Partial<Record<Target['server'], { child: Child; port: number }>> = {};
  const rows: Row[] = [];
  let sql: Sql | undefined;
  try {
    const hello = await Child.start('hello-world server', new URL('./lib/hello-server.ts', import.meta.url));
    servers.hello = { child: hello.child, port: hello.ready.port as number };
    const platform = await Child.start('platform', new URL('./lib/platform-server.ts', import.meta.url), {
      env: {
        BENCH_DATABASE_URL: databaseUrl.toString(),
        BENCH_REDIS_PREFIX: database,
        BENCH_FIXTURE: 'import-v2',
        BENCH_PLATFORM_ENV: JSON.stringify({ IMPORT_V2_RATE_LIMIT: RATE_LIMIT }),
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
      const history = { before: 0, after: 0 };
      const result = await measure(
        server.child,
        { url, method: target.method, headers: target.headers, bodies: target.bodies, nowPlaceholder: NOW, label: target.label },
        options,
        {
          beforeLoad: async () => {
            if (target.transmissions > 0) history.before = await countHistory(counter);
          },
          afterLoad: async () => {
            if (target.transmissions > 0) history.after = await countHistory(counter);
          },
        },
      );
      rows.push({ target, result, historyAdded: target.transmissions > 0 ? history.after - history.before : undefined });
    }
  } finally {
    await sql?.end({ timeout: 1 });
    await tearDown(space, Object.values(servers));
  }

  options.print(loaderLine(`wrk ${wrkVersion()}`, options.connections, options.durationSeconds, options.warmupSeconds));
  options.print(`machine: ${availableParallelism()} CPUs (${cpus()[0]?.model.trim() ?? 'unknown'}), Node.js ${process.version}`);
  options.print(
    `platform: ${STATIONS.length} benchmark stations, IMPORT_V2_RATE_LIMIT=${RATE_LIMIT}; ` +
      'each transmission is dated when its request is built',
  );
  options.print();
  options.print(
    table(
      ['target', 'req/s', 'transm./s', 'p50 ms', 'p99 ms', 'non-2xx', 'errors', ...CPU_HEADERS],
      rows.map(({ target, result: r }) => [
        target.label,
        integer(r.requestsPerSecond),
        target.transmissions > 0 ? integer(r.requestsPerSecond * target.transmissions) : '-',
        fixed(r.p50Ms, 3),
        fixed(r.p99Ms, 3),
        integer(r.non2xx),
        integer(r.errors),
        ...cpuCells(r),
      ]),
    ),
  );
  options.print();
  options.print('req/s: answers received within the measured seconds, per second. transm./s: req/s x transmissions per request.');
  options.print('Latency: wrk\'s, over every request of the run (warm-up included).');
  options.print(CPU_LEGEND);

  const floor = rows.find((row) => row.target.server === 'floor')!.result;
  const single = rows.find((row) => row.target.server === 'platform' && row.target.transmissions === 1)!.result;
  const batch = rows.find((row) => row.target.server === 'platform' && row.target.transmissions > 1)!;
  const batchRate = batch.result.requestsPerSecond * batch.target.transmissions;
  const share = (single.requestsPerSecond / floor.requestsPerSecond) * 100;
  options.print();
  printGoals(options.print, [
    {
      what: 'import v2, 1 transmission: server CPU per request',
      measured: `${fixed(serverMicros(single), 0)} µs, x${fixed(serverMicros(single) / serverMicros(floor), 2)} the floor`,
      floor: `storage ${fixed(serverMicros(floor), 0)} µs`,
      goal: `at most ${GOAL_SINGLE_TIMES_FLOOR}x the storage floor`,
      met: serverMicros(single) <= GOAL_SINGLE_TIMES_FLOOR * serverMicros(floor),
    },
    {
      what: 'import v2, 1 transmission: req/s against the storage floor\'s',
      measured: `${fixed(share, 0)}%`,
      goal: `at least ${GOAL_FLOOR_PERCENT}%`,
      met: share >= GOAL_FLOOR_PERCENT,
    },
    {
      what: `import v2, batches of ${batch.target.transmissions}: transmissions per second`,
      measured: integer(batchRate),
      goal: `at least ${integer(GOAL_BATCH_RATE)}`,
      met: batchRate >= GOAL_BATCH_RATE,
    },
  ]);
  // On a machine whose cores are all busy the rates stand in the inverse ratio of the CPU every process
  // spends per request: what bounds the share of the floor.
  const machineMicros = (r: Measurement) => ((r.serverCpu + r.databaseCpu + r.redisCpu + r.loaderCpu) / r.requestsPerSecond) * 1e6;
  options.print(
    `CPU per request over every process (server, PostgreSQL, Redis, load generator): platform ${fixed(machineMicros(single), 0)} µs, ` +
      `storage floor ${fixed(machineMicros(floor), 0)} µs; with every core busy the platform's rate can be at most ` +
      `${fixed((machineMicros(floor) / machineMicros(single)) * 100, 0)}% of the floor's, and 80% would need ` +
      `${fixed(machineMicros(floor) / 0.8, 0)} µs in all (the floor's server alone takes ${fixed(serverMicros(floor), 0)} µs)`,
  );
  for (const { target, result } of rows) {
    if (result.non2xx === 0) continue;
    const codes = Object.entries(result.statusCodes)
      .filter(([code]) => !code.startsWith('2'))
      .map(([code, n]) => `${code}: ${n}`)
      .join(', ');
    options.print(`Note: ${target.label} got non-2xx answers (${codes}).`);
  }

  options.print();
  options.print(
    'durability: every request sent was answered, and the rows added to signal_history over the whole run ' +
      '(warm-up and drain included) = 2xx responses x transmissions per request',
  );
  const failures: string[] = [];
  options.print(
    table(
      ['target', 'sent', 'answered', '2xx', 'x transm.', 'expected rows', 'rows added', 'check'],
      rows
        .filter((row) => row.target.transmissions > 0)
        .map(({ target, result, historyAdded }) => {
          const expected = result.responses2xx * target.transmissions;
          const ok = historyAdded === expected && result.sent === result.answered;
          if (result.sent !== result.answered) {
            failures.push(`${target.label}: ${result.sent} requests sent, ${result.answered} answered`);
          }
          if (historyAdded !== expected) {
            failures.push(
              `${target.label}: ${historyAdded} rows added to signal_history, ${expected} expected` +
                (result.errors > 0 ? ` (${result.errors} socket errors or timeouts)` : ''),
            );
          }
          return [
            target.label,
            integer(result.sent),
            integer(result.answered),
            integer(result.responses2xx),
            String(target.transmissions),
            integer(expected),
            integer(historyAdded ?? Number.NaN),
            ok ? 'ok' : 'FAILED',
          ];
        }),
    ),
  );
  if (failures.length > 0) throw new Error(`durability check failed:\n  ${failures.join('\n  ')}`);
}

const scenario: Scenario = {
  description:
    'import v2: POST /import/v2/signal/availability/ (1 and 50 transmissions per request) against a bare uWebSockets.js hello world',
  run,
};
export default scenario;
