import t, { type Test } from 'tap';
import { check } from '@placemarkio/check-geojson';
import { haversineKm, roundKm } from '../../src/domain/geo.js';
import { isSandboxId } from '../../src/domain/sandbox.js';
import { stationFeatureCollectionSchema, statusFeatureCollectionSchema } from '../../src/domain/export-v2/geojson.js';
import { stationPageSchema, stationStatusListSchema } from '../../src/domain/export-v2/schemas.js';
import { baseFixture, TOKENS } from '../helpers/fixtures.js';
import { get, startTestPlatform, type TestPlatform } from '../helpers/platform.js';

/**
 * The geo extension of export v2 over real HTTP: `bbox`, `near` with `radius_km` on `GET /v2/hrs`
 * and `GET /v2/hrs/status`, their refusals, paging and `If-Modified-Since` with a filter, and GeoJSON
 * on `Accept: application/geo+json` (checked with @placemarkio/check-geojson).
 */

/** The export v2 rate limits (60 a minute) would stop these tests long before they are done. */
const ENV = { EXPORT_V2_RATE_LIMIT_MINUTE: '1000000', EXPORT_V2_RATE_LIMIT_DAY: '1000000' };
const PROBLEM = 'application/problem+json; charset=utf-8';
const GEOJSON = 'application/geo+json';

type Json = Record<string, any>;

/** Where the stations stand; HAMBG has no coordinates. TOWNA and TOWNB share a place (ties by id). */
const PLACES: Record<string, { lat: number; lon: number }> = {
  BERLA: { lat: 52.3667, lon: 13.5033 },
  POTSD: { lat: 52.3906, lon: 13.0645 },
  LEIPZ: { lat: 51.3397, lon: 12.3731 },
  MUNIC: { lat: 48.1351, lon: 11.582 },
  TOWNB: { lat: 52.1, lon: 13.2 },
  TOWNA: { lat: 52.1, lon: 13.2 },
  FIJIA: { lat: -17.7, lon: 178.0 },
  SAMOA: { lat: -13.8, lon: -172.1 },
  DATEL: { lat: -16.0, lon: 180 },
};

function fixture(places = PLACES) {
  const f = baseFixture();
  const stations = f.stations as Json[];
  stations[0]!.details = { city: 'Berlin', vehicle_types: ['M1'], lat: places.BERLA!.lat, lon: places.BERLA!.lon };
  for (const [id, place] of Object.entries(places)) {
    if (id === 'BERLA') continue;
    // Coordinates in each of the forms the registry reads (top level, or a `coordinates` object).
    const details = id === 'LEIPZ' ? { coordinates: { lat: place.lat, lon: place.lon } } : { lat: place.lat, lon: place.lon };
    stations.push({ hrs_id: id, operator: 'h2-demo', name: `Station ${id}`, details });
  }
  return f;
}

async function answer(p: TestPlatform, path: string, headers: Record<string, string> = {}): Promise<{ res: Response; text: string; json: Json }> {
  const res = await get(`${p.url}${path}`, TOKENS.export_v2, { headers });
  const text = await res.text();
  if (res.status !== 200) throw new Error(`GET ${path} answered ${res.status}: ${text}`);
  return { res, text, json: JSON.parse(text) as Json };
}

const idsOf = (list: Json[]) => list.map((item) => item.hrs_id);
const km = (from: { lat: number; lon: number }, id: string) => roundKm(haversineKm(from, PLACES[id]!));

const p = await startTestPlatform(t, { env: ENV, fixture: fixture() });

const GERMANY = 'bbox=5.9,47.3,15.0,55.1';
const IN_GERMANY = ['BERLA', 'LEIPZ', 'MUNIC', 'POTSD', 'TOWNA', 'TOWNB'];
const BERLIN = { lat: 52.52, lon: 13.405 };

