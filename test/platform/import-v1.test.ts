/**
 * The legacy import over HTTP: `POST /import/v1/hrs-availability` and `/import/v1.1/hrs-availability`,
 * partial acceptance, per-option signals that become unknown when omitted, Live/Testing/Inactive
 * routing, one published availability picture per station whichever generation sent it.
 */
import t from 'tap';
import { legacyFixture, TOKENS } from '../helpers/fixtures.js';
import { ADMIN_TOKEN, get, startTestPlatform, type TestPlatform } from '../helpers/platform.js';
import { until } from '../helpers/wait.js';
import { WsClient } from '../helpers/ws.js';
import { startCallLogWorker } from '../../workers/call-log/processor.js';

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

t.test('paths and tokens: no trailing slash, import v1/v1.1 tokens only, JSON required', async (t) => {
  const p = await startTestPlatform(t, { fixture: fixture() });
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

t.test('rules: required booleans, the 5-minute and future messages, unknown stations, a non-list body', async (t) => {
  const p = await startTestPlatform(t, { fixture: fixture() });
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
