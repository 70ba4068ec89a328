/**
 * status: what reading the export v2 live status costs. Against a registry of 1,000 stations (the
 * `status` fixture: BERLA's layout each, the originator mon-1 live for all four signal types), every
 * station is first given all four sections by posting real signals through the import v2 endpoints
 * (one request per signal type, one transmission per station), then four targets are measured one
 * after the other under the same load: a hello-world uWS server (`GET /`, the baseline), the
 * platform's `GET /v2/hrs/{hrs_id}/status` for every station in turn, and `GET /v2/hrs/status` (all
 * 1,000 stations), the latter three times: with the configured connections, the same asking for gzip as
 * browsers and HTTP libraries do (the list is then sent gzip-encoded, about a tenth of the bytes), and
 * with one connection (its service time without queueing). Every server and the load generator run in
 * processes of their own. Beside them, the rate-limit floor (./lib/rate-floor-server.ts): a bare uWS
 * endpoint that only counts each request against the export v2 limits through the platform's own
 * rate limiter and answers with the same body, i.e. what the exact per-user limits alone cost.
 *
 * wrk drives the throughput targets (its Lua script gives each request its path in turn); the
 * all-stations targets at the configured connections use autocannon, whose latency counts every 2xx of
 * the measured seconds only, since their p99 is a goal. Each of those two has its latency floor measured
 * after it: the rate-limit floor sending the platform's answer byte for byte (`GET /answer/I`), under
 * the same generator and connections: what the generator's own pace and the shared count set a p99 to
 * with nothing else to wait for (autocannon decodes each body as UTF-8, so gzip's bytes cost it several
 * times what as many ASCII bytes do: the floor has to send the same bytes).
 *
 * Goals: single-station status within 1.5x the rate-limit floor's server CPU per request, measured in
 * the same run; all-stations status p99 under 20 ms gzip-encoded and under 50 ms in identity encoding
 * (at the configured connections).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { TOKENS } from '../helpers/fixtures.js';
import { Child } from './lib/child.js';
import { rawAnswer } from './lib/raw-answer.js';
import { SIGNAL_TYPES, STATUS_STATIONS, stationIds } from './lib/fixtures.js';
import { SECTIONS, seedAllSections } from './lib/status-seed.js';
import { measure, type Measurement } from './lib/load.js';
import type { BenchOptions, Scenario } from './lib/scenario.js';
import { autocannonVersion, tearDown, workspace } from './lib/workspace.js';
import { CPU_HEADERS, CPU_LEGEND, cpuCells, loaderLine, printGoals, serverMicros } from './lib/cpu-report.js';
import { wrkVersion } from './lib/wrk.js';
import { fixed, integer, table } from './lib/table.js';

/** Server CPU per single-station status request the platform should stay within, as a multiple of the rate-limit floor's in the same run. */
const GOAL_SINGLE_TIMES_FLOOR = 1.5;
/** All-stations p99 the platform should stay under, gzip-encoded, in milliseconds. */
const GOAL_GZIP_P99_MS = 20;
/** All-stations p99 the platform should stay under, identity encoding, in milliseconds. */
const GOAL_P99_MS = 50;

const STATIONS = stationIds(STATUS_STATIONS);
/** The station the single-station target reads. */
const FIXED = STATIONS[Math.floor(STATIONS.length / 2)]!;

type StationStatus = { hrs_id?: unknown } & Partial<Record<(typeof SECTIONS)[number], unknown>>;

const missingSections = (station: StationStatus) => SECTIONS.filter((key) => station[key] === null || station[key] === undefined);

/** The status of one station: its id and all four sections, none of them null. */
function checkStation(body: string): boolean {
  const station = JSON.parse(body) as StationStatus;
  if (station.hrs_id !== FIXED) throw new Error(`the status of ${FIXED} names ${String(station.hrs_id)}`);
  const missing = missingSections(station);
  if (missing.length > 0) throw new Error(`the status of ${FIXED} has no ${missing.join(', ')} section`);
  return true;
}

/** Every registered station, in hrs_id order, each with all four sections. */
function checkAll(body: string): boolean {
  const { stations } = JSON.parse(body) as { stations?: StationStatus[] };
  if (!Array.isArray(stations)) throw new Error('no "stations" list');
  if (stations.length !== STATIONS.length) throw new Error(`${stations.length} stations listed, ${STATIONS.length} registered`);
  stations.forEach((station, i) => {
    if (station.hrs_id !== STATIONS[i]) throw new Error(`station ${i} is ${String(station.hrs_id)}, expected ${STATIONS[i]}`);
    const missing = missingSections(station);
    if (missing.length > 0) throw new Error(`${STATIONS[i]} has no ${missing.join(', ')} section`);
  });
  return true;
}

