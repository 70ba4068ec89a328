import t from 'tap';
import { baseFixture, TOKENS } from '../helpers/fixtures.js';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.js';

const ago = (seconds: number) => new Date(Date.now() - seconds * 1000).toISOString();

/** The standard fixture plus a usage-live and storage-live assignment on BERLA and a second originator. */
function fixture() {
  const f = baseFixture();
  f.assignments.push(
    { originator: 'mon-1', hrs_id: 'BERLA', signal_type: 'usage', state: 'live' },
    { originator: 'mon-1', hrs_id: 'BERLA', signal_type: 'hydrogen-storage', state: 'live' },
  );
  return f;
}

function poster(p: TestPlatform) {
  return (category: string, body: unknown, token: string = TOKENS.import_v2) =>
    fetch(`${p.url}/import/v2/signal/${category}/`, {
      method: 'POST',
      body: typeof body === 'string' ? body : JSON.stringify(body),
      headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
    });
}

const availability = (extra: Record<string, unknown> = {}) => ({
  hrs: 'BERLA',
  datetime: ago(5),
  nozzles: [
    { id: 'N1', available: true },
    { id: 'N2', available: false },
  ],
  station: { maintenance: false, limitedly_available: false },
  ...extra,
});

async function stored(p: TestPlatform) {
  const [latest, published, history] = await Promise.all([
    p.sql`SELECT originator_id, hrs_id, category, assignment_state, payload FROM signal_latest ORDER BY hrs_id, category`,
    p.sql`SELECT hrs_id, category, payload, measured_at, received_at, transmission_id FROM published_signals ORDER BY hrs_id, category`,
    p.sql`SELECT hrs_id, category FROM signal_history ORDER BY id`,
  ]);
  return { latest, published, history };
}

t.test('paths: trailing slash required, import v2 tokens only', async (t) => {
  const p = await startTestPlatform(t, { fixture: fixture() });
  const post = poster(p);
  const res = await fetch(`${p.url}/import/v2/signal/availability`, { method: 'POST', body: '[]', headers: { Authorization: `Bearer ${TOKENS.import_v2}` } });
  t.equal(res.status, 404);
  t.same(await res.json(), { detail: 'Not found. The trailing slash is required: /import/v2/signal/availability/' });
  for (const token of [TOKENS.import_v1, TOKENS.export_v2, TOKENS.export_v1]) {
    t.equal((await post('availability', [availability()], token)).status, 401);
  }
  t.equal((await stored(p)).latest.length, 0, 'nothing processed');
});

t.test('a live availability transmission: 204 after commit, published, in history', async (t) => {
  const p = await startTestPlatform(t, { fixture: fixture() });
  const res = await poster(p)('availability', [availability({ transmission_id: 'run-1' })]);
  t.equal(res.status, 204);
  t.equal(await res.text(), '');
  const { latest, published, history } = await stored(p);
  t.match(latest, [{ originator_id: 'mon-1', hrs_id: 'BERLA', category: 'availability', assignment_state: 'live' }]);
  t.equal(published.length, 1);
  t.same(published[0]!.payload, {
    station: { maintenance: false, limitedly_available: false },
    nozzles: [
      { id: 'N1', available: true },
      { id: 'N2', available: false },
    ],
    fuelling_options: { '700ld': true, '350ld': false },
  });
  t.equal(published[0]!.transmission_id, 'run-1');
  t.ok(published[0]!.received_at >= published[0]!.measured_at);
  t.equal(history.length, 1);
});

t.test('a non-array body, an empty array, malformed JSON', async (t) => {
  const p = await startTestPlatform(t, { fixture: fixture() });
  const post = poster(p);
  let res = await post('usage', { hrs: 'BERLA' });
  t.equal(res.status, 400);
  t.same(await res.json(), { non_field_errors: ['Expected a list of items but got type "dict".'] });
  res = await post('usage', []);
  t.same(await res.json(), { non_field_errors: ['This list may not be empty.'] });
  res = await post('usage', '[{"hrs": "BERLA"');
  t.equal(res.status, 400);
  t.match(await res.json(), { detail: /^JSON parse error/ });
});

