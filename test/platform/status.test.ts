import t from 'tap';
import { get as httpGet, type IncomingHttpHeaders } from 'node:http';
import { gunzipSync } from 'node:zlib';
import type { StatusChange } from '../../machines/live-status.js';
import { baseFixture, berlaAssignments, TOKENS } from '../helpers/fixtures.js';
import { get, startTestPlatform, type TestPlatform, postSignals as post } from '../helpers/platform.js';
import { until } from '../helpers/wait.js';

/** Tests that poll the status API many times a second raise the export v2 burst limit. */
const POLLING = { EXPORT_V2_RATE_LIMIT_MINUTE: '1000000' };

const ago = (seconds: number) => new Date(Date.now() - seconds * 1000).toISOString();

/** BERLA live for all four types with mon-1; HAMBG (draft layout only) has no signals. */
function fixture() {
  const f = baseFixture();
  f.assignments = berlaAssignments();
  return f;
}

type Fixture = ReturnType<typeof fixture>;
type Layout = { dispensers: { nozzles: { external_id: string }[] }[]; products: { external_id: string }[] };
const layoutOf = (f: Fixture) => (f.stations[0] as unknown as { layout: Layout }).layout;


async function status(p: TestPlatform, hrsId = 'BERLA'): Promise<Record<string, any>> {
  const res = await get(`${p.url}/v2/hrs/${hrsId}/status`, TOKENS.export_v2);
  if (res.status !== 200) throw new Error(`status of ${hrsId} answered ${res.status}: ${await res.text()}`);
  return (await res.json()) as Record<string, any>;
}

const availability = (datetime = ago(5), nozzles: unknown[] = [{ id: 'N1', available: true }, { id: 'N2', available: false }]) => ({
  hrs: 'BERLA',
  datetime,
  nozzles,
  station: { maintenance: false, limitedly_available: true },
});

/** Posts one reading of every category to BERLA. */
async function postAll(p: TestPlatform, datetime = ago(5)): Promise<void> {
  await post(p, 'availability', [availability(datetime)]);
  await post(p, 'usage', [{ hrs: 'BERLA', datetime, nozzles: [{ dispenser_id: 'D1', usage_status: 'in-use' }] }]);
  await post(p, 'hydrogen-storage', [{ hrs: 'BERLA', datetime, storages: [{ id: 'S1', remaining_kg: '42.50' }] }]);
  await post(p, 'pricing', [
    {
      hrs: 'BERLA',
      datetime,
      products: [
        { id: 'P700', gross_price: '13.850', currency: 'EUR' },
        { id: 'P350', gross_price: '11.5', net_price: '9.664' },
      ],
    },
  ]);
}

const iso = (text: string) => new Date(text).toISOString();

t.test('the status object, section by section, exactly as the spec lists it', async (t) => {
  const p = await startTestPlatform(t, { fixture: fixture() });
  const before = Date.now();
  const datetime = new Date(Date.now() - 7000).toISOString().replace('Z', '+00:00');
  await postAll(p, datetime);
  const res = await get(`${p.url}/v2/hrs/BERLA/status`, TOKENS.export_v2);
  t.equal(res.status, 200);
  t.equal(res.headers.get('content-type'), 'application/json; charset=utf-8');
  t.equal(res.headers.get('last-modified'), null, 'status is not conditional');
  const text = await res.text();
  t.notMatch(text, /remaining/, 'the hydrogen inventory never leaves the platform');
  const body = JSON.parse(text);
  t.same(Object.keys(body), ['hrs_id', 'availability', 'usage', 'hydrogen_storage', 'pricing']);
  const received = body.availability.received_datetime as string;
  t.match(received, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/, 'ISO 8601 with its offset');
  t.ok(Date.parse(received) >= before - 1000 && Date.parse(received) <= Date.now(), 'received when posted');
  t.same(body, {
    hrs_id: 'BERLA',
    availability: {
      datetime: iso(datetime),
      received_datetime: received,
      freshness: 'fresh',
      station: { maintenance: false, limitedly_available: true },
      nozzles: [
        { id: 'N1', available: true },
        { id: 'N2', available: false },
      ],
    },
    usage: {
      datetime: iso(datetime),
      received_datetime: body.usage.received_datetime,
      freshness: 'fresh',
      nozzles: [
        { id: 'N1', usage_status: 'in-use' },
        { id: 'N2', usage_status: 'in-use' },
      ],
    },
    hydrogen_storage: {
      datetime: iso(datetime),
      received_datetime: body.hydrogen_storage.received_datetime,
      freshness: 'fresh',
      storages: [{ id: 'S1', low_h2_storage: true }],
    },
    pricing: {
      datetime: iso(datetime),
      received_datetime: body.pricing.received_datetime,
      freshness: 'fresh',
      products: [
        { id: 'P700', gross_price: '13.850', net_price: null, currency: 'EUR' },
        { id: 'P350', gross_price: '11.500', net_price: '9.664', currency: 'EUR' },
      ],
    },
  });

  const all = await get(`${p.url}/v2/hrs/status`, TOKENS.export_v2);
  t.equal(all.status, 200);
  const list = (await all.json()) as { stations: Record<string, unknown>[] };
  t.same(
    list.stations.map((s) => s.hrs_id),
    ['BERLA', 'HAMBG'],
    'every registered station, sorted by hrs_id',
  );
  t.same(list.stations[0], body, 'the same object as the single-station endpoint');
  t.same(list.stations[1], { hrs_id: 'HAMBG', availability: null, usage: null, hydrogen_storage: null, pricing: null }, 'no live signal: all null');
});

