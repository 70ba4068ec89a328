/**
 * http-core: what the platform's HTTP core costs over bare uWebSockets.js. Targets measured one after
 * the other under the same load: a hello-world uWS server (`GET /`, the baseline), the platform's
 * `GET /healthz` (routing, the request wrapper, JSON reply) and `GET /v2/fuel-type` (plus bearer-token
 * authentication); then what the HTTP core's pool of answer bodies saves (src/http/body-pool.ts): the
 * bare server answering a page of 100 records of 1.2 kB made per request, as a `near` page is, into
 * fresh memory and into the pool, twice each, alternated (./lib/hello-server.ts `/page/…`, in a
 * process of its own started with the service's Node.js options, as the platform runs). Every
 * server and the load generator run in processes of their own.
 */
import { availableParallelism, cpus } from 'node:os';
import { TOKENS } from '../helpers/fixtures.js';
import { NODE_FLAGS } from '../../src/config/node-flags.js';
import { Child } from './lib/child.js';
import { measure, type Measurement } from './lib/load.js';
import type { BenchOptions, Scenario } from './lib/scenario.js';
import { tearDown, workspace } from './lib/workspace.js';
import { CPU_HEADERS, CPU_LEGEND, cpuCells, loaderLine, serverMicros } from './lib/cpu-report.js';
import { wrkVersion } from './lib/wrk.js';
import { fixed, integer, percentOf, table } from './lib/table.js';


/** Records on a page of ./lib/hello-server.ts `/page/…` (as it makes them). */
const PAGE_RECORDS = 100;

interface Target {
  label: string;
  /** `pages`: the hello-world server again, with the service's Node.js options (src/config/node-flags.ts). */
  server: 'hello' | 'platform' | 'pages';
  path: string;
  headers?: Record<string, string>;
  /** What a correct answer looks like; checked once before the load starts. */
  expect: (body: string) => boolean;
}

const TARGETS: Target[] = [
  { label: 'hello world GET /', server: 'hello', path: '/', expect: (body) => body === 'Hello World!' },
  {
    label: 'platform GET /healthz',
    server: 'platform',
    path: '/healthz',
    expect: (body) => (JSON.parse(body) as { status?: string }).status === 'ok',
  },
  {
    label: 'platform GET /v2/fuel-type',
    server: 'platform',
    path: '/v2/fuel-type',
    headers: { Authorization: `Bearer ${TOKENS.export_v2}` },
    expect: (body) => Array.isArray(JSON.parse(body)) && (JSON.parse(body) as unknown[]).length > 0,
  },
  ...[1, 2].flatMap((round) =>
    (['fresh', 'pooled'] as const).map((memory) => ({
      label: `hello world (the service's Node.js options) GET /page/${memory}: 100 records into ${memory === 'fresh' ? 'fresh memory' : 'the pool\'s'}, ${round === 1 ? 'first' : 'second'} time`,
      server: 'pages' as const,
      path: `/page/${memory}`,
      expect: (body: string) => (JSON.parse(`[${body}]`) as unknown[]).length === PAGE_RECORDS,
    })),
  ),
];

async function check(url: string, target: Target): Promise<void> {
  const res = await fetch(url, { headers: target.headers });
  const body = await res.text();
  let good = false;
  try {
    good = res.status === 200 && target.expect(body);
  } catch {
    good = false;
  }
  if (!good) throw new Error(`${target.label} answered ${res.status} ${body.slice(0, 200)}; not benchmarking that`);
}