t.test('all or nothing: one bad transmission rejects the batch and nothing is stored', async (t) => {
  const f = fixture();
  f.stations.push({ hrs_id: 'MUNIC', operator: 'h2-demo', name: 'Munich', layout: (f.stations[0] as any).layout });
  f.assignments.push({ originator: 'mon-1', hrs_id: 'MUNIC', signal_type: 'availability', state: 'live' });
  const p = await startTestPlatform(t, { fixture: f });
  const res = await poster(p)('availability', [
    availability(),
    availability({ hrs: 'MUNIC', nozzles: [{ id: 'N1', available: true }, { id: 'N7', available: true }] }),
  ]);
  t.equal(res.status, 400);
  t.same(await res.json(), [{}, { nozzles: [{}, { id: ['Unknown nozzle identifier: N7'] }] }]);
  const { latest, published, history } = await stored(p);
  t.equal(latest.length + published.length + history.length, 0, 'the valid transmission was not applied either');
});

t.test('dry runs are validated end to end and never stored; a batch may mix both', async (t) => {
  const f = fixture();
  f.stations.push({ hrs_id: 'MUNIC', operator: 'h2-demo', name: 'Munich', layout: (f.stations[0] as any).layout });
  f.assignments.push({ originator: 'mon-1', hrs_id: 'MUNIC', signal_type: 'availability', state: 'live' });
  const p = await startTestPlatform(t, { fixture: f });
  const post = poster(p);
  t.equal((await post('availability', [availability({ dry_run: true }), availability({ hrs: 'MUNIC' })])).status, 204);
  const { published } = await stored(p);
  t.same(published.map((r) => r.hrs_id), ['MUNIC'], 'only the real one is stored');
  const res = await post('availability', [availability({ dry_run: true, nozzles: [{ id: 'N8', available: true }] })]);
  t.equal(res.status, 400, 'a dry run that would fail says so');
  t.same(await res.json(), [{ nozzles: [{ id: ['Unknown nozzle identifier: N8'] }] }]);
});

t.test('assignment routing: live published with history, testing kept, unassigned kept for debugging', async (t) => {
  const p = await startTestPlatform(t, { fixture: fixture() });
  const post = poster(p);
  const pricing = [{ hrs: 'BERLA', datetime: ago(1), products: [{ id: 'P700', gross_price: '13.85' }] }];
  t.equal((await post('pricing', pricing)).status, 204, 'testing');
  const usage = [{ hrs: 'HAMBG', datetime: ago(1), nozzles: [{ id: 'DX', usage_status: 'free' }] }];
  t.equal((await post('usage', usage)).status, 400, 'HAMBG has only a draft layout: its ids do not resolve');
  t.same((await (await post('usage', usage)).json()), [{ nozzles: [{ id: ['Unknown nozzle identifier: DX'] }] }]);

  const f = fixture();
  f.assignments = f.assignments.filter((a) => !(a.hrs_id === 'BERLA' && a.signal_type === 'hydrogen-storage'));
  await p.load(f);
  const storage = [{ hrs: 'BERLA', datetime: ago(1), storages: [{ id: 'S1', remaining_kg: '420.5' }] }];
  t.equal((await post('hydrogen-storage', storage)).status, 204, 'unassigned is accepted');

  const { latest, published, history } = await stored(p);
  t.same(
    latest.map((r) => [r.category, r.assignment_state]),
    [
      ['hydrogen-storage', 'unassigned'],
      ['pricing', 'testing'],
    ],
  );
  t.equal(published.length, 0, 'neither is published');
  t.equal(history.length, 0, 'and no history is built');
  t.same(latest[0]!.payload, { storages: [{ id: 'S1', remaining_kg: '420.50', low_h2_storage: false }] }, 'the confidential number is stored');
});

t.test('a snapshot replaces the previous one entirely; a late reading never overwrites a newer one', async (t) => {
  const p = await startTestPlatform(t, { fixture: fixture() });
  const post = poster(p);
  t.equal((await post('usage', [{ hrs: 'BERLA', datetime: ago(30), nozzles: [{ dispenser_id: 'D1', usage_status: 'in-use' }] }])).status, 204);
  t.equal((await post('usage', [{ hrs: 'BERLA', datetime: ago(20), nozzles: [{ id: 'N1', usage_status: 'free' }] }])).status, 204);
  let { published, history } = await stored(p);
  t.same(published[0]!.payload, { nozzles: [{ id: 'N1', usage_status: 'free' }] }, 'N2, left out, has no reported state');
  t.equal(history.length, 2);
  t.equal((await post('usage', [{ hrs: 'BERLA', datetime: ago(60), nozzles: [{ id: 'N2', usage_status: 'reserved' }] }])).status, 204);
  ({ published, history } = await stored(p));
  t.same(published[0]!.payload, { nozzles: [{ id: 'N1', usage_status: 'free' }] }, 'the older reading did not replace the newer');
  t.equal(history.length, 3, 'but it is in the history');
});

