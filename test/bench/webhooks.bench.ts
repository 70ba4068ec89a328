/**
 * webhooks: what signed webhooks cost the signal path, and how fast they arrive. The platform runs in a
 * process of its own (`status` fixture: 1,000 stations with BERLA's layout, mon-1 live for all four
 * signal types; WEBHOOK_SECRET_KEY set, WEBHOOK_ALLOW_LOOPBACK=true, no BullMQ workers in it), the
 * receiver (./lib/webhook-receiver.ts, node:http) in another, the workers in a third, started as
 * `hrs worker` starts them (./lib/webhook-worker.ts: startWorkers). This process posts the load's
 * availability signals, so many a second (./lib/paced-signals.ts: a fixed schedule, stations in turn, every
 * signal a change of its station's status) for 30 s (BENCH_DURATION when set), after BENCH_WARMUP
 * seconds (5 at least) of the same load, four times:
 *
 * 1. without subscriptions: the import path's server CPU per request (server process CPU over the
 *    measured seconds / requests answered 204), PostgreSQL's beside it;
 * 2. with the load's active subscriptions of alice's, each for every station (no `hrs_ids`, no `bbox`), of
 *    the kinds BENCH_WEBHOOK_KINDS names (default `station_status`; comma-separated), their URL the
 *    receiver's, each with its own secret sealed as the platform seals them, no worker running: the
 *    same figures, the server now recording every change in the change log
 *    (src/push/webhooks/recorder.ts), and the rows it recorded;
 * 3. with every subscription disabled (the platform notices within TOPICS_EVERY_MS): the first run's
 *    figures once more, so drift on a shared machine shows; nothing may be recorded in it. The goal
 *    compares the second run with the mean of the first and the third;
 * 4. the subscriptions active again from the log's head, the workers running: the deliveries, per
 *    signal and subscription the time from the signal's 204 to the first change of it arriving at the
 *    receiver (p50, p99, max; one not made once the receiver has been quiet for 2 s, or DRAIN_MS after
 *    the load, counts as not delivered), messages and changes received, the worker process's CPU from
 *    the load's start until the receiver is quiet, per message and per change; and the server's CPU per
 *    request while the worker shares the machine with it;
 * 5. the subscriptions disabled again and the load posted once more, while a bare client in a process of
 *    its own (./lib/webhook-paced-floor.ts) sends messages of as many changes to the receiver at the
 *    worker's pace (as many a second as it delivered, on a fixed schedule): the sending floor under the
 *    conditions the worker met, printed beside the goal's floor (which sends back to back).
 *
 * The subscriptions are read by the platform every few seconds (TOPICS_EVERY_MS): before runs 2 and
 * 4, probe signals are posted until their changes are in the change log. Without a webhook delivery
 * worker among the workers (`startWorkers` names none) run 4 is left out and the deliveries are
 * reported as not measured, with the workers that did start. The worker process runs every worker
 * startWorkers starts (call log, status history, …), as `hrs worker` does: its CPU per delivery is an
 * upper bound of the delivery's own.
 *
 * Goals: delivery p99 from the 204 under 1 s with none lost; the import path's CPU per request with
 * the subscriptions within 5% of without; the worker's CPU per delivered message at most 1.5x the floor
 * of forming, signing and sending a message of as many changes (./lib/webhook-floor.ts: a bare
 * node:http client POSTing to the same receiver over kept connections, back to back, after the load),
 * measured in the same run; beside it the floor at the worker's pace under the same load (run 5: what
 * the same client costs woken as the worker is) and forming and signing alone. Two loads are measured by default, the two the goals are set
 * for on two cores: 100 subscriptions at 200 signals/s, then 1,000 at 20. BENCH_WEBHOOK_RATE (signals per second, default 200) and
 * BENCH_WEBHOOK_SUBSCRIPTIONS (default 1,000), when either is set, name one load instead.
 */
