/**
 * push: what the status stream (`/v2/hrs/status/stream`) delivers under a steady signal load. The
 * platform runs in a process of its own with the `status` fixture (1,000 stations, BERLA's layout each,
 * mon-1 live for all four signal types); every station is first given all four sections by real import
 * v2 signals (as in status.bench.ts). Then, per target:
 *
 * - 1,005 WebSocket streams (the `ws` package, all in one process of their own: ./lib/push-clients.ts)
 *   connect with alice's export v2 token in the Authorization header and subscribe: stream i
 *   (0 ≤ i < 1,000) to the 10 stations i, i+1, …, i+9 of the ring of stations (wrapping around), so
 *   every station has 10 window subscribers, and 5 more streams to "*" (on top of the 1,000, so that
 *   every station has the same subscribers). Each signal is thus due to 15 streams.
 * - This process posts 200 availability signals per second for 30 s (BENCH_DURATION when set) on a
 *   fixed schedule (signal n is sent n × 5 ms after the start, whether or not earlier ones have been
 *   answered; keep-alive connections): one transmission per `POST /import/v2/signal/availability/`,
 *   stations in turn (each one every 5 s), each with a `datetime` later than every one before (the
 *   time of sending, to the millisecond) and N1's availability flipped, so every signal changes its
 *   station's status object. BENCH_WARMUP seconds of the same load come first, unmeasured. The
 *   poster, the clients and the server each have an event loop (and process) of their own.
 * - Each stream records every `status` message with its receipt time, read before parsing. A signal's
 *   delivery to a subscribed stream counts as done when a message for its station arrives whose
 *   `availability.datetime` is the signal's or a later one (changes of one event-loop turn are
 *   coalesced into the latest state: such a delivery is *superseded*, not lost); its latency is taken
 *   from the first such message. Lost = due deliveries no message covered. (A station changes only
 *   every 5 s here, so coalescing is not expected; were it to happen, it would show as superseded.)
 *
 * Latency is measured from the signal's 204 (the moment the acknowledgement arrived here; a message
 * may overtake it, hence negative values) and, second row, from the moment the POST was sent. Both
 * processes read `performance.timeOrigin + performance.now()`. Also reported: the POST round trip, the
 * time to connect and subscribe every stream, messages delivered per second, the server's resident
 * memory and V8 heap (after a full collection, ./lib/memory-probe.ts) before the streams connect, once
 * they are live and after the load, and the CPU of the server, the clients, the poster, PostgreSQL,
 * Redis and the whole machine during the load (the latter shows what else ran meanwhile).
 *
 * Baseline, measured the same way in the same run: the push floor (./lib/publish-server.ts), a bare
 * uWebSockets.js server with the same path and topic layout that publishes a message of the same shape
 * and size to `status/{hrs_id}` and `status/*` on each POST before answering 204: no token check,
 * validation, storage or live status. It is measured first, then the platform.
 *
 * Goals: delivery p99 (from the 204) under 50 ms; no message lost.
 */
import http from 'node:http';
import { availableParallelism, cpus } from 'node:os';
import { createRequire } from 'node:module';
import { TOKENS } from '../helpers/fixtures.js';
import { Child } from './lib/child.js';
import { SIGNAL_TYPES, STATUS_STATIONS, stationIds } from './lib/fixtures.js';
import { SECTIONS, seedAllSections } from './lib/status-seed.js';
import type { MemorySample } from './lib/memory-probe.js';
import { MachineCpu } from './lib/machine-cpu.js';
import { ProcessCpu } from './lib/process-cpu.js';
import type { Analysis, ClientsConfig, Signals, Stats } from './lib/push-clients.js';
import type { BenchOptions, Scenario } from './lib/scenario.js';
import { fixed, integer, table } from './lib/table.js';
import { tearDown, workspace } from './lib/workspace.js';
import { printGoals } from './lib/cpu-report.js';

