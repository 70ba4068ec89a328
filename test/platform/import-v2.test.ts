/**
 * Import v2 over HTTP: signals, limits, strings, by property.
 *
 * One file, one process: its parts share the loaded platform code. Each part is a subtest named after
 * what it covers.
 */
import fc from 'fast-check';
import t from 'tap';
import { decimalProblem } from '../../src/domain/decimal.js';
import { unstorableProblem } from '../../src/domain/import-v2/fields.js';
import { LIMIT_MESSAGES, LIMITS } from '../../src/domain/import-v2/validate.js';
import { baseFixture, TOKENS } from '../helpers/fixtures.js';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.js';
import { holds } from '../helpers/property.js';
import { runs } from '../helpers/scale.js';

t.test('import-v2', async (t) => {
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

  /**
   * Tests whose every request is refused (nothing stored) share one platform, started once for them;
   * they send 8 transmissions with the import v2 token, far below its limit.
   */
  t.test('refused requests', async (t) => {
    let p: TestPlatform;
    t.before(async () => {
      p = await startTestPlatform(t, { fixture: fixture() });
    });

    t.test('paths: trailing slash required, import v2 tokens only', async (t) => {
      const post = poster(p);
      const res = await fetch(`${p.url}/import/v2/signal/availability`, { method: 'POST', body: '[]', headers: { Authorization: `Bearer ${TOKENS.import_v2}` } });
      t.equal(res.status, 404);
      t.same(await res.json(), { detail: 'Not found. The trailing slash is required: /import/v2/signal/availability/' });
      for (const token of [TOKENS.import_v1, TOKENS.export_v2, TOKENS.export_v1]) {
        t.equal((await post('availability', [availability()], token)).status, 401);
      }
      t.equal((await stored(p)).latest.length, 0, 'nothing processed');
    });

    t.test('a non-array body, an empty array, malformed JSON', async (t) => {
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

    t.test('every field error of the spec reaches the client in the aligned body', async (t) => {
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
});

t.test('import-v2-limits', async (t) => {
  /**
   * Import v2 over HTTP against hostile bodies: the limits on one request (transmissions, entries per
   * list, nesting, error messages), the media type, duplicate keys. Nothing here measures time: every
   * refusal is checked by its status, its shape and the size of its body.
   */

  const ago = (seconds: number) => new Date(Date.now() - seconds * 1000).toISOString();

  function fixture() {
    const f = baseFixture();
    f.assignments.push({ originator: 'mon-1', hrs_id: 'BERLA', signal_type: 'usage', state: 'live' });
    return f;
  }

  /** Posts raw bytes (a Uint8Array body gets no Content-Type from fetch unless given). */
  async function postRaw(p: TestPlatform, category: string, body: string, headers: Record<string, string> = { 'Content-Type': 'application/json' }) {
    const res = await fetch(`${p.url}/import/v2/signal/${category}/`, {
      method: 'POST',
      body: new TextEncoder().encode(body),
      headers: { Authorization: `Bearer ${TOKENS.import_v2}`, ...headers },
    });
    const text = await res.text();
    return { status: res.status, text, json: text === '' ? undefined : (JSON.parse(text) as unknown) };
  }

  /** A JSON array of `item` repeated to just under `bytes`. */
  function filler(item: string, bytes: number): string {
    const count = Math.floor((bytes - 2) / (item.length + 1));
    return `[${Array(count).fill(item).join(',')}]`;
  }

  /** Every reading ever stored (signal_history keeps each one): unchanged across a refused request. */
  async function storedCount(p: TestPlatform): Promise<number> {
    const rows = await p.sql`SELECT count(*)::int AS n FROM signal_history`;
    return rows[0]!.n as number;
  }

  let shared: Promise<TestPlatform> | undefined;
  /**
   * One platform for the file's HTTP tests: each sends its own requests and looks only at their answers
   * and at whether a refusal stored anything, so they need not pay for a platform each. Stopped when the
   * file ends.
   */
  const platform = () => (shared ??= startTestPlatform(t, { fixture: fixture() }));

  const usage = (extra: Record<string, unknown> = {}) => ({ hrs: 'BERLA', datetime: ago(2), nozzles: [{ id: 'N1', usage_status: 'free' }], ...extra });
  const tooMany = { non_field_errors: [LIMIT_MESSAGES.tooLong(LIMITS.transmissions)] };

  t.test('a 1 MiB array of numbers or empty objects is refused whole, with a small body', async (t) => {
    const p = await platform();
    const max = p.parts.config.maxBodyBytes;
    for (const item of ['1', '{}']) {
      const body = filler(item, max - 16);
      const res = await postRaw(p, 'availability', body);
      t.equal(res.status, 400, `[${item},…] (${body.length} bytes): 400`);
      t.same(res.json, tooMany, 'refused up front in the import format');
      t.ok(res.text.length < 200, `the body is small (${res.text.length} bytes)`);
    }
    // Exactly at the limit the array is validated; one more is refused.
    const atLimit = await postRaw(p, 'usage', JSON.stringify(Array(LIMITS.transmissions).fill(1)));
    t.equal(atLimit.status, 400);
    t.ok(Array.isArray(atLimit.json) && (atLimit.json as unknown[]).length === LIMITS.transmissions, 'at the limit: an aligned array');
    t.same((await postRaw(p, 'usage', JSON.stringify(Array(LIMITS.transmissions + 1).fill(1)))).json, tooMany, 'one more: refused');
  });

  t.test('the server answers others while a big request is handled', async (t) => {
    const p = await platform();
    const body = filler('{}', p.parts.config.maxBodyBytes - 16);
    const [big, health, other] = await Promise.all([
      postRaw(p, 'availability', body),
      fetch(`${p.url}/healthz`).then(async (res) => ({ status: res.status, body: await res.json() })),
      postRaw(p, 'usage', JSON.stringify([usage()])),
    ]);
    t.equal(big.status, 400);
    t.same(health, { status: 200, body: { status: 'ok' } });
    t.equal(other.status, 204, 'a normal request beside it is served');
  });

  t.test('error messages are capped: later transmissions are not validated, the body stays aligned and bounded', async (t) => {
    const p = await platform();
    const items = Array(LIMITS.transmissions).fill({});
    const res = await postRaw(p, 'availability', JSON.stringify(items));
    t.equal(res.status, 400);
    const body = res.json as Record<string, string[]>[];
    t.equal(body.length, items.length, 'aligned with the request');
    // `{}` is four messages for availability (hrs, datetime, nozzles, station).
    const reported = Math.ceil(LIMITS.reportedErrors / 4);
    t.same(Object.keys(body[0]!).sort(), ['datetime', 'hrs', 'nozzles', 'station']);
    t.same(Object.keys(body[reported - 1]!).sort(), ['datetime', 'hrs', 'nozzles', 'station'], 'validated until the budget is spent');
    t.same(body[reported], { non_field_errors: [LIMIT_MESSAGES.notValidated] }, 'then not validated');
    t.same(body.at(-1), { non_field_errors: [LIMIT_MESSAGES.notValidated] });
    t.ok(res.text.length < 200_000, `bounded body (${res.text.length} bytes)`);
  });

  t.test('a list of entries over the limit is reported alone, its entries not looked into', async (t) => {
    const p = await platform();
    const nozzles = Array(LIMITS.entries + 1).fill({ id: 'N1', usage_status: 'nonsense' });
    const res = await postRaw(p, 'usage', JSON.stringify([usage({ nozzles }), usage({ hrs: 'HAMBG' })]));
    t.equal(res.status, 400);
    t.match(res.json, [{ nozzles: [LIMIT_MESSAGES.tooLong(LIMITS.entries)] }, { nozzles: [{ id: ['Unknown nozzle identifier: N1'] }] }], 'the other transmission is validated');
    t.same(Object.keys((res.json as object[])[0]!), ['nozzles'], 'nothing else about that transmission');
    const atLimit = await postRaw(p, 'usage', JSON.stringify([usage({ nozzles: nozzles.slice(1) })]));
    t.match(atLimit.json, [{ nozzles: Array }], 'at the limit the entries are validated');
    t.equal(((atLimit.json as { nozzles: unknown[] }[])[0]!.nozzles).length, LIMITS.entries);
  });

  t.test('nesting deeper than the limit is a parse error', async (t) => {
    const p = await platform();
    const deep = '['.repeat(100_000) + ']'.repeat(100_000);
    const res = await postRaw(p, 'usage', deep);
    t.equal(res.status, 400);
    t.same(res.json, { detail: `JSON parse error - nesting deeper than ${LIMITS.depth} levels at $${'[0]'.repeat(LIMITS.depth)}.` });
    const ok = JSON.stringify([usage({ extra: [[[[[[[1]]]]]]] })]);
    t.equal((await postRaw(p, 'usage', ok)).status, 204, 'unknown fields nested within the limit are ignored as before');
  });

  t.test('duplicate keys are refused, naming the key and its place; nothing is stored', async (t) => {
    const p = await platform();
    const stored = await storedCount(p);
    const base = JSON.stringify(usage()).slice(0, -1);
    let res = await postRaw(p, 'usage', `[${base}, "dry_run": true, "dry_run": false}]`);
    t.equal(res.status, 400);
    t.same(res.json, { detail: 'JSON parse error - duplicate key "dry_run" at $[0].' });
    res = await postRaw(p, 'usage', `[${base}, "hrs": "BERLA"}]`);
    t.same(res.json, { detail: 'JSON parse error - duplicate key "hrs" at $[0].' }, 'an escaped spelling is the same key');
    res = await postRaw(p, 'usage', `[{"hrs":"BERLA","datetime":"${ago(2)}","nozzles":[{"id":"N1","usage_status":"free","\\u0069d":"N2"}]}]`);
    t.same(res.json, { detail: 'JSON parse error - duplicate key "id" at $[0].nozzles[0].' });
    t.equal(await storedCount(p), stored, 'nothing stored');
    res = await postRaw(p, 'usage', JSON.stringify([usage({ dry_run: false })]));
    t.equal(res.status, 204, 'the same keys in different objects are fine');
  });

  t.test('Content-Type: application/json is required', async (t) => {
    const p = await platform();
    const stored = await storedCount(p);
    const body = JSON.stringify([usage()]);
    const missing = await postRaw(p, 'usage', body, {});
    t.equal(missing.status, 415);
    t.same(missing.json, { detail: 'Unsupported media type "" in request. Send "Content-Type: application/json".' });
    t.equal((await postRaw(p, 'usage', body, { 'Content-Type': 'text/plain' })).status, 415);
    t.equal(await storedCount(p), stored, 'nothing stored');
    t.equal((await postRaw(p, 'usage', body, { 'Content-Type': 'application/json; charset=utf-8' })).status, 204);
  });

  t.test('the work is bounded by counting: transmissions past the error budget or the limit are never parsed', async (t) => {
    const { CATEGORY } = await import('../../src/domain/categories/index.js');
    const { validateBatch } = await import('../../src/domain/import-v2/validate.js');
    const schema = CATEGORY.availability.transmission;
    const original = schema.safeParse.bind(schema);
    let parses = 0;
    schema.safeParse = ((value: unknown) => (parses++, original(value))) as typeof schema.safeParse;
    t.teardown(() => void (schema.safeParse = original));
    const registry = { station: () => undefined };
    validateBatch('availability', Array(LIMITS.transmissions + 1).fill({}), registry, new Date());
    t.equal(parses, 0, 'over the limit: nothing parsed');
    validateBatch('availability', Array(LIMITS.transmissions).fill({}), registry, new Date());
    t.equal(parses, Math.ceil(LIMITS.reportedErrors / 4), 'at the limit: parsing stops once the error budget is spent');
    parses = 0;
    validateBatch('availability', [{ hrs: 'BERLA', nozzles: Array(LIMITS.entries + 1).fill({}) }], registry, new Date());
    t.equal(parses, 0, 'an oversized list: its transmission is not parsed');
  });

  t.test('validated in slices: the same result, with a pause after every slice', async (t) => {
    const { validateBatch, validateBatchInSlices } = await import('../../src/domain/import-v2/validate.js');
    const registry = { station: () => undefined };
    const now = new Date();
    const body = Array.from({ length: 120 }, (_, i) => ({ hrs: `ST${i}`, datetime: now.toISOString(), nozzles: [{ id: 'N1', usage_status: 'free' }] }));
    let pauses = 0;
    const sliced = await validateBatchInSlices('usage', body, registry, now, 50, async () => void pauses++);
    t.same(sliced, validateBatch('usage', body, registry, now));
    t.equal(pauses, 2, '120 transmissions in slices of 50: two pauses');
    t.same(await validateBatchInSlices('usage', {}, registry, now, 50, async () => void pauses++), validateBatch('usage', {}, registry, now));
  });

  t.test('duplicate keys: found in objects of any size, the first repeated key named', async (t) => {
    const { structureProblem } = await import('../../src/http/request.js');
    const fc = (await import('fast-check')).default;
    await holds(
      t,
      fc.property(fc.array(fc.constantFrom('a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i', 'j', 'k', 'l', 'm', 'n', 'o', 'p', 'q', 'r', 's', 't'), { maxLength: 30 }), (keys) => {
        const text = `[{${keys.map((k, i) => `${JSON.stringify(k)}:${i}`).join(',')}}]`;
        const seen = new Set<string>();
        const first = keys.find((k) => (seen.has(k) ? true : (seen.add(k), false)));
        const problem = structureProblem(text, { duplicates: true, maxDepth: 10, maxItems: 10 });
        return problem === (first === undefined ? undefined : `duplicate key ${JSON.stringify(first)} at $[0].`);
      }),
      { numRuns: runs(500) },
      `${runs(500)} objects of up to 30 keys: a duplicate is reported exactly when there is one, the first named`,
    );
  });
});

t.test('import-v2-property', async (t) => {
  const CATEGORIES = ['availability', 'usage', 'hydrogen-storage', 'pricing'] as const;

  function validBatch(category: (typeof CATEGORIES)[number]) {
    const envelope = { hrs: 'BERLA', datetime: new Date().toISOString(), dry_run: true };
    switch (category) {
      case 'availability':
        return [{ ...envelope, nozzles: [{ id: 'N1', available: true }, { dispenser_id: 'D1', available: false }], station: { maintenance: false, limitedly_available: false } }];
      case 'usage':
        return [{ ...envelope, nozzles: [{ id: 'N1', usage_status: 'free' }] }];
      case 'hydrogen-storage':
        return [{ ...envelope, storages: [{ id: 'S1', remaining_kg: '120.5', low_h2_storage: false }] }];
      case 'pricing':
        return [{ ...envelope, products: [{ id: 'P700', gross_price: '13.850', net_price: '11.640', currency: 'EUR' }] }];
    }
  }

  function paths(value: unknown, prefix: (string | number)[] = []): (string | number)[][] {
    const here = prefix.length > 0 ? [prefix] : [];
    if (Array.isArray(value)) return [...here, ...value.flatMap((v, i) => paths(v, [...prefix, i]))];
    if (value !== null && typeof value === 'object') return [...here, ...Object.entries(value).flatMap(([k, v]) => paths(v, [...prefix, k]))];
    return here;
  }

  function mutate(root: any, path: (string | number)[], value: unknown, remove: boolean): void {
    let node = root;
    for (const key of path.slice(0, -1)) node = node[key];
    const last = path[path.length - 1]!;
    if (remove && !Array.isArray(node)) delete node[last];
    else node[last] = value;
  }

  /** A 400 body is the non_field_errors object, or an array aligned with the request of objects. */
  function wellFormed(sent: unknown, status: number, body: unknown): boolean {
    if (status === 204) return body === '';
    if (status !== 400) return false;
    const b = body as any;
    if (!Array.isArray(sent)) return Array.isArray(b?.non_field_errors) && b.non_field_errors.length === 1;
    if (sent.length === 0) return Array.isArray(b?.non_field_errors);
    return Array.isArray(b) && b.length === sent.length && b.every((x) => x !== null && typeof x === 'object' && !Array.isArray(x)) && b.some((x) => Object.keys(x).length > 0);
  }

  t.test('arbitrary and mutated bodies: never a 5xx, every 400 well formed', async (t) => {
    const f = baseFixture();
    f.originators.push({ id: 'mon-2', name: 'Monitoring Two', call_log_mode: 'disabled' });
    f.tokens.push({ generation: 'import_v2', originator: 'mon-2', value: 'test-import-v2-token-0002' });
    const p = await startTestPlatform(t, { fixture: f });
    const post = async (category: string, body: unknown, token: string) => {
      const res = await fetch(`${p.url}/import/v2/signal/${category}/`, {
        method: 'POST',
        body: JSON.stringify(body),
        headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
      });
      const text = await res.text();
      return { status: res.status, body: res.status === 204 ? '' : JSON.parse(text) };
    };

    // One originator's budget is 300 requests a minute: each property uses its own originator.
    await holds(
      t,
      fc.asyncProperty(fc.constantFrom(...CATEGORIES), fc.jsonValue(), async (category, body) => {
        const res = await post(category, body, TOKENS.import_v2);
        if (!wellFormed(body, res.status, res.body)) throw new Error(`${res.status} ${JSON.stringify(res.body)} for ${JSON.stringify(body)}`);
      }),
      { numRuns: runs(140) },
      `no 5xx and no malformed 400 in ${runs(140)} requests of any JSON`,
    );
    await holds(
      t,
      fc.asyncProperty(
        fc.constantFrom(...CATEGORIES).chain((category) =>
          fc.tuple(fc.constant(category), fc.constantFrom(...paths(validBatch(category))), fc.jsonValue({ maxDepth: 2 }), fc.boolean()),
        ),
        async ([category, path, value, remove]) => {
          const batch = validBatch(category);
          mutate(batch, path, value, remove);
          const res = await post(category, batch, 'test-import-v2-token-0002');
          if (!wellFormed(batch, res.status, res.body)) throw new Error(`${res.status} ${JSON.stringify(res.body)} for ${JSON.stringify(batch)}`);
        },
      ),
      { numRuns: runs(280) },
      `nor in ${runs(280)} valid batches with one value replaced or removed`,
    );
  });

  t.test('values whose String() throws (`{"toString": null}`): a 400 naming them as [object Object], never a 5xx', async (t) => {
    const p = await startTestPlatform(t, { fixture: baseFixture() });
    const awkward: unknown[] = [{ toString: null }, [{ toString: null }], { toString: null, valueOf: null }];
    const cases: [string, (value: unknown) => unknown[]][] = [
      ['hydrogen-storage', (id) => [{ ...validBatch('hydrogen-storage')[0], storages: [{ id, remaining_kg: '120.5', low_h2_storage: true }] }]],
      ['pricing', (id) => [{ ...validBatch('pricing')[0], products: [{ id, gross_price: '13.850', net_price: '14.640', currency: 'EUR' }] }]],
      ['usage', (status) => [{ ...validBatch('usage')[0], nozzles: [{ id: 'N1', usage_status: status }] }]],
    ];
    const fields = { 'hydrogen-storage': 'storages', pricing: 'products', usage: 'nozzles' } as Record<string, string>;
    for (const value of awkward) {
      for (const [category, batch] of cases) {
        const res = await fetch(`${p.url}/import/v2/signal/${category}/`, {
          method: 'POST',
          body: JSON.stringify(batch(value)),
          headers: { Authorization: `Bearer ${TOKENS.import_v2}`, 'Content-Type': 'application/json' },
        });
        const body = (await res.json()) as any;
        const entry = body?.[0]?.[fields[category]!]?.[0];
        const words = Object.values(entry ?? {}).flat().join(' ');
        t.equal(res.status, 400, `${category} with ${JSON.stringify(value)}: 400`);
        t.match(words, category === 'usage' ? /^"\[object Object\]" is not a valid choice\.$/ : /Not a valid string\..*\[object Object\]/, `${category}: ${words}`);
      }
    }
  });
});

t.test('import-v2-strings', async (t) => {
  /**
   * Values that used to pass validation and then fail or be bent when stored: NUL and lone surrogates
   * in strings (PostgreSQL refuses them), a price with a leading `+` (`currency: null` is EUR: test/platform/import-v1.test.ts).
   */

  const ago = (seconds: number) => new Date(Date.now() - seconds * 1000).toISOString();

  function fixture() {
    const f = baseFixture();
    f.assignments.push({ originator: 'mon-1', hrs_id: 'BERLA', signal_type: 'usage', state: 'live' });
    return f;
  }

  /** Posts the JSON text as is (JSON.stringify writes lone surrogates as `\ud800` escapes, as a client would). */
  async function post(p: TestPlatform, category: string, body: unknown) {
    const res = await fetch(`${p.url}/import/v2/signal/${category}/`, {
      method: 'POST',
      body: JSON.stringify(body),
      headers: { Authorization: `Bearer ${TOKENS.import_v2}`, 'Content-Type': 'application/json' },
    });
    const text = await res.text();
    return { status: res.status, json: text === '' ? undefined : (JSON.parse(text) as unknown) };
  }

  async function storedCount(p: TestPlatform): Promise<number> {
    const rows = await p.sql`SELECT count(*)::int AS n FROM signal_latest`;
    return rows[0]!.n as number;
  }

  let shared: Promise<TestPlatform> | undefined;
  /**
   * One platform for the file's HTTP tests: each looks only at the answers to its own requests and at
   * whether its refused ones stored anything. Stopped when the file ends.
   */
  const platform = () => (shared ??= startTestPlatform(t, { fixture: fixture() }));

  const usage = (extra: Record<string, unknown> = {}) => ({ hrs: 'BERLA', datetime: ago(2), nozzles: [{ id: 'N1', usage_status: 'free' }], ...extra });

  t.test('the rule: NUL and unpaired surrogates are named, pairs are text', async (t) => {
    t.equal(unstorableProblem('a\u0000b'), 'Null characters are not allowed.');
    t.equal(unstorableProblem('a\ud800b'), 'Surrogate characters are not allowed: U+D800.');
    t.equal(unstorableProblem('\udfff'), 'Surrogate characters are not allowed: U+DFFF.');
    t.equal(unstorableProblem('x\udc00\ud800'), 'Surrogate characters are not allowed: U+DC00.', 'a low before a high is not a pair');
    t.equal(unstorableProblem('run 😀 ü'), undefined, 'a surrogate pair is an ordinary character');
  });

  t.test('NUL or a lone surrogate in transmission_id: 400 naming the field, real and dry run alike', async (t) => {
    const p = await platform();
    const cases: [string, string][] = [
      ['a\u0000b', 'Null characters are not allowed.'],
      ['a\ud800b', 'Surrogate characters are not allowed: U+D800.'],
      ['\udfff', 'Surrogate characters are not allowed: U+DFFF.'],
    ];
    for (const [value, message] of cases) {
      for (const dry_run of [false, true]) {
        const res = await post(p, 'usage', [usage({ transmission_id: value, dry_run })]);
        t.equal(res.status, 400, `${JSON.stringify(value)}, dry run ${dry_run}: 400`);
        t.same(res.json, [{ transmission_id: [message] }], 'names the field');
      }
    }
    t.equal(await storedCount(p), 0, 'nothing stored');
    const ok = await post(p, 'usage', [usage({ transmission_id: 'run 😀' })]);
    t.equal(ok.status, 204, 'a transmission_id with a surrogate pair is stored');
    const rows = await p.sql`SELECT transmission_id FROM published_signals`;
    t.equal(rows[0]!.transmission_id, 'run 😀');
  });

  t.test('every text field has the rule: ids, station, datetime', async (t) => {
    const p = await platform();
    const res = await post(p, 'usage', [usage({ hrs: 'BER\u0000', nozzles: [{ dispenser_id: 'D\ud801', usage_status: 'free' }] })]);
    t.equal(res.status, 400);
    t.match(res.json, [{ hrs: ['Null characters are not allowed.'], nozzles: [{ dispenser_id: ['Surrogate characters are not allowed: U+D801.'] }] }]);
  });

  t.test('a price with a leading + is not a number', async (t) => {
    const rule = { maxDigits: 8, decimalPlaces: 3 };
    t.equal(decimalProblem('+5', rule), 'A valid number is required.');
    t.equal(decimalProblem('-5', rule), undefined, 'a minus sign is read (and refused later as a range problem)');
    const p = await platform();
    const stored = await storedCount(p);
    const pricing = (product: Record<string, unknown>) => [{ hrs: 'BERLA', datetime: ago(2), products: [{ id: 'P700', gross_price: '5', ...product }] }];
    let res = await post(p, 'pricing', pricing({ gross_price: '+5' }));
    t.same(res.json, [{ products: [{ gross_price: ['A valid number is required.'] }] }]);
    res = await post(p, 'pricing', pricing({ net_price: '+4.5' }));
    t.same(res.json, [{ products: [{ net_price: ['A valid number is required.'] }] }]);
    res = await post(p, 'hydrogen-storage', [{ hrs: 'BERLA', datetime: ago(2), storages: [{ id: 'S1', remaining_kg: '+120' }] }]);
    t.same(res.json, [{ storages: [{ remaining_kg: ['A valid number is required.'] }] }]);
    t.equal(await storedCount(p), stored, 'nothing stored');
    t.equal((await post(p, 'pricing', pricing({}))).status, 204, 'currency left out: EUR, as before');
  });
});
