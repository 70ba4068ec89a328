/**
 * The public map's feed, `GET /map/v1/stations.geojson`: valid GeoJSON (check-geojson) of every
 * production station with coordinates, the five-state values of `GET /v1.1/hrs/status` for the same
 * moment, one kept body per change (ETag, Last-Modified, 304s, gzip and brotli), no credential, CORS
 * and the licence, the per-address rate limit, and PUBLIC_MAP=false.
 */
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import t from 'tap';
import { getIssues } from '@placemarkio/check-geojson';
import { TOKENS } from '../helpers/fixtures.js';
import { mapFixture, raw } from '../helpers/map.js';
import { get, postSignals, startTestPlatform, type TestPlatform } from '../helpers/platform.js';
import { until } from '../helpers/wait.js';
import { loadConfig } from '../../src/config/config.js';

const FEED = '/map/v1/stations.geojson';
const ago = (seconds: number) => new Date(Date.now() - seconds * 1000).toISOString();
/** A high limit, so that only the rate-limit test meets it. */
const ENV = { MAP_RATE_LIMIT: '100000' };


interface Entry { fuelling_option: string; status: string; reason: string; datetime: string | null }
interface Feature { id: string; geometry: { coordinates: number[] }; properties: Record<string, unknown> & { fuelling_options: Entry[]; open_now: boolean } }

async function feed(p: TestPlatform): Promise<{ res: Response; text: string; body: { type: string; generated_at: string; features: Feature[] } }> {
  const res = await fetch(`${p.url}${FEED}`);
  const text = await res.text();
  return { res, text, body: JSON.parse(text) };
}

/** The v1.1 summary and the feed read together, repeated until both were read with no change between (the same moment). */
async function sameMoment(p: TestPlatform) {
  for (;;) {
    const before = (await feed(p)).res.headers.get('etag');
    const v11 = (await (await get(`${p.url}/v1.1/hrs/status`, TOKENS.export_v1)).json()) as { hrs_id: string; fuelling_options: { fuel_type: string }[] }[];
    const after = await feed(p);
    if (after.res.headers.get('etag') === before) return { v11, feed: after.body };
  }
}

t.test('valid GeoJSON of every station with coordinates, its static fields, and the five-state values of v1.1 at the same moment', async (t) => {
  const p = await startTestPlatform(t, { fixture: mapFixture(), env: ENV });
  const { res, text, body } = await feed(p);
  t.equal(res.status, 200);
  t.equal(res.headers.get('content-type'), 'application/geo+json');
  t.same(getIssues(text), [], 'check-geojson finds no issue');
  t.equal(body.type, 'FeatureCollection');
  t.same(body.features.map((f) => f.id), ['BERLA', 'CLOSD', 'TRUCK'], 'every station with coordinates, sorted by hrs_id; HAMBG has none');
  const stationsWithPoint = [...p.parts.registry.stationIds()].filter((id) => p.parts.registry.station(id)?.point != null);
  t.equal(body.features.length, stationsWithPoint.length, 'as many features as publishable stations with coordinates');
  const berla = body.features[0]!;
  t.same(berla.geometry, { type: 'Point', coordinates: [13.5033, 52.3667] }, '[lon, lat]');
  t.match(berla.properties, {
    hrs_id: 'BERLA', name: 'Berlin Airport', operator: 'H2 Demo GmbH', street: 'Melli-Beese-Ring 1', postcode: '12529', city: 'Schönefeld', country: 'DE',
    heavy_duty: false, time_zone: 'Europe/Berlin', open_now: true,
  });
  t.match(berla.properties.modified_at, /^\d{4}-\d\d-\d\dT/);
  t.same(Object.keys(berla.properties), ['hrs_id', 'name', 'operator', 'street', 'postcode', 'city', 'country', 'heavy_duty', 'time_zone', 'open_now', 'fuelling_options', 'modified_at']);
  t.match(body.features[2]!.properties, { street: 'Am Hafen 7, 20457 Hamburg', postcode: null, city: null, country: 'DE', heavy_duty: true }, 'a one-line address; the country beside it');
  t.match(body.features[1]!.properties, { street: null, city: 'München', country: null }, 'the city beside the coordinates (v1.1\'s AFIR details), with no address');
  t.match(body.features[1]!.properties, { open_now: false, fuelling_options: [{ fuelling_option: '700ld', status: 'CLOSED', reason: 'outside_opening_hours', datetime: null }] });

  await postSignals(p, 'availability', [
    { hrs: 'BERLA', datetime: ago(5), station: { maintenance: false, limitedly_available: false }, nozzles: [{ id: 'N1', available: true }, { id: 'N2', available: false }] },
    { hrs: 'TRUCK', datetime: ago(4), station: { maintenance: false, limitedly_available: false }, nozzles: [{ id: 'T1', available: false }, { id: 'T3', available: true }] },
  ]);
  await until('the signals in the feed', async () => ((await feed(p)).body.features[0]!.properties.fuelling_options[0]!.status === 'AVAILABLE' ? true : undefined));
  const moment = await sameMoment(p);
  for (const feature of moment.feed.features) {
    const summary = moment.v11.find((s) => s.hrs_id === feature.id)!;
    t.same(
      feature.properties.fuelling_options,
      summary.fuelling_options.map(({ fuel_type, ...rest }) => ({ fuelling_option: fuel_type, ...rest })),
      `${feature.id}: the five-state values of GET /v1.1/hrs/status`,
    );
  }
  t.same(moment.feed.features.find((f) => f.id === 'TRUCK')!.properties.fuelling_options.map((e) => e.status), ['UNAVAILABLE', 'UNKNOWN', 'AVAILABLE']);
  t.same(moment.feed.features.find((f) => f.id === 'BERLA')!.properties.fuelling_options.map((e) => e.reason), ['reported_available', 'reported_unavailable']);

  // Maintenance for BERLA: every option UNAVAILABLE, equal to v1.1 again.
  await postSignals(p, 'availability', [{ hrs: 'BERLA', datetime: ago(1), station: { maintenance: true, limitedly_available: false }, nozzles: [{ id: 'N1', available: false }] }]);
  await until('maintenance in the feed', async () => ((await feed(p)).body.features[0]!.properties.fuelling_options[0]!.reason === 'maintenance' ? true : undefined));
  const again = await sameMoment(p);
  t.same(
    again.feed.features.map((f) => f.properties.fuelling_options),
    again.feed.features.map((f) => again.v11.find((s) => s.hrs_id === f.id)!.fuelling_options.map(({ fuel_type, ...rest }) => ({ fuelling_option: fuel_type, ...rest }))),
    'still equal after a change',
  );
});

