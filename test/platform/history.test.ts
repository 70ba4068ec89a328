/**
 * History: export, jobs, publication and the timeline.
 *
 * One file, one process: its parts share the loaded platform code. Each part is a subtest named after
 * what it covers.
 */
import fc from 'fast-check';
import t from 'tap';
import type { Sql } from '../../db/connect.js';
import { partitions } from '../../db/queries/history.js';
import { readRegistryRows } from '../../db/queries/registry.js';
import { type StoredTransmission, storeTransmissions } from '../../db/queries/signals.js';
import { createLogger } from '../../src/config/log.js';
import { freshnessPolicies } from '../../src/domain/categories/index.js';
import { historyPageSchema, reliabilitySchema } from '../../src/domain/export-v2/history.js';
import { DAY_MS, type HistoryReading, type Interval, type SeriesState, StationReplay } from '../../src/domain/history/timeline.js';
import type { StationEntry } from '../../src/domain/stations.js';
import { loadFixture } from '../../src/registry/file/load.js';
import { Registry } from '../../src/registry/registry.js';
import { type HistoryJobs, maintainPartitions, materialize, rollUpHours } from '../../workers/history/jobs.js';
import { startWorkers } from '../../workers/index.js';
import { openQueue, QUEUES } from '../../workers/queues.js';
import { baseFixture, berlaAssignments, TOKENS } from '../helpers/fixtures.js';
import { referenceState } from '../helpers/history.js';
import { freshDatabase, get, postSignals, startTestPlatform } from '../helpers/platform.js';
import { ACCOUNTS, grantPortalRoles, portalClient, portalFixture, signedIn } from '../helpers/portal.js';
import { mapFixture } from '../helpers/map.js';
import { holds } from '../helpers/property.js';
import { runs } from '../helpers/scale.js';
import { until } from '../helpers/wait.js';
import { forecastSchema } from '../../src/domain/export-v2/forecast.js';
import { forecastHours, learn, likelihoodOf, type HourRow } from '../../src/domain/forecast/model.js';
import { seedOf, simulatedHours } from '../../src/domain/forecast/patterns.js';
import { hrsHere as hrs } from '../helpers/cli.js';

t.test('history-export', async (t) => {
  const MIN = 60_000;
  const HOUR = 60 * MIN;

  t.test('export v2 reliability and history: figures as computed by hand, pages, 304, errors', async (t) => {
    const p = await startTestPlatform(t, { fixture: { ...baseFixture(), assignments: berlaAssignments() } });
    const jobs: HistoryJobs = {
      sql: p.sql,
      stations: () => p.parts.registry,
      policies: freshnessPolicies({ staleAfterMs: 5 * MIN, unknownAfterMs: 30 * MIN, pricingStaleAfterMs: 25 * HOUR }),
      lagMs: MIN,
      retentionDays: 400,
    };
    // One availability reading three hours ago, then silence.
    const base = Math.floor(Date.now() / HOUR) * HOUR - 3 * HOUR;
    const row: StoredTransmission = {
      originatorId: 'mon-1',
      hrsId: 'BERLA',
      category: 'availability',
      state: 'live',
      measuredAt: new Date(base),
      receivedAt: new Date(base + 1000),
      transmissionId: null,
      payload: { station: { maintenance: false, limitedly_available: false }, nozzles: [{ id: 'N1', available: true }, { id: 'N2', available: false }] },
    };
    await storeTransmissions(p.sql, [row]);
    await materialize(jobs);
    await rollUpHours(jobs);

    const res = await get(`${p.url}/v2/hrs/BERLA/reliability?period=24h`, TOKENS.export_v2);
    t.equal(res.status, 200);
    t.ok(res.headers.get('ratelimit-remaining'), 'under the export v2 rate limits');
    const body = reliabilitySchema.parse(await res.json());
    const to = Date.parse(body.to);
    t.equal(to % HOUR, 0, 'the period ends on a whole hour');
    const [published] = await p.sql<{ at: Date }[]>`SELECT changed_at AS at FROM history_progress WHERE name = 'rolled_up'`;
    t.equal(res.headers.get('last-modified'), published!.at.toUTCString(), 'Last-Modified: when the roll-up published the hour');
    t.equal(Date.parse(body.from), to - 24 * HOUR);
    const a = body.categories.availability;
    t.same(a.seconds, { fresh: 5 * 60 - 1, stale: 25 * 60, unknown: 24 * 3600 - (5 * 60 - 1) - 25 * 60 });
    t.same(a.shares, { fresh: Math.round(((5 * 60 - 1) / 86400) * 10_000) / 10_000, stale: Math.round(((25 * 60) / 86400) * 10_000) / 10_000, unknown: Math.round(((86400 - 1799) / 86400) * 10_000) / 10_000 });
    t.equal(a.readings, 1);
    t.same(a.gaps, { count: 1, total_seconds: (to - base) / 1000, longest_seconds: (to - base) / 1000, ongoing: true }, 'the gap counts from the last reading');
    t.same(a.last_signal, { datetime: new Date(base).toISOString(), received_datetime: new Date(base + 1000).toISOString() });
    t.equal(body.categories.pricing.gaps, null, 'pricing never turns unknown: no gaps');
    t.same(body.categories.usage.shares, { fresh: 0, stale: 0, unknown: 1 }, 'no usage signal at all: unknown throughout');
    const o700 = body.fuelling_options.find((o) => o.fuelling_option === '700ld')!;
    t.same(o700.seconds, { AVAILABLE: 30 * 60 - 1, LIMITEDLY_AVAILABLE: 0, UNAVAILABLE: 0, UNKNOWN: 86400 - 1799, CLOSED: 0 });
    t.equal(o700.available_share_of_opening_hours, Math.round((1799 / 86400) * 10_000) / 10_000);
    t.equal(body.fuelling_options.find((o) => o.fuelling_option === '350ld')!.seconds.UNAVAILABLE, 30 * 60 - 1);

    const again = await get(`${p.url}/v2/hrs/BERLA/reliability?period=24h`, TOKENS.export_v2, { headers: { 'If-Modified-Since': res.headers.get('last-modified')! } });
    t.equal(again.status, 304, 'unchanged until the next hour is published');

    const week = reliabilitySchema.parse(await (await get(`${p.url}/v2/hrs/BERLA/reliability?period=7d`, TOKENS.export_v2)).json());
    t.equal(week.categories.availability.seconds.fresh, 5 * 60 - 1, 'the same history over 7 days');

    // A page of history: the hour of the reading.
    const from = new Date(base).toISOString();
    const page = await get(`${p.url}/v2/hrs/BERLA/history?category=availability&from=${from}&to=${new Date(base + HOUR).toISOString()}`, TOKENS.export_v2);
    t.equal(page.status, 200);
    const h = historyPageSchema.parse(await page.json());
    t.same(h.intervals, [
      { freshness: 'fresh', from: new Date(base + 1000).toISOString(), to: new Date(base + 5 * MIN).toISOString() },
      { freshness: 'stale', from: new Date(base + 5 * MIN).toISOString(), to: new Date(base + 30 * MIN).toISOString() },
      { freshness: 'unknown', from: new Date(base + 30 * MIN).toISOString(), to: new Date(base + HOUR).toISOString() },
    ]);
    t.same(h.fuelling_options!.find((o) => o.fuelling_option === '700ld')!.intervals.map((i) => i.status), ['AVAILABLE', 'UNKNOWN']);
    t.equal(h.readings.length, 1);
    t.match(h.readings[0], { datetime: from, nozzles: [{ id: 'N1', available: true }, { id: 'N2', available: false }] });
    t.match(h.next, /from=.*&to=/, 'a next page (the following hour)');
    t.equal(page.headers.get('last-modified'), published!.at.toUTCString(), 'the same Last-Modified: that of the published history');
    const usage = historyPageSchema.parse(await (await get(`${p.url}/v2/hrs/BERLA/history?category=usage&from=${from}`, TOKENS.export_v2)).json());
    t.same([usage.intervals, usage.readings, usage.fuelling_options], [[], [], null], 'no usage history');

    const problems: [string, number, RegExp][] = [
      ['/v2/hrs/BERLA/reliability?period=1y', 400, /period: must be one of 24h, 7d, 30d/],
      ['/v2/hrs/BERLA/reliability?periods=7d', 400, /unknown parameter/],
      ['/v2/hrs/BERLA/reliability?period=7d&period=24h', 400, /give it once/],
      ['/v2/hrs/BERLA/history?category=fuel', 400, /category: must be one of/],
      [`/v2/hrs/BERLA/history?from=${from}&to=${new Date(base + 8 * 24 * HOUR).toISOString()}`, 400, /at most 7 days/],
      [`/v2/hrs/BERLA/history?from=${from}&to=${from}`, 400, /after from/],
      ['/v2/hrs/BERLA/history?from=yesterday', 400, /ISO 8601/],
      [`/v2/hrs/BERLA/history?from=${new Date(Date.now() + HOUR).toISOString()}`, 400, /published up to/],
      ['/v2/hrs/OSLO1/reliability', 404, /No station/],
      ['/v2/hrs/SBXBE/history', 404, /No station/],
    ];
    for (const [path, status, detail] of problems) {
      const r = await get(`${p.url}${path}`, TOKENS.export_v2);
      t.equal(r.status, status, path);
      t.match((await r.json()) as { detail: string }, { detail }, path);
    }
    t.equal((await get(`${p.url}/v2/hrs/BERLA/reliability`, TOKENS.export_v1)).status, 401, 'export v2 tokens only');
  });
});

