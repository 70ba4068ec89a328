import t from 'tap';
import fc from 'fast-check';
import { buildGeoIndex, type IndexedPoint } from '../../src/domain/geo-index.js';
import { boxHolds, EARTH_RADIUS_KM, haversineKm, parseGeoQuery, roundKm, type GeoBox, type GeoQueryValues } from '../../src/domain/geo.js';
import { mediaQuality, prefersMedia } from '../../src/http/accept.js';
import { runs } from '../helpers/scale.js';

/**
 * The geo queries' pure parts: reading the parameters, the distance, and the spatial index checked
 * against a brute-force great-circle filter over random stations, boxes (across the antimeridian too)
 * and circles.
 */

const query = (values: Partial<GeoQueryValues>): ReturnType<typeof parseGeoQuery> =>
  parseGeoQuery({ bbox: [], near: [], radius_km: [], ...values });

const errorOf = (values: Partial<GeoQueryValues>): string => {
  const result = query(values);
  return 'error' in result ? result.error : '(accepted)';
};

t.test('the parameters: accepted forms', async (t) => {
  t.same(query({}), { filter: undefined }, 'no filter');
  t.same(query({ bbox: ['5.9,47.3,15.0,55.1'] }), { filter: { kind: 'bbox', minLon: 5.9, minLat: 47.3, maxLon: 15, maxLat: 55.1 } });
  t.same(query({ bbox: ['170,-20,-170,20'] }), { filter: { kind: 'bbox', minLon: 170, minLat: -20, maxLon: -170, maxLat: 20 } }, 'across the antimeridian');
  t.same(query({ bbox: ['-180,-90,180,90'] }), { filter: { kind: 'bbox', minLon: -180, minLat: -90, maxLon: 180, maxLat: 90 } }, 'the whole world');
  t.same(query({ bbox: ['10,50,10,50'] }), { filter: { kind: 'bbox', minLon: 10, minLat: 50, maxLon: 10, maxLat: 50 } }, 'a point is a box');
  t.same(query({ near: ['52.52,13.405'], radius_km: ['50'] }), { filter: { kind: 'near', lat: 52.52, lon: 13.405, radiusKm: 50 } });
  t.same(query({ near: ['-90,-180'], radius_km: ['1000'] }), { filter: { kind: 'near', lat: -90, lon: -180, radiusKm: 1000 } }, 'edges of every range');
  t.same(query({ near: ['0,0'], radius_km: ['0.001'] }), { filter: { kind: 'near', lat: 0, lon: 0, radiusKm: 0.001 } });
});

t.test('the parameters: every refusal says what is wrong', async (t) => {
  const cases: [Partial<GeoQueryValues>, RegExp][] = [
    [{ bbox: ['1,2,3'] }, /^bbox: must be minLon,minLat,maxLon,maxLat/],
    [{ bbox: ['1,2,3,4,5'] }, /^bbox: must be/],
    [{ bbox: ['1,2,3,x'] }, /^bbox: must be/],
    [{ bbox: ['1e1,2,3,4'] }, /^bbox: must be/],
    [{ bbox: [' 1,2,3,4'] }, /^bbox: must be/],
    [{ bbox: ['+1,2,3,4'] }, /^bbox: must be/],
    [{ bbox: ['1,2,3,'] }, /^bbox: must be/],
    [{ bbox: ['NaN,2,3,4'] }, /^bbox: must be/],
    [{ bbox: ['1.,2,3,4'] }, /^bbox: must be/],
    [{ bbox: ['181,0,10,10'] }, /^bbox: longitude 181 is out of range/],
    [{ bbox: ['0,-90.5,10,10'] }, /^bbox: latitude -90.5 is out of range/],
    [{ bbox: ['0,0,10,91'] }, /^bbox: latitude 91 is out of range/],
    [{ bbox: ['5,55,15,47'] }, /^bbox: inverted box: minLat \(55\) is north of maxLat \(47\)\.$/],
    [{ bbox: ['1,2,3,4', '1,2,3,4'] }, /^bbox: give it once \(got 2 values\)\.$/],
    [{ near: ['52,13'] }, /^near: needs radius_km/],
    [{ radius_km: ['10'] }, /^radius_km: only with near/],
    [{ bbox: ['1,2,3,4'], radius_km: ['10'] }, /^radius_km: only with near/],
    [{ bbox: ['1,2,3,4'], near: ['52,13'], radius_km: ['10'] }, /^bbox, near: give one of them, not both\.$/],
    [{ near: ['52'], radius_km: ['10'] }, /^near: must be lat,lon/],
    [{ near: ['52,13,1'], radius_km: ['10'] }, /^near: must be lat,lon/],
    [{ near: ['91,13'], radius_km: ['10'] }, /^near: latitude 91 is out of range/],
    [{ near: ['13,-180.01'], radius_km: ['10'] }, /^near: longitude -180.01 is out of range/],
    [{ near: ['52,13'], radius_km: ['1000.001'] }, /^radius_km: must be a decimal number of kilometres, more than 0 and at most 1000\.$/],
    [{ near: ['52,13'], radius_km: ['0'] }, /^radius_km: must be/],
    [{ near: ['52,13'], radius_km: ['-5'] }, /^radius_km: must be/],
    [{ near: ['52,13'], radius_km: ['Infinity'] }, /^radius_km: must be/],
    [{ near: ['52,13'], radius_km: ['1e2'] }, /^radius_km: must be/],
    [{ near: ['52,13'], radius_km: [''] }, /^radius_km: must be/],
    [{ near: ['52,13'], radius_km: ['5', '6'] }, /^radius_km: give it once/],
  ];
  for (const [values, expected] of cases) t.match(errorOf(values), expected, JSON.stringify(values));
});

