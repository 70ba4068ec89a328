/**
 * scale: the platform as deployed (`npm run build`, then bin/hrs.js serve with the production Node
 * flags) started on 100,000 stations x 4 categories, as `actors` seeds them (a confirmed layout each,
 * one originator live for all four signal types everywhere, one published reading per station and
 * category; the stations spread over Europe, so the public map shows them all).
 *
 * Measured from the spawn: when `/readyz` first answers 200 (polled every 20 ms), and the log's own
 * steps (the registry loaded, the live status restored, listening with `started_ms`). Then what runs
 * after the start (the public map's first settling in slices, its static fields, the DATEX II rows):
 * the map feed is asked for once, `/healthz` is polled every 20 ms meanwhile (its slowest answer: no
 * request waits long for the background work), and the resident memory is read at ready, once the
 * feed is there, EARLY_S seconds later, and every second for SETTLE_S seconds (VmRSS), with the peak
 * (VmHWM). The start leaves its reads' rows as garbage in the old generation and the young one grown
 * to its maximum; V8 collects them with its memory reducer once the instance is quiet (its watchdog
 * starts one within about 100 s of the last full collection), so the settled figure is the lowest
 * seen in SETTLE_S seconds, with when it came.
 *
 * Goals (issue 42, item 4): ready within 5 s of the spawn; resident memory within 1 GB (10^9 bytes):
 * settled, and, the strict reading, at its peak.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { availableParallelism, cpus } from 'node:os';
import { connect, ensureDatabase, type Sql } from '../../db/connect.js';
import { migrate } from '../../db/migrate.js';
import { NODE_FLAGS } from '../../src/config/node-flags.js';
import { freePort, HRS } from '../helpers/process.js';
import { Child, ROOT } from './lib/child.js';
import { printGoals } from './lib/cpu-report.js';
import type { BenchOptions, Scenario } from './lib/scenario.js';
import { seedRegistry } from './lib/seed.js';
import { fixed, integer, table } from './lib/table.js';
import { tearDown, workspace } from './lib/workspace.js';

const STATIONS = 100_000;
const GOAL_READY_MS = 5_000;
const GOAL_RSS_BYTES = 1e9;
/** Seconds after the feed is there of the first memory reading after it (the figure earlier runs gave as settled). */
const EARLY_S = 20;
/** Seconds after the feed is there during which the memory is read every second. */
const SETTLE_S = 180;

const MB = 1e6;