t.test('bbox: the stations with coordinates in the box, by hrs_id, records as without the filter', async (t) => {
  const { json, res } = await answer(p, `/v2/hrs?${GERMANY}`);
  t.ok(stationPageSchema.safeParse(json).success, 'a station page');
  t.same({ count: json.count, next: json.next, previous: json.previous }, { count: 6, next: null, previous: null });
  t.same(idsOf(json.results), IN_GERMANY, 'HAMBG (no coordinates) and the Pacific are left out');
  t.equal(res.headers.get('content-type'), 'application/json; charset=utf-8');
  t.match(res.headers.get('vary'), /\bAccept\b/);
  t.ok(res.headers.get('last-modified'));
  const all = (await answer(p, '/v2/hrs')).json;
  t.equal(all.count, 10, 'the whole list has every station');
  t.notOk('distance_km' in all.results[0], 'no distance without near');
  const byId = new Map(all.results.map((r: Json) => [r.hrs_id, r]));
  for (const record of json.results) t.same(record, byId.get(record.hrs_id), `${record.hrs_id}: the same record`);
  t.same(idsOf((await answer(p, '/v2/hrs?bbox=13.0,52.0,13.6,52.5')).json.results), ['BERLA', 'POTSD', 'TOWNA', 'TOWNB']);
  t.same(idsOf((await answer(p, '/v2/hrs?bbox=13.2,52.1,13.2,52.1')).json.results), ['TOWNA', 'TOWNB'], 'edges included');
  const { sync_token: token, ...empty } = (await answer(p, '/v2/hrs?bbox=0,0,1,1')).json;
  t.same(empty, { count: 0, next: null, previous: null, results: [] }, 'an empty box');
  t.match(token, /^[A-Za-z0-9_-]+$/, 'with the delta extension\'s sync_token');
});

t.test('bbox across the antimeridian (minLon > maxLon): both sides and the meridian itself', async (t) => {
  t.same(idsOf((await answer(p, '/v2/hrs?bbox=170,-20,-170,-10')).json.results), ['DATEL', 'FIJIA', 'SAMOA']);
  t.same(idsOf((await answer(p, '/v2/hrs?bbox=179,-20,180,-10')).json.results), ['DATEL'], 'up to 180');
  t.same(idsOf((await answer(p, '/v2/hrs?bbox=-180,-20,-170,-10')).json.results), ['DATEL', 'SAMOA'], 'from -180: the same meridian');
  t.same(idsOf((await answer(p, '/v2/hrs/status?bbox=170,-20,-170,-10')).json.stations), ['DATEL', 'FIJIA', 'SAMOA'], 'the status list alike');
});

t.test('near: within the radius, nearest first with distance_km first in each record, ties by hrs_id', async (t) => {
  const { json, text } = await answer(p, '/v2/hrs?near=52.52,13.405&radius_km=50');
  const expected = ['BERLA', 'POTSD', 'TOWNA', 'TOWNB'].sort((a, b) => km(BERLIN, a) - km(BERLIN, b) || (a < b ? -1 : 1));
  t.same(idsOf(json.results), expected);
  t.same(json.results.map((r: Json) => r.distance_km), expected.map((id) => km(BERLIN, id)), 'great-circle distances, 3 decimals');
  t.equal(json.count, 4);
  t.ok(text.includes('"results":[{"distance_km":'), 'distance_km is the first member');
  t.ok(stationPageSchema.safeParse(json).success, 'still a station page (distance_km is documented)');
  const towns = json.results.filter((r: Json) => r.hrs_id.startsWith('TOWN')).map((r: Json) => r.hrs_id);
  t.same(towns, ['TOWNA', 'TOWNB'], 'equal distances by hrs_id');
  // Leipzig is about 150 km away: in at 200, out at 100.
  t.ok(idsOf((await answer(p, '/v2/hrs?near=52.52,13.405&radius_km=200')).json.results).includes('LEIPZ'));
  t.notOk(idsOf((await answer(p, '/v2/hrs?near=52.52,13.405&radius_km=100')).json.results).includes('LEIPZ'));
  const pacific = (await answer(p, '/v2/hrs?near=-16,179.9&radius_km=1000')).json.results;
  t.same(idsOf(pacific).sort(), ['DATEL', 'FIJIA', 'SAMOA'], 'a circle across the antimeridian');
  t.equal(pacific[0].hrs_id, 'DATEL');
});

