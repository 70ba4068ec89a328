/**
 * The demo's week of history (src/cli/demo/backfill.ts): into an empty history it stores a week of the
 * demo originators' readings through the live path's storage, with a gap, a maintenance window and
 * refused calls, and publishes it at once, so that export v2's reliability and history, the call log and
 * the originators' error rates show something on first start; a second run adds nothing.
 */
import t from 'tap';
import { backfillDemoHistory, demoIncidents } from '../../src/cli/demo/backfill.js';
import { DEMO_ORIGINATOR, DEMO_TOKENS, demoFixture } from '../../src/cli/demo/fixture.js';
import { storeTransmissions, type StoredTransmission } from '../../db/queries/signals.js';
import { ADMIN_TOKEN, get, publishHistory, startTestPlatform } from '../helpers/platform.js';
import { signedIn } from '../helpers/portal.js';

const HOUR = 3_600_000;

/** A reading of another originator. */
const reading = (originatorId: string, at: number, hrsId = 'BERAP'): StoredTransmission => ({
  originatorId, hrsId, category: 'hydrogen-storage', state: 'live', measuredAt: new Date(at), receivedAt: new Date(at + 100), transmissionId: null,
  payload: { storages: [{ id: 'T1', remaining_kg: '300.00', low_h2_storage: false }] },
});
const sandboxReading = (at: number) => reading('sandbox-simulator', at, 'SBXBE');

