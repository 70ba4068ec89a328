/**
 * processes: what `hrs serve --processes N` gains. The real `hrs serve --no-workers` (bin/hrs.js, as
 * deployed) runs with --processes 1 (one process, as without the option) and then 2, against the
 * `status` fixture (1,000 stations with BERLA's layout, mon-1 live for all four signal types; every
 * station given all four sections by real import v2 signals before the first load), and two targets
 * are measured for each: `GET /v2/hrs/{hrs_id}/status` for every station in turn, and import v2's
 * `POST /import/v2/signal/availability/` with one transmission per request (50 stations in turn).
 *
 * Server CPU is the sum over the supervisor and every server process (read from /proc), printed per
 * process beside it, with PostgreSQL's, Redis' and the load generator's. On this repository's 2-core
 * machine the load generator, PostgreSQL and Redis share the cores with the servers, so the rate can
 * hardly double; CPU per request says what more cores would carry.
 *
 * BENCH_PROCESSES (default `1,2`) lists the counts to measure, e.g. `BENCH_PROCESSES=1,2,4,8 npm run
 * bench -- processes` on a bigger machine; raise BENCH_CONNECTIONS with it (wrk uses a thread per core).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { availableParallelism, cpus } from 'node:os';
import { unbounded } from '../../db/deadline.js';
import { openMigrated } from '../../db/migrate.js';
import { NODE_FLAGS } from '../../src/config/node-flags.js';
import { loadFixture } from '../../src/registry/file/load.js';
import { TOKENS } from '../helpers/fixtures.js';
import { ADMIN_TOKEN } from '../helpers/platform.js';
import { freePort, HRS } from '../helpers/process.js';
import { checkTarget, NOW } from './lib/check.js';
import { ROOT } from './lib/child.js';
import { CPU_HEADERS, CPU_LEGEND, cpuCells, loaderLine, serverMicros } from './lib/cpu-report.js';
import { IMPORT_V2_STATIONS, STATUS_STATIONS, statusFixture, stationIds } from './lib/fixtures.js';
import { measure, type MeasuredServer, type Measurement } from './lib/load.js';
import { childrenOf, cpuMillis, residentMegabytes } from './lib/pid-cpu.js';
import type { BenchOptions, Scenario } from './lib/scenario.js';
import { SECTIONS, seedAllSections } from './lib/status-seed.js';
import { fixed, integer, table } from './lib/table.js';
import { tearDown, workspace } from './lib/workspace.js';
import { wrkVersion } from './lib/wrk.js';

/** The process counts measured, in order (BENCH_PROCESSES, comma-separated). */
function processCounts(): number[] {
  const raw = process.env.BENCH_PROCESSES || '1,2';
  const counts = raw.split(',').map((item) => Number(item.trim()));
  if (counts.some((n) => !Number.isInteger(n) || n < 1)) throw new Error(`BENCH_PROCESSES must list whole numbers from 1 (got "${raw}")`);
  return counts;
}

const RATE_LIMIT = '100000000';
const STATIONS = stationIds(STATUS_STATIONS);
const FIXED = STATIONS[Math.floor(STATIONS.length / 2)]!;
const EXPORT_HEADERS = { Authorization: `Bearer ${TOKENS.export_v2}` };
const SIGNAL_HEADERS = { Authorization: `Bearer ${TOKENS.import_v2}`, 'Content-Type': 'application/json' };

interface Target {
  label: string;
  method: 'GET' | 'POST';
  path: string;
  headers: Record<string, string>;
  paths?: string[];
  bodies?: string[];
  status: number;
  /** What a correct answer's body looks like; checked once before each load. */
  expect: (body: string) => boolean;
}

const availability = (hrsId: string, i: number) =>
  JSON.stringify([{ hrs: hrsId, datetime: NOW, nozzles: [{ id: 'N1', available: i % 7 !== 0 }, { id: 'N2', available: true }], station: { maintenance: false, limitedly_available: false } }]);

const TARGETS: Target[] = [
  {
    label: `GET /v2/hrs/{hrs_id}/status (${STATIONS.length} stations in turn)`,
    method: 'GET',
    path: `/v2/hrs/${FIXED}/status`,
    paths: STATIONS.map((id) => `/v2/hrs/${id}/status`),
    headers: EXPORT_HEADERS,
    status: 200,
    expect: (body) => {
      const station = JSON.parse(body) as Record<string, unknown>;
      return station.hrs_id === FIXED && SECTIONS.every((key) => station[key] !== null && station[key] !== undefined);
    },
  },
  {
    label: `POST availability, 1 transmission (${IMPORT_V2_STATIONS} stations in turn)`,
    method: 'POST',
    path: '/import/v2/signal/availability/',
    bodies: STATIONS.slice(0, IMPORT_V2_STATIONS).map(availability),
    headers: SIGNAL_HEADERS,
    status: 204,
    expect: (body) => body === '',
  },
];