t.test('the status list: the same filters, distance_km with near, unfiltered unchanged', async (t) => {
  const all = await answer(p, '/v2/hrs/status');
  t.equal(all.json.stations.length, 10);
  t.ok(stationStatusListSchema.safeParse(all.json).success);
  t.match(all.res.headers.get('vary'), /Accept/);
  const inBox = (await answer(p, `/v2/hrs/status?${GERMANY}`)).json;
  t.same(idsOf(inBox.stations), IN_GERMANY);
  const byId = new Map(all.json.stations.map((s: Json) => [s.hrs_id, s]));
  for (const entry of inBox.stations) t.same(entry, byId.get(entry.hrs_id), `${entry.hrs_id}: the same entry`);
  const near = await answer(p, '/v2/hrs/status?near=52.52,13.405&radius_km=50');
  t.same(idsOf(near.json.stations), ['BERLA', 'TOWNA', 'TOWNB', 'POTSD'].sort((a, b) => km(BERLIN, a) - km(BERLIN, b) || (a < b ? -1 : 1)));
  t.same(near.json.stations[0], { distance_km: km(BERLIN, near.json.stations[0].hrs_id), ...(byId.get(near.json.stations[0].hrs_id) as Json) });
  t.ok(near.text.startsWith('{"stations":[{"distance_km":'));
  t.ok(stationStatusListSchema.safeParse(near.json).success, 'distance_km is documented');
  const gzipped = await get(`${p.url}/v2/hrs/status?${GERMANY}`, TOKENS.export_v2, { headers: { 'Accept-Encoding': 'gzip' } });
  t.equal(gzipped.headers.get('content-encoding'), 'gzip', 'filtered answers are gzip-encoded too');
  t.same(idsOf(((await gzipped.json()) as Json).stations), IN_GERMANY);
});

t.test('refusals: a 400 problem naming the parameter, on both lists', async (t) => {
  const cases: [string, RegExp][] = [
    ['bbox=1,2,3', /^bbox: must be minLon,minLat,maxLon,maxLat/],
    ['bbox=a,b,c,d', /^bbox: must be/],
    ['bbox=1e1,2,3,4', /^bbox: must be/],
    ['bbox=181,0,182,1', /^bbox: longitude 181 is out of range/],
    ['bbox=0,-91,1,1', /^bbox: latitude -91 is out of range/],
    ['bbox=5.9,55.1,15.0,47.3', /^bbox: inverted box: minLat \(55\.1\) is north of maxLat \(47\.3\)\.$/],
    ['bbox=1,2,3,4&bbox=1,2,3,4', /^bbox: give it once/],
    ['near=52.5,13.4', /^near: needs radius_km/],
    ['radius_km=10', /^radius_km: only with near/],
    ['near=52.5,13.4&radius_km=1000.5', /^radius_km: must be a decimal number of kilometres, more than 0 and at most 1000\.$/],
    ['near=52.5,13.4&radius_km=0', /^radius_km: must be/],
    ['near=52.5,13.4&radius_km=abc', /^radius_km: must be/],
    ['near=95,13.4&radius_km=10', /^near: latitude 95 is out of range/],
    ['near=52.5,190&radius_km=10', /^near: longitude 190 is out of range/],
    ['near=52.5&radius_km=10', /^near: must be lat,lon/],
    [`${GERMANY}&near=52.5,13.4&radius_km=10`, /^bbox, near: give one of them, not both\.$/],
  ];
  for (const path of ['/v2/hrs', '/v2/hrs/status']) {
    for (const [query, detail] of cases) {
      const res = await get(`${p.url}${path}?${query}`, TOKENS.export_v2);
      t.equal(res.status, 400, `${path}?${query}: 400`);
      t.equal(res.headers.get('content-type'), PROBLEM);
      t.match(await res.json(), { status: 400, code: 'invalid_parameter', detail }, `${path}?${query}`);
    }
  }
  const unknown = await get(`${p.url}/v2/hrs/status?limit=5`, TOKENS.export_v2);
  t.equal(unknown.status, 400, 'the status list takes no paging');
  await unknown.arrayBuffer();
});

t.test('paging with a filter: count of the matches, links that keep the filter', async (t) => {
  const ids: string[] = [];
  let url: string | null = `${p.url}/v2/hrs?${GERMANY}&limit=4`;
  const first = (await answer(p, `/v2/hrs?${GERMANY}&limit=4`)).json;
  t.equal(first.next, `${p.baseUrl}/v2/hrs?${GERMANY}&limit=4&offset=4`);
  t.equal(first.previous, null);
  let pages = 0;
  while (url !== null) {
    const page: Json = (await answer(p, url.slice(p.url.length))).json;
    t.equal(page.count, 6);
    ids.push(...idsOf(page.results));
    if (pages > 0) t.equal(page.previous, `${p.baseUrl}/v2/hrs?${GERMANY}&limit=4&offset=0`);
    url = page.next;
    pages++;
  }
  t.equal(pages, 2);
  t.same(ids, IN_GERMANY, 'the pages make the whole answer');
  const near = (await answer(p, '/v2/hrs?near=52.52,13.405&radius_km=50&limit=1&offset=1')).json;
  t.equal(near.next, `${p.baseUrl}/v2/hrs?near=52.52,13.405&radius_km=50&limit=1&offset=2`);
  t.equal(near.previous, `${p.baseUrl}/v2/hrs?near=52.52,13.405&radius_km=50&limit=1&offset=0`);
  t.equal(near.results.length, 1);
  t.same((await answer(p, `/v2/hrs?${GERMANY}&offset=50`)).json.results, [], 'past the end');
});

