import t from 'tap';
import { storeTransmissions, type StoredTransmission } from '../../db/queries/signals.js';
import { historyPageSchema, reliabilitySchema } from '../../src/domain/export-v2/history.js';
import { freshnessPolicies } from '../../src/domain/categories/index.js';
import { materialize, rollUpHours, type HistoryJobs } from '../../workers/history/jobs.js';
import { baseFixture, berlaAssignments, TOKENS } from '../helpers/fixtures.js';
import { get, startTestPlatform } from '../helpers/platform.js';

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
