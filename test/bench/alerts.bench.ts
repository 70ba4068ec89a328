/**
 * alerts: driver alerts at scale. A throwaway database with the map's test registry gets 10,000
 * confirmed alerts (set-based SQL, as confirmations leave them): on BERLA's and TRUCK's 700 bar options
 * TOLD each (BERLA's waiting for it to come back, TRUCK's for it to go down), the rest on the other
 * options, waiting for changes that do not come. The workers run in this process as `hrs worker` runs
 * them (`startWorkers`: the alerts worker and the mail worker, its default concurrency) with
 * ALERT_SETTLE = 1 s, sending to a local SMTP sink (`smtp-server`, accepting everything).
 *
 * Two transitions are recorded in the change log as a server instance records them (BERLA's option
 * AVAILABLE, TRUCK's UNAVAILABLE), ROUNDS times, alternating with the way back. Measured per e-mail:
 * the latency from its transition's settle instant (the change's time in the log plus ALERT_SETTLE) to
 * the SMTP sink receiving it, p50 and p99 (and the largest); e-mails received per transition and alert
 * (exactly one: checked by key), and the whole fan-out's rate.
 *
 * No goal: the issue asks for the figures.
 */
import type { AddressInfo } from 'node:net';
import { simpleParser } from 'mailparser';
import { SMTPServer } from 'smtp-server';
import { connect, ensureDatabase } from '../../db/connect.js';
import { migrate } from '../../db/migrate.js';
import { recordChanges } from '../../db/queries/recorded-changes.js';
import { loadConfig } from '../../src/config/config.js';
import { createLogger } from '../../src/config/log.js';
import { closeRedis, openRedis } from '../../src/infra/redis.js';
import { loadFixture } from '../../src/registry/file/load.js';
import { startWorkers } from '../../workers/index.js';
import { mapFixture } from '../helpers/map.js';
import type { BenchOptions, Scenario } from './lib/scenario.js';
import { fixed, integer, table } from './lib/table.js';
import { tearDown, workspace } from './lib/workspace.js';

const ALERTS = 10_000;
const TOLD = 1_000;
const ROUNDS = 3;
const SETTLE_MS = 1000;

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;

