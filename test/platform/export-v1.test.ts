/**
 * Export v1 and v1.1: records, status and the sandbox.
 *
 * One file, one process: its parts share the loaded platform code. Each part is a subtest named after
 * what it covers.
 */
import t, { type Test } from 'tap';
import { createLogger } from '../../src/config/log.js';
import { isOpen } from '../../src/domain/opening-hours.js';
import { SANDBOX_STATIONS, SANDBOX_TOKEN, type SandboxStation, simulatedReading, simulatedReadings } from '../../src/domain/sandbox.js';
import { summarize, type SummaryReason } from '../../src/domain/status/summary.js';
import { decideToken, TOKEN_MESSAGES } from '../../src/domain/tokens.js';
import type { FuellingOption } from '../../src/domain/vocabulary.js';
import { loadFixture } from '../../src/registry/file/load.js';
import { installSandbox, sandboxFixture } from '../../src/registry/sandbox.js';
import { SANDBOX_TOKEN_RECORD } from '../../src/registry/tokens.js';
import { simulateMinute, startSandboxWorker } from '../../workers/sandbox/processor.js';
import { baseFixture, berlaAssignments, legacyFixture, TOKENS } from '../helpers/fixtures.js';
import { freshDatabase, get, startTestPlatform, type TestPlatform } from '../helpers/platform.js';
import { until } from '../helpers/wait.js';
import { WsClient } from '../helpers/ws.js';

t.test('export-v1-records', async (t) => {
  /**
   * Export v1.1 and v1 station records: the list (not paginated) and one record, both conditional,
   * events and photos; v1's frozen record in v1 codes; export v2's record a superset of v1.1's.
   */
  function fixture() {
    const f = legacyFixture();
    (f.stations[0] as Record<string, unknown>).details = { city: 'Berlin', coordinates: { lat: 52.36, lon: 13.5 }, vehicle_types: ['M1'], contact_phone_number: '+493012345678' };
    return f;
  }

  let shared: Promise<TestPlatform> | undefined;
  /**
   * One platform for the file: the tests only read records, and the one change (BERLA's name, in the
   * first) is to a field the others compare across generations rather than with the fixture. Stopped
   * when the file ends.
   */
  const platform = () => (shared ??= startTestPlatform(t, { fixture: fixture() }));

  const json = async (url: string, token: string = TOKENS.export_v1) => {
    const res = await get(url, token);
    return { res, body: (await res.json()) as any };
  };

  t.test('v1.1 records: AFIR details as given, fuel types with dispenser counts, photo links of v1.1', async (t) => {
    const p = await platform();
    const { res, body } = await json(`${p.url}/v1.1/hrs`);
    t.equal(res.status, 200);
    t.ok(res.headers.get('last-modified'), 'conditional: Last-Modified');
    t.same(body.map((r: { hrs_id: string }) => r.hrs_id), ['BERLA', 'HAMBG', 'TRUCK'], 'every station, sorted, not paginated');
    const berla = body[0];
    t.same(Object.keys(berla), ['hrs_id', 'name', 'operator', 'heavy_duty', 'opening_hours', 'city', 'coordinates', 'vehicle_types', 'contact_phone_number', 'fuel_types', 'photo_url']);
    t.same(berla.fuel_types, [{ fuel_type: '700ld', dispensers: 1 }, { fuel_type: '350ld', dispensers: 1 }]);
    t.same(body[2].fuel_types, [{ fuel_type: '700ld', dispensers: 1 }, { fuel_type: '700hd', dispensers: 1 }, { fuel_type: '350hd', dispensers: 1 }]);
    t.same(body[1].fuel_types, [], 'no confirmed layout and no v1 fuel types: none');
    const one = await json(`${p.url}/v1.1/hrs/BERLA`);
    t.same(one.body, berla, 'one record is the list\'s');
    const since = one.res.headers.get('last-modified')!;
    t.equal((await get(`${p.url}/v1.1/hrs/BERLA`, TOKENS.export_v1, { headers: { 'If-Modified-Since': since } })).status, 304);
    t.equal((await get(`${p.url}/v1.1/hrs`, TOKENS.export_v1, { headers: { 'If-Modified-Since': res.headers.get('last-modified')! } })).status, 304);
    const events = await json(`${p.url}/v1.1/hrs/BERLA/events`);
    t.match(events.body, [{ id: 'ev-1', kind: 'maintenance' }]);
    t.equal((await get(`${p.url}/v1.1/hrs/BERLA/photo`, TOKENS.export_v1)).status, 404, 'no photo');
    t.equal((await get(`${p.url}/v1.1/hrs/NOPEE`, TOKENS.export_v1)).status, 404);
    t.equal((await get(`${p.url}/v1.1/hrs`, TOKENS.export_v2)).status, 401, 'personal tokens are refused');

    // The registry changes a second later: the record and its Last-Modified (whole seconds) follow.
    p.clock.advance(1000);
    const f = fixture();
    (f.stations[0] as Record<string, unknown>).name = 'Berlin Airport North';
    await p.load(f);
    const changed = await get(`${p.url}/v1.1/hrs/BERLA`, TOKENS.export_v1, { headers: { 'If-Modified-Since': since } });
    t.equal(changed.status, 200, 'modified since');
    t.equal(((await changed.json()) as { name: string }).name, 'Berlin Airport North');
  });

  t.test('v1 records: the frozen contract, in v1 codes, without the AFIR details', async (t) => {
    const p = await platform();
    const { body } = await json(`${p.url}/v1/hrs`);
    t.same(Object.keys(body[0]), ['hrs_id', 'name', 'operator', 'heavy_duty', 'opening_hours', 'fuel_types', 'photo_url']);
    t.same(body[0].fuel_types, [{ fuel_type: '700car', dispensers: 1 }, { fuel_type: '350car', dispensers: 1 }]);
    t.same(body[2].fuel_types, [{ fuel_type: '700car', dispensers: 1 }, { fuel_type: '350bus', dispensers: 1 }], '700hd has no v1 code');
  });

  t.test('export v2 stays a superset of the v1.1 record, key by key', async (t) => {
    const p = await platform();
    for (const hrsId of ['BERLA', 'HAMBG', 'TRUCK']) {
      const v11 = (await json(`${p.url}/v1.1/hrs/${hrsId}`)).body as Record<string, unknown>;
      const v2 = (await json(`${p.url}/v2/hrs/${hrsId}`, TOKENS.export_v2)).body as Record<string, unknown>;
      for (const [key, value] of Object.entries(v11)) {
        t.ok(key in v2, `${hrsId}: v2 has ${key}`);
        if (key === 'photo_url') continue; // each generation links its own path
        t.same(v2[key], value, `${hrsId}: ${key} is the same`);
      }
    }
  });
});