/** Signals posted per second. */
const RATE = 200;
/** Measured seconds when BENCH_DURATION is not set. */
const DEFAULT_SECONDS = 30;
/** Stations per window stream; as many window streams as stations. */
const WIDTH = 10;
/** Streams on "*". */
const ALL_STREAMS = 5;
/** Streams being opened at a time. */
const CONNECT_CONCURRENCY = 50;
/** Delivery p99 (from the 204) the platform should stay under, in milliseconds. */
const GOAL_P99_MS = 50;

const STATIONS = stationIds(STATUS_STATIONS);
const WINDOW_STREAMS = STATIONS.length;
const STREAMS = WINDOW_STREAMS + ALL_STREAMS;
const PER_SIGNAL = WIDTH + ALL_STREAMS;
const SIGNAL_PATH = '/import/v2/signal/availability/';
const STREAM_PATH = '/v2/hrs/status/stream';
const EXPORT_HEADERS = { Authorization: `Bearer ${TOKENS.export_v2}` };
const IMPORT_HEADERS = { Authorization: `Bearer ${TOKENS.import_v2}` };
/** The station whose other three sections the floor's messages carry. */
const SAMPLE = STATIONS[0]!;

const clock = () => performance.timeOrigin + performance.now();
const MB = 1e6;
/** The servers' memory is read after a full collection (./lib/memory-probe.ts). */
const EXPOSE_GC = [process.env.NODE_OPTIONS, '--expose-gc'].filter(Boolean).join(' ');

// --- the poster --------------------------------------------------------------------------------------

interface Server {
  child: Child;
  port: number;
}

/** The last `datetime` posted (epoch ms): every signal's is later, over both targets. */
let lastDatetime = 0;
/** Signals posted so far, over both targets: signal n goes to station n mod 1,000, visit n div 1,000. */
let sequence = 0;

interface Posted extends Signals {
  status: number[];
  /** How late each signal left against its schedule, in milliseconds. */
  lagMs: number[];
  errors: number;
  firstError: string | undefined;
}

/**
 * Posts `rate` signals per second for `seconds` to `server`, on a fixed schedule; resolves once every
 * one is answered, or early (with those sent so far answered) when the server has exited.
 */
function postSignals(server: Server, rate: number, seconds: number): Promise<Posted> {
  const port = server.port;
  let count = Math.round(rate * seconds);
  const interval = 1000 / rate;
  const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });
  const posted: Posted = { station: [], datetime: [], sentAt: [], ackAt: [], status: [], lagMs: [], errors: 0, firstError: undefined };
  return new Promise((resolve) => {
    let sent = 0;
    let answered = 0;
    const start = performance.now() + 20;
    const check = () => {
      if (answered < sent || sent < count) return;
      agent.destroy();
      resolve(posted);
    };
    const finish = () => {
      answered++;
      check();
    };
    const fire = (j: number, scheduled: number) => {
      const n = sequence++;
      const station = n % STATIONS.length;
      const visit = Math.floor(n / STATIONS.length);
      const datetime = Math.max(Date.now(), lastDatetime + 1);
      lastDatetime = datetime;
      const up = visit % 2 === 0;
      const body = JSON.stringify([
        {
          hrs: STATIONS[station],
          datetime: new Date(datetime).toISOString(),
          nozzles: [
            { id: 'N1', available: up },
            { id: 'N2', available: true },
          ],
          station: { maintenance: false, limitedly_available: !up },
        },
      ]);
      posted.station[j] = station;
      posted.datetime[j] = datetime;
      posted.ackAt[j] = -1;
      posted.status[j] = 0;
      posted.lagMs[j] = performance.now() - scheduled;
      let done = false;
      const complete = () => {
        if (done) return;
        done = true;
        finish();
      };
      posted.sentAt[j] = clock();
      const req = http.request(
        {
          host: '127.0.0.1',
          port,
          path: SIGNAL_PATH,
          method: 'POST',
          agent,
          headers: { ...IMPORT_HEADERS, 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) },
        },
        (res) => {
          const at = clock();
          posted.status[j] = res.statusCode ?? 0;
          if (res.statusCode === 204) posted.ackAt[j] = at;
          res.resume();
          res.once('end', complete);
        },
      );
      req.setTimeout(10_000, () => req.destroy(new Error('no answer within 10 s')));
      req.once('error', (err) => {
        posted.errors++;
        posted.firstError ??= err.message;
        complete();
      });
      req.end(body);
    };
    const tick = () => {
      if (server.child.exited) {
        count = sent;
        check();
        return;
      }
      const now = performance.now();
      while (sent < count && start + sent * interval <= now) {
        fire(sent, start + sent * interval);
        sent++;
      }
      if (sent < count) setTimeout(tick, Math.max(0, start + sent * interval - performance.now()));
    };
    setTimeout(tick, Math.max(0, start - performance.now()));
  });
}

