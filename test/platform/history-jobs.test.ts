import t from 'tap';
import { partitions } from '../../db/queries/history.js';
import { storeTransmissions, type StoredTransmission } from '../../db/queries/signals.js';
import { readRegistryRows } from '../../db/queries/registry.js';
import { freshnessPolicies } from '../../src/domain/categories/index.js';
import { Registry } from '../../src/registry/registry.js';
import { loadFixture } from '../../src/registry/file/load.js';
import { maintainPartitions, materialize, rollUpHours, type HistoryJobs } from '../../workers/history/jobs.js';
import { baseFixture, berlaAssignments } from '../helpers/fixtures.js';
import { freshDatabase, postSignals, startTestPlatform } from '../helpers/platform.js';
import { until } from '../helpers/wait.js';
import { startWorkers } from '../../workers/index.js';
import { openQueue, QUEUES } from '../../workers/queues.js';
import { createLogger } from '../../src/config/log.js';
import type { Sql } from '../../db/connect.js';

const MIN = 60_000;
const HOUR = 60 * MIN;
const policies = freshnessPolicies({ staleAfterMs: 5 * MIN, unknownAfterMs: 30 * MIN, pricingStaleAfterMs: 25 * HOUR });

async function setUp(t: Parameters<typeof freshDatabase>[0]) {
  const { sql } = await freshDatabase(t);
  const fixture = baseFixture();
  await loadFixture(sql, { ...fixture, assignments: berlaAssignments() }, { baseDir: '.' });
  const registry = new Registry(() => readRegistryRows(sql));
  await registry.reload();
  let clock = Date.now();
  const jobs: HistoryJobs = { sql, stations: () => registry, policies, lagMs: MIN, retentionDays: 400, now: () => clock };
  return { sql, jobs, setClock: (ms: number) => (clock = ms) };
}

const reading = (category: string, measuredAt: number, receivedAt: number, payload: Record<string, unknown> = {}): StoredTransmission => ({
  originatorId: 'mon-1',
  hrsId: 'BERLA',
  category,
  state: 'live',
  measuredAt: new Date(measuredAt),
  receivedAt: new Date(receivedAt),
  transmissionId: null,
  payload,
});

const nozzles = (n1: boolean) => ({ station: { maintenance: false, limitedly_available: false }, nozzles: [{ id: 'N1', available: n1 }, { id: 'N2', available: false }] });

async function intervals(sql: Sql, series: string) {
  return sql<{ state: string; starts_at: Date; ends_at: Date }[]>`
    SELECT state, starts_at, ends_at FROM status_intervals WHERE hrs_id = 'BERLA' AND series = ${series} ORDER BY starts_at`;
}