t.test('every field error of the spec reaches the client in the aligned body', async (t) => {
  const p = await startTestPlatform(t, { fixture: fixture() });
  const post = poster(p);
  let res = await post('availability', [availability({ datetime: ago(301) }), availability({ hrs: 'OSLO1', datetime: '2026-01-01T00:00:00' })]);
  t.same(await res.json(), [
    { datetime: ['The signal may not be older than 5 minutes.'] },
    { hrs: ['Unknown station identifier: OSLO1'], datetime: ['Datetime has wrong format. Use ISO 8601 with a UTC offset, e.g. 2026-11-22T10:00:00+01:00.'] },
  ]);
  res = await post('availability', [availability({ datetime: new Date(Date.now() + 40_000).toISOString() })]);
  t.same(await res.json(), [{ datetime: ['The signal may not be from the future.'] }]);
  res = await post('hydrogen-storage', [{ hrs: 'BERLA', datetime: ago(1), storages: [{ id: 'S1', remaining_kg: 100, low_h2_storage: true }] }]);
  t.match(await res.json(), [{ storages: [{ low_h2_storage: [/^Inconsistent low_h2_storage for storage S1/] }] }]);
  res = await post('pricing', [{ hrs: 'BERLA', datetime: ago(1), products: [{ id: 'P700', gross_price: '5.000', net_price: '6.000' }] }]);
  t.match(await res.json(), [{ products: [{ net_price: [/^Inconsistent price for product P700/] }] }]);
  t.equal((await stored(p)).latest.length, 0, 'nothing stored by any of them');
});