/** VmRSS and VmHWM of a process, bytes. */
function memoryOf(pid: number): { rss: number; peak: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'latin1');
  const kb = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB$`, 'm').exec(status)?.[1] ?? Number.NaN) * 1024;
  return { rss: kb('VmRSS'), peak: kb('VmHWM') };
}

interface LogLine {
  msg?: string;
  /** pino's ISO time (src/config/log.ts). */
  time?: string;
  ms?: number;
  started_ms?: number;
  stations?: number;
  actors?: number;
  level?: number;
}

async function run(options: BenchOptions): Promise<void> {
  const space = workspace('scale');
  const { databaseUrl, database } = space;
  let sql: Sql | undefined;
  let stop: (() => Promise<void>) | undefined;
  try {
    await ensureDatabase(databaseUrl.toString());
    sql = connect(databaseUrl.toString(), { max: 1 });
    await migrate(sql);
    const seeding = performance.now();
    await seedRegistry(sql, { stations: STATIONS, places: 'europe', readings: { spreadMs: 40 * 60_000, pricingSpreadMs: 26 * 3_600_000 } });
    // As a database in service is: analysed (and autovacuum not still at work on the fresh tables).
    await sql`VACUUM ANALYZE`;
    const seedS = (performance.now() - seeding) / 1000;
    await sql.end({ timeout: 1 });
    sql = undefined;

    // As deployed: the build, which bin/hrs.js runs when it is newer than every source.
    const building = performance.now();
    await new Promise<void>((resolve, reject) => {
      const build = spawn(process.execPath, ['scripts/build.js'], { cwd: ROOT, stdio: ['ignore', 'ignore', 'inherit'] });
      build.once('exit', (code) => (code === 0 ? resolve() : reject(new Error(`npm run build exited with code ${code}`))));
    });
    const buildS = (performance.now() - building) / 1000;

    // The floor: the same rows read with the platform's own queries, nothing built from them.
    const { child: floorChild, ready: floor } = await Child.start('start floor', new URL('./lib/start-floor.ts', import.meta.url), {
      env: { DATABASE_URL: databaseUrl.toString() },
      readyTimeoutMs: 120_000,
    });
    await floorChild.stop();

    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    const lines: LogLine[] = [];
    const spawned = performance.now();
    const spawnedAt = Date.now();
    const child = spawn(process.execPath, [...NODE_FLAGS, HRS, 'serve'], {
      cwd: ROOT,
      env: { ...process.env, DATABASE_URL: databaseUrl.toString(), REDIS_PREFIX: database, HOST: '127.0.0.1', PORT: String(port), LOG_LEVEL: 'info', SANDBOX: 'off' },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    stop = async () => {
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
      await exited;
      clearTimeout(timer);
    };
    let buffered = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      buffered += chunk.toString('utf8');
      const parts = buffered.split('\n');
      buffered = parts.pop()!;
      for (const part of parts) {
        try {
          lines.push(JSON.parse(part) as LogLine);
        } catch {
          // Not a log line.
        }
      }
    });
    const pid = child.pid!;

    let readyMs = Number.NaN;
    for (;;) {
      if (child.exitCode !== null) throw new Error(`hrs serve exited with code ${child.exitCode}`);
      if (performance.now() - spawned > 120_000) throw new Error('hrs serve was not ready within 120 s');
      const ok = await fetch(`${base}/readyz`).then((res) => res.status === 200, () => false);
      if (ok) {
        readyMs = performance.now() - spawned;
        break;
      }
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const atReady = memoryOf(pid);

    // The background work after the start, with a request every 20 ms meanwhile.
    let polling = true;
    let slowestMs = 0;
    let polls = 0;
    const poller = (async () => {
      while (polling) {
        const sent = performance.now();
        await fetch(`${base}/healthz`).then((res) => res.arrayBuffer());
        slowestMs = Math.max(slowestMs, performance.now() - sent);
        polls++;
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    })();
    const asked = performance.now();
    const feed = await fetch(`${base}/map/v1/stations.geojson`, { headers: { 'Accept-Encoding': 'identity' } });
    const feedBytes = (await feed.arrayBuffer()).byteLength;
    const feedMs = performance.now() - asked;
    const feedFeatures = feed.status === 200 ? STATIONS : 0;
    const withFeed = memoryOf(pid);
    const feedAt = performance.now();
    let early = withFeed;
    let settled = withFeed;
    let settledAtS = 0;
    for (let second = 1; second <= SETTLE_S; second++) {
      await new Promise((resolve) => setTimeout(resolve, feedAt + second * 1000 - performance.now()));
      const now = memoryOf(pid);
      if (second === EARLY_S) {
        early = now;
        // The poller's requests are the background work's witness; the quiet after is the instance at rest.
        polling = false;
        await poller;
      }
      if (now.rss < settled.rss) {
        settled = now;
        settledAtS = second;
      }
    }
    const peak = memoryOf(pid).peak;
    const warnings = lines.filter((line) => (line.level ?? 0) >= 40).map((line) => line.msg);
    await stop();
    stop = undefined;

    const step = (msg: string) => lines.find((line) => line.msg === msg);
    const registry = step('registry loaded');
    const restored = step('live status restored');
    const listening = step('listening');
    options.print(`machine: ${availableParallelism()} CPUs (${cpus()[0]?.model.trim() ?? 'unknown'}), Node.js ${process.version}; node ${NODE_FLAGS.join(' ')} bin/hrs.js serve (built)`);
    options.print(
      `data: ${integer(STATIONS)} stations x 4 categories, spread over Europe, seeded and analysed in ${fixed(seedS, 1)} s; the build took ${fixed(buildS, 1)} s (neither measured)`,
    );
    options.print();
    options.print(
      table(
        ['step', 'ms', 'what'],
        [
          ['registry loaded', integer(registry?.ms ?? Number.NaN), `${integer(registry?.stations ?? Number.NaN)} stations`],
          ['  its rows read, nothing built (floor)', integer(Number(floor.registryMs)), `${integer(Number(floor.stations))} stations`],
          ['live status restored', integer(restored?.ms ?? Number.NaN), `${integer(restored?.actors ?? Number.NaN)} actors`],
          ['  its readings read, nothing built (floor)', integer(Number(floor.readingsMs)), `${integer(Number(floor.readings))} readings`],
          ['listening (since the process started)', integer(listening?.started_ms ?? Number.NaN), 'the log\'s started_ms'],
          ['/readyz answers 200 (since the spawn)', integer(readyMs), 'the goal\'s figure'],
          ['the map feed, asked for at ready', integer(feedMs), `${integer(feedBytes / MB)} MB, ${integer(feedFeatures)} features`],
        ],
      ),
    );
    options.print();
    // The start's own account: every log line up to listening, at its time since the spawn.
    const untilListening = lines.slice(0, Math.max(0, lines.indexOf(listening!)) + 1);
    options.print(
      table(
        ['the start\'s log', 'ms since the spawn'],
        untilListening.map((line) => [line.msg ?? '', integer(Date.parse(line.time ?? '') - spawnedAt)]),
      ),
    );
    options.print();
    options.print(
      table(
        ['resident memory (MB)', 'RSS', 'peak so far'],
        [
          ['at ready', integer(atReady.rss / MB), integer(atReady.peak / MB)],
          ['with the map feed made', integer(withFeed.rss / MB), integer(withFeed.peak / MB)],
          [`${EARLY_S} s later`, integer(early.rss / MB), integer(early.peak / MB)],
          [`settled: the lowest within ${SETTLE_S} s (${settledAtS} s after the feed)`, integer(settled.rss / MB), integer(settled.peak / MB)],
        ],
      ),
    );
    options.print();
    options.print(`/healthz every 20 ms for ${EARLY_S} s after ready: ${integer(polls)} answers, the slowest in ${fixed(slowestMs, 0)} ms`);
    if (warnings.length > 0) options.print(`warnings in the log: ${warnings.join('; ')}`);
    options.print('MB: 10^6 bytes.');
    options.print();
    printGoals(options.print, [
      { what: 'ready (/readyz 200) after the spawn', measured: `${fixed(readyMs / 1000, 2)} s`, floor: `${fixed((Number(floor.registryMs) + Number(floor.readingsMs)) / 1000, 2)} s reading the rows alone`, goal: `under ${fixed(GOAL_READY_MS / 1000, 0)} s`, met: readyMs < GOAL_READY_MS },
      { what: `resident memory, settled (the lowest within ${SETTLE_S} s of the feed)`, measured: `${integer(settled.rss / MB)} MB`, goal: `under ${integer(GOAL_RSS_BYTES / MB)} MB`, met: settled.rss < GOAL_RSS_BYTES },
      { what: 'resident memory at its peak (VmHWM)', measured: `${integer(peak / MB)} MB`, goal: `under ${integer(GOAL_RSS_BYTES / MB)} MB`, met: peak < GOAL_RSS_BYTES },
    ]);
    if (feed.status !== 200) throw new Error(`the map feed answered ${feed.status}`);
    if (restored?.actors !== STATIONS * 4) throw new Error(`${restored?.actors} actors restored, not ${STATIONS * 4}`);
  } finally {
    await stop?.();
    await sql?.end({ timeout: 1 });
    await tearDown(space, []);
  }
}

const scenario: Scenario = {
  description: 'the platform started on 100,000 stations x 4 categories: time to ready and resident memory',
  run,
};
export default scenario;