t.test('materialised in steps on a simulated clock: intervals exact, the open one in history_series', async (t) => {
  const { sql, jobs, setClock } = await setUp(t);
  // 04:00 UTC yesterday: three hours without a midnight in them.
  const base = Math.floor(Date.now() / (24 * HOUR)) * 24 * HOUR - 20 * HOUR;
  await storeTransmissions(sql, [reading('availability', base, base + 1000, nozzles(true))]);
  await storeTransmissions(sql, [reading('availability', base + 40 * MIN, base + 40 * MIN + 200, nozzles(false))]);
  await storeTransmissions(sql, [reading('usage', base + 10 * MIN, base + 10 * MIN + 300, { nozzles: [] })]);

  setClock(base + 20 * MIN + MIN); // materialised up to base + 20 min
  const first = await materialize(jobs);
  t.equal(first.until!.getTime(), base + 20 * MIN);
  t.equal(first.readings, 2);
  setClock(base + 3 * HOUR + MIN);
  const second = await materialize(jobs);
  t.equal(second.until!.getTime(), base + 3 * HOUR);
  t.equal(second.steps, 3, 'an hour of receipts per transaction');

  const availability = (await intervals(sql, 'availability')).map((r) => [r.state, r.starts_at.getTime() - base, r.ends_at.getTime() - base]);
  t.same(availability, [
    ['fresh', 1000, 5 * MIN],
    ['stale', 5 * MIN, 30 * MIN],
    ['unknown', 30 * MIN, 40 * MIN + 200],
    ['fresh', 40 * MIN + 200, 45 * MIN],
    ['stale', 45 * MIN, 70 * MIN],
  ]);
  const [open] = await sql<{ state: string; since: Date; next_due: Date | null }[]>`
    SELECT state, since, next_due FROM history_series WHERE hrs_id = 'BERLA' AND series = 'availability'`;
  t.equal(open!.state, 'unknown');
  t.equal(open!.since.getTime(), base + 70 * MIN);
  t.equal(open!.next_due, null, 'nothing due until the next reading');
  const option = (await intervals(sql, 'option:700ld')).map((r) => [r.state, r.starts_at.getTime() - base, r.ends_at.getTime() - base]);
  t.same(option, [
    ['AVAILABLE', 1000, 30 * MIN],
    ['UNKNOWN', 30 * MIN, 40 * MIN + 200],
    ['UNAVAILABLE', 40 * MIN + 200, 70 * MIN],
  ]);
  const usage = (await intervals(sql, 'usage')).map((r) => r.state);
  t.same(usage, ['fresh', 'stale']);

  t.same(await materialize(jobs), { from: null, until: null, readings: 0, intervals: 0, steps: 1 }, 'nothing left to do');

  // Roll-ups equal the raw computation over the intervals, hour by hour.
  const rolled = await rollUpHours(jobs);
  t.equal(rolled.until!.getTime(), base + 3 * HOUR, 'every complete hour materialised');
  const hourly = await sql<{ hour: Date; fresh_ms: number; stale_ms: number; unknown_ms: number; readings: number; gaps: number }[]>`
    SELECT hour, fresh_ms, stale_ms, unknown_ms, readings, gaps FROM history_hourly WHERE hrs_id = 'BERLA' AND series = 'availability' ORDER BY hour`;
  t.same(
    hourly.map((h) => [h.hour.getTime() - base, h.fresh_ms, h.stale_ms, h.unknown_ms, h.readings, h.gaps]),
    [
      [0, 5 * MIN - 1000 + 5 * MIN - 200, 25 * MIN + 15 * MIN, 10 * MIN + 200, 2, 1],
      [HOUR, 0, 10 * MIN, 50 * MIN, 0, 1],
      [2 * HOUR, 0, 0, HOUR, 0, 0],
    ].map(([h, f, s, u, r, g]) => [h, f, s, u, r, g]),
  );
  const raw = await sql<{ state: string; ms: number }[]>`
    WITH pieces AS (
      SELECT state, starts_at AS s, ends_at AS e FROM status_intervals WHERE hrs_id = 'BERLA' AND series = 'option:350ld'
      UNION ALL SELECT state, since, ${new Date(base + 3 * HOUR)} FROM history_series WHERE hrs_id = 'BERLA' AND series = 'option:350ld'
    )
    SELECT state, sum(extract(epoch FROM e - s) * 1000)::int AS ms FROM pieces GROUP BY state ORDER BY state`;
  const sums = await sql<{ available: number; unavailable: number; unknown: number }[]>`
    SELECT sum(available_ms)::int AS available, sum(unavailable_ms)::int AS unavailable, sum(unknown_ms)::int AS unknown
    FROM history_hourly WHERE hrs_id = 'BERLA' AND series = 'option:350ld'`;
  const rawBy = Object.fromEntries(raw.map((r) => [r.state, r.ms]));
  t.same([sums[0]!.available, sums[0]!.unavailable, sums[0]!.unknown], [rawBy.AVAILABLE ?? 0, rawBy.UNAVAILABLE ?? 0, rawBy.UNKNOWN ?? 0], 'roll-ups add up to the raw intervals');
  t.same(await rollUpHours(jobs), { from: null, until: null, rows: 0 }, 'rolling up again does nothing');
});

t.test('partitions: created weeks ahead, a stray row moved out of DEFAULT, dropped after the retention', async (t) => {
  const { sql, jobs, setClock } = await setUp(t);
  const now = Date.now();
  setClock(now);
  await maintainPartitions(jobs);
  const weeks = (await partitions(sql)).filter((p) => p.table === 'signal_history' && p.to !== null);
  t.ok(weeks.some((p) => p.to!.getTime() >= now + 27 * 24 * HOUR), 'four weeks ahead');
  t.ok(weeks.every((p) => p.to!.getTime() - p.from!.getTime() === 7 * 24 * HOUR), 'a week each');
  t.ok(weeks.every((p) => new Date(p.from!).getUTCDay() === 1 && p.from!.getUTCHours() === 0), 'starting Mondays 00:00 UTC');

  // A reading beyond every partition lands in DEFAULT; the week's partition takes it when created.
  const far = now + 60 * 24 * HOUR;
  await storeTransmissions(sql, [reading('availability', far, far, nozzles(true))]);
  const where = async () => (await sql<{ t: string }[]>`SELECT tableoid::regclass::text AS t FROM signal_history WHERE measured_at = ${new Date(far)}`)[0]!.t;
  t.equal(await where(), 'signal_history_default');
  setClock(far);
  const { created } = await maintainPartitions(jobs);
  t.ok(created > 0);
  t.match(await where(), /^signal_history_w\d{8}$/, 'moved into its week');

  // 410 days later (the retention is 400) this week is gone, with its rows.
  await storeTransmissions(sql, [reading('availability', now - MIN, now, nozzles(true))]);
  setClock(now + 410 * 24 * HOUR);
  const before = await partitions(sql);
  const { dropped } = await maintainPartitions(jobs);
  const cutoff = now + 10 * 24 * HOUR;
  t.same(
    dropped.sort(),
    before.filter((p) => p.to !== null && p.to.getTime() <= cutoff).map((p) => p.name).sort(),
    'exactly the partitions that end before the retention',
  );
  t.ok(dropped.some((name) => name.startsWith('signal_history_w')) && dropped.some((name) => name.startsWith('status_intervals_w')));
  const [left] = await sql<{ n: number }[]>`SELECT count(*)::int AS n FROM signal_history WHERE measured_at < ${new Date(now + HOUR)}`;
  t.equal(left!.n, 0, 'no reading older than the retention is left');
  const [kept] = await sql<{ n: number }[]>`SELECT count(*)::int AS n FROM signal_history WHERE measured_at = ${new Date(far)}`;
  t.equal(kept!.n, 1, 'newer ones stay');
});