async function run(options: BenchOptions): Promise<void> {
  const space = workspace('http_core');
  const { database, databaseUrl } = space;
  const servers: Partial<Record<Target['server'], { child: Child; port: number }>> = {};
  const results: Measurement[] = [];
  try {
    const hello = await Child.start('hello-world server', new URL('./lib/hello-server.ts', import.meta.url));
    servers.hello = { child: hello.child, port: hello.ready.port as number };
    const pages = await Child.start('page server', new URL('./lib/hello-server.ts', import.meta.url), { nodeFlags: NODE_FLAGS });
    servers.pages = { child: pages.child, port: pages.ready.port as number };
    const platform = await Child.start('platform', new URL('./lib/platform-server.ts', import.meta.url), {
      env: {
        BENCH_DATABASE_URL: databaseUrl.toString(),
        BENCH_REDIS_PREFIX: database,
        // Far beyond the load: every export request is still counted against the limits.
        BENCH_PLATFORM_ENV: JSON.stringify({ EXPORT_V2_RATE_LIMIT_MINUTE: '100000000', EXPORT_V2_RATE_LIMIT_DAY: '100000000' }),
      },
    });
    servers.platform = { child: platform.child, port: platform.ready.port as number };

    for (const target of TARGETS) {
      const server = servers[target.server]!;
      const url = `http://127.0.0.1:${server.port}${target.path}`;
      await check(url, target);
      results.push(await measure(server.child, { url, headers: target.headers }, options));
    }
  } finally {
    await tearDown(space, Object.values(servers));
  }

  const [base] = results;
  options.print(loaderLine(`wrk ${wrkVersion()}`, options.connections, options.durationSeconds, options.warmupSeconds));
  options.print(`machine: ${availableParallelism()} CPUs (${cpus()[0]?.model.trim() ?? 'unknown'}), Node.js ${process.version}`);
  options.print();
  options.print(
    table(
      ['target', 'req/s', 'p50 ms', 'p99 ms', 'non-2xx', 'errors', 'req/s %', 'p50 %', 'p99 %', ...CPU_HEADERS],
      results.map((r, i) => [
        TARGETS[i]!.label,
        integer(r.requestsPerSecond),
        fixed(r.p50Ms, 3),
        fixed(r.p99Ms, 3),
        integer(r.non2xx),
        integer(r.errors),
        i === 0 ? 'baseline' : percentOf(r.requestsPerSecond, base!.requestsPerSecond),
        i === 0 ? 'baseline' : percentOf(r.p50Ms, base!.p50Ms),
        i === 0 ? 'baseline' : percentOf(r.p99Ms, base!.p99Ms),
        ...cpuCells(r),
      ]),
    ),
  );
  options.print();
  options.print('%: the platform figure as a percentage of the hello-world figure of this run (req/s: higher is better; latency: lower is better).');
  options.print("Latency: wrk's, over every request of the run.");
  options.print(CPU_LEGEND);
  const pageMicros = (memory: 'fresh' | 'pooled') =>
    results.flatMap((r, i) => (TARGETS[i]!.path === `/page/${memory}` ? [serverMicros(r)] : []));
  const [fresh, pooled] = [pageMicros('fresh'), pageMicros('pooled')];
  if (fresh.length > 0 && pooled.length > 0) {
    const mean = (list: number[]) => list.reduce((a, b) => a + b, 0) / list.length;
    options.print(
      `a page of ${PAGE_RECORDS} records made per request: ${fresh.map((m) => fixed(m, 1)).join(' and ')} µs of server CPU into fresh memory, ` +
        `${pooled.map((m) => fixed(m, 1)).join(' and ')} µs into the pool's: the pool saved ${fixed(mean(fresh) - mean(pooled), 1)} µs per page`,
    );
  }
  const bound = results.flatMap((r, i) => (r.loaderCpu >= 0.9 ? [TARGETS[i]!.label] : []));
  if (bound.length > 0) {
    options.print(
      `Note: the load generator used a whole core for ${bound.join(', ')}: that figure is bounded by the generator, ` +
        'not by the server' + (bound.includes(TARGETS[0]!.label) ? ', so the percentages understate the gap.' : '.'),
    );
  }
}

const scenario: Scenario = {
  description: 'HTTP core: the platform against a bare uWebSockets.js hello world',
  run,
};
export default scenario;