t.test('history-jobs', async (t) => {
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
});

t.test('history-property', async (t) => {
  /**
   * The figures against a reference: random availability sequences for one station are stored, turned
   * into intervals by the materialiser in random steps, rolled up by the hour; the milliseconds per
   * freshness state of every hour must equal a reference computed straight from the readings (the state
   * is piecewise constant between receipts and deadlines, so it is summed exactly between those instants).
   */

  const MIN = 60_000;
  const HOUR = 60 * MIN;
  const policies = freshnessPolicies({ staleAfterMs: 5 * MIN, unknownAfterMs: 30 * MIN, pricingStaleAfterMs: 25 * HOUR });


  /** Milliseconds per state in [from, to), exactly. */
  function referenceDurations(readings: readonly HistoryReading[], from: number, to: number): Record<string, number> {
    const cuts = new Set([from, to]);
    for (const r of readings) for (const at of [r.receivedAt, r.measuredAt + 5 * MIN, r.measuredAt + 30 * MIN]) if (at > from && at < to) cuts.add(at);
    const sorted = [...cuts].sort((a, b) => a - b);
    const out: Record<string, number> = { fresh: 0, stale: 0, unknown: 0 };
    for (let k = 0; k + 1 < sorted.length; k++) {
      const state = referenceState(policies.availability, readings, sorted[k]!);
      if (state !== null) out[state]! += sorted[k + 1]! - sorted[k]!;
    }
    return out;
  }

  t.test('property: hourly roll-ups of random sequences equal the reference, whatever the materialiser\'s steps', async (t) => {
    const { sql } = await freshDatabase(t);
    await loadFixture(sql, { ...baseFixture(), assignments: berlaAssignments() }, { baseDir: '.' });
    const registry = new Registry(() => readRegistryRows(sql));
    await registry.reload();
    // Whole hours, 6 to 3 hours ago (no midnight needed: the pieces are cut there and summed again).
    const base = Math.floor(Date.now() / HOUR) * HOUR - 6 * HOUR;
    const end = base + 3 * HOUR;
    let runs = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.record({ gap: fc.integer({ min: 1000, max: 40 * MIN }), delay: fc.integer({ min: 0, max: 5 * MIN }) }), { minLength: 1, maxLength: 30 }),
        fc.array(fc.integer({ min: 1, max: 99 }), { maxLength: 4 }),
        async (steps, cuts) => {
          runs++;
          await sql`TRUNCATE signal_history, status_intervals, history_series, history_hourly, history_progress, signal_latest, published_signals`;
          let received = base;
          const readings: HistoryReading[] = [];
          for (const { gap, delay } of steps) {
            received += gap;
            if (received >= end) break;
            readings.push({ hrsId: 'BERLA', category: 'availability', originatorId: 'mon-1', measuredAt: received - delay, receivedAt: received, payload: null });
          }
          if (readings.length === 0) return;
          await storeTransmissions(
            sql,
            readings.map((r) => ({
              originatorId: 'mon-1', hrsId: 'BERLA', category: 'availability', state: 'live',
              measuredAt: new Date(r.measuredAt), receivedAt: new Date(r.receivedAt), transmissionId: null,
              payload: { station: { maintenance: false, limitedly_available: false }, nozzles: [{ id: 'N1', available: true }] },
            })),
          );
          let clock = base;
          const jobs: HistoryJobs = { sql, stations: () => registry, policies, lagMs: 0, retentionDays: 400, now: () => clock };
          for (const c of [...new Set(cuts)].sort((a, b) => a - b)) {
            clock = base + Math.floor(((end - base) * c) / 100);
            await materialize(jobs);
          }
          clock = end;
          await materialize(jobs);
          await rollUpHours(jobs);
          const rows = await sql<{ hour: Date; fresh_ms: number; stale_ms: number; unknown_ms: number }[]>`
          SELECT hour, fresh_ms, stale_ms, unknown_ms FROM history_hourly WHERE series = 'availability' ORDER BY hour`;
          for (let hour = base; hour < end; hour += HOUR) {
            const expected = referenceDurations(readings, hour, hour + HOUR);
            const row = rows.find((r) => r.hour.getTime() === hour);
            const got = { fresh: row?.fresh_ms ?? 0, stale: row?.stale_ms ?? 0, unknown: row?.unknown_ms ?? 0 };
            if (got.fresh !== expected.fresh || got.stale !== expected.stale || got.unknown !== expected.unknown) {
              throw new Error(`hour +${(hour - base) / HOUR}: expected ${JSON.stringify(expected)}, rolled up ${JSON.stringify(got)}`);
            }
          }
        },
      ),
      { numRuns: 40 },
    );
    t.ok(runs >= 40, `${runs} random sequences`);
  });
});