t.test('the distance: haversine on the mean Earth radius, rounded to the metre', async (t) => {
  t.equal(haversineKm({ lat: 0, lon: 0 }, { lat: 0, lon: 0 }), 0);
  t.ok(Math.abs(haversineKm({ lat: 0, lon: 0 }, { lat: 0, lon: 90 }) - (Math.PI / 2) * EARTH_RADIUS_KM) < 1e-9, 'a quarter of the equator');
  t.ok(Math.abs(haversineKm({ lat: 90, lon: 0 }, { lat: -90, lon: 0 }) - Math.PI * EARTH_RADIUS_KM) < 1e-9, 'pole to pole');
  t.ok(Math.abs(haversineKm({ lat: 0, lon: 179.5 }, { lat: 0, lon: -179.5 }) - (Math.PI / 180) * EARTH_RADIUS_KM) < 1e-9, 'one degree across the antimeridian');
  // Berlin Brandenburg Airport to Hamburg harbour: about 271 km as the crow flies. Checked against the
  // spherical law of cosines (another formula for the same great circle) to the millimetre.
  const [a, b] = [{ lat: 52.3667, lon: 13.5033 }, { lat: 53.5461, lon: 9.9661 }];
  const rad = Math.PI / 180;
  const cosines = EARTH_RADIUS_KM * Math.acos(Math.sin(a.lat * rad) * Math.sin(b.lat * rad) + Math.cos(a.lat * rad) * Math.cos(b.lat * rad) * Math.cos((b.lon - a.lon) * rad));
  const km = haversineKm(a, b);
  t.ok(Math.abs(km - cosines) < 1e-6 && km > 270 && km < 272, `Berlin–Hamburg ${km} km (law of cosines: ${cosines} km)`);
  t.equal(roundKm(12.34549), 12.345);
  t.equal(roundKm(12.3456), 12.346);
});

/* ---- The index against brute force ------------------------------------------------------------------ */

/** Latitudes and longitudes, with the edges and the antimeridian far more often than chance would give them. */
const lat = fc.oneof({ weight: 6, arbitrary: fc.double({ min: -90, max: 90, noNaN: true }) }, { weight: 1, arbitrary: fc.constantFrom(-90, 90, 0, 45.5) });
const lon = fc.oneof({ weight: 6, arbitrary: fc.double({ min: -180, max: 180, noNaN: true }) }, { weight: 1, arbitrary: fc.constantFrom(-180, 180, 0, 179.9, -179.9) });

