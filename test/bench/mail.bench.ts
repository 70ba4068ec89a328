/**
 * mail: what the token e-mails cost at scale. A throwaway database gets 100,000 users with one
 * personal token each, written with set-based SQL in the shape `PersonalTokens.create` writes them:
 * the token (created now, its expiry 31 to 365 days ahead, spread over the tokens) and its outbox rows,
 * the `created` e-mail sent already and the two `expiring` reminders, 30 and 7 days before the expiry,
 * pending under the keys the platform gives them: 200,000 pending e-mails.
 *
 * 1. Scheduling: the 200,000 pending e-mails are given their BullMQ delayed jobs with `scheduleMail`
 *    (SCHEDULE_BATCH per call); timed, with the
 *    Redis memory they take (INFO memory `used_memory` before and after, per job).
 * 2. The sweep: the queue's jobs are removed (obliterated, as if Redis had lost them), then
 *    `sweepMail` gives all 200,000 their jobs again; then a second sweep finds every job present and
 *    adds none. Both are timed. Goal: the sweep over 100,000 tokens under 5 s.
 * 3. Sending: a mail worker (`startMailWorker` with the outbox wired and `renderTokenMail`, in a
 *    process of its own: ./lib/mail-worker.ts) sends to a local SMTP sink (`smtp-server` in this
 *    process, accepting everything and counting messages). SEND new tokens' `created` e-mails, due
 *    now, are scheduled at once; the rate is measured from the first message the sink accepts to the
 *    last, with the CPU of the worker, the sink, PostgreSQL and Redis meanwhile. The 200,000 delayed
 *    reminders stay in the queue (not due), as they would in service. Goal: 200 e-mails/s or more;
 *    when the worker's default concurrency misses it, the same is measured again with the
 *    concurrencies of RAISED_CONCURRENCY, in turn, until one meets it. Last, for comparison, the
 *    default concurrency with SMTP_URL turning nodemailer's connection pool off (`?pool=false`: a new
 *    SMTP connection per e-mail, which the sink greets after 100 ms), which the worker otherwise
 *    turns on. SEND is 1,000.
 *
 * Every step is checked: the jobs scheduled and swept are counted in the queue, every e-mail sent is
 * marked sent in the outbox, and the sink receives each exactly once.
 */
import type { AddressInfo } from 'node:net';
import { availableParallelism, cpus } from 'node:os';
import type { Queue } from 'bullmq';
import { SMTPServer } from 'smtp-server';
import { connect, ensureDatabase, type Sql } from '../../db/connect.js';
import { migrate } from '../../db/migrate.js';
import { DEFAULT_REDIS_URL } from '../../src/config/config.js';
import { reminderKey } from '../../src/domain/token-reminders.js';
import { closeRedis, openRedis, type Redis } from '../../src/infra/redis.js';
import { createLogger } from '../../src/config/log.js';
import { scheduleMail, sweepMail } from '../../workers/mail/outbox.js';
import { MAIL_WORKER_CONCURRENCY } from '../../workers/mail/processor.js';
import { openQueue, QUEUES } from '../../workers/queues.js';
import { Child } from './lib/child.js';
import { MachineCpu } from './lib/machine-cpu.js';
import { ProcessCpu } from './lib/process-cpu.js';
import type { BenchOptions, Scenario } from './lib/scenario.js';
import { fixed, integer, table } from './lib/table.js';
import { tearDown, workspace } from './lib/workspace.js';
import { printGoals } from './lib/cpu-report.js';

const TOKENS = 100_000;
/** E-mails handed to `scheduleMail` per call. */
const SCHEDULE_BATCH = 5_000;
/** E-mails sent per measurement of the worker. */
const SEND = 1_000;
/** Concurrencies tried, in turn, when the worker's default misses the sending goal. */
const RAISED_CONCURRENCY = [16, 32, 64];

const GOAL_SWEEP_MS = 5_000;
const GOAL_PER_SECOND = 200;

const DAY_MS = 86_400_000;
const seconds = (ms: number) => fixed(ms / 1000, 2);

/* ---- The fixture --------------------------------------------------------------------------------- */

/**
 * `count` users (`bench-user-<i>`, `user<i>@bench.example`) with one personal token each and its
 * outbox rows: `created` sent, the two reminders pending. One transaction, set-based.
 */