t.test('one kept body per change: ETag and Last-Modified, 304s, gzip and brotli; a signal or a registry load makes a new one', async (t) => {
  const p = await startTestPlatform(t, { fixture: mapFixture(), env: ENV });
  // The bodies made at the start (empty registry, then the fixture) share their second, which a date
  // cannot tell apart (so If-Modified-Since is answered with the body): a change a second later has one of its own.
  const start = (await raw(`${p.url}${FEED}`)).headers.etag;
  await new Promise((r) => setTimeout(r, 1100));
  await postSignals(p, 'availability', [{ hrs: 'TRUCK', datetime: ago(3), station: { maintenance: false, limitedly_available: false }, nozzles: [{ id: 'T1', available: true }] }]);
  const first = await until('the body after the TRUCK signal', async () => {
    const r = await raw(`${p.url}${FEED}`);
    return r.headers.etag !== start ? r : undefined;
  });
  const etag = first.headers.etag as string;
  const lastModified = first.headers['last-modified'] as string;
  t.match(etag, /^"[A-Za-z0-9_-]+"$/, 'a strong ETag');
  t.ok(lastModified, 'a Last-Modified');
  t.equal(first.headers['cache-control'], 'no-cache');
  t.equal(first.headers.vary, 'Accept-Encoding');
  t.equal(first.headers['access-control-allow-origin'], '*', 'CORS open');
  t.equal(first.headers.link, '<https://creativecommons.org/licenses/by/4.0/>; rel="license"', 'the CC BY 4.0 licence');

  let res = await raw(`${p.url}${FEED}`, { 'If-None-Match': etag });
  t.same([res.status, res.body.length, res.headers.etag], [304, 0, etag], '304 on If-None-Match');
  res = await raw(`${p.url}${FEED}`, { 'If-Modified-Since': lastModified });
  t.equal(res.status, 304, '304 on If-Modified-Since');
  res = await raw(`${p.url}${FEED}`, { 'If-None-Match': '"other"', 'If-Modified-Since': lastModified });
  t.equal(res.status, 200, 'If-None-Match decides when both are sent');

  const gz = await raw(`${p.url}${FEED}`, { 'Accept-Encoding': 'gzip' });
  const br = await raw(`${p.url}${FEED}`, { 'Accept-Encoding': 'gzip, br' });
  t.equal(gz.headers['content-encoding'], 'gzip');
  t.equal(br.headers['content-encoding'], 'br', 'brotli when accepted');
  t.same(JSON.parse(gunzipSync(gz.body).toString()), JSON.parse(first.body.toString()), 'gzip decodes to the same JSON');
  t.same(JSON.parse(brotliDecompressSync(br.body).toString()), JSON.parse(first.body.toString()), 'brotli decodes to the same JSON');
  t.same(brotliDecompressSync(br.body), first.body, 'the same bytes, the same kept body');
  t.ok(br.body.length < first.body.length, 'smaller');
  // The client's weights decide between the two (RFC 9110 12.5.3); on equal weights, brotli.
  for (const [header, encoding] of [['br;q=0.5, gzip', 'gzip'], ['gzip;q=0.5, br', 'br'], ['*', 'br'], ['gzip, *;q=0.2', 'gzip'], ['br;q=0, *', 'gzip'], ['identity', undefined]] as const) {
    t.equal((await raw(`${p.url}${FEED}`, { 'Accept-Encoding': header })).headers['content-encoding'], encoding, `Accept-Encoding: ${header}`);
  }

  // A signal that changes a five-state value: a new body.
  await postSignals(p, 'availability', [{ hrs: 'BERLA', datetime: ago(2), station: { maintenance: false, limitedly_available: false }, nozzles: [{ id: 'N1', available: true }] }]);
  const changed = await until('a new ETag after the signal', async () => {
    const r = await raw(`${p.url}${FEED}`, { 'If-None-Match': etag });
    return r.status === 200 ? r : undefined;
  });
  t.not(changed.headers.etag, etag);
  t.ok(Date.parse(changed.headers['last-modified'] as string) >= Date.parse(lastModified), 'Last-Modified never goes back');
  res = await raw(`${p.url}${FEED}`, { 'If-Modified-Since': lastModified });
  t.equal(res.status, 200, 'the old date no longer matches');

  // A usage reading changes no five-state value: the body stays.
  const etag2 = changed.headers.etag as string;
  await postSignals(p, 'usage', [{ hrs: 'BERLA', datetime: ago(1), nozzles: [{ id: 'N1', usage_status: 'free' }] }]);
  await until('the usage reading published', () => (p.parts.status.published('BERLA', 'usage') ? true : undefined));
  await new Promise((r) => setTimeout(r, 200));
  const same = await raw(`${p.url}${FEED}`, { 'If-None-Match': etag2 });
  t.equal(same.status, 304, 'a reading that changes no five-state value leaves the body as it was');

  // A registry load (a station renamed): a new body.
  const f = mapFixture();
  (f.stations[0] as Record<string, unknown>).name = 'Berlin BER';
  await p.load(f);
  const renamed = await until('a new ETag after the registry load', async () => {
    const r = await raw(`${p.url}${FEED}`, { 'If-None-Match': etag2 });
    return r.status === 200 ? r : undefined;
  });
  t.equal(JSON.parse(renamed.body.toString()).features[0].properties.name, 'Berlin BER');
});

