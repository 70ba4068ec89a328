/**
 * An hour of history is published once it is materialised and rolled up, never before, and every change
 * to what is published moves `Last-Modified`, so that a client revalidating with `If-Modified-Since`
 * never keeps figures that changed. The history jobs are driven directly on a simulated clock (the
 * readings lie two hours back, so the HTTP dates compare with the real one).
 */
import t from 'tap';
import { storeTransmissions, type StoredTransmission } from '../../db/queries/signals.js';
import { historyPageSchema, reliabilitySchema } from '../../src/domain/export-v2/history.js';
import { freshnessPolicies } from '../../src/domain/categories/index.js';
import { maintainPartitions, materialize, rollUpHours, type HistoryJobs } from '../../workers/history/jobs.js';
import { berlaAssignments, TOKENS } from '../helpers/fixtures.js';
import { get, startTestPlatform } from '../helpers/platform.js';
import { until } from '../helpers/wait.js';
import { ACCOUNTS, grantPortalRoles, portalFixture, signedIn } from '../helpers/portal.js';

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
