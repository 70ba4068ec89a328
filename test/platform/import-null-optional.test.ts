/**
 * `null` for an optional field of import v1, v1.1 and v2 is the field left out: `dry_run: null` is a
 * real transmission, `currency: null` is EUR, as `net_price: null` always was "no net price". Each
 * request with nulls is stored exactly as the same request without those fields.
 */
import t from 'tap';
import { baseFixture, berlaAssignments, TOKENS } from '../helpers/fixtures.js';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.js';

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
