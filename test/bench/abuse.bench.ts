/**
 * abuse: what one hostile import v2 client costs everyone else. 50 connections (BENCH_CONNECTIONS)
 * read `GET /v2/hrs/{hrs_id}/status` of one station, three times under the same load: alone, while
 * one signal originator sends the largest requests import v2 lets through at its rate limit (the
 * spec's 300 a minute, IMPORT_V2_RATE_LIMIT as configured: ./lib/abuser.ts), and alone again. The
 * platform runs with the `import-v2` fixture (50 stations with BERLA's layout) and the export v2 limits
 * raised beyond the load.
 *
 * Goal: the readers' p99 with the abuser under twice its value without (the lower of the two runs alone).
 */
import { availableParallelism, cpus } from 'node:os';
import { TOKENS } from '../helpers/fixtures.js';
import { abuseBodies, startAbuser, type AbuseCounts } from './lib/abuser.js';
import { Child } from './lib/child.js';
import { IMPORT_V2_STATIONS, stationIds } from './lib/fixtures.js';
import { measure, type Measurement } from './lib/load.js';
import type { BenchOptions, Scenario } from './lib/scenario.js';
import { fixed, integer, table } from './lib/table.js';
import { autocannonVersion, tearDown, workspace } from './lib/workspace.js';
import { printGoals } from './lib/cpu-report.js';

const GOAL_RATIO = 2;
/** The spec's import v2 limit: 300 requests a minute per originator. */
const IMPORT_PER_MINUTE = 300;
const STATIONS = stationIds(IMPORT_V2_STATIONS);
const READ = STATIONS[0]!;
const HEADERS = { Authorization: `Bearer ${TOKENS.export_v2}` };

interface Row {
  label: string;
  result: Measurement;
  abuse?: AbuseCounts;
}

async function run(options: BenchOptions): Promise<void> {
  const space = workspace('abuse');
  let server: { child: Child; port: number } | undefined;
  const rows: Row[] = [];
  let maxBodyBytes = 1024 * 1024;
  try {
    const started = await Child.start('platform', new URL('./lib/platform-server.ts', import.meta.url), {
      env: {
        BENCH_DATABASE_URL: space.databaseUrl.toString(),
        BENCH_REDIS_PREFIX: space.database,
        BENCH_FIXTURE: 'import-v2',
        BENCH_PLATFORM_ENV: JSON.stringify({
          IMPORT_V2_RATE_LIMIT: String(IMPORT_PER_MINUTE),
          EXPORT_V2_RATE_LIMIT_MINUTE: '100000000',
          EXPORT_V2_RATE_LIMIT_DAY: '100000000',
        }),
      },
      readyTimeoutMs: 180_000,
    });
    server = { child: started.child, port: started.ready.port as number };
    maxBodyBytes = Number(process.env.MAX_BODY_BYTES ?? maxBodyBytes);
    const url = `http://127.0.0.1:${server.port}/v2/hrs/${READ}/status`;
    const check = await fetch(url, { headers: HEADERS });
    if (check.status !== 200) throw new Error(`${url} answered ${check.status}; not benchmarking that`);
    await check.arrayBuffer();
    const bodies = abuseBodies(STATIONS, maxBodyBytes);

    rows.push({ label: 'readers alone', result: await measure(server.child, { url, headers: HEADERS, generator: 'autocannon' }, options) });
    let abuser: ReturnType<typeof startAbuser> | undefined;
    const result = await measure(server.child, { url, headers: HEADERS, generator: 'autocannon' }, options, {
      beforeLoad: async () => void (abuser = startAbuser(server!.port, bodies, IMPORT_PER_MINUTE / 60)),
    });
    rows.push({ label: 'readers + abuser', result, abuse: await abuser!.stop() });
    rows.push({ label: 'readers alone, again', result: await measure(server.child, { url, headers: HEADERS, generator: 'autocannon' }, options) });
  } finally {
    await tearDown(space, [server]);
  }
  report(options, rows);
}

function report(options: BenchOptions, rows: Row[]): void {
  options.print(
    `load generator: autocannon ${autocannonVersion()} in its own process, ${options.connections} connections reading ` +
      `GET /v2/hrs/${READ}/status, ${options.durationSeconds} s per run` +
      (options.warmupSeconds > 0 ? ` after ${options.warmupSeconds} s of warm-up` : ''),
  );
  options.print(`machine: ${availableParallelism()} CPUs (${cpus()[0]?.model.trim() ?? 'unknown'}), Node.js ${process.version}`);
  const abuse = rows.find((row) => row.abuse)?.abuse;
  if (abuse) {
    options.print(
      `abuser: one originator, ${IMPORT_PER_MINUTE / 60} requests/s (its limit), bodies in turn of ${abuse.bodies.map(integer).join(', ')} bytes ` +
        '(1,000 transmissions validated; a 1 MiB array of {}; a 1 MiB array of 1)',
    );
  }
  options.print();
  options.print(
    table(
      ['run', 'req/s', 'p50 ms', 'p99 ms', 'non-2xx', 'errors', 'server CPU', 'abuser sent', 'abuser answers', 'abuser slowest ms'],
      rows.map(({ label, result: r, abuse: a }) => [
        label,
        integer(r.requestsPerSecond),
        fixed(r.p50Ms, 3),
        fixed(r.p99Ms, 3),
        integer(r.non2xx),
        integer(r.errors),
        fixed(r.serverCpu, 2),
        a ? integer(a.sent) : '',
        a ? Object.entries(a.statusCodes).map(([code, n]) => `${code}: ${n}`).join(', ') + (a.errors ? `, errors: ${a.errors}` : '') : '',
        a ? fixed(a.maxMs, 1) : '',
      ]),
    ),
  );
  const alone = Math.min(rows[0]!.result.p99Ms, rows[2]!.result.p99Ms);
  const withAbuser = rows[1]!.result.p99Ms;
  const ratio = withAbuser / alone;
  options.print();
  printGoals(options.print, [
    {
      what: "readers' p99 with the abuser against alone",
      measured: `${fixed(withAbuser, 2)} ms, ${fixed(ratio, 2)}x`,
      floor: `${fixed(alone, 2)} ms alone`,
      goal: `under ${GOAL_RATIO}x`,
      met: ratio < GOAL_RATIO,
    },
  ]);
}

const scenario: Scenario = {
  description: 'one import v2 client sending maximal requests at its rate limit while 50 connections read one station\'s status',
  run,
};
export default scenario;