t.test('history-publication', async (t) => {
  /**
   * An hour of history is published once it is materialised and rolled up, never before, and every change
   * to what is published moves `Last-Modified`, so that a client revalidating with `If-Modified-Since`
   * never keeps figures that changed. The history jobs are driven directly on a simulated clock (the
   * readings lie two hours back, so the HTTP dates compare with the real one).
   */
  const SEC = 1000;
  const MIN = 60 * SEC;
  const HOUR = 60 * MIN;

  /**
   * Waits until the real clock has reached an HTTP-date: a Last-Modified set one second ahead (two
   * publications within one second) is only compared once it is not in the future (RFC 9110 13.1.3).
   */
  const reached = (httpDate: string) => until(`the clock at ${httpDate}`, () => (Date.now() >= Date.parse(httpDate) ? true : undefined));

  const availability = (measuredAt: number, receivedAt: number): StoredTransmission => ({
    originatorId: 'mon-1',
    hrsId: 'BERLA',
    category: 'availability',
    state: 'live',
    measuredAt: new Date(measuredAt),
    receivedAt: new Date(receivedAt),
    transmissionId: null,
    payload: { station: { maintenance: false, limitedly_available: false }, nozzles: [{ id: 'N1', available: true }, { id: 'N2', available: false }] },
  });

  t.test('an hour is published once rolled up, and Last-Modified moves with every change', async (t) => {
    const p = await startTestPlatform(t, { fixture: { ...portalFixture(), assignments: berlaAssignments() } });
    await grantPortalRoles(p);
    let clock = 0;
    const jobs: HistoryJobs = {
      sql: p.sql,
      stations: () => p.parts.registry,
      policies: freshnessPolicies({ staleAfterMs: 5 * MIN, unknownAfterMs: 30 * MIN, pricingStaleAfterMs: 25 * HOUR }),
      lagMs: MIN,
      retentionDays: 400,
      now: () => clock,
    };
    const run = async (at: number) => {
      clock = at;
      await materialize(jobs);
      return rollUpHours(jobs);
    };
    // "15:00": the end of an hour two hours back.
    const H = Math.floor(Date.now() / HOUR) * HOUR - 2 * HOUR;
    const reliability = (headers: Record<string, string> = {}) => get(`${p.url}/v2/hrs/BERLA/reliability?period=24h`, TOKENS.export_v2, { headers });
    const page = (from: number, to: number, headers: Record<string, string> = {}) =>
      get(`${p.url}/v2/hrs/BERLA/history?category=availability&from=${new Date(from).toISOString()}&to=${new Date(to).toISOString()}`, TOKENS.export_v2, { headers });
    const staff = await signedIn(p, ACCOUNTS.staff);

    // Before the history jobs have run, nothing is published: no hour of guessed figures.
    for (const res of [await reliability(), await page(H - HOUR, H)]) {
      t.equal(res.status, 503, 'nothing published before the first roll-up');
      t.equal(res.headers.get('retry-after'), '60');
      t.match(await res.json(), { detail: /not published yet.*hrs history run/ });
    }
    t.equal((await staff.call('GET', '/portal/v1/stations/BERLA/reliability')).status, 503, 'nor in the portal');
    t.equal((await staff.call('GET', '/portal/v1/stations/BERLA/timeline')).status, 503, 'the portal\'s timeline neither, before a materialisation');

    // Ten availability readings from 14:58:20 to 14:59:50, and a late one: measured 14:59:55, received 15:04.
    const readings = Array.from({ length: 10 }, (_, i) => availability(H - 100 * SEC + i * 10 * SEC, H - 100 * SEC + i * 10 * SEC + 200));
    await storeTransmissions(p.sql, [...readings, availability(H - 5 * SEC, H + 4 * MIN)]);

    // 14:59:30: the jobs run; nothing was received before 14:00, so the history is published empty up to it.
    await run(H - 30 * SEC);
    const first = await reliability();
    t.equal(first.status, 200);
    const before = reliabilitySchema.parse(await first.json());
    t.equal(before.to, new Date(H - HOUR).toISOString(), 'published up to 14:00');
    const L1 = first.headers.get('last-modified')!;
    t.ok(L1, 'a Last-Modified');
    t.not(L1, new Date(H - HOUR).toUTCString(), 'when it was published, not the hour\'s end');

    // 15:00:00.2: the hour 14:00-15:00 is not materialised, so it is not published.
    const rolled = await run(H + 200);
    t.equal(rolled.until, null, 'no complete hour to roll up');
    const early = await reliability();
    const atEnd = reliabilitySchema.parse(await early.json());
    t.equal(atEnd.to, new Date(H - HOUR).toISOString(), 'still 14:00: the hour 14:00-15:00 is not published at 15:00:00.2');
    t.equal(atEnd.categories.availability.last_signal, null, 'and nothing of it shows (no last signal of 14:59:50)');
    t.equal(early.headers.get('last-modified'), L1);
    t.equal((await reliability({ 'If-Modified-Since': L1 })).status, 304, 'unchanged: a 304');
    const unpublished = await page(H - HOUR, H);
    t.equal(unpublished.status, 400, 'the history page of an unpublished hour is refused');
    t.match(await unpublished.json(), { detail: /published up to .*T\d\d:00:00\.000Z/ });
    const portalEarly = (await staff.call('GET', '/portal/v1/stations/BERLA/reliability')).body;
    t.equal(portalEarly.to, new Date(H - HOUR).toISOString(), 'the portal\'s figures end where export v2\'s do');
    const timeline = (await staff.call('GET', '/portal/v1/stations/BERLA/timeline')).body;
    t.equal(timeline.to, new Date(H + 200 - MIN).toISOString(), 'the portal\'s timeline ends at the materialised time, never later');
    t.equal(timeline.time_zone, null, 'with the station\'s time zone, the clock the page shows its times on: none here (no zone, no coordinates)');
    const record = (await staff.call('GET', '/portal/v1/stations/BERLA')).body;
    t.equal((await staff.call('PUT', '/portal/v1/stations/BERLA', { ...record, time_zone: 'Europe/Berlin' })).status, 200, 'given one');
    const zoneOf = async (path: string) => (await staff.call('GET', `/portal/v1/stations/BERLA/${path}`)).body.time_zone as string | null;
    await until('the registry reloaded', async () => ((await zoneOf('signals')) === 'Europe/Berlin' ? true : undefined));
    t.equal(await zoneOf('signals'), 'Europe/Berlin', 'the signals name it');
    t.equal(await zoneOf('timeline'), 'Europe/Berlin', 'and the timeline');

    // 15:12: materialised and rolled up, the hour is published, under a later Last-Modified.
    const published = await run(H + 12 * MIN);
    t.equal(published.until!.getTime(), H, 'rolled up to 15:00');
    const after = await reliability();
    t.equal(after.status, 200);
    const figures = reliabilitySchema.parse(await after.json());
    t.equal(figures.to, new Date(H).toISOString(), 'now published up to 15:00');
    t.equal(figures.categories.availability.readings, 10, 'with its ten readings');
    t.same(figures.categories.availability.last_signal, { datetime: new Date(H - 10 * SEC).toISOString(), received_datetime: new Date(H - 10 * SEC + 200).toISOString() });
    t.equal(figures.categories.availability.seconds.fresh, 100, 'fresh from 14:58:20.2 to 15:00');
    const L2 = after.headers.get('last-modified')!;
    t.ok(Date.parse(L2) > Date.parse(L1), `Last-Modified moved on (${L1} -> ${L2})`);
    const revalidated = await reliability({ 'If-Modified-Since': L1 });
    t.equal(revalidated.status, 200, 'a client revalidating with the old Last-Modified gets the new figures, not a 304');
    t.equal(reliabilitySchema.parse(await revalidated.json()).categories.availability.readings, 10);
    await reached(L2);
    t.equal((await reliability({ 'If-Modified-Since': L2 })).status, 304);
    t.equal((await staff.call('GET', '/portal/v1/stations/BERLA/reliability')).body.to, new Date(H).toISOString(), 'the portal follows');

    // The page of the hour: its ten readings; the late one (received 15:04) joins with the next hour.
    const hourPage = await page(H - HOUR, H);
    t.equal(hourPage.status, 200);
    t.equal(hourPage.headers.get('last-modified'), L2);
    const listed = historyPageSchema.parse(await hourPage.json());
    t.equal(listed.readings.length, 10, 'the readings received by 15:00');
    t.equal(listed.next, null, 'nothing published after it yet');
    t.equal((await page(H - HOUR, H, { 'If-Modified-Since': L2 })).status, 304);

    // 16:02: the next hour is published; the page of 14:00-15:00 changed (the late reading, a next link).
    await run(H + HOUR + 2 * MIN);
    const later = await page(H - HOUR, H, { 'If-Modified-Since': L2 });
    t.equal(later.status, 200, 'the changed page is sent again');
    const L3 = later.headers.get('last-modified')!;
    t.ok(Date.parse(L3) > Date.parse(L2), 'under a later Last-Modified');
    const relisted = historyPageSchema.parse(await later.json());
    t.equal(relisted.readings.length, 11, 'the late reading is listed');
    t.match(relisted.next, /from=/, 'and a next page');

    // A change of the station's registry entry (its layout, options) moves it too.
    await p.sql`UPDATE stations SET static_modified_at = ${new Date(Date.parse(L3) + 2 * SEC)} WHERE hrs_id = 'BERLA'`;
    const changed = await reliability({ 'If-Modified-Since': L3 });
    t.equal(changed.status, 200, 'a registry change is a change');
    t.equal(changed.headers.get('last-modified'), new Date(Date.parse(L3) + 2 * SEC).toUTCString());

    // The retention's deletions move it as well (everything here is older than the retention 410 days on).
    const changedAt = async () => (await p.sql<{ at: Date }[]>`SELECT changed_at AS at FROM history_progress WHERE name = 'rolled_up'`)[0]!.at;
    const beforeDrop = await changedAt();
    clock = Date.now() + 410 * 24 * HOUR;
    const { dropped } = await maintainPartitions(jobs);
    t.ok(dropped.length > 0, 'partitions dropped');
    const afterDrop = await changedAt();
    t.ok(Math.floor(afterDrop.getTime() / SEC) > Math.floor(beforeDrop.getTime() / SEC), 'the published history changed: a later second');
  });

  t.test('two roll-ups within one second never share a Last-Modified', async (t) => {
    const p = await startTestPlatform(t, { fixture: { ...portalFixture(), assignments: berlaAssignments() } });
    let clock = 0;
    const jobs: HistoryJobs = {
      sql: p.sql,
      stations: () => p.parts.registry,
      policies: freshnessPolicies({ staleAfterMs: 5 * MIN, unknownAfterMs: 30 * MIN, pricingStaleAfterMs: 25 * HOUR }),
      lagMs: 0,
      retentionDays: 400,
      now: () => clock,
    };
    const H = Math.floor(Date.now() / HOUR) * HOUR - 3 * HOUR;
    await storeTransmissions(p.sql, [availability(H + MIN, H + MIN + 200)]);
    const seconds: number[] = [];
    for (const at of [H + HOUR, H + 2 * HOUR, H + 3 * HOUR]) {
      clock = at;
      await materialize(jobs);
      await rollUpHours(jobs);
      const [row] = await p.sql<{ at: Date }[]>`SELECT changed_at AS at FROM history_progress WHERE name = 'rolled_up'`;
      const changed = row!.at;
      seconds.push(Math.floor(changed.getTime() / SEC));
    }
    t.ok(seconds[0]! < seconds[1]! && seconds[1]! < seconds[2]!, `one second apart at least: ${seconds.join(', ')}`);
  });
});