t.test('the per-address rate limit: 429 problem with Retry-After', async (t) => {
  const p = await startTestPlatform(t, { fixture: mapFixture(), env: { MAP_RATE_LIMIT: '3' } });
  for (let i = 0; i < 3; i++) {
    const res = await fetch(`${p.url}${FEED}`);
    await res.arrayBuffer();
    t.equal(res.status, 200);
    t.equal(res.headers.get('ratelimit-limit'), '3');
  }
  const res = await fetch(`${p.url}${FEED}`);
  t.equal(res.status, 429);
  t.equal(res.headers.get('content-type'), 'application/problem+json; charset=utf-8');
  t.ok(Number(res.headers.get('retry-after')) > 0, 'Retry-After');
  t.match(await res.json(), { status: 429, detail: /at most 3 requests per minute per client address/ });
  t.equal(res.headers.get('access-control-allow-origin'), '*', 'CORS on the refusal too');
});

t.test('behind a trusted proxy each forwarded address has its own budget; without one the header is not believed', async (t) => {
  const from = (p: TestPlatform, address: string) => fetch(`${p.url}${FEED}`, { headers: { 'X-Forwarded-For': address } }).then(async (r) => (await r.arrayBuffer(), r.status));
  const p = await startTestPlatform(t, { fixture: mapFixture(), env: { MAP_RATE_LIMIT: '2', TRUST_PROXY: '127.0.0.1' } });
  t.same([await from(p, '203.0.113.1'), await from(p, '203.0.113.1'), await from(p, '203.0.113.1')], [200, 200, 429], 'one address spends its own budget');
  t.equal(await from(p, '203.0.113.2'), 200, 'another address has its own');
  const q = await startTestPlatform(t, { fixture: mapFixture(), env: { MAP_RATE_LIMIT: '2' } });
  t.same([await from(q, '203.0.113.1'), await from(q, '203.0.113.2'), await from(q, '203.0.113.3')], [200, 200, 429], 'without TRUST_PROXY: one budget for the peer');
});