async function seedTokens(sql: Sql, count: number): Promise<void> {
  await sql.begin(async (tx) => {
    await tx`SET LOCAL synchronous_commit = off`;
    await tx`
      INSERT INTO users (id, email, name)
      SELECT 'bench-user-' || i, 'user' || i || '@bench.example', 'Bench User ' || i
      FROM generate_series(0, ${count - 1}::integer) AS i`;
    // Expiry: 31 to 365 days ahead (both reminders still to come), on whole milliseconds as the API
    // stores them; the hash and hint of a value the benchmark never makes.
    await tx`
      INSERT INTO tokens (generation, user_id, name, hash, hint, created_at, expires_at)
      SELECT 'export_v2', 'bench-user-' || i, 'token ' || i, sha256(convert_to('bench-token-' || i, 'UTF8')),
             lpad(to_hex(i % 65536), 4, '0'), now(),
             date_trunc('milliseconds', now()) + make_interval(days => 31 + i % 335, secs => i % 86400)
      FROM generate_series(0, ${count - 1}::integer) AS i`;
    // The keys and due times as the platform computes them: `token:<id>:created`,
    // `token:<id>:expiring:<days>:<expiry ISO>`, due the days before in hours (no calendar shift).
    await tx`
      INSERT INTO mail_outbox (key, kind, token_id, recipient, due_at, state, attempts, message_id, sent_at)
      SELECT 'token:' || t.id || ':created', 'created', t.id, u.email, t.created_at, 'sent', 1,
             '<' || t.id || '@bench.example>', t.created_at
      FROM tokens t JOIN users u ON u.id = t.user_id
      ORDER BY t.id`;
    await tx`
      INSERT INTO mail_outbox (key, kind, token_id, recipient, days_before, expires_at, due_at)
      SELECT 'token:' || t.id || ':expiring:' || d.days || ':' || to_char(t.expires_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
             'expiring', t.id, u.email, d.days, t.expires_at, t.expires_at - make_interval(hours => d.days * 24)
      FROM tokens t JOIN users u ON u.id = t.user_id CROSS JOIN (VALUES (30), (7)) AS d (days)
      ORDER BY t.id, d.days DESC`;
  });
  await sql`ANALYZE`;
  // The keys must be the platform's own, or the claim would never find the reminder's expiry right.
  const [sample] = await sql<{ key: string; expires_at: Date; due_at: Date }[]>`
    SELECT key, expires_at, due_at FROM mail_outbox WHERE kind = 'expiring' AND days_before = 30 ORDER BY id DESC LIMIT 1`;
  const expected = reminderKey(30, sample!.expires_at);
  if (!sample!.key.endsWith(`:${expected}`)) throw new Error(`seeded reminder key ${sample!.key} does not end in ${expected}`);
  if (sample!.due_at.getTime() !== sample!.expires_at.getTime() - 30 * DAY_MS) throw new Error(`seeded reminder ${sample!.key} is due at ${sample!.due_at.toISOString()}`);
}

/**
 * `count` more tokens, one each for users `round * count` onwards (no user over the limit of active
 * tokens), each with its `created` e-mail pending and due now.
 */
async function seedDueNow(sql: Sql, count: number, round: number): Promise<{ key: string; dueAt: Date }[]> {
  return sql.begin(async (tx) => {
    const tokens = await tx<{ id: string; user_id: string; created_at: Date }[]>`
      INSERT INTO tokens (generation, user_id, name, hash, hint, expires_at)
      SELECT 'export_v2', 'bench-user-' || (${round * count}::integer + i), 'sent ' || ${round}::integer || '.' || i,
             sha256(convert_to('bench-sent-' || ${round}::integer || '-' || i, 'UTF8')), lpad(to_hex(i % 65536), 4, '0'),
             date_trunc('milliseconds', now()) + interval '90 days'
      FROM generate_series(0, ${count - 1}::integer) AS i
      RETURNING id::text, user_id, created_at`;
    const rows = await tx<{ key: string; due_at: Date }[]>`
      INSERT INTO mail_outbox (key, kind, token_id, recipient, due_at)
      SELECT 'token:' || t.id || ':created', 'created', t.id, u.email, t.created_at
      FROM tokens t JOIN users u ON u.id = t.user_id
      WHERE t.id = ANY(${tokens.map((t) => t.id)}::bigint[])
      ORDER BY t.id
      RETURNING key, due_at`;
    return rows.map((r) => ({ key: r.key, dueAt: r.due_at }));
  });
}

/* ---- Redis ---------------------------------------------------------------------------------------- */