interface Target {
  label: string;
  server: 'hello' | 'floor' | 'platform';
  path: string;
  /** Paths requested in turn (the path is checked once before the load). */
  paths?: string[];
  /** autocannon where the row's p99 is a goal (its latency is over the measured seconds only). */
  generator?: 'autocannon';
  headers?: Record<string, string>;
  /** Connections for this target; the configured number when absent. */
  connections?: number;
  /** What a correct answer looks like; checked once before the load starts (may throw to say why not). */
  expect: (body: string) => boolean;
}

const EXPORT_HEADERS = { Authorization: `Bearer ${TOKENS.export_v2}` };
const ALL_LABEL = `platform GET /v2/hrs/status (${STATIONS.length} stations)`;
const SINGLE_LABEL = `platform GET /v2/hrs/{hrs_id}/status (the ${STATIONS.length} stations in turn)`;
/** What browsers and HTTP libraries send: the list is then served gzip-encoded. */
const GZIP_LABEL = `${ALL_LABEL}, Accept-Encoding: gzip`;

/** The all-stations targets whose p99 is a goal, each given its floor (the same bytes from the rate-limit floor). */
const FLOORED = [GZIP_LABEL, ALL_LABEL];
/** The rate-limit floor sending a row's answer byte for byte, under autocannon: that row's latency floor. */
const bytesFloorLabel = (label: string, bytes: number) =>
  `rate-limit floor, the ${integer(bytes)} bytes of "${label.replace('platform ', '')}", autocannon: its latency floor`;


const TARGETS: Target[] = [
  { label: 'hello world GET /', server: 'hello', path: '/', expect: (body) => body === 'Hello World!' },
  {
    label: SINGLE_LABEL,
    server: 'platform',
    path: `/v2/hrs/${FIXED}/status`,
    paths: STATIONS.map((id) => `/v2/hrs/${id}/status`),
    headers: EXPORT_HEADERS,
    expect: checkStation,
  },
  {
    label: `rate-limit floor: bare uWS + the export v2 rate-limit check, same body`,
    server: 'floor',
    path: `/v2/hrs/${FIXED}/status`,
    expect: checkStation,
  },
  { label: ALL_LABEL, server: 'platform', path: '/v2/hrs/status', headers: EXPORT_HEADERS, generator: 'autocannon', expect: checkAll },
  {
    label: GZIP_LABEL,
    server: 'platform',
    path: '/v2/hrs/status',
    headers: { ...EXPORT_HEADERS, 'Accept-Encoding': 'gzip' },
    generator: 'autocannon',
    expect: checkAll,
  },
  {
    label: `${ALL_LABEL}, 1 connection`,
    server: 'platform',
    path: '/v2/hrs/status',
    headers: EXPORT_HEADERS,
    connections: 1,
    expect: checkAll,
  },
];

/** Checks the answer once; returns its size in bytes as sent (encoded, when it was). */
async function check(url: string, target: Target): Promise<number> {
  // fetch asks for gzip unless told otherwise; the load generator asks for nothing.
  const res = await fetch(url, { headers: { 'Accept-Encoding': 'identity', ...target.headers } });
  const body = await res.text();
  const sent = res.headers.get('content-encoding') ? Number(res.headers.get('content-length')) : Buffer.byteLength(body);
  if (target.headers?.['Accept-Encoding'] === 'gzip' && res.headers.get('content-encoding') !== 'gzip') {
    throw new Error(`${target.label}: the answer is not gzip-encoded; not benchmarking that`);
  }
  let problem: string | undefined;
  try {
    if (res.status !== 200) problem = `status ${res.status}`;
    else if (!target.expect(body)) problem = 'unexpected body';
  } catch (err) {
    problem = (err as Error).message;
  }
  if (problem) throw new Error(`${target.label} answered ${res.status} ${body.slice(0, 200)} (${problem}); not benchmarking that`);
  return sent;
}

interface Row {
  target: Target;
  result: Measurement;
  connections: number;
  bytes: number;
}