t.test('the daily cap per client address: MAP_RATE_LIMIT_DAY over the feed, details and photos, 429 with Retry-After', async (t) => {
  t.equal(loadConfig({}).mapRateLimitDay, 2000, '2000 a day by default');
  t.throws(() => loadConfig({ MAP_RATE_LIMIT_DAY: '0' }), { message: /MAP_RATE_LIMIT_DAY must be at least 1 \(got "0"\)/ });
  const p = await startTestPlatform(t, { fixture: mapFixture(), env: { MAP_RATE_LIMIT: '100000', MAP_RATE_LIMIT_DAY: '3', TRUST_PROXY: '127.0.0.1' } });
  const from = async (path: string, address: string) => {
    const res = await fetch(`${p.url}${path}`, { headers: { 'X-Forwarded-For': address } });
    return { res, text: await res.text() };
  };
  const spent: [number, string | null, string | null][] = [];
  for (const path of [FEED, '/map/v1/stations/BERLA', '/map/v1/stations/BERLA/photo']) {
    const { res } = await from(path, '203.0.113.1');
    spent.push([res.status, res.headers.get('ratelimit-limit'), res.headers.get('ratelimit-remaining')]);
  }
  t.same(spent, [[200, '3', '2'], [200, '3', '1'], [404, '3', '0']], 'the feed, a detail and a photo (here none: a 404) each spend one of the day\'s three');
  for (const path of ['/map/app.js', '/map/v1/config']) t.equal((await from(path, '203.0.113.1')).res.status, 200, `${path}: the page's own files are not counted`);

  for (const path of [FEED, '/map/v1/stations/BERLA']) {
    const { res, text } = await from(path, '203.0.113.1');
    t.equal(res.status, 429, `${path}: refused past the day's count`);
    t.equal(res.headers.get('content-type'), 'application/problem+json; charset=utf-8');
    const wait = Number(res.headers.get('retry-after'));
    t.ok(wait > 86_000 && wait <= 86_400, `Retry-After: when the first request leaves the day (${wait} s)`);
    t.same(JSON.parse(text), {
      type: 'about:blank',
      title: 'Too Many Requests',
      status: 429,
      detail: `Rate limit exceeded: at most 3 requests per day per client address. Retry in ${wait} seconds (about 24 hours).`,
      code: 'throttled',
    });
    t.equal(res.headers.get('access-control-allow-origin'), '*', 'CORS on the refusal too');
  }
  t.equal((await from(FEED, '203.0.113.2')).res.status, 200, 'another address has a day of its own');
});

t.test('a CORS preflight is answered without a credential', async (t) => {
  const p = await startTestPlatform(t, { fixture: mapFixture(), env: ENV });
  const res = await fetch(`${p.url}${FEED}`, { method: 'OPTIONS', headers: { Origin: 'https://example.org', 'Access-Control-Request-Method': 'GET', 'Access-Control-Request-Headers': 'if-none-match' } });
  t.equal(res.status, 204);
  t.equal(res.headers.get('access-control-allow-origin'), '*');
  t.match(res.headers.get('access-control-allow-headers'), /If-None-Match/i);
  const got = await fetch(`${p.url}${FEED}`, { headers: { Origin: 'https://example.org' } });
  await got.arrayBuffer();
  t.match(got.headers.get('access-control-expose-headers'), /ETag/);
});

t.test('PUBLIC_MAP=false: no /map/ path is served', async (t) => {
  const p = await startTestPlatform(t, { fixture: mapFixture(), env: { PUBLIC_MAP: 'false' } });
  for (const path of [FEED, '/map/v1/stations/BERLA', '/map/v1/stations/BERLA/photo', '/map/v1/stream', '/map/v1/config', '/map/']) {
    const res = await fetch(`${p.url}${path}`);
    await res.arrayBuffer();
    t.equal(res.status, 404, path);
  }
});