t.test('the platform schedules the jobs and the history worker runs them: a signal posted becomes history', async (t) => {
  const p = await startTestPlatform(t, { env: { HISTORY_EVERY: '1', HISTORY_LAG: '1' }, fixture: { ...baseFixture(), assignments: berlaAssignments() } });
  const workers = startWorkers(p.parts.config, p.parts.redis, p.sql, createLogger('silent'), { stations: () => p.parts.registry });
  t.teardown(() => workers.close());
  t.ok(workers.names.includes('history'), 'the history worker runs beside the others');
  const datetime = new Date(Date.now() - 1000).toISOString();
  await postSignals(p, 'availability', [
    { hrs: 'BERLA', datetime, nozzles: [{ id: 'N1', available: true }, { id: 'N2', available: false }], station: { maintenance: false, limitedly_available: false } },
  ]);
  const open = await until('the signal in the history', async () => {
    const [row] = await p.sql<{ state: string; since: Date }[]>`SELECT state, since FROM history_series WHERE hrs_id = 'BERLA' AND series = 'availability'`;
    return row;
  });
  t.equal(open.state, 'fresh');
  const options = await p.sql<{ series: string; state: string }[]>`SELECT series, state FROM history_series WHERE series LIKE 'option:%' ORDER BY series`;
  t.same(options, [{ series: 'option:350ld', state: 'UNAVAILABLE' }, { series: 'option:700ld', state: 'AVAILABLE' }]);
  const queue = openQueue(QUEUES.history, p.parts.redis, p.parts.config.redisPrefix);
  t.teardown(() => queue.close());
  const schedulers = await queue.getJobSchedulers();
  t.same(schedulers.map((s) => s.key).sort(), ['history-materialize', 'history-partitions', 'history-roll-up'], 'three job schedulers, however many instances upserted them');
  const ran = await until('the three jobs run', async () => {
    const names = new Set((await queue.getCompleted(0, 200)).map((job) => job.name));
    return ['materialize', 'roll-up', 'partitions'].every((n) => names.has(n)) ? names : undefined;
  });
  t.ok(ran.has('partitions'), 'the partitions job ran at start');
});

t.test('a removed station or originator takes its readings along; those stored while it was removed go at the next maintenance', async (t) => {
  const { sql, jobs, setClock } = await setUp(t);
  const now = Date.now();
  setClock(now);
  await maintainPartitions(jobs);
  await storeTransmissions(sql, [reading('availability', now - MIN, now, nozzles(true)), reading('usage', now - MIN, now)]);
  // What an import statement running while its station (or originator) was removed leaves behind.
  await sql`
    INSERT INTO signal_history (hrs_id, category, originator_id, measured_at, received_at, payload)
    VALUES ('GONE1', 'availability', 'mon-1', ${new Date(now - MIN)}, ${new Date(now)}, '{}'),
           ('BERLA', 'availability', 'ghost', ${new Date(now - MIN)}, ${new Date(now)}, '{}'),
           ('GONE2', 'availability', 'mon-1', ${new Date(now - 3 * 24 * HOUR)}, ${new Date(now - 3 * 24 * HOUR)}, '{}')`;
  const count = async (where: string) => (await sql.unsafe<{ n: number }[]>(`SELECT count(*)::int AS n FROM signal_history WHERE ${where}`))[0]!.n;
  const { orphans } = await maintainPartitions(jobs);
  t.equal(orphans, 2, 'the last day\'s readings of an unregistered station or originator are deleted');
  t.equal(await count(`hrs_id = 'GONE1' OR originator_id = 'ghost'`), 0);
  t.equal(await count(`hrs_id = 'GONE2'`), 1, 'older ones are left to the retention (the run looks back a day)');
  t.equal(await count(`hrs_id = 'BERLA'`), 2, 'registered ones stay');

  await sql`DELETE FROM originators WHERE id = 'mon-1'`;
  t.equal(await count(`originator_id = 'mon-1'`), 0, 'removing an originator removes its readings');
  await sql`INSERT INTO signal_history (hrs_id, category, originator_id, measured_at, received_at, payload) VALUES ('BERLA', 'pricing', 'mon-2', ${new Date(now)}, ${new Date(now)}, '{}')`;
  await sql`DELETE FROM stations WHERE hrs_id = 'BERLA'`;
  t.equal(await count(`hrs_id = 'BERLA'`), 0, 'removing a station removes its readings');
});