async function run(options: BenchOptions): Promise<void> {
  const space = workspace('status');
  const { database, databaseUrl } = space;
  const servers: Partial<Record<Target['server'], { child: Child; port: number }>> = {};
  const rows: Row[] = [];
  let seedMs = 0;
  let answersDir: string | undefined;
  let answerBytes: number[] = [];
  try {
    const hello = await Child.start('hello-world server', new URL('./lib/hello-server.ts', import.meta.url));
    servers.hello = { child: hello.child, port: hello.ready.port as number };
    const platform = await Child.start('platform', new URL('./lib/platform-server.ts', import.meta.url), {
      env: {
        BENCH_DATABASE_URL: databaseUrl.toString(),
        BENCH_REDIS_PREFIX: database,
        BENCH_FIXTURE: 'status',
        // Far beyond the load: every request is still counted (one Redis script call per event-loop turn).
        BENCH_PLATFORM_ENV: JSON.stringify({ EXPORT_V2_RATE_LIMIT_MINUTE: '100000000', EXPORT_V2_RATE_LIMIT_DAY: '100000000' }),
      },
      // Loading 1,000 stations takes a while on a busy machine.
      readyTimeoutMs: 180_000,
    });
    servers.platform = { child: platform.child, port: platform.ready.port as number };

    const seedStarted = performance.now();
    await seedAllSections(servers.platform.port, STATIONS);
    seedMs = performance.now() - seedStarted;
    // Started once the fixed station has its status: the floor answers with the platform's body for it.
    const fixedBody = await (await fetch(`http://127.0.0.1:${servers.platform.port}/v2/hrs/${FIXED}/status`, { headers: EXPORT_HEADERS })).text();
    // The all-stations answers byte for byte as sent (gzip-encoded or not), for the floor to send too.
    const answers = await Promise.all(
      FLOORED.map((label) => rawAnswer(servers.platform!.port, '/v2/hrs/status', TARGETS.find((target) => target.label === label)!.headers ?? {})),
    );
    answerBytes = answers.map((answer) => answer.length);
    answersDir = mkdtempSync(join(tmpdir(), 'hrs-bench-status-'));
    for (const [i, answer] of answers.entries()) writeFileSync(join(answersDir, `answer-${i}`), answer);
    const floor = await Child.start('rate-limit floor', new URL('./lib/rate-floor-server.ts', import.meta.url), {
      env: { BENCH_REDIS_PREFIX: database, BENCH_FLOOR_BODY: fixedBody, BENCH_FLOOR_ANSWERS: answersDir },
    });
    for (const [i, answer] of answers.entries()) {
      const sent = await rawAnswer(floor.ready.port as number, `/answer/${i}`, {});
      if (!sent.equals(answer)) throw new Error(`the rate-limit floor's /answer/${i} is not the platform's answer byte for byte`);
    }
    servers.floor = { child: floor.child, port: floor.ready.port as number };

    for (const target of TARGETS) {
      const server = servers[target.server]!;
      const url = `http://127.0.0.1:${server.port}${target.path}`;
      const bytes = await check(url, target);
      const connections = target.connections ?? options.connections;
      const result = await measure(
        server.child,
        { url, headers: target.headers, paths: target.paths, generator: target.generator, label: target.label },
        { ...options, connections },
      );
      rows.push({ target, result, connections, bytes });
    }
    // The latency goals' floor: the rate-limit floor sending each all-stations answer's bytes (as sent:
    // gzip-encoded or not) under the same generator and connections. On two cores the generator's own
    // pace, and the wait every export v2 request has for its shared count, set much of a p99; this row
    // measures what they set with nothing else to wait for.
    for (const [i, label] of FLOORED.entries()) {
      const bytes = answerBytes[i]!;
      const target: Target = {
        label: bytesFloorLabel(label, bytes),
        server: 'floor',
        path: `/answer/${i}`,
        generator: 'autocannon',
        // Checked byte for byte against the platform's answer when the floor started.
        expect: () => true,
      };
      const url = `http://127.0.0.1:${servers.floor!.port}${target.path}`;
      const result = await measure(servers.floor!.child, { url, generator: 'autocannon', label: target.label }, options);
      rows.push({ target, result, connections: options.connections, bytes });
    }
  } finally {
    await tearDown(space, Object.values(servers));
    if (answersDir) rmSync(answersDir, { recursive: true, force: true });
  }

  options.print(
    loaderLine(`wrk ${wrkVersion()} (autocannon ${autocannonVersion()} where the row says so)`, options.connections, options.durationSeconds, options.warmupSeconds) +
      '; connections as the row says',
  );
  options.print(`machine: ${availableParallelism()} CPUs (${cpus()[0]?.model.trim() ?? 'unknown'}), Node.js ${process.version}`);
  options.print(
    `platform: ${STATIONS.length} registered stations, each given all four sections before the load by real import v2 ` +
      `signals (${SIGNAL_TYPES.length} POSTs of ${STATIONS.length} transmissions, ${fixed(seedMs, 0)} ms); ` +
      `checked once before each target (every section present, all ${STATIONS.length} stations listed)`,
  );
  options.print();
  options.print(
    table(
      ['target', 'loader', 'conn.', 'body bytes', 'req/s', 'MB/s', 'p50 ms', 'p99 ms', 'non-2xx', 'errors', ...CPU_HEADERS],
      rows.map(({ target, result: r, connections, bytes }) => [
        target.label,
        r.generator,
        String(connections),
        integer(bytes),
        integer(r.requestsPerSecond),
        fixed((r.requestsPerSecond * bytes) / 1e6, 1),
        fixed(r.p50Ms, 3),
        fixed(r.p99Ms, 3),
        integer(r.non2xx),
        integer(r.errors),
        ...cpuCells(r),
      ]),
    ),
  );
  options.print();
  options.print('MB/s: req/s x body bytes (response bodies only). Latency: autocannon\'s over every 2xx response of the measured seconds; wrk\'s over every request of the run.');
  options.print(CPU_LEGEND);

  const single = rows.find((row) => row.target.label === SINGLE_LABEL)!.result;
  const floor = rows.find((row) => row.target.server === 'floor')!.result;
  const all = rows.find((row) => row.target.label === ALL_LABEL)!;
  const gzip = rows.find((row) => row.target.label === GZIP_LABEL)!;
  const one = rows.find((row) => row.connections === 1)!;
  options.print();
  printGoals(options.print, [
    {
      what: 'GET /v2/hrs/{hrs_id}/status: server CPU per request',
      measured: `${fixed(serverMicros(single), 1)} µs, x${fixed(serverMicros(single) / serverMicros(floor), 2)} the floor`,
      floor: `rate limit ${fixed(serverMicros(floor), 1)} µs (hello world ${fixed(serverMicros(rows[0]!.result), 1)} µs)`,
      goal: `at most ${GOAL_SINGLE_TIMES_FLOOR}x the rate-limit floor`,
      met: serverMicros(single) <= GOAL_SINGLE_TIMES_FLOOR * serverMicros(floor),
    },
    ...[gzip, all].map((row) => {
      const limit = row === gzip ? GOAL_GZIP_P99_MS : GOAL_P99_MS;
      const bare = rows.find((other) => other.target.label === bytesFloorLabel(row.target.label, answerBytes[FLOORED.indexOf(row.target.label)]!))!.result;
      return {
        what: `GET /v2/hrs/status p99${row === gzip ? ' (gzip-encoded, as HTTP clients ask for it)' : ' (identity encoding)'} at ${row.connections} connections`,
        measured: `${fixed(row.result.p99Ms, 1)} ms`,
        floor: `the rate-limit floor sending the same bytes, same generator: p99 ${fixed(bare.p99Ms, 1)} ms at ${integer(bare.requestsPerSecond)} req/s`,
        goal: `under ${limit} ms`,
        met: row.result.p99Ms < limit,
      };
    }),
  ]);
  options.print(
    'every export v2 request is counted against the per-user limits shared through Redis (the floor does that and nothing ' +
      `else); the platform's single-station rate is ${fixed((single.requestsPerSecond / floor.requestsPerSecond) * 100, 0)}% of the floor's`,
  );
  options.print(`all-stations status at 1 connection (identity): p50 ${fixed(one.result.p50Ms, 1)} ms, p99 ${fixed(one.result.p99Ms, 1)} ms`);
  const bound = rows.flatMap(({ target, result }) => (result.loaderCpu >= 0.9 ? [target.label] : []));
  if (bound.length > 0) {
    options.print(`Note: the load generator used a whole core for ${bound.join('; ')}: that rate is bounded by the generator, not by the server.`);
  }
  for (const { target, result } of rows) {
    if (result.non2xx === 0 && result.errors === 0) continue;
    const codes = Object.entries(result.statusCodes)
      .filter(([code]) => !code.startsWith('2'))
      .map(([code, n]) => `${code}: ${n}`)
      .join(', ');
    options.print(`Note: ${target.label} got non-2xx answers or errors (${codes || 'none'}; ${result.errors} errors, ${result.timeouts} timeouts).`);
  }
}

const scenario: Scenario = {
  description: `export v2 live status: GET /v2/hrs/{hrs_id}/status and GET /v2/hrs/status over ${STATUS_STATIONS} stations with all four sections, against a bare uWebSockets.js hello world`,
  run,
};
export default scenario;
