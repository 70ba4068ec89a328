/**
 * export: what crawling the station list costs. A throwaway database gets 10,000 stations with
 * confirmed layouts and AFIR-like static details (set-based SQL, ./lib/seed.ts); the platform serves
 * them with the export v2 rate limits raised far beyond the load. Targets, one after the other under
 * the same load: a hello-world uWS server (`GET /`, the baseline); `GET /v2/hrs?limit=500` (the first
 * page: 500 full station records); the same page revalidated with `If-Modified-Since` (304, empty
 * body); and one station record, `GET /v2/hrs/{hrs_id}`. Every answer is checked once before its load.
 */
import { availableParallelism, cpus } from 'node:os';
import { connect, ensureDatabase } from '../../db/connect.js';
import { migrate } from '../../db/migrate.js';
import { TOKENS } from '../helpers/fixtures.js';
import { Child } from './lib/child.js';
import { measure, type Measurement } from './lib/load.js';
import type { BenchOptions, Scenario } from './lib/scenario.js';
import { tearDown, workspace } from './lib/workspace.js';
import { CPU_HEADERS, CPU_LEGEND, cpuCells, loaderLine } from './lib/cpu-report.js';
import { wrkVersion } from './lib/wrk.js';
import { benchHrsId, seedRegistry } from './lib/seed.js';
import { fixed, integer, percentOf, table } from './lib/table.js';

const STATIONS = 10_000;
const PAGE = 500;
/** Far above anything one load generator reaches. */
const LIMITS = { EXPORT_V2_RATE_LIMIT_MINUTE: '100000000', EXPORT_V2_RATE_LIMIT_DAY: '100000000' };
const AUTH = { Authorization: `Bearer ${TOKENS.export_v2}` };

interface Target {
  label: string;
  server: 'hello' | 'platform';
  path: string;
  headers?: Record<string, string>;
  status: number;
  /** Checks one answer; throws to say what is wrong. */
  expect?: (body: string, res: Response) => void;
}

function page(body: string): void {
  const envelope = JSON.parse(body) as { count: number; results: { hrs_id: string; dispensers: unknown[] }[]; next: string | null };
  if (envelope.count !== STATIONS) throw new Error(`count ${envelope.count}, not ${STATIONS}`);
  if (envelope.results.length !== PAGE) throw new Error(`${envelope.results.length} records, not ${PAGE}`);
  if (!Array.isArray(envelope.results[0]?.dispensers)) throw new Error('records without their layout');
  if (!envelope.next) throw new Error('no next link');
}

interface Row {
  target: Target;
  result: Measurement;
  bytes: number;
}