/** Stations: scattered over the world and clustered (so circles and boxes find several). */
const stations = fc
  .tuple(
    fc.array(fc.record({ lat, lon }), { maxLength: 150 }),
    fc.record({ lat: fc.double({ min: -85, max: 85, noNaN: true }), lon }),
    fc.array(fc.record({ dLat: fc.double({ min: -3, max: 3, noNaN: true }), dLon: fc.double({ min: -3, max: 3, noNaN: true }) }), { maxLength: 80 }),
  )
  .map(([scattered, center, around]) => {
    const clustered = around.map(({ dLat, dLon }) => ({
      lat: Math.max(-90, Math.min(90, center.lat + dLat)),
      // Wrapped into [-180, 180]: clusters straddle the antimeridian when their centre is near it.
      lon: ((((center.lon + dLon + 180) % 360) + 360) % 360) - 180,
    }));
    return [...scattered, ...clustered].map((p, i): IndexedPoint => ({ id: `S${String(i).padStart(4, '0')}`, lat: p.lat, lon: p.lon }));
  });

/** Boxes anywhere, and a quarter of them with an edge on the antimeridian (where ±180 must count as one meridian). */
const edgeLon = fc.oneof({ weight: 3, arbitrary: lon }, { weight: 1, arbitrary: fc.constantFrom(-180, 180) });
const box = fc.tuple(edgeLon, lat, edgeLon, lat).map(([a, la, b, lb]): GeoBox => ({ minLon: a, minLat: Math.min(la, lb), maxLon: b, maxLat: Math.max(la, lb) }));

/** Brute force, written apart from the module's `boxHolds`: the longitude test over the antimeridian and its ±180 meridian. */
function inBoxBrute(b: GeoBox, p: IndexedPoint): boolean {
  if (p.lat < b.minLat || p.lat > b.maxLat) return false;
  const lonIn = (x: number) => (b.minLon <= b.maxLon ? x >= b.minLon && x <= b.maxLon : x >= b.minLon || x <= b.maxLon);
  return lonIn(p.lon) || (Math.abs(p.lon) === 180 && lonIn(-p.lon));
}

const byId = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

t.test('boxes: the index finds exactly what a scan of every station finds, sorted by id', async (t) => {
  let crossing = 0;
  let found = 0;
  fc.assert(
    fc.property(stations, box, (points, b) => {
      if (b.minLon > b.maxLon) crossing++;
      const expected = points.filter((p) => inBoxBrute(b, p)).map((p) => p.id).sort(byId);
      found += expected.length;
      const got = buildGeoIndex(points).within(b);
      if (JSON.stringify(got) !== JSON.stringify(expected)) throw new Error(`box ${JSON.stringify(b)}: got ${got.length}, expected ${expected.length}`);
      // The module's own definition agrees with the brute force.
      for (const p of points) if (boxHolds(b, p) !== inBoxBrute(b, p)) throw new Error(`boxHolds disagrees at ${JSON.stringify(p)}`);
    }),
    { numRuns: runs(400) },
  );
  t.ok(crossing > runs(400) / 8, `boxes across the antimeridian were tried (${crossing})`);
  t.ok(found > runs(400), `boxes found stations (${found} in all)`);
});

t.test('boxes around the antimeridian: a small fixed case', async (t) => {
  const points: IndexedPoint[] = [
    { id: 'EAST1', lat: 0, lon: 179 },
    { id: 'WEST1', lat: 0, lon: -179 },
    { id: 'ON180', lat: 0, lon: 180 },
    { id: 'ONM18', lat: 1, lon: -180 },
    { id: 'FAR01', lat: 0, lon: 0 },
  ];
  const index = buildGeoIndex(points);
  t.same(index.within({ minLon: 170, minLat: -10, maxLon: -170, maxLat: 10 }), ['EAST1', 'ON180', 'ONM18', 'WEST1'], 'across: both sides and the meridian');
  t.same(index.within({ minLon: 170, minLat: -10, maxLon: 180, maxLat: 10 }), ['EAST1', 'ON180', 'ONM18'], 'up to 180 holds the meridian written -180');
  t.same(index.within({ minLon: -180, minLat: -10, maxLon: -170, maxLat: 10 }), ['ON180', 'ONM18', 'WEST1'], 'from -180 holds the meridian written 180');
  t.same(index.within({ minLon: -170, minLat: -10, maxLon: 170, maxLat: 10 }), ['FAR01'], 'the other way round is the rest of the world');
  t.same(buildGeoIndex([]).within({ minLon: -180, minLat: -90, maxLon: 180, maxLat: 90 }), [], 'an empty index');
  t.same(buildGeoIndex([]).near({ lat: 0, lon: 0 }, 1000), []);
});

