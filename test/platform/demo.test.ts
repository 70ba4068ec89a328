/**
 * The demo's history, its originator's faults and its registry.
 *
 * One file, one process: its parts share the loaded platform code. Each part is a subtest named after
 * what it covers.
 */
import t from 'tap';
import type { Sql } from '../../db/connect.js';
import { type StoredTransmission, storeTransmissions } from '../../db/queries/signals.js';
import { DEMO_HISTORY_DAYS, backfillDemoHistory, demoIncidents } from '../../src/cli/demo/backfill.js';
import { DEMO_LEGACY_STATIONS, DEMO_ORIGINATOR, DEMO_TOKENS, demoFixture } from '../../src/cli/demo/fixture.js';
import { DemoOriginator } from '../../src/cli/demo/originator.js';
import { createLogger } from '../../src/config/log.js';
import { loadFixture, loadFixtureIntoEmpty } from '../../src/registry/file/load.js';
import { installSandbox } from '../../src/registry/sandbox.js';
import { startCallLogWorker } from '../../workers/call-log/processor.js';
import { ADMIN_TOKEN, freshDatabase, get, publishHistory, startTestPlatform } from '../helpers/platform.js';
import { signedIn } from '../helpers/portal.js';
import { until } from '../helpers/wait.js';

t.test('demo-history', async (t) => {
  /**
   * The demo's week of history (src/cli/demo/backfill.ts): into an empty history it stores a week of the
   * demo originators' readings through the live path's storage, with a gap, a maintenance window and
   * refused calls, and publishes it at once, so that export v2's reliability and history, the call log and
   * the originators' error rates show something on first start; a second run adds nothing.
   */
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

    // Stuttgart's weekly maintenance window, every Tuesday 09:00–12:00 in Stuttgart, in every week of the history.
    const maintenance = await p.sql<{ state: string; reason: string; starts_at: Date; ends_at: Date }[]>`
      SELECT state, reason, starts_at, ends_at FROM status_intervals WHERE hrs_id = 'STUTT' AND series = 'option:700ld' AND reason = 'maintenance' ORDER BY starts_at`;
    const berlin = new Intl.DateTimeFormat('en-GB', { timeZone: 'Europe/Berlin', weekday: 'short', hour: '2-digit', hourCycle: 'h23' });
    const windows: { from: number; to: number }[] = [];
    for (let hour = Math.ceil((now - DEMO_HISTORY_DAYS * 24 * HOUR) / HOUR) * HOUR; hour + HOUR <= until; hour += HOUR) {
      const parts = Object.fromEntries(berlin.formatToParts(hour).map((x) => [x.type, x.value]));
      if (parts.weekday !== 'Tue' || Number(parts.hour) < 9 || Number(parts.hour) >= 12) continue;
      const last = windows[windows.length - 1];
      if (last?.to === hour) last.to += HOUR;
      else windows.push({ from: hour, to: hour + HOUR });
    }
    const whole = windows.filter((w) => w.to - w.from === 3 * HOUR && w.from > now - DEMO_HISTORY_DAYS * 24 * HOUR + 5 * 60_000);
    t.ok(whole.length >= 7, `a window in every week (${whole.length})`);
    t.equal(maintenance.length, whole.length, 'Stuttgart: a maintenance interval per weekly window');
    t.ok(maintenance.every((m) => m.state === 'UNAVAILABLE'), 'the option unavailable for maintenance');
    t.ok(
      whole.every((w, i) => Math.abs(maintenance[i]!.starts_at.getTime() - w.from) < 5 * 60_000 && Math.abs(maintenance[i]!.ends_at.getTime() - w.to) < 5 * 60_000),
      'each from the window\'s start to its end',
    );

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
    const timelines = await Promise.all(fixture.stations.map(async (s) => (await staff.call('GET', `/portal/v1/stations/${s.hrs_id}/timeline?period=7d`)).body));
    // The timelines end where the history is materialised: a refusal backfilled since (this hour's) is after them.
    const [window] = timelines;
    const [inWindow] = await p.sql<{ n: number }[]>`
      SELECT count(*)::int AS n FROM call_logs WHERE status = 400 AND request_time >= ${new Date(window.from)} AND request_time < ${new Date(window.to)}`;
    t.ok(inWindow!.n >= first.refusedCalls - 1, `the week's refusals but this hour's at most fall in the timelines' window (${inWindow!.n} of ${first.refusedCalls})`);
    t.equal(timelines.reduce((sum, timeline) => sum + timeline.rejected_calls.length, 0), inWindow!.n, 'and every refused call as a tick on its station\'s timeline');
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
});

