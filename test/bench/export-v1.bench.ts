/**
 * export-v1: what the export v1.1 five-state summary costs. Against a registry of 1,000 stations (the
 * `export-v1` fixture: BERLA's layout each, so 700ld and 350ld; time zone Europe/Berlin; every fourth
 * station open 24/7, the others `Mo-Fr 06:00-22:00; Sa,Su 08:00-20:00`; the export v1 token of the
 * standard fixture), every station but every twentieth is first given a live availability reading by
 * one real import v2 request (the twentieth stay without one: their open options are UNKNOWN). Then,
 * one after the other under the same load: a hello-world uWS server (`GET /`, the baseline);
 * `GET /v1.1/hrs/{hrs_id}/status`, the path rotating over all 1,000 stations (computed per request);
 * `GET /v1.1/hrs/status` (every station; kept encoded until the live status, the registry or an
 * opening hour moves), in identity encoding and asking for gzip; and the list again, both encodings,
 * while availability signals are posted through import v2 at CHURN_PER_SECOND (each moves the live
 * status, so the kept list is rebuilt on the next request). Every server and the load generator run
 * in processes of their own; the signals are posted from this process.
 *
 * The export v1/v1.1 token's rate limit is raised out of reach (EXPORT_V1_RATE_LIMIT) but still
 * counted in Redis on every request, as in service; hello world is the floor.
 *
 * Every answer is checked before its load: the list names all 1,000 stations in hrs_id order, each with
 * its two options; a reason always gives its state; stations are CLOSED exactly outside their hours
 * (as a Berlin wall clock reads them); stations without a reading have no datetime; and every single
 * station's answer equals its entry in the list. Before the churn targets a posted signal must show in
 * the list, and after them the last one posted.
 *
 * Before the churn targets, without load, what a rebuild costs: REBUILD_ROUNDS times a signal is posted
 * and the list fetched twice (the first GET rebuilds it, the second is served as kept), after
 * availability signals (identity and gzip) and after usage signals (the stations are live for usage
 * too), which the summary does not read.
 *
 * Goals: all-stations p99 under 50 ms at the configured connections (as export v2's list); the single
 * station's summary at most 30 µs of server CPU per request (export v2's status: 25 µs; the summary
 * is kept per station too, but computed again whenever its reading, its freshness, the registry or an
 * opening minute moves). wrk drives the
 * single-station target; the lists use autocannon, whose latency counts the measured seconds only.
 */
import { availableParallelism, cpus } from 'node:os';
import { REASON_STATES, SUMMARY_STATES, type SummaryReason, type SummaryState } from '../../src/domain/status/summary.js';
import { TOKENS } from '../helpers/fixtures.js';
import { Child } from './lib/child.js';
import { berlin, weeklyOpen, weeklyOpenThrough } from './lib/berlin-clock.js';
import { EXPORT_V1_TIME_ZONE, STATUS_STATIONS, WEEKLY_HOURS, exportV1Hours, stationIds } from './lib/fixtures.js';
import { measure, type Measurement, type MeasureHooks } from './lib/load.js';
import { MachineCpu } from './lib/machine-cpu.js';
import type { BenchOptions, Scenario } from './lib/scenario.js';
import { SignalChurn, postSignals, transmission } from './lib/status-seed.js';
import { autocannonVersion, tearDown, workspace } from './lib/workspace.js';
import { fixed, integer, median, table } from './lib/table.js';
import { CPU_HEADERS, CPU_LEGEND, cpuCells, loaderLine, printGoals, serverMicros } from './lib/cpu-report.js';
import { wrkVersion } from './lib/wrk.js';

/** All-stations p99 the platform should stay under, in milliseconds. */
const GOAL_P99_MS = 50;
/** Server CPU per single-station summary request the platform should stay within, in microseconds. */
const GOAL_SINGLE_MICROS = 30;
/** Availability signals posted per second during the churn targets. */
const CHURN_PER_SECOND = 10;
/** Unloaded rebuilds timed (per encoding) before the churn targets. */
const REBUILD_ROUNDS = 20;

const STATIONS = stationIds(STATUS_STATIONS);
/** Stations left without a reading: every twentieth. */
const silent = (i: number) => i % 20 === 19;
const SEEDED = STATIONS.filter((_, i) => !silent(i));
/** What BERLA's layout provides, in the summary's order. */
const OPTIONS = ['700ld', '350ld'];