t.test('a fresh demo gets a week of history; a restart adds nothing', async (t) => {
  const fixture = demoFixture();
  const p = await startTestPlatform(t, { fixture, env: { SANDBOX: 'on' } });
  // The platform ran before the backfill: the export sandbox's simulator sent a reading, and the
  // history jobs materialised and published up to now.
  await storeTransmissions(p.sql, [sandboxReading(Date.now() - 3 * 60_000)]);
  await publishHistory(p);
  t.ok(await p.sql`SELECT 1 FROM history_series WHERE hrs_id = 'SBXBE'`.then((r) => r.length > 0), 'the history materialised before, the sandbox\'s reading included');
  const now = Date.now();
  const first = await backfillDemoHistory(p.parts, fixture, { now });
  t.equal(first.backfilled, true, 'backfilled into the empty history');
  t.ok(first.readings > 12 * 3 * 7 * 24 * 10, `a week of readings (${first.readings})`);
  t.equal(first.refusedCalls >= 7, true, `a refused call a day (${first.refusedCalls})`);
  t.ok(first.ms < 30_000, `fast enough (${first.ms} ms)`);
  t.comment(`backfill: ${first.readings} readings in ${first.ms} ms`);

  const count = async (query: Promise<{ n: number }[]>) => (await query)[0]!.n;
  const readings = await count(p.sql`SELECT count(*)::int AS n FROM signal_history`);
  t.equal(readings, first.readings + 1, 'every reading stored in the history, beside the sandbox\'s');
  t.equal(await count(p.sql`SELECT count(*)::int AS n FROM published_signals WHERE originator_id <> 'sandbox-simulator'`), 48, 'the latest reading per station and category published');
  const [progress] = await p.sql<{ until: Date }[]>`SELECT until FROM history_progress WHERE name = 'rolled_up'`;
  const until = progress!.until.getTime();
  t.ok(until % HOUR === 0 && until > now - 2 * HOUR && until <= now, `published up to the last complete hour (${progress!.until.toISOString()})`);

  const exported = async (path: string) => {
    const res = await get(`${p.url}${path}`, DEMO_TOKENS.export_v2);
    t.equal(res.status, 200, `${path} answers`);
    return res.json();
  };
  const berap = await exported('/v2/hrs/BERAP/reliability?period=7d');
  t.ok(berap.categories.availability.shares.fresh > 0.95, `BERAP fresh nearly all week (${berap.categories.availability.shares.fresh})`);
  t.ok(berap.categories.usage.readings > 2000, 'usage readings counted');
  t.ok(berap.fuelling_options.find((o: { fuelling_option: string }) => o.fuelling_option === '700ld').available_share_of_opening_hours > 0.5, '700ld mostly available');

  const incidents = demoIncidents(now);
  const munich = await exported('/v2/hrs/MUNCE/reliability?period=7d');
  t.equal(munich.categories.availability.gaps.count, 1, 'Munich: one gap');
  t.ok(Math.abs(munich.categories.availability.gaps.longest_seconds - 4 * 3600) < 600, `about four hours (${munich.categories.availability.gaps.longest_seconds} s)`);
  const page = await exported(`/v2/hrs/MUNCE/history?category=availability&from=${new Date(incidents.gap.from - HOUR).toISOString()}&to=${new Date(incidents.gap.to + HOUR).toISOString()}`);
  t.match(page.intervals.map((i: { freshness: string }) => i.freshness), ['fresh', 'stale', 'unknown', 'fresh'], 'the gap in the history: fresh, stale, unknown, fresh again');

  const [maintenance] = await p.sql<{ state: string; reason: string; starts_at: Date; ends_at: Date }[]>`
    SELECT state, reason, starts_at, ends_at FROM status_intervals WHERE hrs_id = 'STUTT' AND series = 'option:700ld' AND reason = 'maintenance'`;
  t.ok(maintenance, 'Stuttgart: a maintenance interval');
  t.equal(maintenance?.state, 'UNAVAILABLE', 'the option unavailable for maintenance');
  t.ok(Math.abs(maintenance!.starts_at.getTime() - incidents.maintenance.from) < 5 * 60_000, 'from the window’s start');

  const calls = await (await get(`${p.url}/admin/v1/call-logs?originator=${DEMO_ORIGINATOR}`, ADMIN_TOKEN)).json();
  t.equal(calls.call_logs.length, first.refusedCalls, 'the refused calls in the call log');
  t.match(calls.call_logs[0], { status: 400, endpoint: 'POST /import/v2/signal/availability/', response_body: /Unknown|not/ }, 'as import v2 answered them');
  const originators = await (await get(`${p.url}/admin/v1/originators`, ADMIN_TOKEN)).json();
  const demo = originators.originators.find((o: { id: string }) => o.id === DEMO_ORIGINATOR);
  t.ok(demo.calls_24h > 1000 && demo.rejected_24h >= 1, `the originator's calls and refusals of the last day (${demo.rejected_24h} of ${demo.calls_24h})`);
  const timeline = await p.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM call_logs WHERE status = 400 AND station_ids && ARRAY['BERAP','HAMPT','MUNCE','COLOG','FRANK','STUTT','ZURIC','VIENN','AMSTE']`;
  t.equal(timeline[0]!.n, first.refusedCalls, 'each names its station (the timelines\' refused-call ticks)');

  // The portal: operator staff see the week on the timeline, with the gap and the refused calls.
  const staff = await signedIn(p, 'demo-staff');
  const week = (await staff.call('GET', '/portal/v1/stations/MUNCE/timeline?period=7d')).body;
  t.ok(week.categories.availability.some((i: { state: string; from: string }) => i.state === 'unknown' && Math.abs(Date.parse(i.from) - incidents.gap.from - 30 * 60_000) < 5 * 60_000), 'the portal\'s timeline shows the gap, from 30 minutes into the silence');
  const refused = await Promise.all(fixture.stations.map(async (s) => (await staff.call('GET', `/portal/v1/stations/${s.hrs_id}/timeline?period=7d`)).body.rejected_calls.length));
  t.equal(refused.reduce((a, b) => a + b, 0), first.refusedCalls, 'and every refused call as a tick on its station\'s timeline');
  const reliability = (await staff.call('GET', '/portal/v1/stations/STUTT/reliability?period=7d')).body;
  t.ok(reliability.categories.availability.shares.fresh > 0.9, 'the portal\'s reliability: not unknown');
  t.ok(await p.sql`SELECT 1 FROM history_series WHERE hrs_id = 'SBXBE'`.then((r) => r.length > 0), 'the sandbox\'s reading replayed with the week');

  const again = await backfillDemoHistory(p.parts, fixture, { now: Date.now() });
  t.equal(again.backfilled, false, 'a restart backfills nothing');
  t.equal(await count(p.sql`SELECT count(*)::int AS n FROM signal_history`), readings, 'no reading duplicated');
  t.equal(await count(p.sql`SELECT count(*)::int AS n FROM call_logs`), first.refusedCalls, 'no call duplicated');
});

t.test('a history with readings of other originators is not the demo\'s: nothing backfilled', async (t) => {
  const fixture = demoFixture();
  const p = await startTestPlatform(t, { fixture });
  await p.load({ originators: [{ id: 'someone-else', name: 'Someone else', call_log_mode: 'errors' }] });
  await storeTransmissions(p.sql, [reading('someone-else', Date.now() - 5000)]);
  await publishHistory(p);
  const result = await backfillDemoHistory(p.parts, fixture);
  t.equal(result.backfilled, false, 'not backfilled');
  t.same(await p.sql`SELECT originator_id FROM signal_history`, [{ originator_id: 'someone-else' }], 'the history as it was');
  t.same(await p.sql`SELECT count(*)::int AS n FROM call_logs`, [{ n: 0 }], 'no call added');
});