t.test('GeoJSON on request: a valid FeatureCollection, [lon, lat], stations without coordinates left out', async (t) => {
  const accept = { Accept: 'application/geo+json' };
  const checkCollection = (t: Test, text: string) => {
    t.doesNotThrow(() => check(text), 'valid GeoJSON (check-geojson)');
    return JSON.parse(text) as Json;
  };
  const list = await answer(p, '/v2/hrs', accept);
  t.equal(list.res.headers.get('content-type'), GEOJSON);
  t.match(list.res.headers.get('vary'), /\bAccept\b/);
  const collection = checkCollection(t, list.text);
  t.ok(stationFeatureCollectionSchema.safeParse(collection).success, 'as documented');
  t.same({ type: collection.type, count: collection.count, next: collection.next, previous: collection.previous }, { type: 'FeatureCollection', count: 10, next: null, previous: null });
  t.same(collection.features.map((f: Json) => f.id), ['BERLA', 'DATEL', 'FIJIA', 'LEIPZ', 'MUNIC', 'POTSD', 'SAMOA', 'TOWNA', 'TOWNB'], 'HAMBG has no coordinates');
  const berla = collection.features[0];
  t.same(berla.geometry, { type: 'Point', coordinates: [13.5033, 52.3667] });
  t.same(berla.properties, (await answer(p, '/v2/hrs/BERLA')).json, 'the record as properties');

  const near = await answer(p, '/v2/hrs?near=52.52,13.405&radius_km=50&limit=2', accept);
  const nearCollection = checkCollection(t, near.text);
  t.equal(nearCollection.count, 4);
  t.equal(nearCollection.next, `${p.baseUrl}/v2/hrs?near=52.52,13.405&radius_km=50&limit=2&offset=2`);
  const nearest = ['BERLA', 'POTSD', 'TOWNA', 'TOWNB'].sort((a, b) => km(BERLIN, a) - km(BERLIN, b) || (a < b ? -1 : 1)).slice(0, 2);
  t.same(nearCollection.features.map((f: Json) => [f.id, f.properties.distance_km]), nearest.map((id) => [id, km(BERLIN, id)]));

  const status = await answer(p, '/v2/hrs/status', { Accept: 'application/json;q=0.5, application/geo+json' });
  t.equal(status.res.headers.get('content-type'), GEOJSON);
  const statusCollection = checkCollection(t, status.text);
  t.ok(statusFeatureCollectionSchema.safeParse(statusCollection).success, 'as documented');
  t.equal(statusCollection.features.length, 9);
  t.notOk('count' in statusCollection, 'no paging on the status list');
  const filtered = checkCollection(t, (await answer(p, '/v2/hrs/status?bbox=170,-20,-170,-10', accept)).text);
  t.same(filtered.features.map((f: Json) => [f.id, f.geometry.coordinates]), [['DATEL', [180, -16]], ['FIJIA', [178, -17.7]], ['SAMOA', [-172.1, -13.8]]]);
  const nearStatus = checkCollection(t, (await answer(p, '/v2/hrs/status?near=52.52,13.405&radius_km=50', accept)).text);
  t.equal(nearStatus.features[0].properties.distance_km, km(BERLIN, 'BERLA'));

  for (const header of ['application/json', '*/*', 'application/json, application/geo+json', 'application/geo+json;q=0.1, application/json']) {
    const res = await get(`${p.url}/v2/hrs/status?${GERMANY}`, TOKENS.export_v2, { headers: { Accept: header } });
    t.equal(res.headers.get('content-type'), 'application/json; charset=utf-8', `Accept: ${header} keeps JSON`);
    await res.arrayBuffer();
  }
});