t.test('history-timeline', async (t) => {
  const MIN = 60_000;
  const policies = freshnessPolicies({ staleAfterMs: 5 * MIN, unknownAfterMs: 30 * MIN, pricingStaleAfterMs: 25 * 60 * MIN });
  const T0 = Date.UTC(2026, 10, 23, 10, 0, 0);

  function station(openingHours: string | null = '24/7'): StationEntry {
    return {
      hrsId: 'BERLA',
      name: 'Berlin',
      heavyDuty: false,
      layout: {
        nozzles: new Map([
          ['N1', { dispenser: 'D1', fuellingOptions: ['700ld'] }],
          ['N2', { dispenser: 'D1', fuellingOptions: ['350ld'] }],
        ]),
        dispensers: new Map([['D1', ['N1', 'N2']]]),
        storages: new Set(),
        products: new Set(),
      },
      openingHours,
      timeZone: 'UTC',
      holidayCountry: null,
    };
  }

  const availability = (measuredAt: number, receivedAt: number, n1 = true, n2 = false, station: object = {}): HistoryReading => ({
    hrsId: 'BERLA',
    category: 'availability',
    originatorId: 'mon-1',
    measuredAt,
    receivedAt,
    payload: { station: { maintenance: false, limitedly_available: false, ...station }, nozzles: [{ id: 'N1', available: n1 }, { id: 'N2', available: n2 }] },
  });

  const brief = (i: Interval) => [i.series, i.state, i.reason, i.startsAt - T0, i.endsAt - T0];

  t.test('fresh → stale → unknown → fresh, each at its exact time', async (t) => {
    const replay = new StationReplay('BERLA', station(), policies, []);
    const readings = [availability(T0, T0 + 1000), availability(T0 + 40 * MIN, T0 + 40 * MIN + 500)];
    const out = replay.run(readings, T0 + 44 * MIN);
    const freshness = out.intervals.filter((i) => i.series === 'availability').map(brief);
    t.same(freshness, [
      ['availability', 'fresh', null, 1000, 5 * MIN],
      ['availability', 'stale', null, 5 * MIN, 30 * MIN],
      ['availability', 'unknown', null, 30 * MIN, 40 * MIN + 500],
    ]);
    const options = out.intervals.filter((i) => i.series.startsWith('option:')).map(brief);
    t.same(options, [
      ['option:700ld', 'AVAILABLE', 'reported_available', 1000, 30 * MIN],
      ['option:350ld', 'UNAVAILABLE', 'reported_unavailable', 1000, 30 * MIN],
      ['option:700ld', 'UNKNOWN', 'no_signal', 30 * MIN, 40 * MIN + 500],
      ['option:350ld', 'UNKNOWN', 'no_signal', 30 * MIN, 40 * MIN + 500],
    ]);
    const open = new Map(out.changed.map((s) => [s.series, s]));
    t.equal(open.get('availability')!.state, 'fresh');
    t.equal(open.get('availability')!.since, T0 + 40 * MIN + 500);
    t.equal(open.get('availability')!.nextDue, T0 + 45 * MIN, 'the next deadline: stale at datetime + 5 min');
    t.equal(open.get('option:700ld')!.state, 'AVAILABLE');
  });

  t.test('a reading measured before the one held changes nothing; maintenance decides for every option', async (t) => {
    const replay = new StationReplay('BERLA', station(), policies, []);
    const out = replay.run(
      [availability(T0, T0 + 1000), availability(T0 - MIN, T0 + 2000, false, false), availability(T0 + MIN, T0 + MIN + 100, true, true, { maintenance: true })],
      T0 + 2 * MIN,
    );
    t.same(out.intervals.map(brief), [
      ['option:700ld', 'AVAILABLE', 'reported_available', 1000, MIN + 100],
      ['option:350ld', 'UNAVAILABLE', 'reported_unavailable', 1000, MIN + 100],
    ]);
    const open = new Map(out.changed.map((s) => [s.series, s]));
    t.equal(open.get('option:700ld')!.reason, 'maintenance');
    t.equal(open.get('option:350ld')!.state, 'UNAVAILABLE');
    t.equal(open.get('availability')!.measuredAt, T0 + MIN);
  });

  t.test('opening hours: CLOSED at the closing minute without a reading, back at opening', async (t) => {
    const replay = new StationReplay('BERLA', station('Mo-Su 06:00-10:30'), policies, []);
    // Readings every 10 minutes from 10:00 to 11:00 (the station closes at 10:30 UTC).
    const readings = Array.from({ length: 7 }, (_, k) => availability(T0 + k * 10 * MIN, T0 + k * 10 * MIN + 100));
    const out = replay.run(readings, T0 + 65 * MIN);
    const option = out.intervals.filter((i) => i.series === 'option:700ld').map(brief);
    t.same(option, [['option:700ld', 'AVAILABLE', 'reported_available', 100, 30 * MIN]]);
    const open = out.changed.find((s) => s.series === 'option:700ld')!;
    t.equal(open.state, 'CLOSED');
    t.equal(open.since, T0 + 30 * MIN);
    t.equal(open.nextDue, Date.UTC(2026, 10, 24, 6, 0), 'due again at the next opening');
  });

  t.test('an interval spanning midnight is cut there; the pieces share their start', async (t) => {
    const late = Date.UTC(2026, 10, 23, 23, 50);
    const replay = new StationReplay('BERLA', station(), policies, []);
    const out = replay.run([availability(late, late)], late + 3 * 3600_000);
    const freshness = out.intervals.filter((i) => i.series === 'availability');
    t.same(
      freshness.map((i) => [i.state, i.startsAt, i.endsAt, i.since]),
      [
        ['fresh', late, late + 5 * MIN, late],
        ['stale', late + 5 * MIN, Date.UTC(2026, 10, 24), late + 5 * MIN],
        ['stale', Date.UTC(2026, 10, 24), late + 30 * MIN, late + 5 * MIN],
      ],
    );
    const option = out.intervals.filter((i) => i.series === 'option:700ld');
    t.same(
      option.map((i) => [i.startsAt, i.endsAt, i.since]),
      [
        [late, Date.UTC(2026, 10, 24), late],
        [Date.UTC(2026, 10, 24), late + 30 * MIN, late],
      ],
    );
  });


  function stateAt(intervals: readonly Interval[], open: SeriesState | undefined, at: number): string | null {
    const found = intervals.find((i) => i.series === 'availability' && i.startsAt <= at && at < i.endsAt);
    if (found) return found.state;
    return open && open.since <= at ? open.state : null;
  }

  t.test('property: replayed in any number of runs, the intervals give the reference state at every instant', async (t) => {
    const sequence = fc.array(fc.record({ gap: fc.integer({ min: 1, max: 50 * MIN }), delay: fc.integer({ min: 0, max: 6 * MIN }) }), { minLength: 1, maxLength: 25 });
    await holds(
      t,
      fc.property(sequence, fc.array(fc.integer({ min: 1, max: 99 }), { maxLength: 5 }), (steps, cuts) => {
        let received = T0;
        const readings = steps.map(({ gap, delay }) => {
          received += gap;
          return availability(received - Math.min(delay, 5 * MIN), received);
        });
        const end = received + 2 * 3600_000;
        // Runs end at these instants; each run continues from the states the last one left.
        const ends = [...new Set(cuts.map((c) => T0 + Math.floor(((end - T0) * c) / 100))), end].sort((a, b) => a - b);
        let states = new Map<string, SeriesState>();
        const intervals: Interval[] = [];
        let from = T0;
        for (const to of ends) {
          const slice = readings.filter((r) => r.receivedAt > from && r.receivedAt <= to);
          const out = new StationReplay('BERLA', station(), policies, [...states.values()]).run(slice, to);
          intervals.push(...out.intervals);
          for (const s of out.changed) states.set(s.series, s);
          for (const r of out.removed) states.delete(r.series);
          from = to;
        }
        const probes = new Set<number>([end - 1]);
        for (const r of readings) for (const d of [0, 1, 5 * MIN - 1, 5 * MIN, 30 * MIN - 1, 30 * MIN]) probes.add(r.measuredAt + d).add(r.receivedAt + d - 1);
        for (const at of probes) {
          if (at < T0 || at >= end) continue;
          const expected = referenceState(policies.availability, readings, at);
          const got = stateAt(intervals, states.get('availability'), at);
          if (expected !== got) throw new Error(`at +${at - T0} ms: expected ${expected}, got ${got}`);
        }
        // Pieces never overlap and never cross midnight.
        const pieces = intervals.filter((i) => i.series === 'availability').sort((a, b) => a.startsAt - b.startsAt);
        for (let k = 1; k < pieces.length; k++) if (pieces[k]!.startsAt < pieces[k - 1]!.endsAt) throw new Error('overlap');
        for (const p of intervals) if (Math.floor(p.startsAt / DAY_MS) !== Math.floor((p.endsAt - 1) / DAY_MS)) throw new Error('crosses midnight');
      }),
      { numRuns: runs(300) },
      `${runs(300)} random sequences`,
    );
  });
});