const radius = fc.oneof(fc.double({ min: 0.001, max: 1000, noNaN: true }), fc.constantFrom(1000, 0.5, 300));

t.test('circles: the index finds exactly what a great-circle scan finds, nearest first, ties by id', async (t) => {
  let found = 0;
  fc.assert(
    fc.property(stations, fc.record({ lat, lon }), radius, fc.nat(), (points, center, r, pick) => {
      // Half the time around a station, so the circle surely finds some.
      const at = points.length > 0 && pick % 2 === 0 ? points[pick % points.length]! : center;
      const expected = points
        .map((p) => ({ id: p.id, km: haversineKm(at, p) }))
        .filter((hit) => hit.km <= r)
        .map((hit) => ({ id: hit.id, distanceKm: roundKm(hit.km) }))
        .sort((a, b) => a.distanceKm - b.distanceKm || byId(a.id, b.id));
      found += expected.length;
      const got = buildGeoIndex(points).near(at, r);
      if (JSON.stringify(got) !== JSON.stringify(expected)) {
        throw new Error(`near ${JSON.stringify(at)} r=${r}: got ${JSON.stringify(got.slice(0, 5))}…(${got.length}), expected ${JSON.stringify(expected.slice(0, 5))}…(${expected.length})`);
      }
    }),
    { numRuns: runs(400) },
  );
  t.ok(found > runs(400), `circles found stations (${found} in all)`);
});

t.test('circles: stations sharing one place are ordered by id without quadratic work', async (t) => {
  // A registry may give thousands of stations one placeholder point: ordering their equal distances by
  // id must stay n log n (an insertion sort took seconds here, blocking every other request).
  const points = Array.from({ length: 100_000 }, (_, i): IndexedPoint => ({ id: `S${String(99_999 - i).padStart(5, '0')}`, lat: 0, lon: 0 }));
  const index = buildGeoIndex(points);
  const started = performance.now();
  const hits = index.near({ lat: 0, lon: 0 }, 1);
  const ms = performance.now() - started;
  t.equal(hits.length, points.length);
  t.ok(hits.every((hit, i) => hit.distanceKm === 0 && (i === 0 || hits[i - 1]!.id < hit.id)), 'every one, by id');
  t.ok(ms < 2000, `${Math.round(ms)} ms for ${points.length} stations at one place`);
});

t.test('circles over the antimeridian and the poles', async (t) => {
  const index = buildGeoIndex([
    { id: 'EAST1', lat: 0, lon: 179.9 },
    { id: 'WEST1', lat: 0, lon: -179.9 },
    { id: 'POLE1', lat: 89.9, lon: 0 },
    { id: 'POLE2', lat: 89.9, lon: 180 },
  ]);
  t.same(index.near({ lat: 0, lon: 180 }, 20).map((h) => h.id), ['EAST1', 'WEST1'], 'both sides, equal distances by id');
  t.same(index.near({ lat: 90, lon: 45 }, 20).map((h) => h.id), ['POLE1', 'POLE2'], 'around the pole');
  t.equal(index.near({ lat: 0, lon: 180 }, 20)[0]!.distanceKm, roundKm(haversineKm({ lat: 0, lon: 180 }, { lat: 0, lon: 179.9 })));
});

t.test('Accept: GeoJSON only when it weighs more than JSON', async (t) => {
  const geo = (accept: string | undefined) => prefersMedia(accept, 'application/geo+json', 'application/json');
  t.ok(geo('application/geo+json'));
  t.ok(geo('application/json;q=0.5, application/geo+json'));
  t.ok(geo('application/geo+json;q=0.9, */*;q=0.1'));
  t.notOk(geo(undefined), 'no header: JSON');
  t.notOk(geo('*/*'));
  t.notOk(geo('application/json'));
  t.notOk(geo('application/json, application/geo+json'), 'equal weights keep JSON');
  t.notOk(geo('application/geo+json;q=0, */*'));
  t.notOk(geo('application/*'), 'a wildcard weighs both alike');
  t.notOk(geo('application/geo+json;q=x'), 'a malformed weight counts for nothing');
  t.equal(mediaQuality('text/html;q=0.3, application/*;q=0.7', 'application/geo+json'), 0.7);
});
