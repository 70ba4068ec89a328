/**
 * The demo's eight weeks of history (src/cli/demo/backfill.ts) as the platform derives them, and the
 * forecasts they give.
 *
 * One file, one process: its parts share the loaded platform code. Each part is a subtest named after
 * what it covers.
 */
import t from 'tap';
import type { Sql } from '../../db/connect.js';
import { unbounded } from '../../db/deadline.js';
import { forgetDerivedHistory, lockHistory, publishedUntil } from '../../db/queries/history.js';
import { evaluateHistory, scoresOf } from '../../src/cli/commands/forecast.js';
import { DEMO_HISTORY_DAYS, backfillDemoHistory } from '../../src/cli/demo/backfill.js';
import { DEMO_TOKENS, demoFixture } from '../../src/cli/demo/fixture.js';
import { demoPattern } from '../../src/cli/demo/simulation.js';
import { METHODS, ScoreBook, type Method } from '../../src/domain/forecast/evaluate.js';
import type { Pattern } from '../../src/domain/forecast/patterns.js';
import { historyJobs, materialize, rollUpHours } from '../../workers/history/jobs.js';
import { get, startTestPlatform } from '../helpers/platform.js';

const HOUR = 3_600_000;

/** Everything the history jobs derive, in a fixed order, as text. */
async function derived(sql: Sql) {
  return {
    intervals: await sql`SELECT hrs_id, series, state, reason, originator_id, starts_at, ends_at, since FROM status_intervals ORDER BY hrs_id, series, starts_at`,
    series: await sql`SELECT hrs_id, series, state, reason, originator_id, since, measured_at, received_at, payload::text AS payload, next_due FROM history_series ORDER BY hrs_id, series`,
    hourly: await sql`SELECT * FROM history_hourly ORDER BY hrs_id, series, hour, originator_id`,
    progress: await sql`SELECT name, until FROM history_progress ORDER BY name`,
  };
}

t.test('demo-history-derived', async (t) => {
  /**
   * The weeks whose readings the backfill does not store are derived in memory by the platform's replay:
   * what it writes (intervals, series, hourly roll-ups with their readings counted, the jobs' watermarks)
   * is what the history jobs derive when every reading is stored. Three days, one of them stored, against
   * the same three days all stored and derived again by the history jobs from the readings alone.
   */
  const now = Math.floor(Date.now() / 60_000) * 60_000 - 7 * 60_000 + 23_456;
  const fixture = demoFixture(now);

  const partly = await startTestPlatform(t, { fixture });
  const a = await backfillDemoHistory(partly.parts, fixture, { now, days: 3, readingDays: 1 });
  t.ok(a.backfilled && a.replayed > 0 && a.readings > 0, `two days replayed in memory (${a.replayed} readings), one stored (${a.readings})`);
  const fromMemory = await derived(partly.sql);

  const stored = await startTestPlatform(t, { fixture });
  const b = await backfillDemoHistory(stored.parts, fixture, { now, days: 3, readingDays: 3 });
  t.equal(b.replayed, 0, 'the same three days, every reading stored');
  t.equal(b.readings, a.readings + a.replayed, 'the same readings');
  const backfilled = await derived(stored.sql);
  // The history jobs derive it all again from the stored readings, as of the same instant.
  const sql = unbounded(stored.sql);
  await sql.begin(async (tx) => {
    await lockHistory(tx);
    await forgetDerivedHistory(tx);
  });
  t.same(await derived(stored.sql), { intervals: [], series: [], hourly: [], progress: [] }, 'forgotten');
  const jobs = { ...historyJobs(sql, () => stored.parts.registry, stored.parts.config), now: () => now };
  await materialize(jobs, Number.MAX_SAFE_INTEGER);
  await rollUpHours(jobs, Number.MAX_SAFE_INTEGER);
  const byJobs = await derived(stored.sql);

  t.ok(byJobs.intervals.length > 100 && byJobs.hourly.length > 1000, `the jobs derived intervals (${byJobs.intervals.length}) and hourly rows (${byJobs.hourly.length})`);
  t.ok(byJobs.hourly.some((r) => r.readings > 0 && new Date(r.hour).getTime() < now - 2 * 24 * HOUR), 'readings counted in the days not stored');
  for (const table of ['intervals', 'series', 'hourly', 'progress'] as const) {
    t.same(fromMemory[table], byJobs[table], `${table}: the backfill with two days not stored writes what the jobs derive from every reading`);
    t.same(backfilled[table], byJobs[table], `${table}: and so does the backfill that stores them all`);
  }
});