async function run(options: BenchOptions): Promise<void> {
  const space = workspace('export');
  const { database, databaseUrl } = space;
  const servers: Partial<Record<Target['server'], { child: Child; port: number }>> = {};
  const rows: Row[] = [];
  let seedMs = 0;
  try {
    await ensureDatabase(databaseUrl.toString());
    const sql = connect(databaseUrl.toString(), { max: 2 });
    try {
      await migrate(sql);
      const started = performance.now();
      await seedRegistry(sql, { stations: STATIONS });
      seedMs = performance.now() - started;
    } finally {
      await sql.end({ timeout: 5 });
    }
    const hello = await Child.start('hello-world server', new URL('./lib/hello-server.ts', import.meta.url));
    servers.hello = { child: hello.child, port: hello.ready.port as number };
    const platform = await Child.start('platform', new URL('./lib/platform-server.ts', import.meta.url), {
      env: {
        BENCH_DATABASE_URL: databaseUrl.toString(),
        BENCH_REDIS_PREFIX: database,
        BENCH_FIXTURE: 'export-token',
        BENCH_PLATFORM_ENV: JSON.stringify(LIMITS),
      },
      readyTimeoutMs: 180_000,
    });
    servers.platform = { child: platform.child, port: platform.ready.port as number };
    const base = `http://127.0.0.1:${servers.platform.port}`;
    const first = await fetch(`${base}/v2/hrs?limit=${PAGE}`, { headers: AUTH });
    const lastModified = first.headers.get('last-modified');
    if (!lastModified) throw new Error(`GET /v2/hrs answered ${first.status} without Last-Modified; not benchmarking that`);

    const targets: Target[] = [
      { label: 'hello world GET /', server: 'hello', path: '/', status: 200 },
      { label: `platform GET /v2/hrs?limit=${PAGE} (${integer(STATIONS)} stations)`, server: 'platform', path: `/v2/hrs?limit=${PAGE}`, headers: AUTH, status: 200, expect: page },
      {
        label: `platform GET /v2/hrs?limit=${PAGE}, If-Modified-Since (304)`,
        server: 'platform',
        path: `/v2/hrs?limit=${PAGE}`,
        headers: { ...AUTH, 'If-Modified-Since': lastModified },
        status: 304,
        expect: (body) => {
          if (body !== '') throw new Error('a 304 with a body');
        },
      },
      {
        label: `platform GET /v2/hrs/${benchHrsId(4321)} (one record)`,
        server: 'platform',
        path: `/v2/hrs/${benchHrsId(4321)}`,
        headers: AUTH,
        status: 200,
        expect: (body) => {
          if ((JSON.parse(body) as { hrs_id?: string }).hrs_id !== benchHrsId(4321)) throw new Error('another station');
        },
      },
    ];
    for (const target of targets) {
      const server = servers[target.server]!;
      const url = `http://127.0.0.1:${server.port}${target.path}`;
      const res = await fetch(url, { headers: { 'Accept-Encoding': 'identity', ...target.headers } });
      const body = await res.text();
      if (res.status !== target.status) throw new Error(`${target.label} answered ${res.status} ${body.slice(0, 200)}; not benchmarking that`);
      target.expect?.(body, res);
      const result = await measure(server.child, { url, headers: target.headers }, options);
      rows.push({ target, result, bytes: Buffer.byteLength(body) });
    }
  } finally {
    await tearDown(space, Object.values(servers));
  }

  const hello = rows[0]!.result;
  options.print(loaderLine(`wrk ${wrkVersion()}`, options.connections, options.durationSeconds, options.warmupSeconds));
  options.print(`machine: ${availableParallelism()} CPUs (${cpus()[0]?.model.trim() ?? 'unknown'}), Node.js ${process.version}`);
  options.print(`platform: ${integer(STATIONS)} stations seeded in ${fixed(seedMs / 1000, 1)} s; export v2 rate limits raised beyond the load`);
  options.print();
  options.print(
    table(
      ['target', 'status', 'body bytes', 'req/s', 'MB/s', 'p50 ms', 'p99 ms', 'non-2xx/304', 'errors', 'req/s %', ...CPU_HEADERS],
      rows.map(({ target, result: r, bytes }, i) => [
        target.label,
        String(target.status),
        integer(bytes),
        integer(r.requestsPerSecond),
        fixed((r.requestsPerSecond * bytes) / 1e6, 1),
        fixed(r.p50Ms, 3),
        fixed(r.p99Ms, 3),
        integer(target.status === 304 ? (r.statusCodes['304'] === undefined ? r.requestsTotal : r.requestsTotal - r.statusCodes['304']) : r.non2xx),
        integer(r.errors),
        i === 0 ? 'baseline' : percentOf(r.requestsPerSecond, hello.requestsPerSecond),
        ...cpuCells(r),
      ]),
    ),
  );
  options.print();
  options.print('req/s %: as a percentage of the hello-world figure of this run. MB/s: req/s x body bytes.');
  options.print(CPU_LEGEND);
}

const scenario: Scenario = {
  description: `export v2: GET /v2/hrs?limit=${PAGE} over ${STATIONS} stations, its 304 revalidation and one record, against a bare uWebSockets.js hello world`,
  run,
};
export default scenario;