t.test('authentication, unknown stations and the problem body', async (t) => {
  const p = await startTestPlatform(t, { fixture: fixture() });
  const missing = await get(`${p.url}/v2/hrs/NOPE1/status`, TOKENS.export_v2);
  t.equal(missing.status, 404);
  t.equal(missing.headers.get('content-type'), 'application/problem+json; charset=utf-8');
  t.match(await missing.json(), { status: 404, title: String, detail: 'No station with hrs_id "NOPE1".' });
  for (const token of [undefined, TOKENS.import_v2, TOKENS.export_v1]) {
    t.equal((await get(`${p.url}/v2/hrs/BERLA/status`, token)).status, 401, `token ${token ?? 'none'}`);
    t.equal((await get(`${p.url}/v2/hrs/status`, token)).status, 401);
  }
});

t.test('a snapshot replaces the previous one; late readings never overwrite newer ones', async (t) => {
  const p = await startTestPlatform(t, { fixture: fixture() });
  await post(p, 'availability', [availability(ago(20))]);
  await post(p, 'availability', [availability(ago(10), [{ id: 'N2', available: true }])]);
  let s = await status(p);
  t.same(s.availability.nozzles, [{ id: 'N2', available: true }], 'N1 was left out: it has no reported state');
  const newest = s.availability.datetime;
  await post(p, 'availability', [availability(ago(60), [{ id: 'N1', available: false }])]);
  s = await status(p);
  t.equal(s.availability.datetime, newest, 'a reading measured earlier is stored but does not replace the published one');
  t.same(s.availability.nozzles, [{ id: 'N2', available: true }]);
  const [row] = await p.sql<{ measured_at: Date }[]>`SELECT measured_at FROM published_signals WHERE hrs_id = 'BERLA' AND category = 'availability'`;
  t.equal(row!.measured_at.toISOString(), newest, 'memory and database agree');
});

t.test('testing and unassigned signals are never published', async (t) => {
  const f = fixture();
  f.assignments = [
    { originator: 'mon-1', hrs_id: 'BERLA', signal_type: 'availability', state: 'live' },
    { originator: 'mon-1', hrs_id: 'BERLA', signal_type: 'pricing', state: 'testing' },
  ];
  const p = await startTestPlatform(t, { fixture: f });
  await postAll(p);
  const s = await status(p);
  t.not(s.availability, null, 'live: published');
  t.equal(s.pricing, null, 'testing: not published');
  t.equal(s.usage, null, 'not assigned: not published');
  t.equal(s.hydrogen_storage, null);
  t.equal(p.parts.status.freshness('BERLA', 'pricing'), null, 'no actor for what is not published');
});