import { randomBytes } from 'node:crypto';
import { availableParallelism, cpus } from 'node:os';
import { connect, type Sql } from '../../db/connect.js';
import { newWebhookSecret, sealSecret } from '../../src/domain/webhooks/secrets.js';
import { TOPICS_EVERY_MS } from '../../src/push/webhooks/recorder.js';
import { Child } from './lib/child.js';
import { printGoals, type Goal } from './lib/cpu-report.js';
import { STATUS_STATIONS, stationIds } from './lib/fixtures.js';
import { SignalPacer, type PacedSignals } from './lib/paced-signals.js';
import { MachineCpu } from './lib/machine-cpu.js';
import { floorChanges, messageFloor, sendFloor } from './lib/webhook-floor.js';
import { ProcessCpu } from './lib/process-cpu.js';
import type { BenchOptions, Scenario } from './lib/scenario.js';
import { fixed, integer, table } from './lib/table.js';
import { tearDown, workspace } from './lib/workspace.js';

/** A whole number from the environment, or the default. */
function wholeFromEnv(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d{1,7}$/.test(raw) || Number(raw) < 1) throw new Error(`${name} must be a whole number of at least 1 (got "${raw}")`);
  return Number(raw);
}
/** A load: signals posted per second, and active subscriptions, each for every station. */
interface Load {
  rate: number;
  subscriptions: number;
}
/**
 * The loads measured: BENCH_WEBHOOK_RATE and BENCH_WEBHOOK_SUBSCRIPTIONS, when either is set, name one;
 * otherwise the two the goals are set for on two cores, one after the other.
 */
const LOADS: Load[] =
  process.env.BENCH_WEBHOOK_RATE || process.env.BENCH_WEBHOOK_SUBSCRIPTIONS
    ? [{ rate: wholeFromEnv('BENCH_WEBHOOK_RATE', 200), subscriptions: wholeFromEnv('BENCH_WEBHOOK_SUBSCRIPTIONS', 1000) }]
    : [
        { rate: 200, subscriptions: 100 },
        { rate: 20, subscriptions: 1000 },
      ];
/** The load being measured. */
let load: Load = LOADS[0]!;
const GOAL_P99_MS = 1000;
const GOAL_CPU_PERCENT = 5;
/** The worker's CPU per delivered message, at most this many times the floor's (forming, signing and sending a message of as many changes). */
const GOAL_WORKER_TIMES_FLOOR = 1.5;
const KINDS = (process.env.BENCH_WEBHOOK_KINDS || 'station_status').split(',').map((kind) => kind.trim());
const STATIONS = stationIds(STATUS_STATIONS);
/** Measured seconds per run when BENCH_DURATION is not set: a few percent of CPU needs more than the runner's default 10. */
const DEFAULT_SECONDS = 30;
/** The longest wait for the receiver to fall quiet after a load; deliveries not made by then count as lost. */
const DRAIN_MS = 60_000;
/** Unmeasured seconds of the same load before each run at least: the first run must not pay for the start (compilation, the fixture's garbage). */
const MIN_WARMUP_SECONDS = 5;

interface ImportRun {
  label: string;
  posted: PacedSignals;
  answered: number;
  /** Server and PostgreSQL CPU per answered request, microseconds. */
  serverMicros: number;
  databaseMicros: number;
  serverCores: number;
  /** Cores busy over the whole machine meanwhile (what else ran shows here). */
  machineCores: number;
  roundTrip: { p50: number; p99: number };
}

interface Deliveries {
  due: number;
  delivered: number;
  lost: number;
  p50: number;
  p99: number;
  max: number;
  messages: number;
  changes: number;
  bad: number;
  verified: number;
  drainMs: number;
  workerMicros: number;
}