/** A running `hrs serve --processes N`: its port, and its CPU as a measurement reads a server's. */
interface ServerSet {
  processes: number;
  port: number;
  /** The supervisor's pid (with one process: the server's). */
  pid: number;
  /** Every process that serves: the supervisor and its children (with --no-workers, all servers). */
  pids(): number[];
  measured: MeasuredServer;
  stop(): Promise<void>;
}

async function startSet(processes: number, databaseUrl: string, prefix: string): Promise<ServerSet> {
  const port = await freePort();
  const child: ChildProcess = spawn(process.execPath, [...NODE_FLAGS, HRS, 'serve', '--no-workers', '--processes', String(processes)], {
    cwd: ROOT,
    env: {
      ...process.env, DATABASE_URL: databaseUrl, REDIS_PREFIX: prefix, HOST: '127.0.0.1', PORT: String(port), LOG_LEVEL: 'error',
      ADMIN_TOKEN, SANDBOX: 'off', IMPORT_V2_RATE_LIMIT: RATE_LIMIT, EXPORT_V2_RATE_LIMIT_MINUTE: RATE_LIMIT, EXPORT_V2_RATE_LIMIT_DAY: RATE_LIMIT,
    },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const pid = child.pid!;
  const pids = () => (processes === 1 ? [pid] : [pid, ...childrenOf(pid)]);
  const set: ServerSet = {
    processes,
    port,
    pid,
    pids,
    measured: {
      name: `hrs serve --processes ${processes}`,
      cpuMicros: async () => pids().reduce((sum, p) => sum + (cpuMillis(p) || 0) * 1000, 0),
      profile: async () => async () => {},
    },
    async stop() {
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
      await exited;
      clearTimeout(timer);
    },
  };
  // Ready once every process answers /metrics for itself (one: /metrics answers at all).
  const deadline = Date.now() + 180_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`hrs serve --processes ${processes} exited with code ${child.exitCode}`);
    const text = await fetch(`http://127.0.0.1:${port}/metrics`, { headers: { Authorization: `Bearer ${ADMIN_TOKEN}` } })
      .then((res) => (res.ok ? res.text() : ''))
      .catch(() => '');
    const listed = new Set(text.match(/^process_start_time_seconds\{process="\d+"\}/gm) ?? []).size;
    if (text !== '' && (processes === 1 || listed === processes)) return set;
    if (Date.now() > deadline) throw new Error(`hrs serve --processes ${processes} did not get ready`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

interface Row {
  target: Target;
  processes: number;
  result: Measurement;
  /** Cores each serving process kept busy over the measured seconds: the supervisor first when there is one. */
  perProcess: number[];
  /** Resident megabytes of each serving process at the end of the measured seconds, in the same order. */
  memory: number[];
}

async function measureSet(set: ServerSet, target: Target, options: BenchOptions): Promise<Row> {
  await checkTarget(`http://127.0.0.1:${set.port}${target.path}`, target);
  const before = new Map<number, number>();
  const after = new Map<number, number>();
  let startedMs = 0;
  let endedMs = 0;
  const result = await measure(
    set.measured,
    { url: `http://127.0.0.1:${set.port}${target.path}`, method: target.method, headers: target.headers, paths: target.paths, bodies: target.bodies, nowPlaceholder: NOW },
    options,
    {
      windowStart: () => {
        startedMs = performance.now();
        for (const pid of set.pids()) before.set(pid, cpuMillis(pid));
      },
      windowEnd: () => {
        endedMs = performance.now();
        for (const pid of set.pids()) after.set(pid, cpuMillis(pid));
      },
    },
  );
  const order = [...after.keys()].sort((a, b) => (a === set.pid ? -1 : b === set.pid ? 1 : a - b));
  const perProcess = order.map((pid) => (after.get(pid)! - (before.get(pid) ?? 0)) / (endedMs - startedMs));
  return { target, processes: set.processes, result, perProcess, memory: order.map(residentMegabytes) };
}

/** Per-process figures, the supervisor's (first, when there is one) named. */
function perProcessCell(processes: number, cells: string[]): string {
  return (processes > 1 ? [`supervisor ${cells[0]}`, ...cells.slice(1)] : cells).join(' / ');
}

async function run(options: BenchOptions): Promise<void> {
  const counts = processCounts();
  const space = workspace('processes');
  const rows: Row[] = [];
  let set: ServerSet | undefined;
  let seedMs = 0;
  try {
    const { sql } = await openMigrated(space.databaseUrl.toString());
    await loadFixture(unbounded(sql), statusFixture(), { baseDir: ROOT });
    await sql.end({ timeout: 1 });
    for (const processes of counts) {
      set = await startSet(processes, space.databaseUrl.toString(), space.database);
      if (seedMs === 0) {
        const started = performance.now();
        // Stored, so the later sets restore the same live status at start.
        await seedAllSections(set.port, STATIONS);
        seedMs = performance.now() - started;
      }
      for (const target of TARGETS) rows.push(await measureSet(set, target, options));
      await set.stop();
      set = undefined;
    }
  } finally {
    await set?.stop();
    await tearDown(space, []);
  }

  options.print(loaderLine(`wrk ${wrkVersion()}`, options.connections, options.durationSeconds, options.warmupSeconds));
  options.print(`machine: ${availableParallelism()} CPUs (${cpus()[0]?.model.trim() ?? 'unknown'}), Node.js ${process.version}`);
  options.print(
    `platform: bin/hrs.js serve --no-workers --processes N (N = ${counts.join(', ')}), ${STATIONS.length} stations given all four sections ` +
      `by real import v2 signals before the first load (${fixed(seedMs, 0)} ms); rate limits raised beyond the load`,
  );
  options.print();
  const first = (target: Target) => rows.find((r) => r.target === target && r.processes === counts[0])!;
  options.print(
    table(
      ['target', 'processes', 'req/s', `× ${counts[0]}'s`, 'p99 ms', 'non-2xx', 'errors', ...CPU_HEADERS, `µs/req × ${counts[0]}'s`, 'cores per process', 'MB per process'],
      rows.map(({ target, processes, result: r, perProcess, memory }) => [
        target.label,
        String(processes),
        integer(r.requestsPerSecond),
        fixed(r.requestsPerSecond / first(target).result.requestsPerSecond, 2),
        fixed(r.p99Ms, 2),
        integer(r.non2xx),
        integer(r.errors),
        ...cpuCells(r),
        fixed(serverMicros(r) / serverMicros(first(target).result), 2),
        perProcessCell(processes, perProcess.map((c) => fixed(c, 2))),
        perProcessCell(processes, memory.map((mb) => integer(mb))),
      ]),
    ),
  );
  options.print();
  options.print(CPU_LEGEND.replace('the server process kept busy', 'the supervisor and every server process kept busy (summed)'));
  options.print('cores per process: each serving process\'s share of the server CPU; MB per process: its resident memory at the end (the supervisor first).');
  for (const target of TARGETS) {
    const base = first(target).result;
    for (const row of rows.filter((r) => r.target === target && r.processes !== counts[0])) {
      options.print(
        `${target.label}: ${row.processes} processes answer ${fixed(row.result.requestsPerSecond / base.requestsPerSecond, 2)}× the requests ` +
          `of ${counts[0]} at ${fixed(serverMicros(row.result) / serverMicros(base), 2)}× the server CPU per request (${fixed(serverMicros(row.result), 1)} µs)`,
      );
    }
    options.print(
      `${target.label}: at ${fixed(serverMicros(base), 1)} µs a request, ${counts[0]} process(es) kept busy on a core each would carry about ` +
        `${integer((1e6 / serverMicros(base)) * counts[0]!)} requests per second`,
    );
  }
  options.print(
    'CPU per request grows as each process gets fewer requests per event-loop turn (fewer answers share each rate-limit call to ' +
      'Redis and each group commit to PostgreSQL): more processes pay off once one process keeps its core busy, not before.',
  );
  const bound = rows.filter((r) => r.result.loaderCpu >= 0.9);
  if (bound.length > 0) options.print(`Note: the load generator used a whole core in ${bound.length} run(s): there the rate is bounded by the generator.`);
}

const scenario: Scenario = {
  description: `hrs serve --processes ${processCounts().join(' vs ')}: export v2 status and import v2 signals, CPU per request summed over the processes`,
  run,
};
export default scenario;