const AUTH = { Authorization: `Bearer ${TOKENS.export_v1}` };
const GZIP = { ...AUTH, 'Accept-Encoding': 'gzip' };
const LIST_PATH = '/v1.1/hrs/status';
const stationPath = (hrsId: string) => `/v1.1/hrs/${hrsId}/status`;

/* ---- What the answers must say ------------------------------------------------------------------- */

interface Entry {
  fuel_type: string;
  status: SummaryState;
  reason: SummaryReason;
  datetime: string | null;
}
interface Summary {
  hrs_id: string;
  fuelling_options: Entry[];
}

type Tally = Record<SummaryState, number>;
const emptyTally = (): Tally => Object.fromEntries(SUMMARY_STATES.map((s) => [s, 0])) as Tally;

/** Checks station i's summary; `weekly`: whether WEEKLY_HOURS stations are open (undefined: not known). */
function checkSummary(summary: Summary, i: number, weekly: boolean | undefined, tally?: Tally): void {
  const hrsId = STATIONS[i]!;
  if (summary.hrs_id !== hrsId) throw new Error(`station ${i} is ${String(summary.hrs_id)}, expected ${hrsId}`);
  const entries = summary.fuelling_options;
  if (!Array.isArray(entries) || entries.map((e) => e.fuel_type).join() !== OPTIONS.join()) {
    throw new Error(`${hrsId} lists ${JSON.stringify(entries)}, expected the options ${OPTIONS.join(', ')}`);
  }
  const open = exportV1Hours(i) === '24/7' ? true : weekly;
  for (const entry of entries) {
    const what = `${hrsId} ${entry.fuel_type} (${entry.status}, ${entry.reason})`;
    if (REASON_STATES[entry.reason] !== entry.status) throw new Error(`${what}: reason and status disagree`);
    if (open === true && entry.status === 'CLOSED') throw new Error(`${what}: CLOSED within its hours (${exportV1Hours(i)})`);
    if (open === false && entry.status !== 'CLOSED') throw new Error(`${what}: not CLOSED outside its hours (${exportV1Hours(i)})`);
    if (silent(i) && entry.datetime !== null) throw new Error(`${what}: a datetime, but it was given no reading`);
    if (!silent(i) && typeof entry.datetime !== 'string') throw new Error(`${what}: no datetime, but it was given a reading`);
    if (silent(i) && open === true && entry.reason !== 'no_signal') throw new Error(`${what}: open without a reading, yet not no_signal`);
    if (tally) tally[entry.status]++;
  }
}

/** Checks the whole list; returns the states of its entries, counted. */
function checkList(list: Summary[], weekly: boolean | undefined): Tally {
  if (!Array.isArray(list)) throw new Error('the answer is not an array');
  if (list.length !== STATIONS.length) throw new Error(`${list.length} stations listed, ${STATIONS.length} registered`);
  const tally = emptyTally();
  list.forEach((summary, i) => checkSummary(summary, i, weekly, tally));
  return tally;
}

interface Fetched {
  status: number;
  body: string;
  /** Bytes as sent (encoded, when it was). */
  sent: number;
  encoding: string | null;
}

async function get(url: string, headers: Record<string, string> = {}): Promise<Fetched> {
  // fetch asks for gzip unless told otherwise, and decodes what it gets.
  const res = await fetch(url, { headers: { 'Accept-Encoding': 'identity', ...headers } });
  const body = await res.text();
  const encoding = res.headers.get('content-encoding');
  return { status: res.status, body, sent: encoding ? Number(res.headers.get('content-length')) : Buffer.byteLength(body), encoding };
}

function expectOk(label: string, res: Fetched): void {
  if (res.status !== 200) throw new Error(`${label} answered ${res.status} ${res.body.slice(0, 200)}; not benchmarking that`);
}

/** The list, checked; with the Berlin time and the tally of its states. */
async function fetchList(base: string, headers: Record<string, string>): Promise<{ res: Fetched; list: Summary[]; tally: Tally; at: Date }> {
  const before = new Date();
  const res = await get(`${base}${LIST_PATH}`, headers);
  const after = new Date();
  expectOk(`GET ${LIST_PATH}`, res);
  if (headers['Accept-Encoding'] === 'gzip' && res.encoding !== 'gzip') throw new Error(`GET ${LIST_PATH}: not gzip-encoded although asked for`);
  const list = JSON.parse(res.body) as Summary[];
  return { res, list, tally: checkList(list, weeklyOpenThrough(before, after)), at: before };
}