t.test('forecast', async (t) => {
  const HOUR = 3_600_000;
  const DAY = 24 * HOUR;

  /** Writes hourly five-state roll-ups of one option of BERLA (what the history jobs would have written). */
  async function writeHours(sql: Sql, option: string, rows: readonly HourRow[]): Promise<void> {
    for (let i = 0; i < rows.length; i += 1000) {
      const slice = rows.slice(i, i + 1000).map((r) => ({
        hrs_id: 'BERLA',
        series: `option:${option}`,
        hour: new Date(r.hour),
        available_ms: r.availableMs,
        limited_ms: r.limitedMs,
        unavailable_ms: r.unavailableMs,
        closed_ms: r.closedMs,
        unknown_ms: r.unknownMs,
      }));
      await sql`INSERT INTO history_hourly ${sql(slice)}`;
    }
  }
  const publish = (sql: Sql, at: number) =>
    sql`INSERT INTO history_progress (name, until, changed_at) VALUES ('rolled_up', ${new Date(at)}, now())
        ON CONFLICT (name) DO UPDATE SET until = EXCLUDED.until, changed_at = now()`;

  t.test('GET /v2/hrs/{hrs_id}/forecast: learned from the published history, the live present, too little history said, errors', async (t) => {
    const p = await startTestPlatform(t, { fixture: { ...baseFixture(), assignments: berlaAssignments() } });
    const url = `${p.url}/v2/hrs/BERLA/forecast`;
    const before = await get(url, TOKENS.export_v2);
    t.equal(before.status, 503, 'nothing published yet');
    t.ok(Number(before.headers.get('retry-after')) > 0);
    await before.text();

    const published = Math.floor(Date.now() / HOUR) * HOUR;
    // 700 bar: six weeks of a flaky station; 350 bar: three days, too little to learn from.
    const flaky = simulatedHours({ pattern: 'flaky', timeZone: 'UTC', from: published - 42 * DAY, to: published, seed: seedOf('BERLA/700ld') });
    await writeHours(p.sql, '700ld', flaky);
    await writeHours(p.sql, '350ld', simulatedHours({ pattern: 'steady', timeZone: 'UTC', from: published - 3 * DAY, to: published, seed: seedOf('BERLA/350ld') }));
    await publish(p.sql, published);
    // The present: 700 bar out of service, 350 bar available.
    await postSignals(p, 'availability', [{ hrs: 'BERLA', datetime: new Date().toISOString(), nozzles: [{ id: 'N1', available: false }, { id: 'N2', available: true }], station: { maintenance: false, limitedly_available: false } }]);
    await until('the present published', () => (p.parts.status.published('BERLA', 'availability') ? true : undefined));

    const res = await get(url, TOKENS.export_v2);
    t.equal(res.status, 200);
    t.equal(res.headers.get('cache-control'), 'max-age=60');
    const body = forecastSchema.parse(await res.json());
    t.equal(body.hrs_id, 'BERLA');
    t.equal(body.time_zone, null, 'no zone registered: UTC is used');
    t.equal(body.history_until, new Date(published).toISOString());
    t.same(body.fuelling_options.map((o) => [o.fuelling_option, o.status, o.reason]), [
      ['700ld', 'UNAVAILABLE', null],
      ['350ld', 'AVAILABLE', 'insufficient_history'],
    ]);
    const [bar700, bar350] = body.fuelling_options;
    // The same as the model gives for these rows, this present and the answer's instant.
    const now = Date.parse(body.generated_at);
    const expected = forecastHours(learn(flaky, { timeZone: 'UTC', now: published }), { now, present: 'unavailable', isOpen: () => true })!;
    t.same(bar700!.forecast, expected.map((h) => ({ from: new Date(h.from).toISOString(), to: new Date(h.to).toISOString(), probability: h.probability, likelihood: likelihoodOf(h) })));
    t.equal(bar700!.forecast![0]!.from, new Date(Math.floor(now / HOUR) * HOUR).toISOString(), 'the first hour is the present one');
    t.ok(bar700!.forecast![0]!.probability < bar700!.forecast![11]!.probability, 'out of service now: less likely now than in 12 hours');
    t.equal(bar700!.history.known_hours, learn(flaky, { timeZone: 'UTC', now: published }).knownHours);
    t.equal(bar350!.forecast, null);
    t.ok(bar350!.history.known_hours > 0 && bar350!.history.known_hours < 168, `350 bar: ${bar350!.history.known_hours} hours known`);

    // Learned once per published hour: rows written since are not read until the next hour is published.
    await p.sql`UPDATE history_hourly SET available_ms = 0, unavailable_ms = 3600000 WHERE hrs_id = 'BERLA' AND series = 'option:700ld'`;
    const kept = forecastSchema.parse(await (await get(url, TOKENS.export_v2)).json());
    t.same(kept.fuelling_options[0]!.history, bar700!.history);
    t.ok(kept.fuelling_options[0]!.forecast!.some((h) => h.probability > 0.5), 'still the model learned before');
    await publish(p.sql, published + HOUR);
    const relearned = forecastSchema.parse(await (await get(url, TOKENS.export_v2)).json());
    t.equal(relearned.history_until, new Date(published + HOUR).toISOString());
    t.ok(relearned.fuelling_options[0]!.forecast!.every((h) => h.probability <= 0.05), 'down every hour it was ever seen: unlikely every hour');

    const problems: [string, string | undefined, number][] = [
      ['/v2/hrs/OSLO1/forecast', TOKENS.export_v2, 404],
      ['/v2/hrs/BERLA/forecast', undefined, 401],
      ['/v2/hrs/BERLA/forecast', TOKENS.export_v1, 401],
      ['/v2/hrs/BERLA/forecast?hours=3', TOKENS.export_v2, 400],
    ];
    for (const [path, token, status] of problems) {
      const answer = await get(`${p.url}${path}`, token);
      t.equal(answer.status, status, `${path} with ${token ?? 'no token'}`);
      t.match(answer.headers.get('content-type') ?? '', /json/, 'in the API\'s error format');
      await answer.text();
    }
  });

  /** Two answers with the same `generated_at` hour: their bodies but `generated_at` (the present is unknown, so the hour alone moves them). */
  const sameHour = (a: { generated_at: string }, b: { generated_at: string }) => Math.floor(Date.parse(a.generated_at) / HOUR) === Math.floor(Date.parse(b.generated_at) / HOUR);
  const withoutInstant = ({ generated_at: _at, ...rest }: { generated_at: string }) => rest;

  t.test('GET /map/v1/stations/{hrs_id}/forecast: public, export v2\'s body, only stations the map shows, 503 before history, the map\'s limits', async (t) => {
    const p = await startTestPlatform(t, { fixture: mapFixture(), env: { MAP_RATE_LIMIT: '100000' } });
    const map = (path: string) => fetch(`${p.url}/map/v1/stations/${path}`);
    const before = await map('BERLA/forecast');
    t.equal(before.status, 503, 'nothing published yet');
    t.equal(before.headers.get('retry-after'), '60');
    t.equal(before.headers.get('content-type'), 'application/problem+json; charset=utf-8');
    t.match(await before.json(), { status: 503, code: 'service_unavailable', detail: /not published yet/ });

    const published = Math.floor(Date.now() / HOUR) * HOUR;
    // BERLA (Europe/Berlin, open 24/7): 700 bar six weeks of a flaky station, 350 bar three days; no reading now (UNKNOWN).
    const flaky = simulatedHours({ pattern: 'flaky', timeZone: 'Europe/Berlin', from: published - 42 * DAY, to: published, seed: seedOf('BERLA/700ld') });
    await writeHours(p.sql, '700ld', flaky);
    await writeHours(p.sql, '350ld', simulatedHours({ pattern: 'steady', timeZone: 'Europe/Berlin', from: published - 3 * DAY, to: published, seed: seedOf('BERLA/350ld') }));
    await publish(p.sql, published);

    const res = await map('BERLA/forecast');
    t.equal(res.status, 200);
    t.equal(res.headers.get('content-type'), 'application/json; charset=utf-8');
    t.equal(res.headers.get('cache-control'), 'max-age=60', 'kept a minute, as export v2\'s');
    t.equal(res.headers.get('access-control-allow-origin'), '*', 'open to any origin');
    t.match(res.headers.get('ratelimit-remaining'), /^\d+$/, 'counted by the map\'s per-address limits');
    let body = forecastSchema.parse(await res.json());
    t.same([body.hrs_id, body.time_zone, body.history_until], ['BERLA', 'Europe/Berlin', new Date(published).toISOString()]);
    t.same(body.fuelling_options.map((o) => [o.fuelling_option, o.status, o.reason]), [['700ld', 'UNKNOWN', null], ['350ld', 'UNKNOWN', 'insufficient_history']]);
    const now = Date.parse(body.generated_at);
    const expected = forecastHours(learn(flaky, { timeZone: 'Europe/Berlin', now: published }), { now, present: 'unknown', isOpen: () => true })!;
    t.same(body.fuelling_options[0]!.forecast, expected.map((h) => ({ from: new Date(h.from).toISOString(), to: new Date(h.to).toISOString(), probability: h.probability, likelihood: likelihoodOf(h) })), 'the model\'s 12 hours on the station\'s week');
    let exported = forecastSchema.parse(await (await get(`${p.url}/v2/hrs/BERLA/forecast`, TOKENS.export_v2)).json());
    if (!sameHour(body, exported)) {
      // An hour began between the two: both again.
      body = forecastSchema.parse(await (await map('BERLA/forecast')).json());
      exported = forecastSchema.parse(await (await get(`${p.url}/v2/hrs/BERLA/forecast`, TOKENS.export_v2)).json());
    }
    t.same(withoutInstant(body), withoutInstant(exported), 'the body of export v2\'s forecast');
    const truck = forecastSchema.parse(await (await map('TRUCK/forecast')).json());
    t.same(truck.fuelling_options.map((o) => [o.fuelling_option, o.forecast, o.reason, o.history.known_hours]), [
      ['700ld', null, 'insufficient_history', 0],
      ['700hd', null, 'insufficient_history', 0],
      ['350hd', null, 'insufficient_history', 0],
    ], 'no history at all: too little, said per option');

    for (const [path, status, detail] of [
      ['NOPES/forecast', 404, 'No station with hrs_id "NOPES" on the map.'],
      ['HAMBG/forecast', 404, 'No station with hrs_id "HAMBG" on the map.'],
      ['BERLA/forecast?hours=3', 400, /hours/],
    ] as const) {
      const answer = await map(path);
      t.equal(answer.status, status, path);
      t.equal(answer.headers.get('content-type'), 'application/problem+json; charset=utf-8', `${path}: a problem`);
      t.match(await answer.json(), { status, detail }, path);
    }
    const sandbox = await startTestPlatform(t, { fixture: mapFixture(), env: { MAP_RATE_LIMIT: '100000', SANDBOX: 'on' } });
    const sandboxId = [...sandbox.parts.registry.stationIds()].find((id) => sandbox.parts.registry.station(id)?.sandbox === true)!;
    await publish(sandbox.sql, published);
    const refused = await fetch(`${sandbox.url}/map/v1/stations/${sandboxId}/forecast`);
    t.equal(refused.status, 404, 'a sandbox station is not on the map');
    t.match(await refused.json(), { detail: `No station with hrs_id "${sandboxId}" on the map.` });

    // The map's limit per client address counts the forecast as it counts the detail.
    const limited = await startTestPlatform(t, { fixture: mapFixture(), env: { MAP_RATE_LIMIT: '2' } });
    const spent = [];
    for (const path of ['BERLA', 'BERLA/forecast', 'BERLA/forecast']) {
      const answer = await fetch(`${limited.url}/map/v1/stations/${path}`);
      await answer.arrayBuffer();
      spent.push(answer.status);
      if (answer.status === 429) {
        t.ok(Number(answer.headers.get('retry-after')) > 0, 'Retry-After');
        t.equal(answer.headers.get('content-type'), 'application/problem+json; charset=utf-8');
      }
    }
    t.same(spent, [200, 503, 429], 'the detail and a forecast (503: nothing published there) spend the two; the next is refused');
  });

  t.test('GET /portal/v1/stations/{hrs_id}/forecast: operator staff see export v2\'s forecast; other staff 403, unknown 404, 503 before history', async (t) => {
    const p = await startTestPlatform(t, { fixture: { ...portalFixture(), assignments: berlaAssignments() } });
    await grantPortalRoles(p);
    const staff = await signedIn(p, ACCOUNTS.staff);
    const path = '/portal/v1/stations/BERLA/forecast';
    const before = await staff.call('GET', path);
    t.equal(before.status, 503, 'nothing published yet');
    t.equal(before.headers.get('retry-after'), '60');
    t.match(before.body, { status: 503, code: 'service_unavailable' });

    const published = Math.floor(Date.now() / HOUR) * HOUR;
    await writeHours(p.sql, '700ld', simulatedHours({ pattern: 'busy', timeZone: 'UTC', from: published - 28 * DAY, to: published, seed: seedOf('BERLA/700ld') }));
    await publish(p.sql, published);
    let answer = await staff.call('GET', path);
    t.equal(answer.status, 200);
    t.equal(answer.headers.get('cache-control'), 'no-store', 'as every answer of the portal');
    let body = forecastSchema.parse(answer.body);
    let exported = forecastSchema.parse(await (await get(`${p.url}/v2/hrs/BERLA/forecast`, TOKENS.export_v2)).json());
    if (!sameHour(body, exported)) {
      answer = await staff.call('GET', path);
      body = forecastSchema.parse(answer.body);
      exported = forecastSchema.parse(await (await get(`${p.url}/v2/hrs/BERLA/forecast`, TOKENS.export_v2)).json());
    }
    t.ok(body.fuelling_options[0]!.forecast !== null, '700 bar: four weeks, forecast');
    t.same(withoutInstant(body), withoutInstant(exported), 'the body of export v2\'s forecast');

    t.equal((await (await signedIn(p, ACCOUNTS.admin)).call('GET', path)).status, 200, 'an admin too');
    const refusals: [string, string, number, RegExp][] = [
      [ACCOUNTS.otherStaff, path, 403, /operator "h2-demo"/],
      [ACCOUNTS.manager, path, 403, /operator "h2-demo"/],
      [ACCOUNTS.staff, '/portal/v1/stations/KIELX/forecast', 403, /operator "north-h2"/],
      [ACCOUNTS.staff, '/portal/v1/stations/NONEX/forecast', 404, /No station "NONEX"/],
      [ACCOUNTS.staff, `${path}?hours=3`, 400, /hours/],
    ];
    for (const [user, url, status, detail] of refusals) {
      const refused = await (await signedIn(p, user)).call('GET', url);
      t.equal(refused.status, status, `${user}: ${url}`);
      t.match(refused.body, { status, detail }, `${user}: ${url}: a problem that says why`);
    }
    t.equal((await portalClient(p).call('GET', path)).status, 401, 'no session: 401');
  });

  t.test('hrs forecast evaluate: every station\'s options back-tested beside the two baselines, pooled, and calibrated by bin', async (t) => {
    const p = await startTestPlatform(t, { fixture: { ...baseFixture(), assignments: berlaAssignments() } });
    const env = { DATABASE_URL: p.parts.config.databaseUrl };
    let r = await hrs(['forecast', 'evaluate'], env);
    t.equal(r.code, 1, 'nothing published: exit 1');
    t.match(r.stderr, /no history is published yet: run `hrs history run`/);

    const published = Math.floor(Date.now() / HOUR) * HOUR;
    await writeHours(p.sql, '700ld', simulatedHours({ pattern: 'flaky', timeZone: 'UTC', from: published - 56 * DAY, to: published, seed: seedOf('BERLA/700ld/evaluate') }));
    await writeHours(p.sql, '350ld', simulatedHours({ pattern: 'steady', timeZone: 'UTC', from: published - 3 * DAY, to: published, seed: seedOf('BERLA/350ld/evaluate') }));
    await publish(p.sql, published);
    r = await hrs(['forecast', 'evaluate'], env);
    t.equal(r.code, 0, r.stderr);
    const out = r.stdout.split('\n');
    t.match(out[0], new RegExp(`^held out: ${new Date(published - 14 * DAY).toISOString()} to ${new Date(published).toISOString()} \\(14 days\\); trained on the 84 days before$`));
    t.match(out[1], /^station +option +pairs +forecast: Brier \(calibration\) +persistence: Brier \(calibration\) +hour's rate: Brier \(calibration\) +best$/);
    const row = out.find((line) => line.startsWith('BERLA    700ld'))!;
    t.ok(row, 'a line for 700 bar');
    const [pairs, ...figures] = row.split(/\s{2,}/).slice(2);
    t.ok(Number(pairs) > 14 * 24 * 6, `pairs: ${pairs} (12 hours from each held-out hour)`);
    const brier = figures.slice(0, 3).map((f) => Number(f.split(' ')[0]));
    t.ok(brier[0]! < brier[1]! && brier[0]! < brier[2]!, `the forecast beats both baselines on a flaky station: ${row}`);
    t.equal(figures[3], 'forecast', 'and is named best');
    t.match(r.stdout, /^BERLA +350ld +too little history before the held-out days \(\d+ known hours\)$/m);
    t.match(r.stdout, /^all +\d+ +0\.\d{4} \(0\.\d{3}\)/m, 'the pooled line');
    t.match(r.stdout, /^1 option\(s\) with too little history to learn from/m);
    t.match(r.stdout, /^0\.9-1\.0 +\d+ +0\.9\d\d +0\.\d{3}$/m, 'the calibration by bin');

    r = await hrs(['forecast', 'evaluate', '--holdout-days', '7', '--station', 'BERLA'], env);
    t.equal(r.code, 0);
    t.match(r.stdout, /\(7 days\); trained on the 84 days before/);
    for (const [args, pattern] of [
      [['forecast', 'evaluate', '--holdout-days', '0'], /--holdout-days: a whole number of days from 1 to 120 \(got "0"\)/],
      [['forecast', 'evaluate', '--station', 'OSLO1'], /--station: no station OSLO1 in the registry/],
      [['forecast', 'frobnicate'], /unknown forecast command "frobnicate"/],
    ] as const) {
      r = await hrs([...args], env);
      t.equal(r.code, 2, `${args.join(' ')}: exit 2`);
      t.match(r.stderr, pattern);
    }
  });
});