function percentile(values: number[], p: number): number {
  const sorted = Float64Array.from(values).sort();
  return sorted.length === 0 ? Number.NaN : sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

/** One run of the load: the import path's CPU per request over the measured seconds (`measured` runs beside them). */
async function importRun(label: string, platform: Child, pacer: SignalPacer, options: BenchOptions, around: { before?: () => Promise<void> } = {}): Promise<ImportRun> {
  await pacer.post(load.rate, Math.max(options.warmupSeconds, MIN_WARMUP_SECONDS), () => platform.exited);
  await around.before?.();
  const database = new ProcessCpu(['postgres']);
  const machine = new MachineCpu();
  const serverBefore = await platform.cpuMicros();
  // The platform's CPU profile of the measured seconds, with BENCH_PROFILE_DIR (./lib/child.ts).
  const profiled = await platform.profile(`platform ${label}`);
  database.start();
  machine.start();
  const started = performance.now();
  const posted = await pacer.post(load.rate, options.durationSeconds, () => platform.exited);
  const wallMs = performance.now() - started;
  const databaseCores = database.stop();
  const machineCores = machine.stop();
  const serverUsed = (await platform.cpuMicros()) - serverBefore;
  await profiled();
  const answered = posted.ackAt.filter((at) => at >= 0).length;
  if (answered === 0) throw new Error(`${label}: no signal was answered 204 (${posted.firstProblem ?? 'no answer'})`);
  const trips = posted.ackAt.flatMap((at, j) => (at < 0 ? [] : [at - posted.sentAt[j]!]));
  return {
    label,
    posted,
    answered,
    serverMicros: serverUsed / answered,
    databaseMicros: (databaseCores * wallMs * 1000) / answered,
    serverCores: serverUsed / 1000 / wallMs,
    machineCores,
    roundTrip: { p50: percentile(trips, 50), p99: percentile(trips, 99) },
  };
}

/** `load.subscriptions` active subscriptions of alice's to `url`, each with a secret of its own; returns their ids and secrets. */
async function subscribe(sql: Sql, key: Buffer, url: string): Promise<{ id: string; secret: string }[]> {
  const list = Array.from({ length: load.subscriptions }, () => ({ id: `wh_${randomBytes(10).toString('hex')}`, secret: newWebhookSecret() }));
  const [cursor] = await sql<{ seq: string }[]>`SELECT coalesce(max(seq), 0) AS seq FROM change_log`;
  await sql`
    INSERT INTO webhook_subscriptions (id, user_id, url, description, kinds, cursor_seq, secret_sealed)
    SELECT id, 'alice', ${url}, 'benchmark', ${KINDS}::text[], ${cursor!.seq}::bigint, decode(sealed, 'hex')
    FROM unnest(${list.map((s) => s.id)}::text[], ${list.map((s) => sealSecret(key, s.secret, s.id).toString('hex'))}::text[]) AS s(id, sealed)`;
  return list;
}

/** Every subscription disabled, and time for the platform to notice (it reads them every TOPICS_EVERY_MS, in its own process). */
async function disableAll(sql: Sql): Promise<void> {
  await sql`UPDATE webhook_subscriptions SET state = 'disabled'`;
  await new Promise((resolve) => setTimeout(resolve, TOPICS_EVERY_MS + 1000));
}

const recordedRows = async (sql: Sql) => {
  const rows = await sql<{ topic: string; n: number }[]>`SELECT topic, count(*)::int AS n FROM change_log WHERE topic IN ('status', 'option') GROUP BY topic`;
  return Object.fromEntries(rows.map((r) => [r.topic, r.n])) as Record<string, number>;
};
const total = (counts: Record<string, number>) => Object.values(counts).reduce((a, b) => a + b, 0);

/** Posts a few signals a second until the platform records their changes (it reads the subscriptions every TOPICS_EVERY_MS). */
async function awaitRecording(sql: Sql, pacer: SignalPacer, platform: Child, before: number): Promise<void> {
  const deadline = performance.now() + TOPICS_EVERY_MS + 15_000;
  while (total(await recordedRows(sql)) === before) {
    if (performance.now() > deadline) throw new Error(`the platform recorded no change within ${TOPICS_EVERY_MS + 15_000} ms of the subscriptions`);
    await pacer.post(5, 1, () => platform.exited);
  }
}

async function run(given: BenchOptions): Promise<void> {
  for (const [i, each] of LOADS.entries()) {
    load = each;
    if (LOADS.length > 1) given.print(`${i > 0 ? '\n' : ''}-- ${integer(load.subscriptions)} subscriptions x ${load.rate} signals/s\n`);
    await runLoad(given);
  }
}

async function runLoad(given: BenchOptions): Promise<void> {
  const options = { ...given, durationSeconds: process.env.BENCH_DURATION ? given.durationSeconds : DEFAULT_SECONDS };
  const space = workspace('webhooks');
  const { database, databaseUrl } = space;
  const key = randomBytes(32);
  const env = { IMPORT_V2_RATE_LIMIT: '100000000', WEBHOOK_SECRET_KEY: key.toString('hex'), WEBHOOK_ALLOW_LOOPBACK: 'true' };
  const children: { child: Child }[] = [];
  let sql: Sql | undefined;
  const runs: ImportRun[] = [];
  let deliveries: Deliveries | undefined;
  let floor: { micros: number; bytes: number } | undefined;
  /** The sender's floor at the delivered messages' mean size: forming and signing a message of as many changes. */
  let workerFloor: { micros: number; bytes: number; changes: number } | undefined;
  /** The goal's floor at that size: forming, signing and sending such a message to the receiver over kept connections. */
  let sendingFloor: { micros: number; bytes: number } | undefined;
  /** The same at the worker's pace, while the platform takes the same load (./lib/webhook-paced-floor.ts). */
  let pacedFloor: { micros: number; messages: number; failed: number; perSecond: number; bytes: number } | undefined;
  let workerNames: string[] = [];
  let recorded: Record<string, number> = {};
  try {
    const platform = await Child.start('platform', new URL('./lib/platform-server.ts', import.meta.url), {
      env: { BENCH_DATABASE_URL: databaseUrl.toString(), BENCH_REDIS_PREFIX: database, BENCH_FIXTURE: 'status', BENCH_PLATFORM_ENV: JSON.stringify(env) },
      readyTimeoutMs: 180_000,
    });
    children.push(platform);
    const receiver = await Child.start('webhook receiver', new URL('./lib/webhook-receiver.ts', import.meta.url));
    children.push(receiver);
    sql = connect(databaseUrl.toString(), { max: 2 });
    const pacer = new SignalPacer(platform.ready.port as number, STATIONS);

    runs.push(await importRun('import v2 without subscriptions', platform.child, pacer, options));
    const before = await recordedRows(sql);
    if (total(before) !== 0) throw new Error(`without subscriptions the platform recorded ${total(before)} changes`);

    const list = await subscribe(sql, key, `http://127.0.0.1:${receiver.ready.port as number}/hook`);
    await receiver.child.request({ type: 'subscriptions', list }, 'configured');
    await awaitRecording(sql, pacer, platform.child, 0);

    // The recorder's cost alone: the subscriptions active, no worker delivering.
    let rowsBefore: Record<string, number> = {};
    runs.push(
      await importRun(`import v2 with ${integer(load.subscriptions)} subscriptions (${KINDS.join(', ')}), no worker`, platform.child, pacer, options, {
        before: async () => void (rowsBefore = await recordedRows(sql!)),
      }),
    );
    const rowsAfter = await recordedRows(sql);
    recorded = Object.fromEntries(Object.entries(rowsAfter).map(([topic, n]) => [topic, n - (rowsBefore[topic] ?? 0)]));

    // Without subscriptions again (disabled; the platform notices within TOPICS_EVERY_MS): the first
    // run's figure measured once more after the second, so drift on a shared machine shows.
    await disableAll(sql);
    let quietBefore = 0;
    runs.push(await importRun('import v2 without subscriptions, again', platform.child, pacer, options, { before: async () => void (quietBefore = total(await recordedRows(sql!))) }));
    const recordedAfter = total(await recordedRows(sql)) - quietBefore;
    if (recordedAfter !== 0) throw new Error(`with every subscription disabled the platform recorded ${recordedAfter} changes`);

    // Deliveries: the subscriptions active again from the log's head (what the runs before recorded is
    // not theirs to deliver), the workers started as `hrs worker` starts them.
    await sql`UPDATE webhook_subscriptions SET state = 'active', cursor_seq = (SELECT coalesce(max(seq), 0) FROM change_log)`;
    await awaitRecording(sql, pacer, platform.child, total(await recordedRows(sql)));
    const worker = await Child.start('workers', new URL('./lib/webhook-worker.ts', import.meta.url), {
      env: { BENCH_DATABASE_URL: databaseUrl.toString(), BENCH_REDIS_PREFIX: database, BENCH_PLATFORM_ENV: JSON.stringify(env) },
    });
    children.push(worker);
    workerNames = worker.ready.names as string[];
    if (workerNames.some((name) => /webhook/i.test(name))) {
      let workerBefore = 0;
      let workerProfiled: () => Promise<void> = async () => {};
      const delivered = await importRun(`import v2 with ${integer(load.subscriptions)} subscriptions, the worker delivering`, platform.child, pacer, options, {
        before: async () => {
          // What the probes and the warm-up brought is delivered first (or given up on), then forgotten.
          await receiver.child.request({ type: 'settle', quietMs: 2000, maxMs: DRAIN_MS }, 'settled', DRAIN_MS + 10_000);
          await receiver.child.request({ type: 'reset' }, 'reset');
          workerBefore = await worker.child.cpuMicros();
          // The worker's CPU profile from the load's start until the receiver is quiet, with BENCH_PROFILE_DIR.
          workerProfiled = await worker.child.profile(`workers delivering ${integer(load.subscriptions)} subscriptions x ${load.rate} signals per s`);
        },
      });
      runs.push(delivered);
      const drainStarted = performance.now();
      await receiver.child.request({ type: 'settle', quietMs: 2000, maxMs: DRAIN_MS }, 'settled', DRAIN_MS + 10_000);
      const drainMs = performance.now() - drainStarted;
      const workerMicros = (await worker.child.cpuMicros()) - workerBefore;
      await workerProfiled();
      const { posted } = delivered;
      const signals = posted.ackAt.flatMap((at, j) => (at < 0 ? [] : [[posted.hrsId[j]!, posted.datetime[j]!, at]]));
      const a = (await receiver.child.request({ type: 'analyse', signals }, 'analysis', 120_000)) as unknown as {
        delivered: number;
        lost: number;
        p50: number;
        p99: number;
        max: number;
        counts: { messages: number; changes: number; bad: number; verified: number };
      };
      deliveries = { due: signals.length * load.subscriptions, ...a, ...a.counts, drainMs, workerMicros };
    }
    if (deliveries && deliveries.messages > 0) {
      // The sending floor at the worker's pace and under the same load: the subscriptions disabled
      // (nothing recorded or delivered), the load posted once more while a bare client of its own
      // process sends as many messages a second as the worker delivered, of as many changes.
      const changes = Math.max(1, Math.round(deliveries.changes / deliveries.messages));
      const sendingMs = options.durationSeconds * 1000 + Math.max(0, deliveries.drainMs - 2000);
      const perSecond = deliveries.messages / (sendingMs / 1000);
      await disableAll(sql);
      const sender = await Child.start('paced floor', new URL('./lib/webhook-paced-floor.ts', import.meta.url));
      children.push(sender);
      const jsons = await floorChanges(sql, changes);
      const url = `http://127.0.0.1:${receiver.ready.port as number}/floor`;
      const pace = (seconds: number) =>
        sender.child.request({ type: 'send', url, changes: jsons, perSecond, seconds, inFlight: 64 }, 'sent', (seconds + 60) * 1000) as Promise<Record<string, unknown>>;
      // Warmed up as the worker was, at the same pace beside the load's own unmeasured seconds.
      const warming = pace(MIN_WARMUP_SECONDS);
      let sent: Promise<Record<string, unknown>> | undefined;
      runs.push(
        await importRun('import v2 without subscriptions, the paced floor sending', platform.child, pacer, options, {
          before: async () => {
            await warming;
            sent = pace(options.durationSeconds);
          },
        }),
      );
      const r = (await sent!) as { messages: number; failed: number; cpuMicros: number; bytes: number };
      pacedFloor = { micros: r.cpuMicros / Math.max(1, r.messages), messages: r.messages, failed: r.failed, perSecond, bytes: r.bytes };
    }
    floor = await messageFloor(sql);
    if (deliveries && deliveries.messages > 0) {
      const changes = Math.max(1, Math.round(deliveries.changes / deliveries.messages));
      workerFloor = { ...(await messageFloor(sql, changes, 300, false)), changes };
      sendingFloor = await sendFloor(sql, changes, `http://127.0.0.1:${receiver.ready.port as number}/floor`);
    }
  } finally {
    await sql?.end({ timeout: 1 });
    await tearDown(space, children);
  }

  options.print(`load: ${load.rate} availability signals/s through import v2 (fixed schedule), ${options.durationSeconds} s measured per run after ${options.warmupSeconds} s of warm-up`);
  options.print(`machine: ${availableParallelism()} CPUs (${cpus()[0]?.model.trim() ?? 'unknown'}), Node.js ${process.version}`);
  options.print(`platform: ${integer(STATIONS.length)} stations; subscriptions: ${integer(load.subscriptions)}, each for every station, kinds ${KINDS.join(', ')}; workers started: ${workerNames.join(', ') || 'none'}`);
  options.print();
  options.print(
    table(
      ['run', 'signals', '204s', 'other', 'max lag ms', 'p50 ms', 'p99 ms', 'machine CPU', 'server CPU', 'server µs/req', 'PG µs/req'],
      runs.map((r) => [
        r.label,
        integer(r.posted.ackAt.length),
        integer(r.answered),
        integer(r.posted.refused + r.posted.errors),
        fixed(r.posted.maxLagMs, 1),
        fixed(r.roundTrip.p50, 2),
        fixed(r.roundTrip.p99, 2),
        fixed(r.machineCores, 2),
        fixed(r.serverCores, 2),
        integer(r.serverMicros),
        integer(r.databaseMicros),
      ]),
    ),
  );
  for (const r of runs) if (r.posted.firstProblem) options.print(`${r.label}: ${integer(r.posted.refused)} answered otherwise, ${integer(r.posted.errors)} failed; the first: ${r.posted.firstProblem}`);
  options.print(
    'other: signals answered otherwise than 204, or failed. max lag: how late a signal left against its schedule. p50/p99: the POST round trip. machine CPU: cores busy over the whole machine (what else ran shows here). server µs/req: ' +
      'the platform process\'s CPU time over the measured seconds per signal answered 204; PG: every PostgreSQL process\'s.',
  );
  options.print(`change-log rows the platform recorded during the measured run: ${Object.entries(recorded).map(([topic, n]) => `${topic} ${integer(n)}`).join(', ') || 'none'}`);
  options.print();
  const [before, withSubs, again] = runs as [ImportRun, ImportRun, ImportRun];
  const without = (before.serverMicros + again.serverMicros) / 2;
  const extra = ((withSubs.serverMicros - without) / without) * 100;
  const goals: Goal[] = [
    {
      what: `import path CPU per request with ${integer(load.subscriptions)} subscriptions (no worker) against without (the mean of the runs before and after)`,
      measured: `${fixed(extra, 1)}% (${integer(withSubs.serverMicros)} µs against ${integer(without)} µs)`,
      goal: `within ${GOAL_CPU_PERCENT}%`,
      met: extra <= GOAL_CPU_PERCENT,
    },
  ];
  if (deliveries) {
    const d = deliveries;
    options.print(
      `deliveries of the last run (signal × subscription): ${integer(d.due)} due, ${integer(d.delivered)} delivered, ${integer(d.lost)} not within ` +
        `${integer(DRAIN_MS / 1000)} s after the load; from the 204 to the receiver: p50 ${fixed(d.p50, 1)} ms, p99 ${fixed(d.p99, 1)} ms, max ${fixed(d.max, 1)} ms; ` +
        `the receiver quiet (2 s) ${integer(d.drainMs)} ms after the load${d.drainMs >= DRAIN_MS ? ' (never: still receiving)' : ''}`,
    );
    options.print(
      `received: ${integer(d.messages)} messages, ${integer(d.changes)} changes (${fixed(d.changes / Math.max(1, d.messages), 1)} per message), ` +
        `${integer(d.verified)} subscriptions' signatures verified, ${integer(d.bad)} bad; worker CPU from the load's start until quiet ${fixed(d.workerMicros / 1e6, 2)} s: ` +
        `${fixed(d.workerMicros / Math.max(1, d.messages), 0)} µs per message, ${fixed(d.workerMicros / Math.max(1, d.changes), 1)} µs per change delivered`,
    );
    if (pacedFloor) {
      const perMessage = d.workerMicros / Math.max(1, d.messages);
      options.print(
        `the floor at the worker's pace: ${integer(pacedFloor.messages)} messages of the same changes (${integer(pacedFloor.bytes)} bytes) sent by a bare client at ${fixed(pacedFloor.perSecond, 0)}/s ` +
          `(every ${10} ms those due) while the load ran again without subscriptions, ${integer(pacedFloor.failed)} failed: ${fixed(pacedFloor.micros, 0)} µs per message; the worker x${fixed(perMessage / pacedFloor.micros, 2)}`,
      );
    }
    if (workerFloor && sendingFloor && Number.isFinite(sendingFloor.micros)) {
      const perMessage = d.workerMicros / Math.max(1, d.messages);
      const paced = pacedFloor && pacedFloor.failed === 0 ? `; x${fixed(perMessage / pacedFloor.micros, 2)} the floor at the worker's pace, ${fixed(pacedFloor.micros, 0)} µs` : '';
      goals.push({
        what: `the worker's CPU per delivered message (${integer(load.subscriptions)} subscriptions x ${load.rate} signals/s)`,
        measured: `${fixed(perMessage, 0)} µs, x${fixed(perMessage / sendingFloor.micros, 2)} the floor (x${fixed(perMessage / workerFloor.micros, 2)} forming and signing alone${paced})`,
        floor: `${fixed(sendingFloor.micros, 0)} µs forming, signing and sending a message of ${integer(workerFloor.changes)} changes (${fixed(workerFloor.micros, 0)} µs forming and signing)`,
        goal: `at most x${GOAL_WORKER_TIMES_FLOOR}`,
        met: perMessage <= GOAL_WORKER_TIMES_FLOOR * sendingFloor.micros,
      });
    }
    goals.push({ what: `delivery p99 from the 204 (${integer(load.subscriptions)} subscriptions x ${load.rate} signals/s)`, measured: `${fixed(d.p99, 1)} ms (${integer(d.lost)} lost)`, goal: `under ${GOAL_P99_MS} ms, none lost`, met: d.p99 < GOAL_P99_MS && d.lost === 0 });
  } else {
    options.print(
      `deliveries: not measured: the workers startWorkers started (${workerNames.join(', ') || 'none'}) include no webhook delivery worker ` +
        '(`webhooks`); with one, this run measures them as it stands.',
    );
  }
  if (floor && Number.isFinite(floor.micros)) {
    // What the goal asks of the machine at the least: every signal to every subscription, 100 changes a message.
    const messagesPerSecond = (load.rate * load.subscriptions) / 100;
    options.print(
      `floor: forming, signing and verifying one message of 100 recorded status changes (${integer(floor.bytes)} bytes) costs ${fixed(floor.micros, 0)} µs of CPU ` +
        `with nothing else; ${integer(load.rate)} signals/s to ${integer(load.subscriptions)} subscriptions is ${integer(load.rate * load.subscriptions)} changes/s, ${integer(messagesPerSecond)} such ` +
        `messages/s: ${fixed((messagesPerSecond * floor.micros) / 1e6, 2)} CPU-seconds per second before any HTTP, PostgreSQL or Redis, on ${availableParallelism()} CPUs`,
    );
  }
  options.print();
  printGoals(options.print, goals);
}

const scenario: Scenario = {
  description: `${LOADS.map((l) => `${integer(l.subscriptions)} subscriptions x ${l.rate} signals/s`).join(', then ')}: the import path's CPU with and without them, delivery latency and worker CPU`,
  run,
};
export default scenario;