t.test('registry changes reach the published status at once, on every instance', async (t) => {
  const a = await startTestPlatform(t, { fixture: fixture(), env: POLLING });
  const b = await startTestPlatform(t, { sameStoreAs: a });
  await postAll(a);
  await until('instance B to see the pricing', async () => ((await status(b)).pricing ? true : undefined));

  const f = fixture();
  layoutOf(f).products = layoutOf(f).products.filter((product) => product.external_id !== 'P350');
  layoutOf(f).dispensers[0]!.nozzles = layoutOf(f).dispensers[0]!.nozzles.filter((n) => n.external_id !== 'N2');
  (layoutOf(f).products[0] as unknown as { nozzle_external_ids: string[] }).nozzle_external_ids = ['N1'];
  (f.stations[0] as { v1_fuel_types?: string[] }).v1_fuel_types = ['700car']; // the 350 bar option went with N2
  await a.load(f);
  await a.parts.bus.publish({ type: 'registry', hrs_ids: ['BERLA'], tokens: false });
  for (const [name, p] of [['A', a], ['B', b]] as const) {
    const s = await until(`instance ${name} to drop P350`, async () => {
      const current = await status(p);
      return current.pricing?.products.length === 1 ? current : undefined;
    });
    t.same(s.pricing.products.map((x: { id: string }) => x.id), ['P700'], `${name}: a removed product's price stops at once`);
    t.same(s.availability.nozzles, [{ id: 'N1', available: true }], `${name}: a removed nozzle disappears`);
    t.same(s.usage.nozzles, [{ id: 'N1', usage_status: 'in-use' }]);
  }

  layoutOf(f).products = [];
  await a.load(f);
  await a.parts.bus.publish({ type: 'registry', hrs_ids: ['BERLA'], tokens: false });
  for (const [name, p] of [['A', a], ['B', b]] as const) {
    // Waited for: the pricing of P700 alone to change; asserted: what it changed to.
    const s = await until(`instance ${name} to change its pricing`, async () => {
      const current = await status(p);
      return current.pricing?.products.length === 1 ? undefined : current;
    });
    t.equal(s.pricing, null, `${name}: no registered product left: pricing is null`);
  }

  f.assignments = f.assignments.map((x) => (x.signal_type === 'usage' ? { ...x, state: 'testing' } : x));
  await a.load(f);
  await a.parts.bus.publish({ type: 'registry', hrs_ids: ['BERLA'], tokens: false });
  for (const [name, p] of [['A', a], ['B', b]] as const) {
    const s = await until(`instance ${name} to change its usage`, async () => {
      const current = await status(p);
      return current.usage?.nozzles.length === 1 ? undefined : current;
    });
    t.equal(s.usage, null, `${name}: no live source for usage any more: the section is null`);
  }

  f.stations = f.stations.filter((s) => s.hrs_id !== 'BERLA');
  f.assignments = f.assignments.filter((x) => x.hrs_id !== 'BERLA');
  await a.load(f);
  await a.parts.bus.publish({ type: 'registry', hrs_ids: ['BERLA'], tokens: false });
  for (const p of [a, b]) {
    await until('BERLA to be gone', async () => ((await get(`${p.url}/v2/hrs/BERLA/status`, TOKENS.export_v2)).status === 404 ? true : undefined));
    t.equal(p.parts.status.freshness('BERLA', 'availability'), null, 'its actors are removed');
  }
});

t.test('availability and usage turn null at the unknown deadline and come back with the next signal', async (t) => {
  const p = await startTestPlatform(t, { fixture: fixture(), env: { STATUS_STALE_AFTER: '1', STATUS_UNKNOWN_AFTER: '2', ...POLLING } });
  const changes: StatusChange[] = [];
  p.parts.status.onChange((change) => changes.push(change));
  const posted = Date.now();
  await postAll(p, new Date(posted).toISOString());
  t.equal(p.parts.status.freshness('BERLA', 'availability'), 'fresh');
  await until('availability to turn stale', () => (p.parts.status.freshness('BERLA', 'availability') === 'stale' ? true : undefined), 5000, 10);
  t.not((await status(p)).availability, null, 'stale is still published');
  const s = await until('availability to turn null', async () => {
    const current = await status(p);
    return current.availability === null ? current : undefined;
  }, 6000, 20);
  t.ok(Date.now() - posted >= 2000, 'not before the deadline');
  t.equal(s.usage, null, 'usage too');
  t.not(s.hydrogen_storage, null, 'hydrogen storage never turns unknown');
  t.not(s.pricing, null, 'pricing never turns unknown');
  t.equal(p.parts.status.freshness('BERLA', 'hydrogen-storage'), 'stale');

  const transitions = changes
    .filter((c) => c.category === 'availability')
    .map((c) => [c.cause, c.previous, c.freshness, c.section === null]);
  t.same(transitions, [
    ['signal', null, 'fresh', false],
    ['freshness', 'fresh', 'stale', false],
    ['freshness', 'stale', 'unknown', true],
  ], 'every published change and freshness transition is on the change stream');

  await post(p, 'availability', [availability(ago(0))]);
  t.not((await status(p)).availability, null, 'the next signal brings it back');
  t.same(changes.at(-1), { ...changes.at(-1), category: 'availability', cause: 'signal', previous: 'unknown', freshness: 'fresh' });
});