t.test('demo-forecast', async (t) => {
  /**
   * On a fresh demo's history, `hrs forecast evaluate` (its function, evaluateHistory): trained on the six
   * weeks before the last two and scored on those, the forecast beats both baselines (persistence and the
   * hour's rate) over the stations that follow a pattern (busy, maintenance, flaky) and over all; on every
   * pattern it beats persistence and matches the hour's rate at least (within 0.002 of its Brier score:
   * where the weekly rate says nearly everything, a fixed window or the rush hours, the two agree), and on
   * the flaky station beats both by 5% or more. Calibrated: an expected calibration error of at most 0.05
   * over the patterned stations and over all, 0.06 on each pattern (the flaky one is one station's two
   * weeks). And export v2 serves every demo station a forecast, none for want of history.
   */
  const fixture = demoFixture();
  const p = await startTestPlatform(t, { fixture });
  const result = await backfillDemoHistory(p.parts, fixture);
  t.ok(result.backfilled, `backfilled (${result.readings} readings stored, ${result.replayed} replayed, ${result.ms} ms)`);
  const published = await publishedUntil(p.sql);
  const evaluation = await evaluateHistory(p.sql, p.parts.registry, { end: published!.until.getTime(), holdoutDays: 14, retentionDays: p.parts.config.historyRetentionDays });

  const books = () => ({ forecast: new ScoreBook(), persistence: new ScoreBook(), hourly_rate: new ScoreBook() }) as Record<Method, ScoreBook>;
  const byPattern = new Map<Pattern, Record<Method, ScoreBook>>();
  const patterned = books();
  for (const { hrsId, option, result: backtest } of evaluation.options) {
    t.ok(backtest.enough, `${hrsId} ${option}: enough history before the held-out days (${backtest.learned.knownHours} known hours)`);
    const pattern = demoPattern(hrsId);
    // A busy station's 350 bar options are steady: its pattern drains the 700 bar storage.
    const followed: Pattern = pattern === 'busy' && !option.startsWith('700') ? 'steady' : pattern;
    const group = byPattern.get(followed) ?? books();
    byPattern.set(followed, group);
    for (const m of METHODS) {
      group[m].merge(backtest.books[m]);
      if (pattern !== 'steady') patterned[m].merge(backtest.books[m]);
    }
  }
  t.same([...byPattern.keys()].sort(), ['busy', 'flaky', 'maintenance', 'steady'], 'every pattern among the demo\'s stations');
  const line = (name: string, s: ReturnType<typeof scoresOf>) =>
    `${name}: ${s.forecast.pairs} pairs, ${METHODS.map((m) => `${m} ${s[m].brier.toFixed(4)} (${s[m].calibrationError.toFixed(3)})`).join(', ')}`;
  for (const [pattern, group] of [...byPattern].sort()) {
    const s = scoresOf(group);
    t.ok(s.forecast.pairs > 500, `${pattern}: scored on ${s.forecast.pairs} pairs`);
    t.ok(s.forecast.brier < s.persistence.brier, `${line(pattern, s)}: better than persistence`);
    t.ok(s.forecast.brier <= s.hourly_rate.brier + 0.002, `${pattern}: as good as the hour's rate at least (within 0.002)`);
    t.ok(s.forecast.calibrationError <= 0.06, `${pattern}: calibrated within 0.06`);
  }
  const flaky = scoresOf(byPattern.get('flaky')!);
  t.ok(flaky.forecast.brier < 0.95 * Math.min(flaky.persistence.brier, flaky.hourly_rate.brier), 'flaky: the present says what the hour\'s rate cannot, at least 5% better than either baseline');
  for (const [name, group] of [['the patterned stations', patterned], ['all', evaluation.overall]] as const) {
    const s = scoresOf(group);
    t.ok(s.forecast.brier < s.persistence.brier && s.forecast.brier < s.hourly_rate.brier, `${line(name, s)}: better than both baselines`);
    t.ok(s.forecast.calibrationError <= 0.05, `${name}: calibrated within 0.05`);
  }

  // Export v2 serves each demo station's forecast from the backfilled history.
  for (const s of fixture.stations) {
    const res = await get(`${p.url}/v2/hrs/${s.hrs_id}/forecast`, DEMO_TOKENS.export_v2);
    t.equal(res.status, 200, `${s.hrs_id}: the forecast answers`);
    const body = (await res.json()) as { fuelling_options: { fuelling_option: string; forecast: unknown[] | null; reason: string | null; history: { known_hours: number } }[] };
    t.ok(body.fuelling_options.length > 0, `${s.hrs_id}: its options`);
    for (const o of body.fuelling_options) {
      t.ok(o.reason === null && o.forecast !== null && o.forecast.length === 12, `${s.hrs_id} ${o.fuelling_option}: forecast, not ${o.reason} (${o.history.known_hours} known hours)`);
      t.ok(o.history.known_hours >= (DEMO_HISTORY_DAYS - 1) * 24 * 0.4, `${s.hrs_id} ${o.fuelling_option}: learned from the eight weeks`);
    }
  }
});