/** Every station's own answer, checked and compared with its entry in the list; returns the mean bytes. */
async function checkEveryStation(base: string): Promise<number> {
  const before = new Date();
  const { list } = await fetchList(base, AUTH);
  let bytes = 0;
  const BATCH = 50;
  for (let from = 0; from < STATIONS.length; from += BATCH) {
    const answers = await Promise.all(STATIONS.slice(from, from + BATCH).map((hrsId) => get(`${base}${stationPath(hrsId)}`, AUTH)));
    answers.forEach((res, k) => {
      const i = from + k;
      expectOk(`GET ${stationPath(STATIONS[i]!)}`, res);
      bytes += res.sent;
      checkSummary(JSON.parse(res.body) as Summary, i, undefined);
    });
    const weekly = weeklyOpenThrough(before, new Date());
    // The same instant's hours: the single answers and the list must agree entry for entry.
    if (weekly !== undefined) {
      answers.forEach((res, k) => {
        const i = from + k;
        if (res.body !== JSON.stringify(list[i])) throw new Error(`${STATIONS[i]} answers ${res.body}, the list says ${JSON.stringify(list[i])}`);
      });
    }
  }
  return bytes / STATIONS.length;
}

/* ---- Seeding and the live status kept moving ---------------------------------------------------- */

const postAvailability = (port: number, transmissions: Record<string, unknown>[]) => postSignals(port, 'availability', transmissions);

/** Gives every station but every twentieth a live availability reading, dated a second ago; one request. */
async function seedReadings(port: number): Promise<void> {
  const datetime = new Date(Date.now() - 1000).toISOString();
  await postAvailability(
    port,
    STATIONS.flatMap((hrsId, i) => (silent(i) ? [] : [transmission('availability', hrsId, i, datetime)])),
  );
}