t.test('a restart restores the same status, with deadlines from the stored datetime', async (t) => {
  const a = await startTestPlatform(t, { fixture: fixture() });
  await postAll(a);
  const before = await status(a);
  const config = { ...a.parts.config };
  await a.stop('restart');
  const b = await startTestPlatform(t, { sameStoreAs: { ...a, parts: { ...a.parts, config } } as TestPlatform });
  t.same(await status(b), before, 'every section restored as it was published');
  t.equal(b.parts.status.freshness('BERLA', 'availability'), 'fresh');

  // Age the stored readings (the running instance keeps its own), then start again.
  await b.sql`UPDATE published_signals SET measured_at = now() - interval '31 minutes' WHERE category = 'availability'`;
  await b.sql`UPDATE published_signals SET measured_at = now() - interval '10 minutes' WHERE category = 'usage'`;
  await b.sql`UPDATE published_signals SET measured_at = now() - interval '3 days' WHERE category IN ('hydrogen-storage', 'pricing')`;
  await b.stop('restart');
  const c = await startTestPlatform(t, { sameStoreAs: { ...a, parts: { ...a.parts, config } } as TestPlatform });
  const s = await status(c);
  t.equal(c.parts.status.freshness('BERLA', 'availability'), 'unknown', '31 minutes old: back as unknown, not fresh');
  t.equal(s.availability, null);
  t.equal(c.parts.status.freshness('BERLA', 'usage'), 'stale', '10 minutes old: stale');
  t.not(s.usage, null);
  t.equal(c.parts.status.freshness('BERLA', 'pricing'), 'stale');
  t.not(s.pricing, null, 'old prices are still the prices');
  t.not(s.hydrogen_storage, null);
});

t.test('two instances: a signal accepted by one is served by the other, and both age it alike', async (t) => {
  const a = await startTestPlatform(t, { fixture: fixture(), env: { STATUS_STALE_AFTER: '1', STATUS_UNKNOWN_AFTER: '3', ...POLLING } });
  const b = await startTestPlatform(t, { sameStoreAs: a });
  const datetime = new Date().toISOString();
  await post(a, 'availability', [availability(datetime)]);
  const seen = await until('instance B to serve the signal', async () => {
    const s = await status(b);
    return s.availability ? s : undefined;
  });
  t.same(seen, await status(a), 'both serve the same object');
  const deadline = Date.parse(datetime) + 3000;
  for (const [name, p] of [['A', a], ['B', b]] as const) {
    await until(`${name} to turn availability unknown`, async () => ((await status(p)).availability === null ? true : undefined), 8000, 20);
    t.ok(Date.now() >= deadline, `${name}: unknown from the same datetime, not before ${new Date(deadline).toISOString()}`);
  }
});

t.test('the all-stations list is sent gzip-encoded to clients that accept it', async (t) => {
  const p = await startTestPlatform(t, { fixture: fixture() });
  await postAll(p);
  const raw = (acceptEncoding?: string) =>
    new Promise<{ headers: IncomingHttpHeaders; body: Buffer }>((resolve, reject) => {
      const headers: Record<string, string> = { Authorization: `Bearer ${TOKENS.export_v2}` };
      if (acceptEncoding !== undefined) headers['Accept-Encoding'] = acceptEncoding;
      httpGet(`${p.url}/v2/hrs/status`, { headers }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ headers: res.headers, body: Buffer.concat(chunks) }));
      }).on('error', reject);
    });
  const plain = await raw();
  t.equal(plain.headers['content-encoding'], undefined);
  t.equal(plain.headers.vary, 'Accept, Accept-Encoding', 'by Accept too: JSON or GeoJSON');
  t.equal(Number(plain.headers['content-length']), plain.body.length);
  const list = JSON.parse(plain.body.toString('utf8')) as { stations: { hrs_id: string }[] };
  t.same(list.stations.map((s) => s.hrs_id), ['BERLA', 'HAMBG']);
  for (const header of ['gzip', 'br, gzip;q=0.5', 'deflate, *']) {
    const zipped = await raw(header);
    t.equal(zipped.headers['content-encoding'], 'gzip', `Accept-Encoding: ${header}`);
    t.same(gunzipSync(zipped.body), plain.body, 'the same bytes once decoded');
  }
  for (const header of ['gzip;q=0', 'br', 'identity', '*;q=0']) {
    t.equal((await raw(header)).headers['content-encoding'], undefined, `Accept-Encoding: ${header}`);
  }
  await post(p, 'availability', [availability(ago(1), [{ id: 'N1', available: false }])]);
  const after = JSON.parse(gunzipSync((await raw('gzip')).body).toString('utf8')) as { stations: Record<string, any>[] };
  t.same(after.stations[0]!.availability.nozzles, [{ id: 'N1', available: false }], 'a new signal is in the next list, encoded or not');
});