t.test('demo-originator-faults', async (t) => {
  /**
   * The demo's simulated originator fails now and then (src/cli/demo/originator.ts): forced here with
   * means shorter than its interval, it sends a transmission the layout does not allow (answered 400,
   * kept in the call log and counted as refused) and goes silent for some stations (their status turns
   * stale, then unknown, while the others stay fresh, and comes back when the outage ends). With the
   * faults off, it sends nothing refused.
   */
  const quiet = createLogger('silent');

  t.test('refused transmissions reach the call log; an outage turns stations unknown until it ends', async (t) => {
    const fixture = demoFixture();
    const p = await startTestPlatform(t, { fixture, env: { STATUS_STALE_AFTER: '1', STATUS_UNKNOWN_AFTER: '2' } });
    const worker = startCallLogWorker({ redis: p.parts.redis, redisPrefix: p.parts.config.redisPrefix, sql: p.sql, log: quiet, maxWaitMs: 50 });
    t.teardown(() => worker.close());
    const originator = new DemoOriginator(p.url, DEMO_TOKENS.import_v2, fixture.stations, 250, quiet, DEMO_LEGACY_STATIONS, DEMO_TOKENS.import_v1, {
      seed: 7,
      refusedEveryMs: 1,
      outageEveryMs: 1,
      outageMs: 4000,
      outageStations: 3,
    });
    originator.start();
    t.teardown(() => originator.stop());

    await until('the first tick', async () => (originator.outage ? true : undefined));
    const silenced = originator.outage!.stations;
    t.equal(silenced.length, 3, 'an outage silences three stations');
    const others = fixture.stations.map((s) => s.hrs_id).filter((id) => !silenced.includes(id));
    await until('the silenced stations to turn unknown', async () =>
      silenced.every((id) => p.parts.status.freshness(id, 'availability') === 'unknown') ? true : undefined, 10_000);
    t.ok(silenced.every((id) => p.parts.status.freshness(id, 'usage') === 'unknown'), 'usage unknown too');
    t.ok(others.every((id) => p.parts.status.freshness(id, 'availability') === 'fresh'), 'the other stations stay fresh');

    // The next outage begins at once (its mean is shorter than the interval), with stations of its own.
    await until('the outage to end', async () => (originator.outages >= 2 ? true : undefined), 15_000);
    const back = silenced.filter((id) => !originator.outage!.stations.includes(id));
    t.ok(back.length > 0, `stations of the first outage report again (${back.join(', ')})`);
    const states = await until('them to leave unknown', async () => {
      const now = back.map((id) => p.parts.status.freshness(id, 'availability'));
      return now.includes('unknown') ? undefined : now;
    }, 10_000);
    t.same(states, back.map(() => 'fresh'), 'fresh again after the outage');

    t.ok(originator.refused >= 1, `transmissions refused (${originator.refused})`);
    const logs = await until('the refused calls in the call log', async () => {
      const res = await get(`${p.url}/admin/v1/call-logs?originator=${DEMO_ORIGINATOR}`, ADMIN_TOKEN);
      const body = await res.json();
      return body.call_logs.length > 0 ? body.call_logs : undefined;
    });
    t.match(logs[0], { status: 400, endpoint: 'POST /import/v2/signal/availability/', station_ids: [/^[A-Z]{5}$/], response_body: /nozzle/i }, 'a 400 naming the nozzle the layout does not have');
  });

  t.test('with the faults off, nothing is refused and no station goes silent', async (t) => {
    const fixture = demoFixture();
    const p = await startTestPlatform(t, { fixture });
    const log = { warned: 0 };
    const logger = createLogger('warn', { write: (line: string) => { if (line.includes('refused')) log.warned++; } } as never);
    const originator = new DemoOriginator(p.url, DEMO_TOKENS.import_v2, fixture.stations, 200, logger, DEMO_LEGACY_STATIONS, DEMO_TOKENS.import_v1, { refusedEveryMs: 0, outageEveryMs: 0 });
    originator.start();
    await until('a few ticks', async () => (originator.posted >= 12 * 4 * 3 ? true : undefined));
    await originator.stop();
    t.equal(originator.refused, 0, 'nothing refused');
    t.equal(originator.outages, 0, 'no outage');
    t.equal(log.warned, 0, 'no transmission refused by the platform');
  });
});

t.test('demo-registry', async (t) => {
  /**
   * The demo's registry load (src/registry/file/load.ts, loadFixtureIntoEmpty): the demo file goes only
   * into a registry with no station but the sandbox's and no token; anything else is left as it was.
   */
  const options = { baseDir: process.cwd() };
  const stationName = async (sql: Sql, hrsId: string) => (await sql<{ name: string }[]>`SELECT name FROM stations WHERE hrs_id = ${hrsId}`)[0]?.name;

  t.test('into an empty registry (the sandbox\'s stations do not count): loaded; then never again over an edit', async (t) => {
    const { sql } = await freshDatabase(t);
    await installSandbox(sql);
    t.ok((await sql`SELECT 1 FROM stations WHERE sandbox`).length > 0, 'the sandbox\'s stations are there');
    const first = await loadFixtureIntoEmpty(sql, demoFixture(), options);
    t.ok(first, 'loaded');
    t.equal(first!.stations.added, 12);
    await sql`UPDATE stations SET name = 'Renamed' WHERE hrs_id = 'BERAP'`;
    t.equal(await loadFixtureIntoEmpty(sql, demoFixture(), options), null, 'not into a registry with stations');
    t.equal(await stationName(sql, 'BERAP'), 'Renamed', 'the edit is kept');
    t.ok(await loadFixture(sql, demoFixture(), options), 'loadFixture (--reset) loads over it');
    t.equal(await stationName(sql, 'BERAP'), 'Berlin Airport');
  });

  t.test('a registry with a token and no station is not empty', async (t) => {
    const { sql } = await freshDatabase(t);
    await loadFixture(sql, { tokens: [{ generation: 'export_v1', name: 'a legacy client', value: 'a-legacy-export-token-0001' }] }, options);
    t.equal(await loadFixtureIntoEmpty(sql, demoFixture(), options), null, 'left as it was');
    t.equal((await sql`SELECT 1 FROM stations`).length, 0, 'no station added');
  });
});