/** Milliseconds until the list shows `hrsId`'s reading of `datetime`; throws after `timeoutMs`. */
async function untilListed(base: string, hrsId: string, datetime: string, since: number, timeoutMs = 5000): Promise<number> {
  const i = STATIONS.indexOf(hrsId);
  for (;;) {
    const res = await get(`${base}${LIST_PATH}`, AUTH);
    expectOk(`GET ${LIST_PATH}`, res);
    const entry = (JSON.parse(res.body) as Summary[])[i];
    if (entry?.fuelling_options.every((e) => e.datetime === datetime)) return performance.now() - since;
    if (performance.now() - since > timeoutMs) {
      throw new Error(`the list still shows ${hrsId} as ${JSON.stringify(entry)} ${timeoutMs} ms after its reading of ${datetime} was posted`);
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** The median of `values`. */
/**
 * What rebuilding the kept list costs, unloaded: `rounds` times a signal of `type` is posted, then the
 * list is fetched twice (the first GET after a change rebuilds it, and shows an availability reading;
 * the second is served as kept). Returns the median of each, client-side milliseconds.
 */
async function rebuildTimes(
  port: number,
  base: string,
  headers: Record<string, string>,
  rounds: number,
  type: 'availability' | 'usage',
): Promise<{ first: number; again: number }> {
  const first: number[] = [];
  const again: number[] = [];
  for (let r = 0; r < rounds; r++) {
    const hrsId = SEEDED[(r * 101) % SEEDED.length]!;
    const datetime = new Date().toISOString();
    await postSignals(port, type, [transmission(type, hrsId, r, datetime)]);
    for (const times of [first, again]) {
      const started = performance.now();
      const res = await get(`${base}${LIST_PATH}`, headers);
      times.push(performance.now() - started);
      expectOk(`GET ${LIST_PATH}`, res);
      if (type !== 'availability') continue;
      const entry = (JSON.parse(res.body) as Summary[])[STATIONS.indexOf(hrsId)];
      if (!entry?.fuelling_options.every((e) => e.datetime === datetime)) {
        throw new Error(`the list shows ${hrsId} as ${JSON.stringify(entry)} right after its reading of ${datetime} was accepted`);
      }
    }
  }
  return { first: median(first), again: median(again) };
}

/** The churn: one availability transmission a request, to the seeded stations far apart in the list from one to the next. */
function churnSignal(n: number, datetime: string) {
  const hrsId = SEEDED[(n * 37) % SEEDED.length]!;
  return { type: 'availability' as const, hrsId, transmission: transmission('availability', hrsId, n, datetime) };
}

/* ---- The run ------------------------------------------------------------------------------------- */

interface Target {
  label: string;
  server: 'hello' | 'platform';
  path: string;
  /** Paths sent in turn (the single-station target). */
  paths?: string[];
  headers?: Record<string, string>;
  /** Availability signals posted during the load. */
  churn?: boolean;
}

const LIST_LABEL = `platform GET ${LIST_PATH} (${STATIONS.length} stations)`;
const CHURN_NOTE = `, ${CHURN_PER_SECOND} signals/s posted`;
const TARGETS: Target[] = [
  { label: 'hello world GET /', server: 'hello', path: '/' },
  {
    label: `platform GET /v1.1/hrs/{hrs_id}/status (rotating over ${STATIONS.length} stations)`,
    server: 'platform',
    path: stationPath(STATIONS[0]!),
    paths: STATIONS.map(stationPath),
    headers: AUTH,
  },
  { label: LIST_LABEL, server: 'platform', path: LIST_PATH, headers: AUTH },
  { label: `${LIST_LABEL}, Accept-Encoding: gzip`, server: 'platform', path: LIST_PATH, headers: GZIP },
  { label: `${LIST_LABEL}${CHURN_NOTE}`, server: 'platform', path: LIST_PATH, headers: AUTH, churn: true },
  { label: `${LIST_LABEL}, Accept-Encoding: gzip${CHURN_NOTE}`, server: 'platform', path: LIST_PATH, headers: GZIP, churn: true },
];

interface Row {
  target: Target;
  result: Measurement;
  bytes: number;
  /** Cores busy on the whole machine during the measured load (every process). */
  machineCpu: number;
  /** Churn targets: signals accepted during the measured load, how long that was, and all posted and accepted. */
  churn?: { accepted: number; seconds: number; postedTotal: number; acceptedTotal: number };
}


async function run(options: BenchOptions): Promise<void> {
  const space = workspace('export_v1');
  const { database, databaseUrl } = space;
  const servers: Partial<Record<Target['server'], { child: Child; port: number }>> = {};
  const rows: Row[] = [];
  let seedMs = 0;
  let seen: { tally: Tally; at: Date; bytes: number; gzipBytes: number } | undefined;
  const propagation: { label: string; ms: number }[] = [];
  let rebuild: { label: string; times: { first: number; again: number } }[] | undefined;
  try {
    const hello = await Child.start('hello-world server', new URL('./lib/hello-server.ts', import.meta.url));
    servers.hello = { child: hello.child, port: hello.ready.port as number };
    const platform = await Child.start('platform', new URL('./lib/platform-server.ts', import.meta.url), {
      env: {
        BENCH_DATABASE_URL: databaseUrl.toString(),
        BENCH_REDIS_PREFIX: database,
        BENCH_FIXTURE: 'export-v1',
        // The churn posts beyond import v2's per-minute limit; the load goes far beyond export v1's.
        BENCH_PLATFORM_ENV: JSON.stringify({ IMPORT_V2_RATE_LIMIT: '100000000', EXPORT_V1_RATE_LIMIT: '1000000000' }),
      },
      readyTimeoutMs: 180_000,
    });
    servers.platform = { child: platform.child, port: platform.ready.port as number };
    const port = servers.platform.port;
    const base = `http://127.0.0.1:${port}`;

    const seedStarted = performance.now();
    await seedReadings(port);
    seedMs = performance.now() - seedStarted;
    const identity = await fetchList(base, AUTH);
    const gzip = await fetchList(base, GZIP);
    seen = { tally: identity.tally, at: identity.at, bytes: identity.res.sent, gzipBytes: gzip.res.sent };
    const singleBytes = await checkEveryStation(base);

    for (const target of TARGETS) {
      const server = servers[target.server]!;
      const url = `http://127.0.0.1:${server.port}${target.path}`;
      let bytes: number;
      if (target.server === 'hello') {
        const res = await get(url);
        if (res.status !== 200 || res.body !== 'Hello World!') throw new Error(`hello world answered ${res.status} ${res.body.slice(0, 100)}`);
        bytes = res.sent;
      } else if (target.paths) bytes = singleBytes;
      else bytes = (await fetchList(base, target.headers!)).res.sent;

      const machine = new MachineCpu();
      let machineCpu = Number.NaN;
      /** Machine CPU sampled over the measured load, plus `also` at both ends. */
      const hooks = (also: { before?: () => void; after?: () => void } = {}): MeasureHooks => ({
        windowStart: () => {
          also.before?.();
          machine.start();
        },
        windowEnd: () => {
          machineCpu = machine.stop();
          also.after?.();
        },
      });
      // The lists' p99 is a goal: autocannon, whose latency covers the measured seconds only.
      const generator = target.paths ? undefined : ('autocannon' as const);
      if (!target.churn) {
        const result = await measure(server.child, { url, headers: target.headers, paths: target.paths, generator, label: target.label }, options, hooks());
        rows.push({ target, result, bytes, machineCpu });
        continue;
      }
      if (!rebuild) {
        rebuild = [
          { label: 'availability (identity)', times: await rebuildTimes(port, base, AUTH, REBUILD_ROUNDS, 'availability') },
          { label: 'availability (gzip)', times: await rebuildTimes(port, base, GZIP, REBUILD_ROUNDS, 'availability') },
          { label: 'usage, which the summary does not read (identity)', times: await rebuildTimes(port, base, AUTH, REBUILD_ROUNDS, 'usage') },
        ];
      }
      // The kept list must follow the live status: a posted reading shows at once.
      const probe = SEEDED[SEEDED.length - 1]!;
      const datetime = new Date().toISOString();
      const posted = performance.now();
      await postAvailability(port, [transmission('availability', probe, 0, datetime)]);
      propagation.push({ label: `before: ${probe}`, ms: await untilListed(base, probe, datetime, posted) });

      const churn = new SignalChurn(port, CHURN_PER_SECOND, churnSignal);
      let from = { accepted: 0, at: 0 };
      let to = from;
      churn.start();
      let result: Measurement;
      try {
        result = await measure(
          server.child,
          { url, headers: target.headers, generator, label: target.label },
          options,
          hooks({
            before: () => (from = { accepted: churn.accepted, at: performance.now() }),
            after: () => (to = { accepted: churn.accepted, at: performance.now() }),
          }),
        );
      } finally {
        await churn.stop();
      }
      if (churn.failures.length > 0) throw new Error(`posting signals during the load failed: ${churn.failures.join('; ')}`);
      const last = churn.last;
      if (!last) throw new Error('no signal was accepted during the load');
      // The last reading posted must be in the list.
      propagation.push({ label: `after: ${last.hrsId}`, ms: await untilListed(base, last.hrsId, last.datetime, performance.now()) });
      rows.push({
        target,
        result,
        bytes,
        machineCpu,
        churn: { accepted: to.accepted - from.accepted, seconds: (to.at - from.at) / 1000, postedTotal: churn.posted, acceptedTotal: churn.accepted },
      });
    }
  } finally {
    await tearDown(space, Object.values(servers));
  }

  const hello = rows[0]!.result;
  const weeklyCount = STATIONS.filter((_, i) => exportV1Hours(i) !== '24/7').length;
  options.print(loaderLine(`wrk ${wrkVersion()} (autocannon ${autocannonVersion()} for the lists, whose p99 is a goal)`, options.connections, options.durationSeconds, options.warmupSeconds));
  options.print(`machine: ${availableParallelism()} CPUs (${cpus()[0]?.model.trim() ?? 'unknown'}), Node.js ${process.version}`);
  options.print(
    `platform: ${STATIONS.length} registered stations (700ld and 350ld each; ${EXPORT_V1_TIME_ZONE}; ` +
      `${STATIONS.length - weeklyCount} open 24/7, ${weeklyCount} "${WEEKLY_HOURS}"), ${SEEDED.length} of them given a live ` +
      `availability reading before the load by one real import v2 request (${fixed(seedMs, 0)} ms), ` +
      `${STATIONS.length - SEEDED.length} without one; export v1 token, its rate limit counted on every request but out of reach`,
  );
  if (seen) {
    const weekly = weeklyOpen(seen.at);
    options.print(
      `at ${berlin(seen.at).text} Berlin time (the "${WEEKLY_HOURS}" stations ${weekly ? 'open' : 'closed'}) the list's ` +
        `${integer(STATIONS.length * OPTIONS.length)} entries were: ` +
        SUMMARY_STATES.map((s) => `${s} ${integer(seen!.tally[s])}`).join(', ') +
        `; ${integer(seen.bytes)} bytes, ${integer(seen.gzipBytes)} gzip-encoded`,
    );
  }
  options.print(
    'single station: the path rotates over all stations, request by request; every station checked once beforehand, ' +
      'its answer equal to its entry in the list',
  );
  for (const { target, churn } of rows) {
    if (!churn) continue;
    options.print(
      `${target.label}: ${integer(churn.accepted)} signals accepted during the measured ${fixed(churn.seconds, 1)} s ` +
        `(${fixed(churn.accepted / churn.seconds, 1)}/s, one transmission per POST, each moving the live status); ` +
        `${integer(churn.acceptedTotal)} of ${integer(churn.postedTotal)} posted from warm-up to end accepted`,
    );
  }
  if (propagation.length > 0) {
    options.print(
      `a posted reading was in the list after: ${propagation.map(({ label, ms }) => `${fixed(ms, 1)} ms (${label})`).join(', ')} ` +
        '(from the POST, resp. from the end of the load, to a GET showing it)',
    );
  }
  if (rebuild) {
    options.print(
      `the list fetched alone (no load) right after a signal / once more, median of ${REBUILD_ROUNDS} each (client-side ms; ` +
        'a difference is the rebuild): ' +
        rebuild.map(({ label, times }) => `after ${label} ${fixed(times.first, 1)} / ${fixed(times.again, 1)}`).join('; '),
    );
  }
  options.print();
  options.print(
    table(
      ['target', 'loader', 'body bytes', 'req/s', 'MB/s', 'p50 ms', 'p99 ms', 'non-2xx', 'errors', ...CPU_HEADERS, 'machine CPU'],
      rows.map(({ target, result: r, bytes, machineCpu }) => [
        target.label,
        r.generator,
        integer(bytes),
        integer(r.requestsPerSecond),
        fixed((r.requestsPerSecond * bytes) / 1e6, 1),
        fixed(r.p50Ms, 3),
        fixed(r.p99Ms, 3),
        integer(r.non2xx),
        integer(r.errors),
        ...cpuCells(r),
        fixed(machineCpu, 2),
      ]),
    ),
  );
  options.print();
  options.print('body bytes: as sent (gzip-encoded where asked for; the single station: the mean over all stations). MB/s: req/s x body bytes.');
  options.print("Latency: autocannon's over every 2xx response of the measured seconds; wrk's over every request of the run.");
  options.print(`${CPU_LEGEND} machine CPU: every process, the kernel included (n/a without /proc).`);
  options.print(`The signals rows' server CPU includes taking the signals (${CHURN_PER_SECOND}/s through import v2: token, validation, storage, publication).`);

  const single = rows[1]!.result;
  options.print();
  printGoals(options.print, [
    {
      what: 'GET /v1.1/hrs/{hrs_id}/status (the five-state summary, rotating): server CPU per request',
      measured: `${fixed(serverMicros(single), 1)} µs (hello world's: ${fixed(serverMicros(hello), 1)} µs)`,
      goal: `at most ${GOAL_SINGLE_MICROS} µs`,
      met: serverMicros(single) <= GOAL_SINGLE_MICROS,
    },
  ]);
  printGoals(
    options.print,
    rows.slice(2).map(({ target, result }) => ({
      what: `all-stations summary p99, ${target.label.slice(LIST_LABEL.length + 2) || 'identity encoding'}`,
      measured: `${fixed(result.p99Ms, 1)} ms`,
      goal: `under ${GOAL_P99_MS} ms`,
      met: result.p99Ms < GOAL_P99_MS,
    })),
  );
  const busy = rows.flatMap(({ target, result, machineCpu }) => {
    const others = machineCpu - result.serverCpu - result.loaderCpu;
    return others >= 0.25 ? [`${target.label} (${others.toFixed(2)} cores)`] : [];
  });
  if (busy.length > 0) {
    options.print(
      `Note: processes other than the server and the load generator (PostgreSQL, Redis and this process included) kept the machine busy during ` +
        `${busy.join('; ')}: the rates are lower than on a quiet machine and vary from run to run; CPU per request is the steadier comparison.`,
    );
  }
  const bound = rows.flatMap(({ target, result }) => (result.loaderCpu >= 0.9 ? [target.label] : []));
  if (bound.length > 0) {
    options.print(
      `Note: the load generator used a whole core for ${bound.join('; ')}: that figure is bounded by the generator, not by the server` +
        (bound.includes(TARGETS[0]!.label) ? ', so the percentages understate the gap.' : '.'),
    );
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
  description:
    `export v1.1 five-state summary: GET /v1.1/hrs/{hrs_id}/status and GET /v1.1/hrs/status over ${STATUS_STATIONS} stations ` +
    `with opening hours, also while ${CHURN_PER_SECOND} signals/s move the live status, against a bare uWebSockets.js hello world`,
  run,
};
export default scenario;
