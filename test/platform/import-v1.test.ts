/**
 * Import v1 and v1.1 over HTTP.
 *
 * One file, one process: its parts share the loaded platform code. Each part is a subtest named after
 * what it covers.
 */
import fc from 'fast-check';
import t from 'tap';
import { startCallLogWorker } from '../../workers/call-log/processor.js';
import { baseFixture, berlaAssignments, legacyFixture, TOKENS } from '../helpers/fixtures.js';
import { ADMIN_TOKEN, get, startTestPlatform, type TestPlatform } from '../helpers/platform.js';
import { runs } from '../helpers/scale.js';
import { until } from '../helpers/wait.js';
import { WsClient } from '../helpers/ws.js';

t.test('import-v1', async (t) => {
  /**
   * The legacy import over HTTP: `POST /import/v1/hrs-availability` and `/import/v1.1/hrs-availability`,
   * partial acceptance, per-option signals that become unknown when omitted, Live/Testing/Inactive
   * routing, one published availability picture per station whichever generation sent it.
   */
  const ago = (seconds: number) => new Date(Date.now() - seconds * 1000).toISOString();

  /**
   * BERLA (700ld, 350ld; v1 700car, 350car) with mon-1 live on v1 and on v2 availability; TRUCK, heavy
   * duty (700ld, 700hd, 350hd; v1 700car, 350bus), mon-1 testing on v1; HAMBG inactive on v1.
   */
  function fixture() {
    const f = legacyFixture();
    f.assignments.push(
      { originator: 'mon-1', hrs_id: 'BERLA', signal_type: 'v1', state: 'live' },
      { originator: 'mon-1', hrs_id: 'TRUCK', signal_type: 'v1', state: 'testing' },
      { originator: 'mon-1', hrs_id: 'HAMBG', signal_type: 'v1', state: 'inactive' },
    );
    return f;
  }

  function poster(p: TestPlatform, version: 'v1' | 'v1.1') {
    return (body: unknown, token: string = TOKENS.import_v1, headers: Record<string, string> = { 'Content-Type': 'application/json' }) =>
      fetch(`${p.url}/import/${version}/hrs-availability`, {
        method: 'POST',
        body: typeof body === 'string' ? body : JSON.stringify(body),
        headers: { Authorization: `Bearer ${token}`, ...headers },
      });
  }

  const v1Signal = (extra: Record<string, unknown> = {}) => ({
    hrs: 'BERLA',
    datetime: ago(5),
    dispensers: [
      { fuel_type: '700car', available: true },
      { fuel_type: '350car', available: false },
    ],
    maintenance: false,
    limitedly_available: false,
    ...extra,
  });

  async function rows(p: TestPlatform) {
    const [latest, published, history] = await Promise.all([
      p.sql<{ hrs_id: string; assignment_state: string; transmission_id: string | null; payload: Record<string, unknown> }[]>`
      SELECT hrs_id, assignment_state, transmission_id, payload FROM signal_latest ORDER BY hrs_id`,
      p.sql<{ hrs_id: string; category: string; transmission_id: string | null; payload: Record<string, unknown> }[]>`
      SELECT hrs_id, category, transmission_id, payload FROM published_signals ORDER BY hrs_id`,
      p.sql<{ transmission_id: string | null }[]>`SELECT transmission_id FROM signal_history ORDER BY id`,
    ]);
    return { latest, published, history };
  }

  async function availabilityOf(p: TestPlatform, hrsId: string) {
    const res = await get(`${p.url}/v2/hrs/${hrsId}/status`, TOKENS.export_v2);
    return ((await res.json()) as { availability: Record<string, unknown> | null }).availability;
  }

  /**
   * Tests whose every request is refused (nothing stored, nothing counted that another test reads) share
   * one platform, started once for them; each checks that nothing was stored.
   */
  t.test('refused requests', async (t) => {
    let p: TestPlatform;
    t.before(async () => {
      p = await startTestPlatform(t, { fixture: fixture() });
    });

    t.test('paths and tokens: no trailing slash, import v1/v1.1 tokens only, JSON required', async (t) => {
      for (const version of ['v1', 'v1.1'] as const) {
        const slashed = await fetch(`${p.url}/import/${version}/hrs-availability/`, { method: 'POST', body: '[]', headers: { Authorization: `Bearer ${TOKENS.import_v1}` } });
        t.equal(slashed.status, 404, `${version}: the slashed path is not found`);
        t.match(await slashed.json(), { detail: /hrs-availability/ }, 'with a hint');
        const post = poster(p, version);
        for (const token of [TOKENS.import_v2, TOKENS.export_v2, TOKENS.export_v1]) {
          const res = await post([v1Signal()], token);
          t.equal(res.status, 401, `${version}: another generation's token is refused`);
          t.match(await res.json(), { detail: new RegExp(`import ${version.replace('.', '\\.')}`) }, 'and the refusal says why');
        }
        const plain = await post([v1Signal()], TOKENS.import_v1, { 'Content-Type': 'text/plain' });
        t.equal(plain.status, 415, `${version}: Content-Type must be JSON`);
      }
      t.equal((await rows(p)).latest.length, 0, 'nothing processed');
    });

    t.test('rules: required booleans, the 5-minute and future messages, unknown stations, a non-list body', async (t) => {
      const post = poster(p, 'v1');
      const missing = v1Signal();
      delete (missing as Record<string, unknown>).maintenance;
      delete (missing as Record<string, unknown>).limitedly_available;
      let res = await post([missing, v1Signal({ datetime: ago(301) }), v1Signal({ datetime: new Date(Date.now() + 60_000).toISOString() }), v1Signal({ hrs: 'NOPEE' })]);
      t.equal(res.status, 400);
      t.same(await res.json(), [
        { maintenance: ['This field is required.'], limitedly_available: ['This field is required.'] },
        { datetime: ['The signal may not be older than 5 minutes.'] },
        { datetime: ['The signal may not be from the future.'] },
        { hrs: ['Unknown station identifier: NOPEE'] },
      ]);
      res = await post({ hrs: 'BERLA' });
      t.equal(res.status, 400);
      t.same(await res.json(), { non_field_errors: ['Expected a list of items but got type "dict".'] });
      t.equal((await rows(p)).latest.length, 0);
    });
  });

  t.test('v1: all valid is 204 after commit, published as availability with every option', async (t) => {
    const p = await startTestPlatform(t, { fixture: fixture() });
    const res = await poster(p, 'v1')([v1Signal({ transmission_id: 'v1-a', dispensers: [{ fuel_type: '700car', available: true }] })]);
    t.equal(res.status, 204);
    t.equal(await res.text(), '');
    const { published, history } = await rows(p);
    t.equal(published.length, 1);
    t.equal(published[0]!.category, 'availability');
    t.same(published[0]!.payload, {
      station: { maintenance: false, limitedly_available: false },
      fuelling_options: [
        { fuelling_option: '700ld', available: true },
        { fuelling_option: '350ld', available: null },
      ],
      source: 'import_v1',
    }, 'the omitted 350car is stored as unknown (null)');
    t.same(history.map((h) => h.transmission_id), ['v1-a']);
    const section = await until('the published section', () => availabilityOf(p, 'BERLA').then((a) => a ?? undefined));
    t.match(section, {
      station: { maintenance: false, limitedly_available: false },
      nozzles: [],
      fuelling_options: [
        { fuelling_option: '700ld', available: true },
        { fuelling_option: '350ld', available: null },
      ],
    }, 'export v2 shows the flags and the per-option picture, no per-nozzle one');
  });

  t.test('partial acceptance: a batch of 3 with the middle one bad stores two and answers an aligned 400', async (t) => {
    const p = await startTestPlatform(t, { fixture: fixture() });
    const res = await poster(p, 'v1')([
      v1Signal({ transmission_id: 'ok-1', datetime: ago(20) }),
      v1Signal({ transmission_id: 'bad', dispensers: [{ fuel_type: '700car', available: true }, { fuel_type: '700hd', available: true }] }),
      v1Signal({ transmission_id: 'ok-2', datetime: ago(10) }),
    ]);
    t.equal(res.status, 400);
    t.same(await res.json(), [{}, { dispensers: [{}, { fuel_type: ['Invalid fuelling option'] }] }, {}]);
    const { history } = await rows(p);
    t.same(history.map((h) => h.transmission_id), ['ok-1', 'ok-2'], 'both valid signals stored, in order');
    const metrics = await (await get(`${p.url}/metrics`, ADMIN_TOKEN)).text();
    t.match(metrics, /^hrs_import_v1_signals_total\{family="import_v1",outcome="accepted"\} 2$/m, 'counted: two accepted');
    t.match(metrics, /^hrs_import_v1_signals_total\{family="import_v1",outcome="rejected"\} 1$/m, 'and one rejected');
  });

  t.test('an option the station does not provide: that signal is refused, nothing of it stored; the others of the request are', async (t) => {
    const p = await startTestPlatform(t, { fixture: fixture() });
    // BERLA provides 700car and 350car; 350bus is a known v1 code it does not provide.
    const res = await poster(p, 'v1')([
      v1Signal({ transmission_id: 'lacking', maintenance: true, dispensers: [{ fuel_type: '700car', available: true }, { fuel_type: '350bus', available: true }] }),
      v1Signal({ transmission_id: 'whole', datetime: ago(10) }),
    ]);
    t.equal(res.status, 400);
    t.same(await res.json(), [
      { dispensers: [{}, { fuel_type: ['Fuelling option not provided by this station: 350bus'] }] },
      {},
    ], 'the spec\'s partial acceptance: errors for the refused signal, {} for the stored one');
    const { published, history } = await rows(p);
    t.same(history.map((h) => h.transmission_id), ['whole'], 'only the signal answered {} is stored');
    t.same(published.map((row) => row.transmission_id), ['whole'], 'and published: the refused one\'s maintenance flag is not');
    const metrics = await (await get(`${p.url}/metrics`, ADMIN_TOKEN)).text();
    t.match(metrics, /^hrs_import_v1_signals_total\{family="import_v1",outcome="rejected"\} 1$/m, 'counted as rejected');
  });

  t.test('two signals for one station in one request: both stored in order, the newer published', async (t) => {
    const p = await startTestPlatform(t, { fixture: fixture() });
    const res = await poster(p, 'v1')([
      v1Signal({ transmission_id: 'same-newer', datetime: ago(5), maintenance: true }),
      v1Signal({ transmission_id: 'same-older', datetime: ago(50) }),
    ]);
    t.equal(res.status, 204);
    const { history, published } = await rows(p);
    t.same(history.map((h) => h.transmission_id), ['same-newer', 'same-older'], 'both in the history, in request order');
    t.equal(published[0]!.transmission_id, 'same-newer', 'the newer by datetime is the published one');
  });

  t.test('v1.1: its own vocabulary; omitted 700hd at a heavy-duty station is unknown; Testing is stored, not published', async (t) => {
    const p = await startTestPlatform(t, { fixture: fixture() });
    const post = poster(p, 'v1.1');
    let res = await post([v1Signal({ dispensers: [{ fuel_type: '700car', available: true }] })]);
    t.equal(res.status, 400);
    t.same(await res.json(), [{ dispensers: [{ fuel_type: ['Invalid fuelling option'] }] }], 'v1 codes are not v1.1 codes');
    res = await post([
      { hrs: 'TRUCK', datetime: ago(5), maintenance: false, limitedly_available: true, dispensers: [{ fuel_type: '700ld', available: true }, { fuel_type: '350hd', available: null }] },
    ]);
    t.equal(res.status, 204);
    const { latest, published } = await rows(p);
    t.same(latest.map((l) => [l.hrs_id, l.assignment_state]), [['TRUCK', 'testing']]);
    t.same(latest[0]!.payload.fuelling_options, [
      { fuelling_option: '700ld', available: true },
      { fuelling_option: '700hd', available: null },
      { fuelling_option: '350hd', available: null },
    ], 'omitted 700hd and null 350hd are unknown');
    t.equal(published.length, 0, 'a testing station publishes nothing');
  });

  t.test('Inactive: kept for debugging only; active-stations lists live and testing', async (t) => {
    const p = await startTestPlatform(t, { fixture: fixture() });
    // HAMBG has no confirmed layout and no v1 fuel types: it provides no option, so an empty list is all it can send.
    const res = await poster(p, 'v1')([{ hrs: 'HAMBG', datetime: ago(5), dispensers: [], maintenance: true, limitedly_available: false }]);
    t.equal(res.status, 204);
    const { latest, published, history } = await rows(p);
    t.same(latest.map((l) => [l.hrs_id, l.assignment_state]), [['HAMBG', 'unassigned']]);
    t.equal(published.length + history.length, 0, 'never published, no history');
    const active = await get(`${p.url}/import/v1.1/active-stations`, TOKENS.import_v1);
    t.equal(active.status, 200);
    t.same(await active.json(), { live: ['BERLA'], testing: ['TRUCK'] });
    t.equal((await get(`${p.url}/import/v1/active-stations`, TOKENS.import_v1)).status, 404, 'v1 has no active-stations');
  });

  t.test('one published picture per station: the newest availability reading wins, whichever generation sent it', async (t) => {
    const p = await startTestPlatform(t, { fixture: fixture() });
    const v2 = (datetime: string, transmission: string) =>
      fetch(`${p.url}/import/v2/signal/availability/`, {
        method: 'POST',
        body: JSON.stringify([{ hrs: 'BERLA', datetime, transmission_id: transmission, nozzles: [{ id: 'N1', available: true }, { id: 'N2', available: true }], station: { maintenance: false, limitedly_available: false } }]),
        headers: { Authorization: `Bearer ${TOKENS.import_v2}`, 'Content-Type': 'application/json' },
      });
    t.equal((await v2(ago(30), 'v2-old')).status, 204);
    t.equal((await poster(p, 'v1')([v1Signal({ datetime: ago(20), transmission_id: 'v1-new', maintenance: true })])).status, 204);
    let section = await until('the v1 reading', () => availabilityOf(p, 'BERLA').then((a) => (a?.fuelling_options ? a : undefined)));
    t.match(section, { station: { maintenance: true }, nozzles: [] }, 'the newer v1 reading is published');
    t.equal((await poster(p, 'v1')([v1Signal({ datetime: ago(40), transmission_id: 'v1-late' })])).status, 204, 'a late reading is accepted');
    t.equal((await rows(p)).published[0]!.transmission_id, 'v1-new', 'but does not replace the newer one');
    t.equal((await v2(ago(1), 'v2-newest')).status, 204);
    section = await until('the v2 reading', () => availabilityOf(p, 'BERLA').then((a) => (a && !a.fuelling_options ? a : undefined)));
    t.match(section, { station: { maintenance: false }, nozzles: [{ id: 'N1', available: true }, { id: 'N2', available: true }] }, 'then the newer v2 one');

    // Restart on the same store: the restored picture is the newest one.
    await p.stop();
    const again = await startTestPlatform(t, { sameStoreAs: p });
    t.match(await availabilityOf(again, 'BERLA'), { nozzles: [{ id: 'N1' }, { id: 'N2' }] }, 'restored after a restart');
  });

  t.test('two instances: a v1 signal posted to one is published on the other, newest wins there too', async (t) => {
    const a = await startTestPlatform(t, { fixture: fixture() });
    const b = await startTestPlatform(t, { sameStoreAs: a });
    t.equal((await poster(a, 'v1.1')([{ hrs: 'BERLA', datetime: ago(10), maintenance: false, limitedly_available: true, dispensers: [{ fuel_type: '700ld', available: false }, { fuel_type: '350ld', available: true }] }])).status, 204);
    const seen = await until('the reading on the other instance', () => availabilityOf(b, 'BERLA').then((s) => (s?.fuelling_options ? s : undefined)));
    t.match(seen, { station: { limitedly_available: true }, fuelling_options: [{ fuelling_option: '700ld', available: false }, { fuelling_option: '350ld', available: true }] });
    t.equal((await poster(b, 'v1')([v1Signal({ datetime: ago(30), maintenance: true })])).status, 204, 'an older reading through the other instance');
    await new Promise((resolve) => setTimeout(resolve, 300));
    t.match(await availabilityOf(a, 'BERLA'), { station: { maintenance: false, limitedly_available: true } }, 'does not replace the newer one on either');
  });

  t.test('call logs: the legacy calls are logged and filtered by family', async (t) => {
    const f = fixture();
    f.originators[0]!.call_log_mode = 'always';
    const p = await startTestPlatform(t, { fixture: f });
    // The platform runs here without workers: the call-log worker beside it, stopped first.
    const worker = startCallLogWorker({ redis: p.parts.redis, redisPrefix: p.parts.config.redisPrefix, sql: p.sql, log: p.parts.log });
    t.teardown(() => worker.close());
    t.equal((await poster(p, 'v1')([v1Signal(), v1Signal({ hrs: 'NOPEE' })])).status, 400);
    t.equal((await poster(p, 'v1.1')([v1Signal({ dispensers: [{ fuel_type: '700ld', available: true }] })])).status, 204);
    const list = async (family: string) => {
      const res = await get(`${p.url}/admin/v1/call-logs?originator=mon-1&family=${family}`, ADMIN_TOKEN);
      return ((await res.json()) as { call_logs: { endpoint: string; status: number; station_ids: string[]; error_details: unknown }[] }).call_logs;
    };
    const v1 = await until('the v1 entry', async () => ((await list('import_v1')).length === 1 ? list('import_v1') : undefined));
    t.match(v1, [{ endpoint: 'POST /import/v1/hrs-availability', status: 400, station_ids: ['BERLA', 'NOPEE'], error_details: { code: 'validation_failed', accepted: 1, rejected: 1 } }]);
    const v11 = await until('the v1.1 entry', async () => ((await list('import_v1.1')).length === 1 ? list('import_v1.1') : undefined));
    t.match(v11, [{ endpoint: 'POST /import/v1.1/hrs-availability', status: 204 }]);
    t.same(await list('import_v2'), [], 'no v2 calls');
    const bad = await get(`${p.url}/admin/v1/call-logs?originator=mon-1&family=export_v2`, ADMIN_TOKEN);
    t.equal(bad.status, 400);
  });

  t.test('rate limit: v1 and v1.1 share one budget per originator, apart from v2', async (t) => {
    const p = await startTestPlatform(t, { fixture: fixture(), env: { IMPORT_V1_RATE_LIMIT: '2' } });
    t.equal((await poster(p, 'v1')([])).status, 204);
    t.equal((await poster(p, 'v1.1')([])).status, 204);
    const refused = await poster(p, 'v1')([]);
    t.equal(refused.status, 429);
    t.ok(Number(refused.headers.get('retry-after')) > 0, 'with Retry-After');
    const v2 = await fetch(`${p.url}/import/v2/signal/availability/`, { method: 'POST', body: '[]', headers: { Authorization: `Bearer ${TOKENS.import_v2}`, 'Content-Type': 'application/json' } });
    t.not(v2.status, 429, "v2's budget is its own");
  });

  t.test("the admins' live feed: legacy receipts name their generation, live legacy readings are changes", async (t) => {
    const p = await startTestPlatform(t, { fixture: fixture() });
    const admin = await WsClient.connect(`${p.url.replace('http:', 'ws:')}/admin/v1/live`, { Authorization: `Bearer ${ADMIN_TOKEN}` });
    t.teardown(() => admin.close());
    t.equal((await admin.nextOf('snapshot')).type, 'snapshot');
    t.equal((await poster(p, 'v1.1')([{ hrs: 'TRUCK', datetime: ago(2), maintenance: false, limitedly_available: false, dispensers: [] }])).status, 204);
    const receipt = await admin.nextOf('receipt');
    t.match(receipt, { hrs_id: 'TRUCK', category: 'availability', assignment: 'testing', originator_id: 'mon-1', source: 'import_v1.1' });
    t.notOk('fuelling_options' in receipt || 'payload' in receipt, 'no values in a receipt');
    t.equal((await poster(p, 'v1')([v1Signal({ datetime: ago(1) })])).status, 204);
    t.match(await admin.nextOf('change'), { hrs_id: 'BERLA', category: 'availability', freshness: 'fresh', originator_id: 'mon-1' });
  });
});