// --- one target ------------------------------------------------------------------------------------

interface Result {
  label: string;
  connectMs: number;
  posted: Posted;
  analysis: Analysis;
  roundTrip: Stats;
  memory: { before: MemorySample; connected: MemorySample; after: MemorySample };
  /** Cores busy during the load. */
  cpu: { server: number; clients: number; poster: number; database: number; redis: number; machine: number };
}

async function memoryOf(child: Child): Promise<MemorySample> {
  return (await child.request({ type: 'memory' }, 'memory')) as unknown as MemorySample;
}

function stats(values: number[]): Stats {
  const sorted = Float64Array.from(values).sort();
  const at = (p: number) => (sorted.length === 0 ? Number.NaN : sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!);
  return { count: sorted.length, p50: at(50), p99: at(99), max: sorted.at(-1) ?? Number.NaN, negative: sorted.filter((v) => v < 0).length };
}

async function measureTarget(label: string, server: Server, checkSnapshots: boolean, seconds: number, options: BenchOptions): Promise<Result> {
  const before = await memoryOf(server.child);
  const config: ClientsConfig = {
    url: `ws://127.0.0.1:${server.port}${STREAM_PATH}`,
    headers: EXPORT_HEADERS,
    stations: STATIONS,
    windows: WINDOW_STREAMS,
    width: WIDTH,
    all: ALL_STREAMS,
    concurrency: CONNECT_CONCURRENCY,
    checkSnapshots,
  };
  const { child: clients } = await Child.start(`stream clients (${label})`, new URL('./lib/push-clients.ts', import.meta.url), {
    args: [JSON.stringify(config)],
  });
  try {
    const connected = await clients.request({ type: 'connect' }, 'connected', 180_000);
    if (Number(connected.failures) > 0) {
      throw new Error(`${label}: ${String(connected.failures)} of ${STREAMS} streams did not open and subscribe; the first: ${String(connected.firstError)}`);
    }
    const connectedMemory = await memoryOf(server.child);

    if (options.warmupSeconds > 0) {
      await postSignals(server, RATE, options.warmupSeconds);
      await clients.request({ type: 'settle', quietMs: 500, maxMs: 10_000 }, 'settled', 20_000);
      await clients.request({ type: 'reset' }, 'reset');
    }

    const databaseCpu = new ProcessCpu(['postgres']);
    const redisCpu = new ProcessCpu(['redis-server']);
    const machineCpu = new MachineCpu();
    const serverBefore = await server.child.cpuMicros();
    const clientsBefore = await clients.cpuMicros();
    const posterBefore = process.cpuUsage();
    databaseCpu.start();
    redisCpu.start();
    machineCpu.start();
    const started = performance.now();
    const posted = await postSignals(server, RATE, seconds);
    const wallMs = performance.now() - started;
    const cores = (micros: number) => micros / 1000 / wallMs;
    const poster = process.cpuUsage(posterBefore);
    const cpu = {
      machine: machineCpu.stop(),
      database: databaseCpu.stop(),
      redis: redisCpu.stop(),
      server: cores((await server.child.cpuMicros()) - serverBefore),
      clients: cores((await clients.cpuMicros()) - clientsBefore),
      poster: cores(poster.user + poster.system),
    };

    await clients.request({ type: 'settle', quietMs: 1000, maxMs: 20_000 }, 'settled', 30_000);
    const after = await memoryOf(server.child);
    const signals: Signals = { station: posted.station, datetime: posted.datetime, sentAt: posted.sentAt, ackAt: posted.ackAt };
    const reply = await clients.request({ type: 'analyse', signals }, 'analysis', 60_000);
    const roundTrip = stats(posted.ackAt.flatMap((at, j) => (at < 0 ? [] : [at - posted.sentAt[j]!])));
    await clients.request({ type: 'close' }, 'closed', 15_000);
    return {
      label,
      connectMs: Number(connected.ms),
      posted,
      analysis: reply.analysis as Analysis,
      roundTrip,
      memory: { before, connected: connectedMemory, after },
      cpu,
    };
  } finally {
    await clients.stop();
  }
}