t.test('export-v1-status', async (t) => {
  /**
   * Export v1.1 and v1: the five-state summary per fuelling option over HTTP, from v1, v1.1 and v2
   * readings, with the opening hours, the 30-minute fallback, the filter and the tokens.
   */
  const ago = (seconds: number) => new Date(Date.now() - seconds * 1000).toISOString();

  /** Opening hours that are closed now: one hour, twelve hours from now (UTC). */
  function closedNow(): string {
    const hour = (new Date().getUTCHours() + 12) % 24;
    const two = (n: number) => String(n).padStart(2, '0');
    return `Mo-Su ${two(hour)}:00-${two(hour)}:59`;
  }

  /** BERLA (700ld, 350ld) and TRUCK (700ld, 700hd, 350hd) live on v1; HAMBG provides nothing; CLOSD is closed now. */
  function fixture() {
    const f = legacyFixture();
    f.stations.push({ hrs_id: 'CLOSD', operator: 'h2-demo', name: 'Closed Now', opening_hours: closedNow(), time_zone: 'UTC', v1_fuel_types: ['700car'] } as Record<string, unknown>);
    f.assignments.push(
      { originator: 'mon-1', hrs_id: 'BERLA', signal_type: 'v1', state: 'live' },
      { originator: 'mon-1', hrs_id: 'TRUCK', signal_type: 'v1', state: 'live' },
      { originator: 'mon-1', hrs_id: 'CLOSD', signal_type: 'v1', state: 'live' },
    );
    return f;
  }

  const post = (p: TestPlatform, body: unknown) =>
    fetch(`${p.url}/import/v1.1/hrs-availability`, {
      method: 'POST',
      body: JSON.stringify(body),
      headers: { Authorization: `Bearer ${TOKENS.import_v1}`, 'Content-Type': 'application/json' },
    });

  const summary = async (p: TestPlatform, path: string, token: string = TOKENS.export_v1) => {
    const res = await get(`${p.url}${path}`, token);
    return { status: res.status, body: (await res.json()) as any };
  };

  t.test('every station and option, UNKNOWN without a signal; then each rule of the table', async (t) => {
    const p = await startTestPlatform(t, { fixture: fixture() });
    let res = await summary(p, '/v1.1/hrs/status');
    t.equal(res.status, 200);
    t.same(res.body.map((s: { hrs_id: string }) => s.hrs_id), ['BERLA', 'CLOSD', 'HAMBG', 'TRUCK'], 'every station, sorted');
    t.same(res.body.find((s: { hrs_id: string }) => s.hrs_id === 'TRUCK').fuelling_options, [
      { fuel_type: '700ld', status: 'UNKNOWN', reason: 'no_signal', datetime: null },
      { fuel_type: '700hd', status: 'UNKNOWN', reason: 'no_signal', datetime: null },
      { fuel_type: '350hd', status: 'UNKNOWN', reason: 'no_signal', datetime: null },
    ], 'one entry per option the station provides, in the fuel-type list order');
    t.same(res.body.find((s: { hrs_id: string }) => s.hrs_id === 'HAMBG').fuelling_options, [], 'a station that provides no option');
    t.match(res.body.find((s: { hrs_id: string }) => s.hrs_id === 'CLOSD').fuelling_options, [{ fuel_type: '700ld', status: 'CLOSED', reason: 'outside_opening_hours' }], 'closed: CLOSED before anything else');

    const datetime = ago(5);
    t.equal((await post(p, [{ hrs: 'TRUCK', datetime, maintenance: false, limitedly_available: false, dispensers: [{ fuel_type: '700ld', available: true }, { fuel_type: '350hd', available: false }] }])).status, 204);
    res = await until('the summary after the signal', async () => {
      const r = await summary(p, '/v1.1/hrs/TRUCK/status');
      return r.body.fuelling_options[0].status === 'UNKNOWN' ? undefined : r;
    });
    t.same(res.body, {
      hrs_id: 'TRUCK',
      fuelling_options: [
        { fuel_type: '700ld', status: 'AVAILABLE', reason: 'reported_available', datetime: new Date(datetime).toISOString() },
        { fuel_type: '700hd', status: 'UNKNOWN', reason: 'not_reported', datetime: new Date(datetime).toISOString() },
        { fuel_type: '350hd', status: 'UNAVAILABLE', reason: 'reported_unavailable', datetime: new Date(datetime).toISOString() },
      ],
    });

    t.equal((await post(p, [{ hrs: 'TRUCK', datetime: ago(4), maintenance: false, limitedly_available: true, dispensers: [{ fuel_type: '700ld', available: true }] }])).status, 204);
    res = await until('limited', async () => {
      const r = await summary(p, '/v1.1/hrs/TRUCK/status');
      return r.body.fuelling_options[0].status === 'LIMITEDLY_AVAILABLE' ? r : undefined;
    });
    t.ok(res.body.fuelling_options.every((o: { status: string; reason: string }) => o.status === 'LIMITEDLY_AVAILABLE' && o.reason === 'limited'), 'limited applies to every option');
    t.equal((await post(p, [{ hrs: 'TRUCK', datetime: ago(3), maintenance: true, limitedly_available: true, dispensers: [{ fuel_type: '700ld', available: true }] }])).status, 204);
    res = await until('maintenance', async () => {
      const r = await summary(p, '/v1.1/hrs/TRUCK/status');
      return r.body.fuelling_options[0].reason === 'maintenance' ? r : undefined;
    });
    t.ok(res.body.fuelling_options.every((o: { status: string }) => o.status === 'UNAVAILABLE'), 'maintenance wins over limited');

    // An import v2 reading: an option is available when any nozzle offering it is.
    const v2 = await fetch(`${p.url}/import/v2/signal/availability/`, {
      method: 'POST',
      body: JSON.stringify([{ hrs: 'BERLA', datetime: ago(2), nozzles: [{ id: 'N1', available: true }, { id: 'N2', available: false }], station: { maintenance: false, limitedly_available: false } }]),
      headers: { Authorization: `Bearer ${TOKENS.import_v2}`, 'Content-Type': 'application/json' },
    });
    t.equal(v2.status, 204);
    res = await until('the v2 reading', async () => {
      const r = await summary(p, '/v1.1/hrs/BERLA/status');
      return r.body.fuelling_options[0].status === 'UNKNOWN' ? undefined : r;
    });
    t.match(res.body.fuelling_options, [
      { fuel_type: '700ld', status: 'AVAILABLE', reason: 'reported_available' },
      { fuel_type: '350ld', status: 'UNAVAILABLE', reason: 'reported_unavailable' },
    ], 'from a v2 reading through the layout');
  });

  t.test('the filter, the v1 vocabulary, tokens', async (t) => {
    const p = await startTestPlatform(t, { fixture: fixture() });
    let res = await summary(p, '/v1.1/hrs/status?fuelling_option=700hd');
    t.same(res.body.map((s: { hrs_id: string }) => s.hrs_id), ['TRUCK'], 'stations without the option are left out');
    t.same(res.body[0].fuelling_options.map((o: { fuel_type: string }) => o.fuel_type), ['700hd']);
    res = await summary(p, '/v1.1/hrs/BERLA/status?fuelling_option=350ld');
    t.same(res.body.fuelling_options.map((o: { fuel_type: string }) => o.fuel_type), ['350ld']);
    res = await summary(p, '/v1.1/hrs/status?fuelling_option=700car');
    t.equal(res.status, 400);
    t.match(res.body, { detail: 'fuelling_option: must be one of 700ld, 350ld, 700hd, 350hd (got "700car").' }, 'an unknown code names the allowed ones');

    res = await summary(p, '/v1/hrs/TRUCK/status');
    t.same(res.body.fuelling_options.map((o: { fuel_type: string }) => o.fuel_type), ['700car', '350bus'], 'v1 codes; 700hd has none and is left out');
    res = await summary(p, '/v1/hrs/status?fuelling_option=350car');
    t.same(res.body.map((s: { hrs_id: string }) => s.hrs_id), ['BERLA']);
    t.equal((await summary(p, '/v1/hrs/status?fuelling_option=700hd')).status, 400, 'no 700hd on v1');
    t.equal((await summary(p, '/v1.1/hrs/NOPEE/status')).status, 404);

    for (const token of [TOKENS.export_v2, TOKENS.import_v1, TOKENS.import_v2]) {
      t.equal((await summary(p, '/v1.1/hrs/status', token)).status, 401, 'only export v1/v1.1 tokens');
    }
  });

  t.test('the 30-minute fallback: a silent station turns UNKNOWN', async (t) => {
    const p = await startTestPlatform(t, { fixture: fixture(), env: { STATUS_STALE_AFTER: '1', STATUS_UNKNOWN_AFTER: '2' } });
    t.equal((await post(p, [{ hrs: 'BERLA', datetime: ago(0), maintenance: true, limitedly_available: false, dispensers: [] }])).status, 204);
    await until('maintenance', async () => ((await summary(p, '/v1.1/hrs/BERLA/status')).body.fuelling_options[0].reason === 'maintenance' ? true : undefined));
    const res = await until('the fallback', async () => {
      const r = await summary(p, '/v1.1/hrs/BERLA/status');
      return r.body.fuelling_options[0].reason === 'no_signal' ? r : undefined;
    }, 10_000);
    t.match(res.body.fuelling_options, [{ status: 'UNKNOWN', reason: 'no_signal' }, { status: 'UNKNOWN', reason: 'no_signal' }], 'a silent station in maintenance is UNKNOWN');
  });
});