async function run(options: BenchOptions): Promise<void> {
  const space = workspace('alerts');
  await ensureDatabase(space.databaseUrl.toString());
  const sql = connect(space.databaseUrl.toString(), { max: 4 });
  const received: { key: string; at: number; to: string }[] = [];
  const sink = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        const at = Date.now();
        void simpleParser(Buffer.concat(chunks)).then((mail) => {
          received.push({ key: mail.messageId ?? '', at, to: session.envelope.rcptTo[0]?.address ?? '' });
          callback();
        }, callback);
      });
    },
  });
  await new Promise<void>((resolve) => sink.listen(0, '127.0.0.1', () => resolve()));
  const port = (sink.server.address() as AddressInfo).port;
  const config = loadConfig({
    DATABASE_URL: space.databaseUrl.toString(),
    REDIS_PREFIX: space.database,
    SMTP_URL: `smtp://127.0.0.1:${port}`,
    ALERT_SETTLE: String(SETTLE_MS / 1000),
    SANDBOX: 'off',
    LOG_LEVEL: 'warn',
  });
  const redis = await openRedis(config.redisUrl, 'hrs-bench');
  let workers: ReturnType<typeof startWorkers> | undefined;
  try {
    await migrate(sql);
    await loadFixture(sql, mapFixture(), { baseDir: process.cwd() });
    const seeded = performance.now();
    await sql`
      INSERT INTO driver_alerts (email, language, hrs_id, fuelling_option, wants, state, confirm_hash, confirm_until, manage_token, notified_side, confirmed_at, expires_at)
      SELECT 'driver-' || n || '@bench.example', CASE WHEN n % 2 = 0 THEN 'de' ELSE 'en' END,
             CASE WHEN n <= ${TOLD} THEN 'BERLA' WHEN n <= ${2 * TOLD} THEN 'TRUCK' WHEN n % 2 = 0 THEN 'BERLA' ELSE 'TRUCK' END,
             CASE WHEN n <= ${2 * TOLD} THEN '700ld' WHEN n % 2 = 0 THEN '350ld' ELSE '350hd' END,
             CASE WHEN n <= ${TOLD} THEN 'up' WHEN n <= ${2 * TOLD} THEN 'down' ELSE 'up' END,
             'active', sha256(n::text::bytea), now(), 'manage-' || n,
             CASE WHEN n <= ${TOLD} THEN 'down' WHEN n <= ${2 * TOLD} THEN 'up' ELSE 'down' END,
             now(), now() + interval '30 days'
      FROM generate_series(1, ${ALERTS}) AS n`;
    const seedMs = performance.now() - seeded;
    workers = startWorkers(config, redis, sql, createLogger('warn'));

    const rows: string[][] = [];
    const latencies: number[] = [];
    for (let round = 1; round <= ROUNDS; round++) {
      // There (the drivers are told), then back (nobody is told: their drivers know it).
      for (const [berla, truck, told] of [['AVAILABLE', 'UNAVAILABLE', true], ['UNAVAILABLE', 'AVAILABLE', false]] as const) {
        const before = received.length;
        const started = performance.now();
        const written = await recordChanges(sql, [
          { topic: 'option', hrs_id: 'BERLA', entity: 'BERLA/700ld', change_key: `bench|BERLA|${round}|${berla}`, payload: { fuelling_option: '700ld', status: berla, reason: 'bench', datetime: new Date().toISOString() } },
          { topic: 'option', hrs_id: 'TRUCK', entity: 'TRUCK/700ld', change_key: `bench|TRUCK|${round}|${truck}`, payload: { fuelling_option: '700ld', status: truck, reason: 'bench', datetime: new Date().toISOString() } },
        ]);
        if (written.option !== 2) throw new Error(`the changes were not recorded (${JSON.stringify(written)})`);
        const changes = await sql<{ at: Date }[]>`SELECT at FROM change_log WHERE change_key LIKE ${`bench|%|${round}|%`} ORDER BY seq DESC LIMIT 2`;
        const settleAt = Math.max(...changes.map((c) => c.at.getTime())) + SETTLE_MS;
        const expected = told ? 2 * TOLD : 0;
        const deadline = Date.now() + 120_000;
        while (received.length - before < expected && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
        // Time for a second e-mail to show, were there one; and for a round with nobody to tell, its settling.
        await new Promise((resolve) => setTimeout(resolve, told ? 1000 : SETTLE_MS + 1500));
        const mine = received.slice(before);
        if (mine.length !== expected) throw new Error(`round ${round} ${berla}: ${mine.length} e-mails received, ${expected} expected`);
        if (new Set(mine.map((m) => m.to)).size !== mine.length) throw new Error(`round ${round}: a driver got two e-mails`);
        if (!told) continue;
        const ms = mine.map((m) => m.at - settleAt).sort((a, b) => a - b);
        latencies.push(...ms);
        const spanMs = Math.max(...mine.map((m) => m.at)) - Math.min(...mine.map((m) => m.at));
        rows.push([String(round), integer(mine.length), '1', integer(percentile(ms, 50)), integer(percentile(ms, 99)), integer(ms[ms.length - 1]!), fixed(mine.length / Math.max(spanMs / 1000, 0.001), 0), fixed((performance.now() - started) / 1000, 1)]);
      }
    }
    const all = latencies.sort((a, b) => a - b);
    const sent = await sql<{ n: number }[]>`SELECT count(*)::int AS n FROM mail_outbox WHERE kind = 'alert_transition' AND state = 'sent'`;
    options.print(`${integer(ALERTS)} confirmed alerts (seeded in ${fixed(seedMs / 1000, 1)} s); per transition ${integer(TOLD)} on BERLA's 700 bar waiting for it to come back and ${integer(TOLD)} on TRUCK's waiting for it to go down; ALERT_SETTLE ${SETTLE_MS / 1000} s; mail worker concurrency: the default; Node.js ${process.version}`);
    options.print();
    options.print(table(['round', 'e-mails', 'per alert', 'p50 ms', 'p99 ms', 'max ms', 'e-mails/s', 'round s'], rows));
    options.print();
    options.print(`all rounds: ${integer(all.length)} e-mails (${integer(sent[0]!.n)} marked sent in the outbox), latency from the settle instant to the SMTP server p50 ${integer(percentile(all, 50))} ms, p99 ${integer(percentile(all, 99))} ms; every round's way back (nobody to tell) sent nothing.`);
    options.print('latency: from the transition\'s settle instant (its change-log time plus ALERT_SETTLE) to the SMTP sink receiving the e-mail; the alerts worker settles on a timer at that instant, writes the e-mails to the outbox in the same transaction, and the mail worker sends them (the sink, PostgreSQL, Redis and the workers share the machine\'s cores).');
  } finally {
    await workers?.close();
    await closeRedis(redis);
    await sql.end({ timeout: 5 });
    await new Promise<void>((resolve) => sink.close(() => resolve()));
    await tearDown(space, []);
  }
}

const scenario: Scenario = {
  description: 'driver alerts: 10,000 subscribed, transitions settling for 2,000 of them, latency from the settle instant to the SMTP server and e-mails per transition',
  run,
};
export default scenario;