async function usedMemory(redis: Redis): Promise<number> {
  const info = await redis.info('memory');
  const match = /^used_memory:(\d+)/m.exec(info);
  if (!match) throw new Error('INFO memory has no used_memory');
  return Number(match[1]);
}

async function delayedJobs(queue: Queue): Promise<number> {
  return (await queue.getJobCounts('delayed')).delayed ?? 0;
}

/* ---- CPU ---------------------------------------------------------------------------------------- */

/** Cores busy over a step (1.00 = one core all the time): this process, PostgreSQL, Redis, the whole machine. */
interface Cores {
  self: number;
  postgres: number;
  redis: number;
  machine: number;
}

/** Samples the CPU of this process, PostgreSQL, Redis and the machine from now until `stop()`. */
function sampleCpu(): { stop(): Cores } {
  const postgres = new ProcessCpu(['postgres']);
  const redis = new ProcessCpu(['redis-server']);
  const machine = new MachineCpu();
  const self = process.cpuUsage();
  const started = performance.now();
  postgres.start();
  redis.start();
  machine.start();
  return {
    stop() {
      const used = process.cpuUsage(self);
      const wallMs = performance.now() - started;
      return { self: (used.user + used.system) / 1000 / wallMs, postgres: postgres.stop(), redis: redis.stop(), machine: machine.stop() };
    },
  };
}

/** Timed `fn`, with the CPU used meanwhile. */
async function timed<T>(fn: () => Promise<T>): Promise<{ value: T; ms: number; cores: Cores }> {
  const cpu = sampleCpu();
  const started = performance.now();
  const value = await fn();
  const ms = performance.now() - started;
  return { value, ms, cores: cpu.stop() };
}

/* ---- The SMTP sink -------------------------------------------------------------------------------- */

/**
 * An SMTP server accepting every message, counting them and their recipients, timing the first and
 * the last. No reverse lookup of the client; smtp-server still holds every new connection 100 ms
 * before its greeting (to catch clients talking too soon), as a remote server's greeting takes its time.
 */
