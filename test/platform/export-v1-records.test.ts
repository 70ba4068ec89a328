/**
 * Export v1.1 and v1 station records: the list (not paginated) and one record, both conditional,
 * events and photos; v1's frozen record in v1 codes; export v2's record a superset of v1.1's.
 */
import t from 'tap';
import { legacyFixture, TOKENS } from '../helpers/fixtures.js';
import { get, startTestPlatform, type TestPlatform } from '../helpers/platform.js';

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

  // The registry changes: the record and its Last-Modified follow.
  await new Promise((resolve) => setTimeout(resolve, 1100));
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