t.test('API call log of import v2 calls, per the originator\'s mode', async (t) => {
  const { startCallLogWorker } = await import('../../workers/call-log/processor.js');
  const { createLogger } = await import('../../src/config/log.js');
  const f = fixture();
  f.originators[0]!.call_log_mode = 'errors';
  const p = await startTestPlatform(t, { fixture: f });
  const worker = startCallLogWorker({ redis: p.parts.redis, redisPrefix: p.parts.config.redisPrefix, sql: p.sql, log: createLogger('silent'), maxWaitMs: 20 });
  t.teardown(() => worker.close());
  const post = poster(p);
  const rows = async (n: number) => {
    for (let i = 0; i < 100; i++) {
      const found = await p.sql`SELECT * FROM call_logs ORDER BY id`;
      if (found.length >= n) return found;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    return p.sql`SELECT * FROM call_logs ORDER BY id`;
  };

  t.equal((await post('availability', [availability()])).status, 204);
  const bad = [availability({ nozzles: [{ id: 'N9', available: true }] })];
  t.equal((await post('availability', bad)).status, 400);
  let logged = await rows(1);
  await new Promise((resolve) => setTimeout(resolve, 300));
  logged = await rows(1);
  t.equal(logged.length, 1, 'errors mode: only the failed call');
  t.match(logged[0], {
    originator_id: 'mon-1',
    endpoint: 'POST /import/v2/signal/availability/',
    station_ids: ['BERLA'],
    status: 400,
  });
  t.same(JSON.parse(logged[0]!.request_body), bad, 'the request body as received');
  t.same(JSON.parse(logged[0]!.response_body), [{ nozzles: [{ id: ['Unknown nozzle identifier: N9'] }] }]);
  t.match(logged[0]!.error_details, { code: 'validation_failed' });

  f.originators[0]!.call_log_mode = 'always';
  await p.load(f);
  t.equal((await post('availability', [availability({ datetime: ago(2) })])).status, 204);
  logged = await rows(2);
  t.equal(logged.length, 2, 'always mode: the successful call too');
  t.match(logged[1], { status: 204, response_body: null, error_details: null });

  f.originators[0]!.call_log_mode = 'disabled';
  await p.load(f);
  t.equal((await post('availability', bad)).status, 400);
  await new Promise((resolve) => setTimeout(resolve, 300));
  t.equal((await rows(3)).length, 2, 'disabled: nothing recorded');
});

t.test('every rule over HTTP: 400 with its message, and nothing stored', async (t) => {
  const p = await startTestPlatform(t, { fixture: fixture() });
  const post = poster(p);
  const env = () => ({ hrs: 'BERLA', datetime: ago(1) });
  const cases: [string, string, unknown, RegExp][] = [
    ['non-array', 'usage', { hrs: 'BERLA' }, /Expected a list of items but got type \\"dict\\"/],
    ['empty', 'usage', [], /This list may not be empty/],
    ['unknown station', 'usage', [{ ...env(), hrs: 'NOPE', nozzles: [{ id: 'N1', usage_status: 'free' }] }], /Unknown station identifier: NOPE/],
    ['no offset', 'usage', [{ ...env(), datetime: '2026-11-22T10:00:00', nozzles: [{ id: 'N1', usage_status: 'free' }] }], /Datetime has wrong format/],
    ['too old', 'usage', [{ ...env(), datetime: ago(400), nozzles: [{ id: 'N1', usage_status: 'free' }] }], /older than 5 minutes/],
    ['future', 'usage', [{ ...env(), datetime: ago(-60), nozzles: [{ id: 'N1', usage_status: 'free' }] }], /from the future/],
    ['null boolean', 'availability', [availability({ nozzles: [{ id: 'N1', available: null }] })], /may not be null/],
    ['dry_run type', 'availability', [availability({ dry_run: 'yes' })], /Must be a valid boolean/],
    ['unknown nozzle', 'usage', [{ ...env(), nozzles: [{ id: 'NX', usage_status: 'free' }] }], /Unknown nozzle identifier: NX/],
    ['unknown dispenser', 'usage', [{ ...env(), nozzles: [{ dispenser_id: 'DX', usage_status: 'free' }] }], /Unknown dispenser identifier: DX/],
    ['unknown storage', 'hydrogen-storage', [{ ...env(), storages: [{ id: 'SX', low_h2_storage: true }] }], /Unknown storage identifier: SX/],
    ['unknown product', 'pricing', [{ ...env(), products: [{ id: 'PX', gross_price: '1' }] }], /Unknown product identifier: PX/],
    ['duplicate nozzle', 'usage', [{ ...env(), nozzles: [{ id: 'N1', usage_status: 'free' }, { dispenser_id: 'D1', usage_status: 'free' }] }], /Duplicate nozzle reference: N1/],
    ['duplicate storage', 'hydrogen-storage', [{ ...env(), storages: [{ id: 'S1', low_h2_storage: true }, { id: 'S1', low_h2_storage: true }] }], /Duplicate storage reference: S1/],
    ['duplicate product', 'pricing', [{ ...env(), products: [{ id: 'P700', gross_price: '1' }, { id: 'P700', gross_price: '2' }] }], /Duplicate product reference: P700/],
    ['duplicate station', 'usage', [{ ...env(), nozzles: [{ id: 'N1', usage_status: 'free' }] }, { ...env(), nozzles: [{ id: 'N2', usage_status: 'free' }] }], /Duplicate station in batch: BERLA/],
    ['both id kinds', 'usage', [{ ...env(), nozzles: [{ id: 'N1', dispenser_id: 'D1', usage_status: 'free' }] }], /Provide exactly one of \\"id\\" or \\"dispenser_id\\"/],
    ['usage status', 'usage', [{ ...env(), nozzles: [{ id: 'N1', usage_status: 'busy' }] }], /\\"busy\\" is not a valid choice/],
    ['kg digits', 'hydrogen-storage', [{ ...env(), storages: [{ id: 'S1', remaining_kg: '1000000.00' }] }], /no more than 8 digits in total/],
    ['kg decimals', 'hydrogen-storage', [{ ...env(), storages: [{ id: 'S1', remaining_kg: '1.001' }] }], /no more than 2 decimal places/],
    ['kg negative', 'hydrogen-storage', [{ ...env(), storages: [{ id: 'S1', remaining_kg: -1 }] }], /greater than or equal to 0/],
    ['storage empty entry', 'hydrogen-storage', [{ ...env(), storages: [{ id: 'S1' }] }], /Provide at least one of \\"remaining_kg\\" or \\"low_h2_storage\\"/],
    ['storage contradiction', 'hydrogen-storage', [{ ...env(), storages: [{ id: 'S1', remaining_kg: '100', low_h2_storage: true }] }], /Inconsistent low_h2_storage for storage S1/],
    ['price as number', 'pricing', [{ ...env(), products: [{ id: 'P700', gross_price: 1.5 }] }], /A valid number is required/],
    ['zero price', 'pricing', [{ ...env(), products: [{ id: 'P700', gross_price: '0.000' }] }], /greater than 0/],
    ['price digits', 'pricing', [{ ...env(), products: [{ id: 'P700', gross_price: '100000.000' }] }], /no more than 8 digits in total/],
    ['price decimals', 'pricing', [{ ...env(), products: [{ id: 'P700', gross_price: '1.0001' }] }], /no more than 3 decimal places/],
    ['net above gross', 'pricing', [{ ...env(), products: [{ id: 'P700', gross_price: '1.000', net_price: '1.001' }] }], /Inconsistent price for product P700/],
    ['currency', 'pricing', [{ ...env(), products: [{ id: 'P700', gross_price: '1', currency: 'USD' }] }], /\\"USD\\" is not a valid choice/],
    ['mixed currencies', 'pricing', [{ ...env(), products: [{ id: 'P700', gross_price: '1', currency: 'CHF' }, { id: 'P350', gross_price: '1' }] }], /Mixed currencies in one transmission: CHF, EUR/],
  ];
  for (const [name, category, body, pattern] of cases) {
    const res = await post(category, body);
    t.equal(res.status, 400, `${name}: 400`);
    t.match(await res.text(), pattern, `${name}: message`);
  }
  const f = fixture();
  (f.stations[0] as any).layout.dispensers[0].nozzles[1].fuelling_options = [];
  (f.stations[0] as any).v1_fuel_types = ['700car']; // 350ld is no longer on the layout
  await p.load(f);
  const res = await post('availability', [availability({ nozzles: [{ id: 'N2', available: true }] })]);
  t.match(await res.json(), [{ non_field_errors: ['No fuelling option could be derived from the station layout; check the station registration.'] }]);
  const { latest, published, history } = await stored(p);
  t.equal(latest.length + published.length + history.length, 0, 'not one of them stored anything');
});

t.test('committed live signals are announced to every instance, testing ones are not', async (t) => {
  const p = await startTestPlatform(t, { fixture: fixture() });
  const heard: unknown[] = [];
  await p.parts.bus.on('signals', (message) => heard.push(message));
  const post = poster(p);
  const datetime = ago(3);
  t.equal((await post('availability', [availability({ datetime })])).status, 204);
  t.equal((await post('pricing', [{ hrs: 'BERLA', datetime, products: [{ id: 'P700', gross_price: '1' }] }])).status, 204);
  for (let i = 0; i < 50 && heard.length === 0; i++) await new Promise((resolve) => setTimeout(resolve, 20));
  await new Promise((resolve) => setTimeout(resolve, 100));
  t.match(heard, [
    {
      type: 'signals',
      from: p.parts.bus.instanceId,
      signals: [
        {
          hrs_id: 'BERLA',
          category: 'availability',
          originator_id: 'mon-1',
          measured_at: new Date(datetime).toISOString(),
          received_at: String,
          payload: { station: { maintenance: false }, nozzles: Array },
        },
      ],
    },
  ]);
  t.equal(heard.length, 1, 'one announcement: the testing pricing signal is not announced');
  t.equal((heard[0] as { signals: unknown[] }).signals.length, 1);
  const [row] = await p.sql<{ payload: unknown; received_at: Date }[]>`SELECT payload, received_at FROM published_signals WHERE hrs_id = 'BERLA' AND category = 'availability'`;
  const announced = (heard[0] as { signals: { payload: unknown; received_at: string }[] }).signals[0]!;
  t.same(announced.payload, row!.payload, 'the payload announced is the one stored');
  t.equal(announced.received_at, row!.received_at.toISOString(), 'and so is the receipt time');
});