t.test('import-v1-http-property', async (t) => {
  /**
   * Import v1 and v1.1 over HTTP against one running platform, with generated bodies: valid signals,
   * signals with a field removed or retyped, wrong and unprovided codes, repeated entries and repeated
   * signals, unknown stations, stale and future times, non-lists, arbitrary JSON and text that is not
   * JSON. Whatever comes in: never a 5xx; a 400 for a list is a list aligned with it; exactly the
   * signals answered `{}` (all of them on a 204) are stored, each as often as it was accepted, and
   * nothing else. Every generated signal carries a transmission_id of its own, which is how its rows
   * are found; every station is live, so each accepted signal is one row of signal_history.
   */

  const RUNS = Number(process.env.PROPERTY_RUNS ?? runs(100));

  type Dialect = 'v1' | 'v1.1';
  const CODES: Record<Dialect, string[]> = { v1: ['700car', '350car', '350bus'], 'v1.1': ['700ld', '350ld', '700hd', '350hd'] };
  const OTHER: Record<Dialect, Dialect> = { v1: 'v1.1', 'v1.1': 'v1' };

  /** The live stations and the codes each provides, per dialect (HAMBG has no confirmed layout: none). */
  const PROVIDED: Record<string, Record<Dialect, string[]>> = {
    BERLA: { v1: ['700car', '350car'], 'v1.1': ['700ld', '350ld'] },
    TRUCK: { v1: ['700car', '350bus'], 'v1.1': ['700ld', '700hd', '350hd'] },
    HAMBG: { v1: [], 'v1.1': [] },
  };
  const STATIONS = Object.keys(PROVIDED);

  /**
   * BERLA (700ld, 350ld; v1 700car, 350car), TRUCK heavy duty (700ld, 700hd, 350hd; v1 700car, 350bus)
   * and HAMBG (no confirmed layout), each live for mon-1 on v1.
   */
  function fixture() {
    const f = legacyFixture();
    f.assignments.push(...STATIONS.map((hrs_id) => ({ originator: 'mon-1', hrs_id, signal_type: 'v1', state: 'live' })));
    return f;
  }

  /*
   * Generated signals: a valid signal described as data (its time as an age, turned into text only when
   * the request is sent) and at most one mutation that makes it invalid.
   */

  type Available = boolean | null | 'omit';
  const FLAGS = ['hrs', 'datetime', 'dispensers', 'maintenance', 'limitedly_available'] as const;
  const FORMATS = ['Z', '+01:00', '-05:30', '+0200', 'z', 'minutes+01:00', 'millis-03:00'] as const;

  const notOfType = (ok: (v: unknown) => boolean) => fc.jsonValue({ maxDepth: 2 }).filter((v) => !ok(v));
  const isString = (v: unknown) => typeof v === 'string';
  const isBoolean = (v: unknown) => typeof v === 'boolean';
  const isPlainObject = (v: unknown) => v !== null && typeof v === 'object' && !Array.isArray(v);

  type Mutation =
    | { op: 'remove'; field: (typeof FLAGS)[number] }
    | { op: 'retype'; field: string; value: unknown }
    | { op: 'code'; at: number; code: unknown }
    | { op: 'unprovided'; pick: number }
    | { op: 'repeat-entry'; at: number }
    | { op: 'no-fuel-type'; at: number }
    | { op: 'entry'; at: number; value: unknown }
    | { op: 'available'; at: number; value: unknown }
    | { op: 'station'; hrs: string }
    | { op: 'age'; seconds: number }
    | { op: 'datetime'; text: string }
    | { op: 'whole'; value: unknown };

  interface SignalSpec {
    station: string;
    /** Indexes into the station's provided codes, each at most once, with what is sent as `available`. */
    entries: { pick: number; available: Available }[];
    maintenance: boolean;
    limited: boolean;
    ageSeconds: number;
    format: (typeof FORMATS)[number];
    /** A field v1 does not know, which is ignored. */
    extra?: [string, unknown];
    mutation?: Mutation;
  }

  const mutation: fc.Arbitrary<Mutation> = fc.oneof(
    fc.record({ op: fc.constant('remove' as const), field: fc.constantFrom(...FLAGS) }),
    fc.oneof(
      fc.record({ op: fc.constant('retype' as const), field: fc.constantFrom('hrs', 'datetime'), value: notOfType(isString) }),
      fc.record({ op: fc.constant('retype' as const), field: fc.constantFrom('maintenance', 'limitedly_available'), value: notOfType(isBoolean) }),
      fc.record({ op: fc.constant('retype' as const), field: fc.constant('dispensers'), value: notOfType(Array.isArray) }),
      fc.record({
        op: fc.constant('retype' as const),
        field: fc.constant('transmission_id'),
        value: fc.oneof(notOfType((v) => isString(v) || v === null), fc.constantFrom('', 'x'.repeat(201), 'a\u0000b', '\ud800')),
      }),
      fc.record({ op: fc.constant('retype' as const), field: fc.constant('hrs'), value: fc.constantFrom('', 'BER\u0000A', 'B'.repeat(201)) }),
    ),
    fc.record({
      op: fc.constant('code' as const),
      at: fc.nat(),
      code: fc.oneof(fc.constantFrom('700car', '350bus', '700ld', '350hd', '700', '700LD', ' 700ld', '', 'H70'), fc.string({ maxLength: 8 }), notOfType(isString)),
    }),
    fc.record({ op: fc.constant('unprovided' as const), pick: fc.nat() }),
    fc.record({ op: fc.constant('repeat-entry' as const), at: fc.nat() }),
    fc.record({ op: fc.constant('no-fuel-type' as const), at: fc.nat() }),
    fc.record({ op: fc.constant('entry' as const), at: fc.nat(), value: notOfType(isPlainObject) }),
    fc.record({ op: fc.constant('available' as const), at: fc.nat(), value: notOfType((v) => isBoolean(v) || v === null) }),
    fc.record({ op: fc.constant('station' as const), hrs: fc.oneof(fc.constantFrom('NOPEA', 'berla', 'BERL', 'BERLAA', 'OSLO1'), fc.string({ maxLength: 7 })).filter((s) => !STATIONS.includes(s)) }),
    fc.record({ op: fc.constant('age' as const), seconds: fc.oneof(fc.integer({ min: 330, max: 7 * 86_400 }), fc.integer({ min: -86_400, max: -60 })) }),
    fc.record({
      op: fc.constant('datetime' as const),
      text: fc.constantFrom('yesterday', '2026-13-01T00:00:00Z', '2026-02-30T10:00:00Z', '@now-without-offset', '@now-date-only', '@now-space', 'now', ''),
    }),
    fc.record({ op: fc.constant('whole' as const), value: notOfType(isPlainObject) }),
  );

  const signalSpec: fc.Arbitrary<SignalSpec> = fc.record(
    {
      station: fc.constantFrom(...STATIONS),
      entries: fc.uniqueArray(fc.record({ pick: fc.nat({ max: 3 }), available: fc.constantFrom<Available>(true, false, null, 'omit') }), {
        maxLength: 4,
        selector: (e) => e.pick,
      }),
      maintenance: fc.boolean(),
      limited: fc.boolean(),
      ageSeconds: fc.integer({ min: 1, max: 200 }),
      format: fc.constantFrom(...FORMATS),
      extra: fc.option(fc.tuple(fc.constantFrom('comment', 'nozzles', 'station', 'dry_run', 'fuel_types', 'x_vendor'), fc.jsonValue({ maxDepth: 2 })), {
        nil: undefined,
        freq: 3,
      }),
      // Most signals are left valid, so that many lists are partly or wholly accepted.
      mutation: fc.oneof({ weight: 3, arbitrary: fc.constant(undefined) }, { weight: 2, arbitrary: mutation }),
    },
    { noNullPrototype: true },
  );

  /** Not JSON, or JSON the server does not read: a repeated key, nesting deeper than it takes. */
  const JUNK = ['[', '[{"hrs":', '[1,]', 'NaN', '', 'null x', '\u0000', '{"a":1,"a":2}', '[{"hrs":"BERLA","hrs":"BERLA"}]', '['.repeat(40) + ']'.repeat(40)];

  /** Body kinds: mostly generated batches; also a bare signal, arbitrary JSON, and text that is not JSON. */
  type BodySpec =
    | { kind: 'batch'; signals: SignalSpec[]; repeats: number[] }
    | { kind: 'bare'; signal: SignalSpec }
    | { kind: 'json'; value: unknown }
    | { kind: 'text'; text: string };

  const bodySpec: fc.Arbitrary<BodySpec> = fc.oneof(
    { weight: 6, arbitrary: fc.record({ kind: fc.constant('batch' as const), signals: fc.array(signalSpec, { maxLength: 6 }), repeats: fc.array(fc.nat(), { maxLength: 2 }) }) },
    { weight: 1, arbitrary: fc.record({ kind: fc.constant('bare' as const), signal: signalSpec }) },
    { weight: 2, arbitrary: fc.record({ kind: fc.constant('json' as const), value: fc.oneof(fc.jsonValue({ maxDepth: 3 }), fc.array(fc.jsonValue({ maxDepth: 2 }), { maxLength: 4 })) }) },
    {
      weight: 1,
      arbitrary: fc.record({
        kind: fc.constant('text' as const),
        text: fc.oneof(
          fc.constantFrom(...JUNK),
          fc.string({ unit: 'binary', maxLength: 40 }),
        ),
      }),
    },
  );

  /** `at` in the time zone `offset` (minutes east of UTC), written as ISO 8601 with that offset. */
  function withOffset(at: number, offsetMinutes: number, compact = false): string {
    const local = new Date(at + offsetMinutes * 60_000).toISOString().slice(0, 19);
    const sign = offsetMinutes < 0 ? '-' : '+';
    const abs = Math.abs(offsetMinutes);
    const hh = String(Math.floor(abs / 60)).padStart(2, '0');
    const mm = String(abs % 60).padStart(2, '0');
    return `${local}${sign}${hh}${compact ? '' : ':'}${mm}`;
  }

  function datetime(ageSeconds: number, format: SignalSpec['format']): string {
    const at = Date.now() - ageSeconds * 1000;
    switch (format) {
      case 'Z':
        return new Date(at).toISOString();
      case 'z':
        return new Date(at).toISOString().replace('T', 't').replace('Z', 'z');
      case '+01:00':
        return withOffset(at, 60);
      case '-05:30':
        return withOffset(at, -330);
      case '+0200':
        return withOffset(at, 120, true);
      case 'minutes+01:00':
        return withOffset(at, 60).replace(/:\d\d\+/, '+');
      case 'millis-03:00': {
        const text = withOffset(at, -180);
        return `${text.slice(0, 19)}.${String(at % 1000).padStart(3, '0')}${text.slice(19)}`;
      }
    }
  }

  let serial = 0;

  /** A signal as sent, its transmission_id when it still carries its own, and whether it is meant to pass. */
  interface Built {
    value: unknown;
    id?: string;
    valid: boolean;
    station?: string;
  }

  function build(spec: SignalSpec, dialect: Dialect): Built {
    const id = `prop-${process.pid}-${++serial}`;
    const provided = PROVIDED[spec.station]![dialect];
    const dispensers: Record<string, unknown>[] = spec.entries
      .filter((e) => e.pick < provided.length)
      .map((e) => (e.available === 'omit' ? { fuel_type: provided[e.pick] } : { fuel_type: provided[e.pick], available: e.available }));
    const signal: Record<string, unknown> = {
      hrs: spec.station,
      datetime: datetime(spec.ageSeconds, spec.format),
      dispensers,
      maintenance: spec.maintenance,
      limitedly_available: spec.limited,
      transmission_id: id,
    };
    if (spec.extra) signal[spec.extra[0]] = spec.extra[1];
    const m = spec.mutation;
    if (m === undefined) return { value: signal, id, valid: true, station: spec.station };
    /** An entry to change: an existing one, or a provided (or any) code added when there is none. */
    const entry = (at: number): number => {
      if (dispensers.length === 0) dispensers.push({ fuel_type: provided[0] ?? CODES[dialect][0], available: true });
      return at % dispensers.length;
    };
    let tagged = true;
    switch (m.op) {
      case 'remove':
        delete signal[m.field];
        break;
      case 'retype':
        signal[m.field] = m.value;
        if (m.field === 'transmission_id') tagged = false;
        break;
      case 'code': {
        const code = m.code;
        if (typeof code === 'string' && CODES[dialect].includes(code)) dispensers[entry(m.at)]!.fuel_type = CODES[OTHER[dialect]][0];
        else dispensers[entry(m.at)]!.fuel_type = code;
        break;
      }
      case 'unprovided': {
        // An option the station does not provide: the signal is refused (and the entry named), nothing of it stored.
        const missing = CODES[dialect].filter((code) => !provided.includes(code));
        dispensers.push({ fuel_type: missing[m.pick % missing.length], available: true });
        return { value: signal, id, valid: false, station: spec.station };
      }
      case 'repeat-entry':
        dispensers.push({ ...dispensers[entry(m.at)]!, available: false });
        break;
      case 'no-fuel-type':
        delete dispensers[entry(m.at)]!.fuel_type;
        break;
      case 'entry':
        dispensers.splice(m.at % (dispensers.length + 1), 0, m.value as Record<string, unknown>);
        break;
      case 'available':
        dispensers[entry(m.at)]!.available = m.value;
        break;
      case 'station':
        signal.hrs = m.hrs;
        break;
      case 'age':
        signal.datetime = datetime(m.seconds, 'Z');
        break;
      case 'datetime': {
        const now = new Date().toISOString();
        signal.datetime = { '@now-without-offset': now.slice(0, 19), '@now-date-only': now.slice(0, 10), '@now-space': now.replace('T', ' ') }[m.text] ?? m.text;
        break;
      }
      case 'whole':
        return { value: m.value, valid: false };
    }
    return { value: signal, id: tagged ? id : undefined, valid: false, station: spec.station };
  }

  interface Sent {
    text: string;
    /** The signals of a list body, in order (undefined when the body is not a generated list). */
    signals?: Built[];
    /** Whether the body is a JSON array. */
    isList: boolean;
    length: number;
  }

  function prepare(spec: BodySpec, dialect: Dialect): Sent {
    switch (spec.kind) {
      case 'batch': {
        const signals = spec.signals.map((s) => build(s, dialect));
        // The same signal again, transmission_id and all: each copy is a signal of its own.
        for (const r of spec.repeats) if (signals.length > 0) signals.push(signals[r % signals.length]!);
        return { text: JSON.stringify(signals.map((s) => s.value)), signals, isList: true, length: signals.length };
      }
      case 'bare': {
        const signal = build(spec.signal, dialect);
        return { text: JSON.stringify(signal.value), isList: Array.isArray(signal.value), length: Array.isArray(signal.value) ? signal.value.length : 0 };
      }
      case 'json':
        return { text: JSON.stringify(spec.value), isList: Array.isArray(spec.value), length: Array.isArray(spec.value) ? spec.value.length : 0 };
      case 'text': {
        let isList = false;
        let length = 0;
        try {
          const parsed = JSON.parse(spec.text) as unknown;
          isList = Array.isArray(parsed) && !JUNK.includes(spec.text);
          length = Array.isArray(parsed) ? parsed.length : 0;
        } catch {
          // not JSON
        }
        return { text: spec.text, isList, length };
      }
    }
  }

  const isEmptyObject = (v: unknown) => isPlainObject(v) && Object.keys(v as object).length === 0;

  /** An entry of a 400 body for a stored signal: `{}` (any message is a signal that was not stored). */
  const isStoredEntry = isEmptyObject;

  async function historyCount(p: TestPlatform): Promise<number> {
    const [row] = await p.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM signal_history`;
    return row!.n;
  }

  t.test('import v1 and v1.1, generated bodies: never a 5xx, aligned 400s, exactly the accepted signals stored', async (t) => {
    const p = await startTestPlatform(t, { fixture: fixture(), env: { IMPORT_V1_RATE_LIMIT: '1000000' } });
    const refusedIds = new Set<string>();
    const statuses = new Map<string, number>();
    const tally = { accepted: 0, refused: 0 };

    await fc.assert(
      fc.asyncProperty(fc.constantFrom<Dialect>('v1', 'v1.1'), bodySpec, async (dialect, spec) => {
        const before = await historyCount(p);
        const sent = prepare(spec, dialect);
        const res = await fetch(`${p.url}/import/${dialect}/hrs-availability`, {
          method: 'POST',
          body: sent.text,
          headers: { Authorization: `Bearer ${TOKENS.import_v1}`, 'Content-Type': 'application/json' },
        });
        const text = await res.text();
        const where = `${dialect} ${spec.kind}: ${res.status} ${text.slice(0, 500)} for ${sent.text.slice(0, 500)}`;
        statuses.set(`${spec.kind} ${res.status}`, (statuses.get(`${spec.kind} ${res.status}`) ?? 0) + 1);
        if (res.status >= 500) throw new Error(`a 5xx: ${where}`);
        if (res.status !== 204 && res.status !== 400) throw new Error(`neither 204 nor 400: ${where}`);

        // Which entries were accepted (a 204 accepts all; only a list can be accepted at all).
        let accepted: boolean[] = [];
        if (res.status === 204) {
          if (!sent.isList) throw new Error(`a 204 for a body that is not a list: ${where}`);
          if (text !== '') throw new Error(`a 204 with a body: ${where}`);
          accepted = Array.from({ length: sent.length }, () => true);
        } else if (sent.isList) {
          const body = JSON.parse(text) as unknown;
          if (!Array.isArray(body) || body.length !== sent.length || !body.every(isPlainObject)) throw new Error(`a 400 not aligned with the list: ${where}`);
          if (!body.some((entry) => !isEmptyObject(entry))) throw new Error(`a 400 saying nothing: ${where}`);
          accepted = body.map(isStoredEntry);
        }

        // The generated signals are accepted exactly when they were built valid.
        const signals = sent.signals ?? [];
        signals.forEach((s, i) => {
          if (accepted[i] !== s.valid) throw new Error(`signal ${i} built ${s.valid ? 'valid' : 'invalid'} but ${accepted[i] ? 'accepted' : 'refused'}: ${where}`);
        });

        // Stored: each tagged signal as often as it was accepted, and nothing besides the accepted ones.
        const expected = new Map<string, number>();
        signals.forEach((s, i) => {
          if (s.id === undefined) return;
          expected.set(s.id, (expected.get(s.id) ?? 0) + (accepted[i] ? 1 : 0));
          if (!accepted[i]) refusedIds.add(s.id);
        });
        const ids = [...expected.keys()];
        const rows = ids.length === 0 ? [] : await p.sql<{ transmission_id: string; n: number }[]>`
        SELECT transmission_id, count(*)::int AS n FROM signal_history WHERE transmission_id IN ${p.sql(ids)} GROUP BY transmission_id`;
        const stored = new Map(rows.map((r) => [r.transmission_id, r.n]));
        for (const [id, n] of expected) {
          if ((stored.get(id) ?? 0) !== n) throw new Error(`${id} stored ${stored.get(id) ?? 0} times, accepted ${n} times: ${where}`);
        }
        const added = (await historyCount(p)) - before;
        const acceptedCount = accepted.filter(Boolean).length;
        if (added !== acceptedCount) throw new Error(`signal_history gained ${added} rows for ${acceptedCount} accepted signals: ${where}`);

        // The latest reading of each station named by an accepted signal is the last one accepted for it.
        const last = new Map<string, string>();
        signals.forEach((s, i) => {
          if (accepted[i] && s.station !== undefined && s.id !== undefined) last.set(s.station, s.id);
        });
        if (last.size > 0) {
          const latest = await p.sql<{ hrs_id: string; transmission_id: string | null }[]>`
          SELECT hrs_id, transmission_id FROM signal_latest
          WHERE originator_id = 'mon-1' AND category = 'availability' AND hrs_id IN ${p.sql([...last.keys()])}`;
          for (const [station, id] of last) {
            const found = latest.find((r) => r.hrs_id === station)?.transmission_id;
            if (found !== id) throw new Error(`signal_latest of ${station} is ${found}, not the last accepted ${id}: ${where}`);
          }
        }
        tally.accepted += acceptedCount;
        tally.refused += signals.length - signals.filter((_, i) => accepted[i]).length;
      }),
      { numRuns: RUNS },
    );

    t.comment(`statuses: ${[...statuses].sort().map(([k, n]) => `${k}×${n}`).join(', ')}`);
    t.comment(`generated signals: ${tally.accepted} accepted, ${tally.refused} refused`);
    t.ok(tally.accepted > 0 && tally.refused > 0, 'both accepted and refused signals were generated');
    const leaked = await p.sql<{ transmission_id: string }[]>`
    SELECT transmission_id FROM signal_history WHERE transmission_id IN ${p.sql([...refusedIds, '-'])}
    UNION SELECT transmission_id FROM signal_latest WHERE transmission_id IN ${p.sql([...refusedIds, '-'])}
    UNION SELECT transmission_id FROM published_signals WHERE transmission_id IN ${p.sql([...refusedIds, '-'])}`;
    t.same(leaked.map((r) => r.transmission_id), [], `none of the ${refusedIds.size} refused signals is stored anywhere`);
    const errors = p.logs.lines.filter((l) => (l.level as number) >= 50);
    t.same(errors.map((l) => l.msg), [], 'nothing logged as an error');
  });
});

t.test('import-null-optional', async (t) => {
  /**
   * `null` for an optional field of import v1, v1.1 and v2 is the field left out: `dry_run: null` is a
   * real transmission, `currency: null` is EUR, as `net_price: null` always was "no net price". Each
   * request with nulls is stored exactly as the same request without those fields.
   */
  const ago = (seconds: number) => new Date(Date.now() - seconds * 1000).toISOString();
  /** Measurement times one second apart, each later than the one before (a reading measured earlier than the published one does not replace it). */
  let clock = Date.now() - 120_000;
  const next = () => new Date((clock += 1000)).toISOString();

  function fixture() {
    const f = baseFixture();
    f.assignments = [...berlaAssignments('live').filter((a) => a.hrs_id === 'BERLA'), { originator: 'mon-1', hrs_id: 'BERLA', signal_type: 'v1', state: 'live' }];
    return f;
  }

  async function post(p: TestPlatform, path: string, token: string, body: unknown) {
    const res = await fetch(`${p.url}${path}`, {
      method: 'POST',
      body: JSON.stringify(body),
      headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
    });
    const text = await res.text();
    return { status: res.status, body: text === '' ? undefined : (JSON.parse(text) as unknown) };
  }

  const published = async (p: TestPlatform, category: string) => {
    const [row] = await p.sql<{ transmission_id: string | null; payload: Record<string, unknown> }[]>`
    SELECT transmission_id, payload FROM published_signals WHERE hrs_id = 'BERLA' AND category = ${category}`;
    return row;
  };

  /** v2: each category with every optional field null, then the same without those fields: both stored, the same. */
  const V2: { category: string; withNulls: () => Record<string, unknown>; without: () => Record<string, unknown> }[] = [
    {
      category: 'availability',
      withNulls: () => ({
        hrs: 'BERLA', datetime: next(), transmission_id: null, dry_run: null,
        nozzles: [{ id: 'N1', dispenser_id: null, available: true }, { id: 'N2', dispenser_id: null, available: false }],
        station: { maintenance: false, limitedly_available: false },
      }),
      without: () => ({
        hrs: 'BERLA', datetime: next(),
        nozzles: [{ id: 'N1', available: true }, { id: 'N2', available: false }],
        station: { maintenance: false, limitedly_available: false },
      }),
    },
    {
      category: 'usage',
      withNulls: () => ({ hrs: 'BERLA', datetime: next(), transmission_id: null, dry_run: null, nozzles: [{ id: null, dispenser_id: 'D1', usage_status: 'in-use' }] }),
      without: () => ({ hrs: 'BERLA', datetime: next(), nozzles: [{ dispenser_id: 'D1', usage_status: 'in-use' }] }),
    },
    {
      category: 'hydrogen-storage',
      withNulls: () => ({ hrs: 'BERLA', datetime: next(), transmission_id: null, dry_run: null, storages: [{ id: 'S1', remaining_kg: '240.50', low_h2_storage: null }] }),
      without: () => ({ hrs: 'BERLA', datetime: next(), storages: [{ id: 'S1', remaining_kg: '240.50' }] }),
    },
    {
      category: 'hydrogen-storage',
      withNulls: () => ({ hrs: 'BERLA', datetime: next(), dry_run: null, storages: [{ id: 'S1', remaining_kg: null, low_h2_storage: true }] }),
      without: () => ({ hrs: 'BERLA', datetime: next(), storages: [{ id: 'S1', low_h2_storage: true }] }),
    },
    {
      category: 'pricing',
      withNulls: () => ({
        hrs: 'BERLA', datetime: next(), transmission_id: null, dry_run: null,
        products: [{ id: 'P700', gross_price: '13.850', net_price: null, currency: null }, { id: 'P350', gross_price: '11.500', currency: null }],
      }),
      without: () => ({ hrs: 'BERLA', datetime: next(), products: [{ id: 'P700', gross_price: '13.850' }, { id: 'P350', gross_price: '11.500' }] }),
    },
  ];

  t.test('import v2: null for every optional field is the field left out', async (t) => {
    const p = await startTestPlatform(t, { fixture: fixture() });
    for (const { category, withNulls, without } of V2) {
      const path = `/import/v2/signal/${category}/`;
      const res = await post(p, path, TOKENS.import_v2, [withNulls()]);
      t.equal(res.status, 204, `${category} with nulls: accepted (${JSON.stringify(res.body)})`);
      const stored = await published(p, category);
      t.ok(stored, `${category}: stored and published (dry_run null is a real transmission)`);
      t.equal(stored?.transmission_id ?? null, null, `${category}: no transmission id`);
      t.equal((await post(p, path, TOKENS.import_v2, [without()])).status, 204, `${category} without the fields: accepted`);
      t.same((await published(p, category))?.payload, stored?.payload, `${category}: stored the same as with the fields left out`);
    }
    const pricing = await published(p, 'pricing');
    t.same(pricing?.payload.products, [
      { id: 'P700', gross_price: '13.850', net_price: null, currency: 'EUR' },
      { id: 'P350', gross_price: '11.500', net_price: null, currency: 'EUR' },
    ], 'currency null is EUR');
  });

  t.test('import v2: null stays refused where a field is required, and a dry run is still only when true', async (t) => {
    const p = await startTestPlatform(t, { fixture: fixture() });
    const res = await post(p, '/import/v2/signal/usage/', TOKENS.import_v2, [{ hrs: 'BERLA', datetime: null, nozzles: [{ id: 'N1', usage_status: null }] }]);
    t.equal(res.status, 400);
    t.same(res.body, [{ datetime: ['This field may not be null.'], nozzles: [{ usage_status: ['This field may not be null.'] }] }]);
    const dry = await post(p, '/import/v2/signal/usage/', TOKENS.import_v2, [{ hrs: 'BERLA', datetime: ago(2), dry_run: true, nozzles: [{ id: 'N1', usage_status: 'free' }] }]);
    t.equal(dry.status, 204);
    t.notOk(await published(p, 'usage'), 'dry_run true stores nothing');
    const pricing = await post(p, '/import/v2/signal/pricing/', TOKENS.import_v2, [{ hrs: 'BERLA', datetime: ago(2), products: [{ id: 'P700', gross_price: '5', currency: 'EUR' }, { id: 'P350', gross_price: '5', currency: null }] }]);
    t.equal(pricing.status, 204, 'null and EUR are one currency');
  });

  t.test('import v1 and v1.1: null for the optional fields is the field left out', async (t) => {
    const p = await startTestPlatform(t, { fixture: fixture() });
    const signals = {
      v1: [{ fuel_type: '700car', available: null }, { fuel_type: '350car', available: true }],
      'v1.1': [{ fuel_type: '700ld', available: null }, { fuel_type: '350ld', available: true }],
    };
    for (const version of ['v1', 'v1.1'] as const) {
      const path = `/import/${version}/hrs-availability`;
      const res = await post(p, path, TOKENS.import_v1, [{ hrs: 'BERLA', datetime: next(), dispensers: signals[version], maintenance: false, limitedly_available: false, transmission_id: null }]);
      t.equal(res.status, 204, `${version} with nulls: accepted (${JSON.stringify(res.body)})`);
      const stored = await published(p, 'availability');
      t.equal(stored?.transmission_id ?? null, null, `${version}: no transmission id`);
      const left = await post(p, path, TOKENS.import_v1, [{ hrs: 'BERLA', datetime: next(), dispensers: signals[version].map((d) => (d.available === null ? { fuel_type: d.fuel_type } : d)), maintenance: false, limitedly_available: false }]);
      t.equal(left.status, 204, `${version} without the fields: accepted`);
      t.same((await published(p, 'availability'))?.payload, stored?.payload, `${version}: stored the same as with the fields left out`);
    }
  });
});