// --- the scenario ----------------------------------------------------------------------------------

async function run(options: BenchOptions): Promise<void> {
  // BENCH_DURATION is the run's own when set; this scenario's default is longer than the runner's.
  const seconds = process.env.BENCH_DURATION ? options.durationSeconds : DEFAULT_SECONDS;
  const space = workspace('push');
  const { database, databaseUrl } = space;
  const servers: Partial<Record<'platform' | 'floor', Server>> = {};
  const results: Result[] = [];
  let seedMs = 0;
  let messageBytes = 0;
  try {
    const platform = await Child.start('platform', new URL('./lib/push-platform-server.ts', import.meta.url), {
      env: {
        BENCH_DATABASE_URL: databaseUrl.toString(),
        BENCH_REDIS_PREFIX: database,
        BENCH_FIXTURE: 'status',
        NODE_OPTIONS: EXPOSE_GC,
        // Far beyond the load: every stream and signal is still counted.
        BENCH_PLATFORM_ENV: JSON.stringify({
          PUSH_STREAMS_PER_USER: '100000',
          EXPORT_V2_RATE_LIMIT_MINUTE: '100000000',
          EXPORT_V2_RATE_LIMIT_DAY: '100000000',
          IMPORT_V2_RATE_LIMIT: '1000000',
        }),
      },
      // Loading 1,000 stations takes a while on a busy machine.
      readyTimeoutMs: 180_000,
    });
    servers.platform = { child: platform.child, port: platform.ready.port as number };

    const seedStarted = performance.now();
    await seedAllSections(servers.platform.port, STATIONS);
    seedMs = performance.now() - seedStarted;
    const sample = await fetch(`http://127.0.0.1:${servers.platform.port}/v2/hrs/${SAMPLE}/status`, { headers: EXPORT_HEADERS });
    const status = (await sample.json()) as Record<string, unknown>;
    const missing = SECTIONS.filter((key) => status[key] === null || status[key] === undefined);
    if (sample.status !== 200 || missing.length > 0) throw new Error(`after seeding, ${SAMPLE}'s status lacks ${missing.join(', ') || 'nothing'} (${sample.status})`);
    messageBytes = Buffer.byteLength(`{"type":"status","station":${JSON.stringify(status)}}`);
    const rest = SECTIONS.slice(1)
      .map((key) => `${JSON.stringify(key)}:${JSON.stringify(status[key])}`)
      .join(',');

    const floor = await Child.start('push floor', new URL('./lib/publish-server.ts', import.meta.url), {
      env: { BENCH_PUBLISH_REST: rest, NODE_OPTIONS: EXPOSE_GC },
    });
    servers.floor = { child: floor.child, port: floor.ready.port as number };

    results.push(await measureTarget('push floor (bare uWS publish)', servers.floor, false, seconds, options));
    results.push(await measureTarget('platform', servers.platform, true, seconds, options));
  } finally {
    await tearDown(space, Object.values(servers));
  }

  const wsVersion = createRequire(import.meta.url)('ws/package.json').version as string;
  const ms = (v: number) => fixed(v, 2);
  const mb = (bytes: number) => fixed(bytes / MB, 1);
  options.print(`machine: ${availableParallelism()} CPUs (${cpus()[0]?.model.trim() ?? 'unknown'}), Node.js ${process.version}`);
  options.print(
    `streams: ${integer(STREAMS)} WebSocket clients (ws ${wsVersion}, all in one process of their own): ` +
      `${integer(WINDOW_STREAMS)} on ${WIDTH} stations each (stream i: stations i … i+${WIDTH - 1} of the ${integer(STATIONS.length)}, wrapping; ` +
      `${WIDTH} per station) + ${ALL_STREAMS} on "*"; each signal is due to ${PER_SIGNAL} streams`,
  );
  options.print(
    `signals: ${RATE}/s for ${seconds} s (${integer(RATE * seconds)} per target` +
      (options.warmupSeconds > 0 ? `, after ${options.warmupSeconds} s of unmeasured warm-up` : '') +
      `), one availability transmission per POST ${SIGNAL_PATH}, stations in turn (each every ${fixed(STATIONS.length / RATE, 1)} s), ` +
      'on a fixed schedule from the benchmark process (keep-alive connections)',
  );
  options.print(
    `platform: ${integer(STATIONS.length)} stations with all four sections, given by real import v2 signals ` +
      `(${SIGNAL_TYPES.length} POSTs of ${integer(STATIONS.length)} transmissions, ${fixed(seedMs, 0)} ms); a status message is ${integer(messageBytes)} bytes`,
  );
  options.print(
    'push floor: bare uWebSockets.js, same path and topics (status/{hrs_id}, status/*), publishes a message of the same shape and size ' +
      'on each POST before its 204; no token, validation, storage or live status',
  );
  options.print();
  options.print(
    table(
      ['target', 'signals 204', 'due', 'delivered', 'superseded', 'lost', 'msg/s', 'connect s', 'closed by server', 'other msgs'],
      results.map(({ label, posted, analysis: a, connectMs }) => [
        label,
        integer(posted.ackAt.filter((at) => at >= 0).length),
        integer(a.expected),
        integer(a.delivered),
        integer(a.superseded),
        integer(a.lost),
        integer(a.received / seconds),
        fixed(connectMs / 1000, 2),
        integer(Object.values(a.closedByServer).reduce((sum, n) => sum + n, 0)),
        integer(a.unmatched + a.duplicates + a.outOfOrder + a.unsubscribed + Object.values(a.others).reduce((sum, n) => sum + n, 0)),
      ]),
    ),
  );
  options.print();
  const latencyRows = results.flatMap(({ label, analysis: a, roundTrip }) =>
    (
      [
        ['delivery, from the 204', a.fromAck],
        ['delivery, from sending the POST', a.fromSend],
        ['POST round trip (send → 204)', roundTrip],
      ] as const
    ).map(([what, s]) => [`${label}: ${what}`, integer(s.count), ms(s.p50), ms(s.p99), ms(s.max), integer(s.negative)]),
  );
  options.print(table(['latency', 'count', 'p50 ms', 'p99 ms', 'max ms', '< 0'], latencyRows));
  options.print();
  // A negative RSS difference is the allocator returning pages meanwhile, not the streams' share.
  const perStream = (from: number, to: number) => (to < from ? '< 0 (noise)' : fixed((to - from) / STREAMS / 1000, 1));
  options.print(
    table(
      ['server memory', 'before streams MB', 'streams live MB', 'after load MB', 'peak MB', 'Δ per stream KB'],
      results.flatMap(({ label, memory: m }) => [
        [`${label}: RSS`, mb(m.before.rss), mb(m.connected.rss), mb(m.after.rss), mb(m.after.peakRss), perStream(m.before.rss, m.connected.rss)],
        [`${label}: V8 heap used`, mb(m.before.heapUsed), mb(m.connected.heapUsed), mb(m.after.heapUsed), '', perStream(m.before.heapUsed, m.connected.heapUsed)],
        [`${label}: V8 heap reserved`, mb(m.before.heapTotal), mb(m.connected.heapTotal), mb(m.after.heapTotal), '', ''],
      ]),
    ),
  );
  options.print();
  options.print(
    table(
      ['CPU during the load (cores)', 'server', 'clients', 'poster', 'postgres', 'redis', 'sum', 'whole machine'],
      results.map(({ label, cpu }) => {
        const sum = cpu.server + cpu.clients + cpu.poster + cpu.database + cpu.redis;
        return [label, ...[cpu.server, cpu.clients, cpu.poster, cpu.database, cpu.redis, sum, cpu.machine].map((v) => fixed(v, 2))];
      }),
    ),
  );
  options.print();
  options.print(
    `due: per acknowledged signal, the streams subscribed to its station (${PER_SIGNAL}). delivered: a message for the station arrived ` +
      "carrying the signal's datetime or a later one (superseded: only a later one, the change coalesced with a newer one); lost: due − delivered.",
  );
  options.print(
    'latency: to the first message covering the signal; "< 0": messages that arrived before the 204 did. msg/s: status messages received per measured second.',
  );
  options.print(
    'memory: read after a full garbage collection in the server (peak: the largest RSS of its whole life); Δ per stream: ' +
      `(streams live − before) / ${integer(STREAMS)}. RSS moves by tens of MB with the reserved V8 heap (its young generation grows under ` +
      "load, shrinks when idle) and with the allocator returning freed pages or not, so its Δ is noise; the heap Δ is the streams' JavaScript state.",
  );
  options.print(
    `CPU: 1.00 = one core busy all the time; sum: the benchmark's processes, whole machine: every process (of ${availableParallelism()} cores).`,
  );

  for (const { label, posted, analysis: a, memory, cpu } of results) {
    const elsewhere = cpu.machine - (cpu.server + cpu.clients + cpu.poster + cpu.database + cpu.redis);
    if (elsewhere > 0.25) {
      options.print(`Note: ${label}: processes outside the benchmark used about ${fixed(elsewhere, 2)} cores during the load; its figures are affected.`);
    }
    if (!memory.after.collected) options.print(`Note: ${label}: no --expose-gc in the server; its memory figures include uncollected garbage.`);
    const lag = stats(posted.lagMs);
    if (lag.p99 > 5) options.print(`Note: ${label}: the poster fell behind its schedule (p99 ${ms(lag.p99)} ms late, max ${ms(lag.max)} ms).`);
    const failed = posted.ackAt.filter((at) => at < 0).length;
    if (failed > 0) {
      const codes = [...new Set(posted.status.filter((s) => s !== 204))].join(', ');
      options.print(`Note: ${label}: ${failed} signals were not answered 204 (statuses ${codes || 'none'}; ${posted.errors} errors, first: ${posted.firstError ?? '-'}).`);
    }
    const odd = { unmatched: a.unmatched, duplicates: a.duplicates, 'out of order': a.outOfOrder, 'not subscribed': a.unsubscribed, ...a.others };
    const listed = Object.entries(odd).filter(([, n]) => n > 0);
    if (listed.length > 0) options.print(`Note: ${label}: other messages: ${listed.map(([k, n]) => `${k}: ${n}`).join(', ')}.`);
    const closed = Object.entries(a.closedByServer);
    if (closed.length > 0) options.print(`Note: ${label}: streams closed by the server during the run: ${closed.map(([code, n]) => `${n} with ${code}`).join(', ')}.`);
  }

  const platform = results.find((r) => r.label === 'platform')!;
  const p99 = platform.analysis.fromAck.p99;
  options.print();
  printGoals(options.print, [
    { what: 'delivery p99 from the 204 to the status message', measured: `${fixed(p99, 1)} ms`, goal: `under ${GOAL_P99_MS} ms`, met: p99 < GOAL_P99_MS },
    { what: 'messages lost', measured: integer(platform.analysis.lost), goal: 'none', met: platform.analysis.lost === 0 },
  ]);
}

const scenario: Scenario = {
  description:
    `status stream: ${integer(STREAMS)} subscribed WebSocket clients, ${RATE} availability signals/s posted; ` +
    'delivery latency, lost messages and server memory, against a bare uWebSockets.js publisher',
  run,
};
export default scenario;