async function smtpSink() {
  const state = { accepted: 0, first: 0, last: 0, connections: 0, recipients: new Set<string>() };
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    disableReverseLookup: true,
    logger: false,
    closeTimeout: 1000,
    onConnect(_session, callback) {
      state.connections++;
      callback();
    },
    onData(stream, session, callback) {
      stream.on('error', callback);
      stream.on('end', () => {
        const at = performance.now();
        if (state.accepted === 0) state.first = at;
        state.last = at;
        state.accepted++;
        for (const r of session.envelope.rcptTo) state.recipients.add(r.address);
        callback();
      });
      stream.resume();
    },
  });
  await new Promise<void>((resolve, reject) => {
    server.server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  return {
    port: (server.server.address() as AddressInfo).port,
    state,
    reset() {
      Object.assign(state, { accepted: 0, first: 0, last: 0, connections: 0, recipients: new Set<string>() });
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

type Sink = Awaited<ReturnType<typeof smtpSink>>;

/* ---- Sending -------------------------------------------------------------------------------------- */

/** How the worker is run: its concurrency (the default unless given), and SMTP_URL turning the connection pool off. */
interface SendSetup {
  concurrency?: number;
  pool?: boolean;
}

interface Sending {
  setup: SendSetup;
  concurrency: number;
  sent: number;
  connections: number;
  scheduleMs: number;
  /** From the first message accepted to the last. */
  spanMs: number;
  /** From the first job added to the last message accepted. */
  totalMs: number;
  perSecond: number;
  /** Cores busy from the first job added to the last message accepted. */
  workerCpu: number;
  cores: Cores;
}

/** Starts a worker, schedules SEND e-mails due now, and waits for the sink to have them all, once each. */
async function measureSending(
  space: { database: string; databaseUrl: URL },
  sql: Sql,
  queue: Queue,
  sink: Sink,
  setup: SendSetup,
  round: number,
  children: { child: Child }[],
): Promise<Sending> {
  const due = await seedDueNow(sql, SEND, round);
  const started = await Child.start('mail worker', new URL('./lib/mail-worker.ts', import.meta.url), {
    env: {
      BENCH_DATABASE_URL: space.databaseUrl.toString(),
      BENCH_REDIS_PREFIX: space.database,
      BENCH_SMTP_URL: `smtp://127.0.0.1:${sink.port}${setup.pool === false ? '/?pool=false' : ''}`,
      BENCH_MAIL_CONCURRENCY: setup.concurrency === undefined ? undefined : String(setup.concurrency),
    },
  });
  const worker = started.child;
  children.push({ child: worker });
  try {
    sink.reset();
    const log = createLogger('silent');
    const workerBefore = await worker.cpuMicros();
    const cpu = sampleCpu();
    const from = performance.now();
    let scheduled = 0;
    for (let i = 0; i < due.length; i += SCHEDULE_BATCH) scheduled += await scheduleMail(queue, due.slice(i, i + SCHEDULE_BATCH), log);
    const scheduleMs = performance.now() - from;
    if (scheduled !== SEND) throw new Error(`${scheduled} of ${SEND} e-mails scheduled`);

    // Until the sink has them all; stalled for 30 s is a failure.
    let seen = 0;
    let progressAt = performance.now();
    while (sink.state.accepted < SEND) {
      await new Promise((resolve) => setTimeout(resolve, 10));
      if (sink.state.accepted !== seen) {
        seen = sink.state.accepted;
        progressAt = performance.now();
      } else if (performance.now() - progressAt > 30_000) {
        throw new Error(`the sink stopped at ${seen} of ${SEND} e-mails`);
      }
    }
    const cores = cpu.stop();
    const workerMicros = (await worker.cpuMicros()) - workerBefore;
    const totalMs = sink.state.last - from;
    const spanMs = sink.state.last - sink.state.first;

    // Every e-mail marked sent in the outbox (just after the sink accepted it), and none sent twice.
    const keys = due.map((d) => d.key);
    for (let waited = 0; ; waited += 50) {
      const [row] = await sql<{ n: number }[]>`SELECT count(*)::int AS n FROM mail_outbox WHERE key = ANY(${keys}) AND state = 'sent'`;
      if (row!.n === SEND) break;
      if (waited > 10_000) throw new Error(`${row!.n} of ${SEND} e-mails marked sent in the outbox`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    await new Promise((resolve) => setTimeout(resolve, 500));
    if (sink.state.accepted !== SEND) throw new Error(`the sink accepted ${sink.state.accepted} messages for ${SEND} e-mails`);
    if (sink.state.recipients.size !== SEND) throw new Error(`${sink.state.recipients.size} recipients for ${SEND} e-mails`);

    return {
      setup,
      concurrency: started.ready.concurrency as number,
      sent: SEND,
      connections: sink.state.connections,
      scheduleMs,
      spanMs,
      totalMs,
      perSecond: ((SEND - 1) / spanMs) * 1000,
      // Over the same span as the others (to the last accepted, give or take the polling interval).
      workerCpu: workerMicros / 1000 / totalMs,
      cores,
    };
  } finally {
    await worker.stop();
  }
}

/* ---- The run -------------------------------------------------------------------------------------- */

interface Step {
  label: string;
  ms: number;
  lookedAt: number | undefined;
  added: number | undefined;
  jobs: number;
  memory: number;
  perJob: number | undefined;
  cores: Cores;
}

async function run(options: BenchOptions): Promise<void> {
  const space = workspace('mail');
  const { database, databaseUrl } = space;
  const children: { child: Child }[] = [];
  let sql: Sql | undefined;
  let redis: Redis | undefined;
  let queue: Queue | undefined;
  let sink: Sink | undefined;

  let seedMs = 0;
  let pending = 0;
  let memoryBefore = 0;
  const steps: Step[] = [];
  const sweeps: Step[] = [];
  const sending: Sending[] = [];
  try {
    await ensureDatabase(databaseUrl.toString());
    sql = connect(databaseUrl.toString());
    await migrate(sql);
    redis = await openRedis(process.env.REDIS_URL || DEFAULT_REDIS_URL, 'hrs-bench-mail');
    queue = openQueue(QUEUES.mail, redis, database);
    await queue.waitUntilReady();

    const seedStarted = performance.now();
    await seedTokens(sql, TOKENS);
    seedMs = performance.now() - seedStarted;

    // 1. Scheduling: the pending e-mails as the commits would hand them over, SCHEDULE_BATCH at a time.
    const intents = (await sql<{ key: string; due_at: Date }[]>`
      SELECT key, due_at FROM mail_outbox WHERE state = 'pending' ORDER BY id`).map((r) => ({ key: r.key, dueAt: r.due_at }));
    pending = intents.length;
    if (pending !== 2 * TOKENS) throw new Error(`${pending} pending e-mails seeded, not ${2 * TOKENS}`);
    const log = createLogger('silent');
    memoryBefore = await usedMemory(redis);
    const scheduling = await timed(async () => {
      let added = 0;
      for (let i = 0; i < intents.length; i += SCHEDULE_BATCH) added += await scheduleMail(queue!, intents.slice(i, i + SCHEDULE_BATCH), log);
      return added;
    });
    if (scheduling.value !== pending) throw new Error(`scheduleMail added ${scheduling.value} of ${pending} jobs`);
    const scheduled = await delayedJobs(queue);
    if (scheduled !== pending) throw new Error(`${scheduled} delayed jobs in the queue after scheduling ${pending}`);
    const afterScheduling = await usedMemory(redis);
    steps.push({
      label: `scheduleMail, ${integer(SCHEDULE_BATCH)} per call (${Math.ceil(pending / SCHEDULE_BATCH)} calls)`,
      ms: scheduling.ms,
      lookedAt: pending,
      added: scheduling.value,
      jobs: scheduled,
      memory: afterScheduling,
      perJob: (afterScheduling - memoryBefore) / scheduled,
      cores: scheduling.cores,
    });

    // 2. The sweep: every job gone, then made again; then once more, finding them all.
    const flush = await timed(() => queue!.obliterate({ force: true }));
    const left = await delayedJobs(queue);
    if (left !== 0) throw new Error(`${left} delayed jobs left after obliterating the queue`);
    const afterFlush = await usedMemory(redis);
    steps.push({ label: 'queue obliterated (the jobs lost; not measured against a goal)', ms: flush.ms, lookedAt: undefined, added: undefined, jobs: 0, memory: afterFlush, perJob: undefined, cores: flush.cores });
    for (const label of ['sweepMail, after the jobs were lost', 'sweepMail again, every job present']) {
      const sweep = await timed(() => sweepMail(sql!, queue!, redis!));
      const memory = await usedMemory(redis);
      sweeps.push({
        label,
        ms: sweep.ms,
        lookedAt: sweep.value.unsent,
        added: sweep.value.added,
        jobs: await delayedJobs(queue),
        memory,
        perJob: sweep.value.added > 0 ? (memory - afterFlush) / sweep.value.added : undefined,
        cores: sweep.cores,
      });
    }
    steps.push(...sweeps);
    const [lost, again] = sweeps;
    if (lost!.lookedAt !== pending || lost!.added !== pending) throw new Error(`the first sweep found ${lost!.lookedAt} and added ${lost!.added} of ${pending}`);
    if (lost!.jobs !== pending) throw new Error(`${lost!.jobs} delayed jobs after the sweep, ${pending} e-mails pending`);
    if (again!.lookedAt !== pending || again!.added !== 0) throw new Error(`the second sweep found ${again!.lookedAt} and added ${again!.added}`);

    // 3. Sending, the delayed reminders still in the queue: the default, then raised concurrencies
    // until the goal is met; then, for comparison, the default without the connection pool.
    sink = await smtpSink();
    let round = 0;
    for (const concurrency of [undefined, ...RAISED_CONCURRENCY]) {
      const result = await measureSending(space, sql, queue, sink, { concurrency }, round++, children);
      sending.push(result);
      if (result.perSecond >= GOAL_PER_SECOND) break;
    }
    sending.push(await measureSending(space, sql, queue, sink, { pool: false }, round++, children));
  } finally {
    await sink?.close();
    await queue?.close();
    if (redis) await closeRedis(redis);
    await sql?.end({ timeout: 1 });
    await tearDown(space, children);
  }

  options.print(`machine: ${availableParallelism()} CPUs (${cpus()[0]?.model.trim() ?? 'unknown'}), Node.js ${process.version}`);
  options.print(
    `data: ${integer(TOKENS)} users with a personal token each, seeded with set-based SQL in ${seconds(seedMs)} s (not measured): ` +
      `the created e-mail sent, the reminders 30 and 7 days before expiry (31 to 365 days ahead) pending: ` +
      `${integer(pending)} pending e-mails in the outbox`,
  );
  options.print();
  options.print(
    table(
      ['step', 'time s', 'e-mails looked at', 'jobs added', 'delayed jobs after', 'Redis MB after', 'bytes per job', 'bench CPU', 'PostgreSQL CPU', 'Redis CPU', 'machine CPU'],
      steps.map((step) => [
        step.label,
        seconds(step.ms),
        step.lookedAt === undefined ? '-' : integer(step.lookedAt),
        step.added === undefined ? '-' : integer(step.added),
        integer(step.jobs),
        fixed(step.memory / 1e6, 1),
        step.perJob === undefined ? '-' : integer(step.perJob),
        fixed(step.cores.self, 2),
        fixed(step.cores.postgres, 2),
        fixed(step.cores.redis, 2),
        fixed(step.cores.machine, 2),
      ]),
    ),
  );
  const first = steps[0]!;
  options.print();
  options.print(
    `Redis memory of the ${integer(first.jobs)} delayed jobs: ${fixed((first.memory - memoryBefore) / 1e6, 1)} MB ` +
      `(INFO used_memory ${integer(memoryBefore)} bytes before scheduling, ${integer(first.memory)} after: ${integer(first.perJob!)} bytes per job, ` +
      `${integer(first.perJob! * 2)} per token). Redis MB: used_memory after the step (10^6 bytes; the whole server's). ` +
      'bench CPU: this process (scheduleMail and sweepMail run here); CPU in cores busy during the step (1.00 = one core all the time).',
  );
  options.print();
  options.print(
    table(
      ['worker', 'e-mails', 'SMTP connections', 'scheduled in s', 'first to last accepted s', 'e-mails/s', 'worker CPU', 'sink CPU', 'PostgreSQL CPU', 'Redis CPU', 'machine CPU'],
      sending.map((r) => [
        sendingLabel(r),
        integer(r.sent),
        integer(r.connections),
        seconds(r.scheduleMs),
        seconds(r.spanMs),
        integer(r.perSecond),
        fixed(r.workerCpu, 2),
        fixed(r.cores.self, 2),
        fixed(r.cores.postgres, 2),
        fixed(r.cores.redis, 2),
        fixed(r.cores.machine, 2),
      ]),
    ),
  );
  options.print();
  options.print(
    `Sending: the worker in a process of its own (logs off); each e-mail claimed in the outbox, rendered, sent, marked sent; ` +
      `${integer(pending)} delayed reminders in the queue meanwhile. The worker keeps up to 5 SMTP connections open (nodemailer's ` +
      'pool, 100 messages each) unless SMTP_URL says ?pool=false: the unpooled row opens one per e-mail, which the sink (smtp-server) ' +
      'greets 100 ms after it is opened. CPU: cores busy from the first job added to the last e-mail accepted; sink: this process; ' +
      'PostgreSQL and Redis: all their processes on the machine; machine: every process, the kernel included.',
  );
  const busy = [
    ...steps.map((step) => ({ label: step.label, others: step.cores.machine - step.cores.self - step.cores.postgres - step.cores.redis })),
    ...sending.map((r) => ({ label: `sending, ${sendingLabel(r)}`, others: r.cores.machine - r.workerCpu - r.cores.self - r.cores.postgres - r.cores.redis })),
  ].filter(({ others }) => others >= 0.25);
  if (busy.length > 0) {
    options.print(
      `Note: processes other than this benchmark's, PostgreSQL and Redis kept the machine busy during ` +
        `${busy.map(({ label, others }) => `${label} (${fixed(others, 2)} cores)`).join('; ')}: those times are longer than on a quiet machine.`,
    );
  }
  options.print();
  printGoals(
    options.print,
    sweeps.map((sweep) => ({
      what: `sweep over ${integer(TOKENS)} tokens (${integer(sweep.lookedAt!)} unsent e-mails), ${sweep.label.replace(/^sweepMail,? ?/, '')}`,
      measured: `${seconds(sweep.ms)} s`,
      goal: `under ${seconds(GOAL_SWEEP_MS)} s`,
      met: sweep.ms < GOAL_SWEEP_MS,
    })),
  );
  printGoals(
    options.print,
    sending.map((r) => ({ what: `sending rate, ${sendingLabel(r)}`, measured: `${integer(r.perSecond)} e-mails/s`, goal: `${GOAL_PER_SECOND} or more`, met: r.perSecond >= GOAL_PER_SECOND })),
  );
}

function sendingLabel(r: Sending): string {
  const concurrency = `concurrency ${r.concurrency}${r.concurrency === MAIL_WORKER_CONCURRENCY ? ' (default)' : ''}`;
  return r.setup.pool === false ? `${concurrency}, a new SMTP connection per e-mail (?pool=false)` : concurrency;
}

const scenario: Scenario = {
  description:
    `token e-mails: scheduling the reminders of ${integer(TOKENS)} personal tokens, the sweep over them, ` +
    `and the mail worker's sending rate to a local SMTP sink`,
  run,
};
export default scenario;