t.test('If-Modified-Since with a filter: 304 until a station moves into (or out of) the answer', async (t) => {
  // Every exported time an hour back, so the next change lands in a later second.
  await p.sql`UPDATE stations SET static_modified_at = static_modified_at - interval '1 hour'`;
  await p.sql`UPDATE station_set SET modified_at = modified_at - interval '1 hour'`;
  const path = `/v2/hrs?${GERMANY}`;
  const first = await answer(p, path);
  const since = first.res.headers.get('last-modified')!;
  const again = await get(`${p.url}${path}`, TOKENS.export_v2, { headers: { 'If-Modified-Since': since } });
  t.equal(again.status, 304, 'nothing changed');
  t.match(again.headers.get('vary'), /Accept/);
  t.equal(await again.text(), '');
  const nearPath = '/v2/hrs?near=52.52,13.405&radius_km=50';
  const nearSince = (await answer(p, nearPath)).res.headers.get('last-modified')!;
  t.equal((await get(`${p.url}${nearPath}`, TOKENS.export_v2, { headers: { 'If-Modified-Since': nearSince } })).status, 304);

  const pacificPath = '/v2/hrs?bbox=170,-20,-170,-10';
  const pacificSince = (await answer(p, pacificPath)).res.headers.get('last-modified')!;
  t.equal((await get(`${p.url}${pacificPath}`, TOKENS.export_v2, { headers: { 'If-Modified-Since': pacificSince } })).status, 304);

  // SAMOA moves to Dresden: into the box of Germany, out of the Pacific's, whose stations did not change.
  await p.load(fixture({ ...PLACES, SAMOA: { lat: 51.05, lon: 13.74 } }));
  const moved = await get(`${p.url}${path}`, TOKENS.export_v2, { headers: { 'If-Modified-Since': since } });
  t.equal(moved.status, 200, 'a station moved into the box');
  t.same(idsOf(((await moved.json()) as Json).results), [...IN_GERMANY, 'SAMOA'].sort());
  const left = await get(`${p.url}${pacificPath}`, TOKENS.export_v2, { headers: { 'If-Modified-Since': pacificSince } });
  t.equal(left.status, 200, 'a station moved out of the box: no longer the answer the client holds');
  t.same(idsOf(((await left.json()) as Json).results), ['DATEL', 'FIJIA']);
  await p.load(fixture());
});

t.test('a change in PostgreSQL not yet announced: the registry is read again before a filtered answer', async (t) => {
  await p.sql`UPDATE stations SET static_modified_at = static_modified_at - interval '1 hour'`;
  await p.sql`UPDATE station_set SET modified_at = modified_at - interval '1 hour'`;
  const path = '/v2/hrs?bbox=170,-20,-170,-10';
  t.same(idsOf((await answer(p, path)).json.results), ['DATEL', 'FIJIA', 'SAMOA']);
  // FIJIA moves to Lisbon behind the platform's back: no announcement, so the registry in memory still
  // has it in the Pacific, while PostgreSQL's version (what Last-Modified says) has moved.
  await p.sql`UPDATE stations SET details = details || '{"lat": 38.72, "lon": -9.14}'::jsonb, static_modified_at = now() WHERE hrs_id = 'FIJIA'`;
  const read = await answer(p, path);
  t.same(idsOf(read.json.results), ['DATEL', 'SAMOA'], 'the matches are those of the version Last-Modified names');
  const since = read.res.headers.get('last-modified')!;
  t.equal((await get(`${p.url}${path}`, TOKENS.export_v2, { headers: { 'If-Modified-Since': since } })).status, 304, 'and stay so');
  t.same(idsOf((await answer(p, '/v2/hrs?near=38.72,-9.14&radius_km=10')).json.results), ['FIJIA']);
  await p.load(fixture());
});

t.test('sandbox stations are never in a geo answer', async (t) => {
  const q = await startTestPlatform(t, { env: { ...ENV, SANDBOX: 'on' }, fixture: fixture() });
  const world = 'bbox=-180,-90,180,90';
  const ids = idsOf((await answer(q, `/v2/hrs?${world}`)).json.results);
  t.same(ids, ['BERLA', 'DATEL', 'FIJIA', 'LEIPZ', 'MUNIC', 'POTSD', 'SAMOA', 'TOWNA', 'TOWNB']);
  t.notOk(idsOf((await answer(q, `/v2/hrs/status?${world}`)).json.stations).some(isSandboxId));
  const features = JSON.parse((await answer(q, '/v2/hrs/status', { Accept: GEOJSON })).text).features as Json[];
  t.notOk(features.some((f) => isSandboxId(f.id)));
});