t.test('sandbox', async (t) => {
  /**
   * The export v1.1 sandbox: the shared token (v1.1 only, 401 elsewhere saying so), the sample stations
   * with their simulated signals (pure scenarios, the minute's job, the BullMQ schedule), isolation both
   * ways on every export path and the status stream, the reserved names, the legacy export rate limits,
   * and SANDBOX=off.
   */
  const SANDBOX_IDS = SANDBOX_STATIONS.map((s) => s.hrs_id).sort();
  const station = (id: string) => SANDBOX_STATIONS.find((s) => s.hrs_id === id)!;
  const MINUTE = 60_000;
  /** A Wednesday, 12:00 UTC, at the start of an hour and of a 90-minute cycle (minute count divisible by 90). */
  const NOON = Date.UTC(2026, 10, 25, 12, 0);
  const hourStart = Math.floor(NOON / (90 * 60 * MINUTE)) * 90 * 60 * MINUTE;

  t.test('scenarios: each sample station sends what its scenario says, the same for the same minute', async (t) => {
    const at = (minutes: number) => new Date(hourStart + minutes * MINUTE + 17_000);
    const values = (r: ReturnType<typeof simulatedReading>) => r?.payload.fuelling_options.map((o) => o.available);

    const steady = simulatedReading(station('SBXBE'), at(0))!;
    t.same(steady.measuredAt, new Date(hourStart), 'measured at the start of its minute');
    t.same(steady.payload, {
      station: { maintenance: false, limitedly_available: false },
      fuelling_options: [{ fuelling_option: '700ld', available: true }, { fuelling_option: '350ld', available: true }],
      source: 'sandbox',
    }, 'v1.1 reading form: station flags and every provided option');
    t.same(simulatedReading(station('SBXBE'), at(0)), steady, 'a pure function of the station and the minute');

    // maintenance: minutes 0-19 of the hour; limited: 30-44.
    const hourOffset = (hourStart / MINUTE) % 60;
    const ofHour = (m: number) => at(m - hourOffset + (hourOffset > 0 ? 60 : 0));
    t.equal(simulatedReading(station('SBXVI'), ofHour(5))!.payload.station.maintenance, true, 'maintenance in the first 20 minutes');
    t.equal(simulatedReading(station('SBXVI'), ofHour(20))!.payload.station.maintenance, false, 'not from minute 20');
    t.equal(simulatedReading(station('SBXZH'), ofHour(29))!.payload.station.limitedly_available, false);
    t.equal(simulatedReading(station('SBXZH'), ofHour(30))!.payload.station.limitedly_available, true, 'limited from minute 30');
    t.equal(simulatedReading(station('SBXZH'), ofHour(45))!.payload.station.limitedly_available, false, 'to minute 44');

    t.not(simulatedReading(station('SBXCP'), at(39)), null, 'flaky: reports for 40 minutes');
    t.equal(simulatedReading(station('SBXCP'), at(40)), null, 'then falls silent');
    t.equal(simulatedReading(station('SBXCP'), at(89)), null, 'for 50 minutes');
    t.not(simulatedReading(station('SBXCP'), at(90)), null, 'and starts again');

    t.same(values(simulatedReading(station('SBXHH'), at(3))), [true, null, true], 'partial: 700hd never reported');
    t.equal(simulatedReading(station('SBXLI'), at(3)), null, 'silent: never anything');

    const busy = Array.from({ length: 600 }, (_, m) => values(simulatedReading(station('SBXMU'), at(m)))!.join());
    t.ok(busy.some((v) => v.includes('false')) && busy.some((v) => v === 'true,true'), 'busy: options go unavailable and come back');
    for (let m = 0; m < 600; m += 10) t.equal(new Set(busy.slice(m, m + 10)).size, 1, `busy: stretches of ten minutes (${m})`) || t.end();

    t.same(simulatedReadings(at(50)).map((r) => r.hrsId), ['SBXBE', 'SBXPA', 'SBXHH', 'SBXMU', 'SBXVI', 'SBXZH'], 'the minute of all: silent ones left out');
  });

  /**
   * The claim of the sample set: every state and reason of the summary is seen within 90 minutes (with
   * the 30-minute fallback and the opening hours as the service applies them), CLOSED at night.
   */
  t.test('sample set: every reason of the summary occurs within an hour and a half, CLOSED outside the hours', async (t) => {
    const seen = new Set<SummaryReason>();
    const reasonsAt = (s: SandboxStation, now: number, open: boolean) => {
      // The newest reading within the last 90 minutes, fresh when under 30 minutes old.
      let reading: ReturnType<typeof simulatedReading> = null;
      for (let m = 0; m <= 90 && reading === null; m++) reading = simulatedReading(s, new Date(now - m * MINUTE));
      const fresh = reading !== null && now - reading.measuredAt.getTime() < 30 * MINUTE;
      const options = [...s.options] as FuellingOption[];
      return summarize({
        options,
        reading: reading === null ? null : { datetime: reading.measuredAt.getTime(), payload: reading.payload } as never,
        fresh,
        open,
        layout: null,
      }).map((e) => e.reason);
    };
    for (let m = 0; m < 90; m++) {
      for (const s of SANDBOX_STATIONS) for (const reason of reasonsAt(s, hourStart + m * MINUTE, true)) seen.add(reason);
    }
    t.same([...seen].sort(), ['limited', 'maintenance', 'no_signal', 'not_reported', 'reported_available', 'reported_unavailable'], 'every reason but closed, from the signals');
    const sundayNight = new Date(Date.UTC(2026, 10, 29, 23, 30));
    t.equal(isOpen(station('SBXPA').opening_hours, 'Europe/Paris', sundayNight, 'fr'), false, 'SBXPA is closed on Sunday night: CLOSED');
    t.equal(isOpen(station('SBXVI').opening_hours, 'Europe/Vienna', sundayNight, 'at'), false, 'SBXVI is closed at night');
    t.equal(isOpen(station('SBXBE').opening_hours, 'Europe/Berlin', sundayNight, 'de'), true, 'SBXBE is open around the clock');
  });

  t.test('the sandbox token: export v1.1 only; 401 elsewhere, saying so', async (t) => {
    const now = Date.now();
    const on = (label: string, accepts: 'export_v1' | 'export_v2' | 'import_v2', sandbox?: boolean) => decideToken(SANDBOX_TOKEN_RECORD, { label, accepts, sandbox }, now);
    t.match(on('export v1.1', 'export_v1', true), { ok: true, principal: { kind: 'sandbox' } });
    t.same(on('export v2', 'export_v2'), { ok: false, reason: TOKEN_MESSAGES.sandboxOnV2 });
    t.match(on('export v1', 'export_v1'), { ok: false, reason: /works on the export v1\.1 sandbox \(\/v1\.1\/\) only\. Export v1 has no sandbox\./ });
    t.match(on('import v2', 'import_v2'), { ok: false, reason: /Import v2 accepts an import v2 token only\./ });
  });

  t.test('a registry file cannot name what belongs to the sandbox', async (t) => {
    const { sql } = await freshDatabase(t);
    const f = baseFixture();
    f.stations.push({ hrs_id: 'SBXQQ', operator: 'h2-demo', name: 'Not mine' } as never);
    f.assignments.push({ originator: 'mon-1', hrs_id: 'SBXBE', signal_type: 'availability', state: 'live' } as never);
    f.operators.push({ id: 'sandbox', name: 'Me', email: null } as never);
    await t.rejects(loadFixture(sql, f, { baseDir: '.' }), {
      code: 'FIXTURE_INVALID',
      problems: [
        'operators[1].id: "sandbox" is the export v1.1 sandbox\'s operator and cannot be named in a registry file',
        'stations[2].hrs_id: "SBXQQ": station ids starting with SBX are reserved for the export v1.1 sandbox\'s sample stations',
        `assignments[${f.assignments.length - 1}].hrs_id: "SBXBE": station ids starting with SBX are reserved for the export v1.1 sandbox's sample stations`,
      ],
    });
    const [{ count }] = (await sql<{ count: number }[]>`SELECT count(*)::int AS count FROM stations`) as unknown as [{ count: number }];
    t.equal(count, 0, 'nothing was loaded');

    // A station written before the names were reserved is never overwritten by the sandbox.
    await sql`INSERT INTO operators (id, name) VALUES ('old', 'Old')`;
    await sql`INSERT INTO stations (hrs_id, operator_id, name, heavy_duty) VALUES ('SBXBE', 'old', 'Old station', false)`;
    await t.rejects(installSandbox(sql), { code: 'SANDBOX_CLASH', message: /station SBXBE\): rename it, or set SANDBOX=off/ });
    const [row] = await sql<{ name: string; sandbox: boolean }[]>`SELECT name, sandbox FROM stations WHERE hrs_id = 'SBXBE'`;
    t.same(row, { name: 'Old station', sandbox: false }, 'left as it was');
  });

  t.test('the sandbox fixture loads through the same loader, and loading it again changes nothing', async (t) => {
    const { sql } = await freshDatabase(t);
    const now = new Date();
    const first = await installSandbox(sql, now);
    t.same(first.changedStations, SANDBOX_IDS);
    const again = await installSandbox(sql, now);
    t.same(again.changedStations, [], 'idempotent');
    const rows = await sql<{ hrs_id: string; sandbox: boolean; time_zone: string }[]>`SELECT hrs_id, sandbox, time_zone FROM stations ORDER BY hrs_id`;
    t.ok(rows.every((r) => r.sandbox), 'every sample station is flagged');
    t.same(rows.find((r) => r.hrs_id === 'SBXLI')?.time_zone, 'Europe/Lisbon', 'time zones found at the coordinates');
    t.equal(sandboxFixture().stations.length, SANDBOX_STATIONS.length);
  });

  /** The standard registry (production) with the export tokens; the sandbox on. */
  async function platform(t: Test, env: Record<string, string> = {}): Promise<TestPlatform> {
    const f = baseFixture();
    f.assignments = berlaAssignments();
    return startTestPlatform(t, { fixture: f, env: { SANDBOX: 'on', EXPORT_V2_RATE_LIMIT_MINUTE: '100000', SANDBOX_RATE_LIMIT: '100000', ...env } });
  }

  const json = async (p: TestPlatform, path: string, token: string) => {
    const res = await get(`${p.url}${path}`, token);
    return { status: res.status, body: (await res.json().catch(() => null)) as any, headers: res.headers };
  };
  const ids = (list: { hrs_id: string }[]) => list.map((s) => s.hrs_id);

  t.test('isolation: the sandbox token sees the sample stations only, production tokens never see them', async (t) => {
    const p = await platform(t);
    await simulateMinute({ sql: p.sql, bus: p.parts.bus }, new Date());
    await until('the simulated readings applied', async () => {
      const r = await json(p, '/v1.1/hrs/SBXBE/status', SANDBOX_TOKEN);
      return r.body?.fuelling_options?.[0]?.datetime ? r : undefined;
    });

    // The sandbox token on export v1.1.
    let r = await json(p, '/v1.1/hrs', SANDBOX_TOKEN);
    t.equal(r.status, 200);
    t.same(ids(r.body), SANDBOX_IDS, '/v1.1/hrs: the sample stations only');
    const record = r.body.find((s: { hrs_id: string }) => s.hrs_id === 'SBXHH');
    t.match(record, {
      operator: { id: 'sandbox' },
      heavy_duty: true,
      nuts_region: 'DE0',
      contact_phone_number: '+4930901820',
      cumulative_daily_hydrogen_capacity: 1000,
      fuel_types: [{ fuel_type: '700ld', dispensers: 2 }, { fuel_type: '700hd', dispensers: 2 }, { fuel_type: '350hd', dispensers: 2 }],
    }, 'the complete AFIR record');
    r = await json(p, '/v1.1/hrs/status', SANDBOX_TOKEN);
    t.same(ids(r.body), SANDBOX_IDS, '/v1.1/hrs/status: the sample stations only');
    t.match(r.body.find((s: { hrs_id: string }) => s.hrs_id === 'SBXBE').fuelling_options, [{ fuel_type: '700ld', status: 'AVAILABLE', reason: 'reported_available' }, { fuel_type: '350ld', status: 'AVAILABLE' }], 'the simulated reading summarised');
    t.match(r.body.find((s: { hrs_id: string }) => s.hrs_id === 'SBXLI').fuelling_options, [{ status: 'UNKNOWN', reason: 'no_signal', datetime: null }], 'the silent one');
    t.match(r.body.find((s: { hrs_id: string }) => s.hrs_id === 'SBXHH').fuelling_options[1], { fuel_type: '700hd', status: 'UNKNOWN', reason: 'not_reported' });
    r = await json(p, '/v1.1/hrs/status?fuelling_option=350hd', SANDBOX_TOKEN);
    t.same(ids(r.body), ['SBXHH', 'SBXZH'], 'the filter within the sandbox');
    t.equal((await json(p, '/v1.1/hrs/SBXHH/events', SANDBOX_TOKEN)).body.length, 1, 'events');
    const photo = await get(`${p.url}/v1.1/hrs/SBXBE/photo`, SANDBOX_TOKEN);
    t.equal(photo.headers.get('content-type'), 'image/png', 'photo');
    for (const path of ['/v1.1/hrs/BERLA', '/v1.1/hrs/BERLA/status', '/v1.1/hrs/BERLA/events', '/v1.1/hrs/BERLA/photo']) {
      const res = await json(p, path, SANDBOX_TOKEN);
      t.same([res.status, res.body?.detail], [404, 'No station with hrs_id "BERLA".'], `the sandbox token: ${path} is 404`);
    }
    t.equal((await json(p, '/v1.1/fuel-type', SANDBOX_TOKEN)).status, 200, 'the reference lists');

    // Production tokens: export v1.1, v1, v2.
    r = await json(p, '/v1.1/hrs', TOKENS.export_v1);
    t.same(ids(r.body), ['BERLA', 'HAMBG'], 'production /v1.1/hrs: no sample station');
    t.same(ids((await json(p, '/v1.1/hrs/status', TOKENS.export_v1)).body), ['BERLA', 'HAMBG']);
    t.same(ids((await json(p, '/v1/hrs', TOKENS.export_v1)).body), ['BERLA', 'HAMBG']);
    t.same(ids((await json(p, '/v1/hrs/status', TOKENS.export_v1)).body), ['BERLA', 'HAMBG']);
    r = await json(p, '/v2/hrs', TOKENS.export_v2);
    t.same([r.body.count, ids(r.body.results)], [2, ['BERLA', 'HAMBG']], 'v2 list and count');
    t.same(ids((await json(p, '/v2/hrs/status', TOKENS.export_v2)).body.stations), ['BERLA', 'HAMBG'], 'v2 status list');
    for (const [path, token] of [
      ['/v1.1/hrs/SBXBE', TOKENS.export_v1],
      ['/v1.1/hrs/SBXBE/status', TOKENS.export_v1],
      ['/v1.1/hrs/SBXBE/events', TOKENS.export_v1],
      ['/v1.1/hrs/SBXBE/photo', TOKENS.export_v1],
      ['/v1/hrs/SBXBE', TOKENS.export_v1],
      ['/v1/hrs/SBXBE/status', TOKENS.export_v1],
      ['/v2/hrs/SBXBE', TOKENS.export_v2],
      ['/v2/hrs/SBXBE/status', TOKENS.export_v2],
      ['/v2/hrs/SBXBE/events', TOKENS.export_v2],
      ['/v2/hrs/SBXBE/photo', TOKENS.export_v2],
    ] as const) {
      t.equal((await json(p, path, token)).status, 404, `production: ${path} is 404`);
    }

    // The sandbox token elsewhere.
    r = await json(p, '/v2/hrs', SANDBOX_TOKEN);
    t.same([r.status, r.body.detail], [401, TOKEN_MESSAGES.sandboxOnV2], 'v2: 401 saying the sandbox is v1.1');
    r = await json(p, '/v1/hrs', SANDBOX_TOKEN);
    t.same([r.status, r.body.detail], [401, `${TOKEN_MESSAGES.sandboxElsewhere} Export v1 has no sandbox.`], 'v1: 401');
    const imported = await fetch(`${p.url}/import/v1.1/hrs-availability`, { method: 'POST', body: '[]', headers: { Authorization: `Bearer ${SANDBOX_TOKEN}`, 'Content-Type': 'application/json' } });
    t.equal(imported.status, 401, 'import: 401');
  });

  t.test('the status stream never carries a sample station', async (t) => {
    const p = await platform(t);
    const ws = await WsClient.connect(`${p.url.replace('http:', 'ws:')}/v2/hrs/status/stream`, { Authorization: `Bearer ${TOKENS.export_v2}` });
    t.teardown(() => ws.close());
    await ws.nextOf('authenticated');
    ws.send({ type: 'subscribe', hrs_ids: ['SBXBE'] });
    t.match(await ws.next(), { type: 'error', code: 'unknown_station', hrs_ids: ['SBXBE'] }, 'a sample station is unknown to export v2');
    ws.send({ type: 'subscribe', hrs_ids: '*' });
    await ws.nextOf('subscribed');
    const snapshot = await ws.nextOf('snapshot');
    t.same(ids(snapshot.stations), ['BERLA', 'HAMBG'], 'the snapshot of all: production only');
    await simulateMinute({ sql: p.sql, bus: p.parts.bus }, new Date());
    // Then a production change: whatever arrives before it would have been a sample station's.
    const res = await fetch(`${p.url}/import/v2/signal/availability/`, {
      method: 'POST',
      body: JSON.stringify([{
        hrs: 'BERLA',
        datetime: new Date(Date.now() - 2000).toISOString(),
        nozzles: [{ id: 'N1', available: true }, { id: 'N2', available: false }],
        station: { maintenance: false, limitedly_available: false },
      }]),
      headers: { Authorization: `Bearer ${TOKENS.import_v2}`, 'Content-Type': 'application/json' },
    });
    t.equal(res.status, 204, await res.text());
    const next = await ws.next();
    t.match(next, { type: 'status', station: { hrs_id: 'BERLA' } }, 'the next message is the production change');
  });

  t.test('rate limits: per token on export v1 and v1.1 together, per client address on the sandbox token', async (t) => {
    const p = await platform(t, { EXPORT_V1_RATE_LIMIT: '3', SANDBOX_RATE_LIMIT: '2' });
    const statuses = async (token: string, paths: string[]) => {
      const out = [];
      for (const path of paths) out.push((await get(`${p.url}${path}`, token)).status);
      return out;
    };
    t.same(await statuses(TOKENS.export_v1, ['/v1/fuel-type', '/v1.1/fuel-type', '/v1.1/hrs/status']), [200, 200, 200]);
    const refused = await json(p, '/v1/hrs/status', TOKENS.export_v1);
    t.equal(refused.status, 429, 'the fourth request of the minute, v1 and v1.1 counted together');
    t.ok(Number(refused.headers.get('retry-after')) > 0, 'Retry-After');
    t.match(refused.body, { status: 429, detail: /at most 3 requests per minute per token/ }, 'a problem body naming the limit');
    const first = await get(`${p.url}/v1.1/fuel-type`, SANDBOX_TOKEN);
    t.same([first.status, first.headers.get('ratelimit-limit'), first.headers.get('ratelimit-remaining')], [200, '2', '1'], 'the sandbox has its own budget');
    t.equal((await get(`${p.url}/v1.1/fuel-type`, SANDBOX_TOKEN)).status, 200);
    const sandboxRefused = await json(p, '/v1.1/hrs', SANDBOX_TOKEN);
    t.equal(sandboxRefused.status, 429);
    t.match(sandboxRefused.body.detail, /at most 2 requests per minute per client address on the shared sandbox token/);
  });

  t.test('the scheduled simulation: the worker sends a minute of readings as soon as the sandbox is on', async (t) => {
    const p = await platform(t);
    const worker = startSandboxWorker({ sql: p.sql, bus: p.parts.bus, redis: p.parts.redis, redisPrefix: p.parts.config.redisPrefix, log: createLogger('silent') });
    t.teardown(() => worker.close());
    const summary = await until('the first scheduled readings', async () => {
      const r = await json(p, '/v1.1/hrs/SBXBE/status', SANDBOX_TOKEN);
      return r.body.fuelling_options[0].datetime === null ? undefined : r.body;
    }, 15_000);
    t.match(summary.fuelling_options[0], { status: 'AVAILABLE', reason: 'reported_available' });
    const [{ count }] = (await p.sql<{ count: number }[]>`SELECT count(*)::int AS count FROM published_signals WHERE originator_id = 'sandbox-simulator'`) as unknown as [{ count: number }];
    t.ok(count >= 5, 'stored as live readings of the simulator');
  });

  t.test('SANDBOX=off: the sample stations and their signals are removed, the token is unknown', async (t) => {
    const on = await platform(t);
    await simulateMinute({ sql: on.sql, bus: on.parts.bus }, new Date());
    await on.stop('restart with the sandbox off');
    const off = await startTestPlatform(t, { sameStoreAs: on, overrides: { sandbox: false } });
    const url = off.url;
    const res = await get(`${url}/v1.1/hrs`, SANDBOX_TOKEN);
    t.same([res.status, ((await res.json()) as { detail: string }).detail], [401, 'Invalid token.'], 'the token is unknown');
    const rows = await off.sql<{ n: number }[]>`SELECT (SELECT count(*) FROM stations WHERE sandbox)::int + (SELECT count(*) FROM published_signals WHERE hrs_id LIKE 'SBX%')::int AS n`;
    t.equal(rows[0]!.n, 0, 'no sample station, no simulated signal left');
    const prod = await get(`${url}/v1.1/hrs`, TOKENS.export_v1);
    t.same(ids((await prod.json()) as { hrs_id: string }[]), ['BERLA', 'HAMBG'], 'production untouched');
  });
});
