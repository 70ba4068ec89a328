import t from 'tap';
import { readFile } from 'node:fs/promises';
import { gunzipSync } from 'node:zlib';
import { loadFixture } from '../../src/registry/file/load.js';
import { httpDate } from '../../src/http/dates.js';
import { datex2Errors } from '../helpers/datex2.js';
import { baseFixture, berlaAssignments, TOKENS } from '../helpers/fixtures.js';
import { get, postSignals, startTestPlatform, type TestPlatform } from '../helpers/platform.js';
import { until } from '../helpers/wait.js';

/**
 * `GET /datex2/v3/table` and `GET /datex2/v3/status` on a running platform: valid documents for the
 * example registry, access as export v2 (tokens, shared limits, licence, gzip), conditional requests,
 * the refill points following the layout, the status following the signals, stations left out.
 */

const ENV = { EXPORT_V2_RATE_LIMIT_MINUTE: '1000000', EXPORT_V2_RATE_LIMIT_DAY: '1000000', METRICS_TOKEN: 'test-metrics-token-0123456789' };
const BERLA_DETAILS = { city: 'Berlin', country: 'DE', lat: 52.3667, lon: 13.5033, cumulative_daily_hydrogen_capacity: 400, vehicle_types: ['M1'] };

/** The base registry with BERLA publishable (capacity, coordinates) and mon-1 live on everything of BERLA. */
function publishable() {
  const f = baseFixture();
  (f.stations[0] as Record<string, unknown>).details = BERLA_DETAILS;
  f.assignments = berlaAssignments('live');
  return f;
}

const datex2 = (p: TestPlatform, path: string, headers: Record<string, string> = {}, token: string = TOKENS.export_v2) =>
  get(`${p.url}/datex2/v3/${path}`, token, { headers });

async function text(p: TestPlatform, path: string): Promise<string> {
  const res = await datex2(p, path);
  if (res.status !== 200) throw new Error(`GET ${path} answered ${res.status}: ${await res.text()}`);
  return res.text();
}

/** Refill point id → its status, from a status publication. */
function refillPoints(xml: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const m of xml.matchAll(/<aegi:refillPointStatus><afac:reference id="([^"]+)"[\s\S]*?<aegi:status>([^<]+)<\/aegi:status>/g)) out[m[1]!] = m[2]!;
  return out;
}

const nowIso = () => new Date().toISOString();

t.test('the example registry: a valid table and status; stations the profile cannot take are left out, logged and counted', async (t) => {
  const p = await startTestPlatform(t, { env: ENV });
  const example = JSON.parse(await readFile('examples/fixture.json', 'utf8'));
  await loadFixture(p.sql, example, { baseDir: 'examples' });
  await p.parts.registry.reload();
  p.parts.tokens.invalidate();
  const token = 'example-export-v2-token';
  const counted = await until('the rows read after the reload', async () => {
    const text = await (await get(`${p.url}/metrics`, ENV.METRICS_TOKEN)).text();
    return /hrs_datex2_stations_left_out\{reason="no_capacity"\} 1/.test(text) ? text : undefined;
  });
  t.match(counted, /hrs_datex2_stations_left_out\{reason="no_coordinates"\} 1/, 'counted before anyone asked for a publication');
  const table = await datex2(p, 'table', {}, token);
  t.equal(table.status, 200);
  t.equal(table.headers.get('content-type'), 'application/xml; charset=utf-8');
  t.equal(table.headers.get('link'), '<https://creativecommons.org/licenses/by/4.0/>; rel="license"', 'the licence, as on export v2');
  t.ok(table.headers.get('ratelimit-remaining'), 'counted against the export v2 limits');
  const tableXml = await table.text();
  const statusXml = await (await datex2(p, 'status', {}, token)).text();
  t.same(await datex2Errors(tableXml, statusXml), [], 'both valid against the 3.7 schema set');
  t.same([...tableXml.matchAll(/<aegi:energyInfrastructureSite id="([A-Z]+)"/g)].map((m) => m[1]), ['BERLA', 'HAMHD'], 'MUNIC has neither capacity nor coordinates');
  t.match(tableXml, /<aegi:refuellingMode>gaseousHydrogen700barCar<\/aegi:refuellingMode>/);
  t.match(tableXml, /<aegi:cumulativeCapacityperDay>400<\/aegi:cumulativeCapacityperDay>/);
  t.match(tableXml, /<afac:label>Mo-Fr 06:00-22:00; Sa 08:00-18:00<\/afac:label>/, 'HAMHD\'s hours');
  const warning = p.logs.lines.find((l) => l.msg === 'station left out of the DATEX II publications (the AFIR profile requires its daily capacity and coordinates)');
  t.match(warning, { level: 40, hrsId: 'MUNIC', missing: ['no_capacity', 'no_coordinates'] }, 'a warning names the station and what it lacks');
  const metrics = await (await get(`${p.url}/metrics`, ENV.METRICS_TOKEN)).text();
  t.match(metrics, /hrs_datex2_stations_left_out\{reason="no_capacity"\} 1/);
  t.match(metrics, /hrs_datex2_stations_left_out\{reason="no_coordinates"\} 1/);
  await datex2(p, 'table', {}, token);
  t.equal(p.logs.lines.filter((l) => l.hrsId === 'MUNIC' && l.level === 40).length, 1, 'warned once while the station stays as it is');
});

t.test('access as export v2: personal tokens, problem bodies, gzip, one budget with export v2', async (t) => {
  const p = await startTestPlatform(t, { env: { EXPORT_V2_RATE_LIMIT_MINUTE: '4' }, fixture: publishable() });
  const none = await get(`${p.url}/datex2/v3/status`);
  t.equal(none.status, 401);
  t.equal(none.headers.get('content-type'), 'application/problem+json; charset=utf-8');
  t.equal((await datex2(p, 'table', {}, TOKENS.export_v1)).status, 401, 'export v1 tokens do not read it');
  t.equal((await get(`${p.url}/v2/fuel-type`, TOKENS.export_v2)).status, 200, 'one export v2 request');
  const zipped = await new Promise<{ headers: Record<string, unknown>; body: Buffer }>((resolve, reject) => {
    // fetch would decode the body; the raw bytes show the encoding.
    import('node:http').then(({ request }) => {
      const req = request(`${p.url}/datex2/v3/status`, { headers: { Authorization: `Bearer ${TOKENS.export_v2}`, 'Accept-Encoding': 'gzip' } }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ headers: res.headers, body: Buffer.concat(chunks) }));
      });
      req.on('error', reject);
      req.end();
    }, reject);
  });
  t.equal(zipped.headers['content-encoding'], 'gzip');
  t.equal(zipped.headers.vary, 'Accept-Encoding');
  t.match(gunzipSync(zipped.body).toString(), /^<\?xml version="1.0" encoding="UTF-8"\?><d2:payload /);
  t.equal((await datex2(p, 'table')).status, 200, 'the third request of the minute');
  const fourth = await datex2(p, 'status');
  t.equal(fourth.status, 200);
  t.equal(fourth.headers.get('ratelimit-remaining'), '0', 'export v2 and DATEX II share the user\'s budget');
  const refused = await datex2(p, 'table');
  t.equal(refused.status, 429);
  t.equal(refused.headers.get('content-type'), 'application/problem+json; charset=utf-8');
  t.ok(refused.headers.get('retry-after'));
  t.equal((await get(`${p.url}/v2/fuel-type`, TOKENS.export_v2)).status, 429, 'and export v2 is out of budget too');
  const unknown = await datex2(p, 'nothing');
  t.equal(unknown.status, 404, 'an unknown path under /datex2/');
  t.equal(unknown.headers.get('content-type'), 'application/problem+json; charset=utf-8');
});

t.test('conditional requests: Last-Modified moves with the registry and with prices, not with other signals', async (t) => {
  const p = await startTestPlatform(t, { env: ENV, fixture: publishable() });
  await p.sql`UPDATE stations SET static_modified_at = static_modified_at - interval '1 hour'`;
  await p.sql`UPDATE station_set SET modified_at = modified_at - interval '1 hour'`;
  const first = await datex2(p, 'table');
  const modified = first.headers.get('last-modified')!;
  t.equal(first.headers.get('cache-control'), 'no-cache');
  t.ok(Date.parse(modified) < Date.now() - 3_000_000, 'the registry\'s time, not the request\'s');
  const notModified = await datex2(p, 'table', { 'If-Modified-Since': modified });
  t.equal(notModified.status, 304);
  t.equal(await notModified.text(), '');
  t.equal(notModified.headers.get('last-modified'), modified);
  t.equal((await datex2(p, 'table', { 'If-Modified-Since': httpDate(Date.parse(modified) / 1000 - 1) })).status, 200, 'older: the document');

  await postSignals(p, 'availability', [{ hrs: 'BERLA', datetime: nowIso(), station: { maintenance: false, limitedly_available: false }, nozzles: [{ id: 'N1', available: true }] }]);
  await until('the availability applied', async () => (refillPoints(await text(p, 'status'))['BERLA-N-N1'] === 'available' ? true : undefined));
  t.equal((await datex2(p, 'table', { 'If-Modified-Since': modified })).status, 304, 'availability is not in the table');

  const before = await text(p, 'table');
  await postSignals(p, 'pricing', [{ hrs: 'BERLA', datetime: nowIso(), products: [{ id: 'P700', gross_price: '13.855' }] }]);
  const priced = await until('the price in the table', async () => {
    const res = await datex2(p, 'table', { 'If-Modified-Since': modified });
    return res.status === 200 ? res : undefined;
  });
  const pricedXml = await priced.text();
  t.match(pricedXml, /<aegi:energyRate id="BERLA-R-P700"><aegi:ratePolicy>adHoc<\/aegi:ratePolicy><aegi:lastUpdated>[^<]+<\/aegi:lastUpdated><aegi:applicableCurrency>EUR<\/aegi:applicableCurrency><aegi:energyPrice><aegi:priceGroupIndex>0<\/aegi:priceGroupIndex><aegi:priceType>pricePerKg<\/aegi:priceType><aegi:value>13.86<\/aegi:value><aegi:taxIncluded>true<\/aegi:taxIncluded>/, 'rounded half up to the cent');
  t.match(pricedXml, /<aegi:energyRateByReference id="BERLA-R-P700" targetClass="aegi:EnergyRate"\/>/, 'the nozzle dispensing it refers to the rate');
  t.ok(Date.parse(priced.headers.get('last-modified')!) > Date.parse(modified), 'a price moves Last-Modified');
  const version = (xml: string, id: string) => new RegExp(`id="${id}" version="([0-9a-f]+)"`).exec(xml)?.[1];
  t.not(version(pricedXml, 'BERLA-S'), version(before, 'BERLA-S'), 'the station\'s version moved');
  t.equal(version(pricedXml, 'BERLA-N-N2'), version(before, 'BERLA-N-N2'), 'a refill point the price does not concern kept its version');
  t.same(await datex2Errors(pricedXml), []);

  const status = await text(p, 'status');
  t.match(status, /<aegi:energyRateUpdate><aegi:lastUpdated>[^<]+<\/aegi:lastUpdated><aegi:energyRateReference id="BERLA-R-P700" targetClass="aegi:EnergyRate"\/><aegi:energyPrice>[\s\S]*?<aegi:value>13.86<\/aegi:value>/, 'the price as a rate update');
  t.match(status, new RegExp(`<aegi:tableReference id="hrs-energy-infrastructure" version="${/energyInfrastructureTable id="hrs-energy-infrastructure" version="([0-9a-f]+)"/.exec(pricedXml)![1]}"`), 'the status refers to the table\'s current version');
});

t.test('the refill points follow a layout change; the status follows the signals, one nozzle at a time', async (t) => {
  const f = publishable();
  const p = await startTestPlatform(t, { env: ENV, fixture: f });
  t.same(Object.keys(refillPoints(await text(p, 'status'))), ['BERLA-N-N1', 'BERLA-N-N2']);
  t.same(Object.values(refillPoints(await text(p, 'status'))), ['unknown', 'unknown'], 'no signal yet');

  const availability = (nozzles: { id: string; available: boolean }[], station = {}) =>
    postSignals(p, 'availability', [{ hrs: 'BERLA', datetime: nowIso(), station: { maintenance: false, limitedly_available: false, ...station }, nozzles }]);
  await availability([{ id: 'N1', available: true }, { id: 'N2', available: false }]);
  await postSignals(p, 'usage', [{ hrs: 'BERLA', datetime: nowIso(), nozzles: [{ id: 'N1', usage_status: 'in-use' }, { id: 'N2', usage_status: 'free' }] }]);
  t.same(refillPoints(await text(p, 'status')), { 'BERLA-N-N1': 'occupied', 'BERLA-N-N2': 'outOfOrder' }, 'at once: the accepting instance applied both before its 204');
  await postSignals(p, 'usage', [{ hrs: 'BERLA', datetime: nowIso(), nozzles: [{ id: 'N1', usage_status: 'reserved' }] }]);
  t.same(refillPoints(await text(p, 'status')), { 'BERLA-N-N1': 'reserved', 'BERLA-N-N2': 'outOfOrder' });
  await availability([{ id: 'N1', available: true }, { id: 'N2', available: true }], { limitedly_available: true });
  const limited = await text(p, 'status');
  t.same(refillPoints(limited), { 'BERLA-N-N1': 'available', 'BERLA-N-N2': 'available' }, 'limited: available');
  t.match(limited, /<afac:operationStatus>limitedOperation<\/afac:operationStatus>/);
  await availability([{ id: 'N1', available: true }], { maintenance: true });
  t.same(refillPoints(await text(p, 'status')), { 'BERLA-N-N1': 'outOfOrder', 'BERLA-N-N2': 'outOfOrder' }, 'maintenance');
  await postSignals(p, 'hydrogen-storage', [{ hrs: 'BERLA', datetime: nowIso(), storages: [{ id: 'S1', remaining_kg: 80 }] }]);
  t.match(await text(p, 'status'), /<aegi:limitedHydrogenAmount>true<\/aegi:limitedHydrogenAmount>/, 'low storage');

  // A third nozzle, N1 removed: the table and the status follow the confirmed layout.
  const station = f.stations[0] as { layout: { dispensers: { nozzles: Record<string, unknown>[] }[]; products: { nozzle_external_ids: string[] }[] } };
  station.layout.dispensers[0]!.nozzles = [
    station.layout.dispensers[0]!.nozzles[1]!,
    { external_id: 'N3', connector_type: 'H70', vehicle_side: 'left', is_certified: true, fuelling_options: ['700ld', '700hd'] },
  ];
  station.layout.products[0]!.nozzle_external_ids = ['N3'];
  await p.load(f);
  const table = await text(p, 'table');
  t.same([...table.matchAll(/<aegi:refillPoint xsi:type="aegi:AlternativeFuelsRefillPoint" id="([^"]+)"/g)].map((m) => m[1]), ['BERLA-N-N2', 'BERLA-N-N3']);
  t.match(table, /<aegi:refuellingMode>gaseousHydrogen700barTruck<\/aegi:refuellingMode>/);
  const status = await text(p, 'status');
  t.same(Object.keys(refillPoints(status)), ['BERLA-N-N2', 'BERLA-N-N3'], 'the status refers to the new refill points');
  t.same(await datex2Errors(table, status), []);
});

/**
 * Tests that only read the base registry (no station publishable, no signal, no change) share one
 * platform, started once for them.
 */
t.test('reading the base registry', async (t) => {
  let p: TestPlatform;
  t.before(async () => {
    p = await startTestPlatform(t, { env: ENV, fixture: baseFixture() });
  });

  t.test('no publishable station: a 404 problem for the table (never an invalid document), a valid empty status', async (t) => {
    const res = await datex2(p, 'table');
    t.equal(res.status, 404);
    t.match(await res.json(), { status: 404, code: 'no_publishable_station', detail: /2 station\(s\) lack the capacity, 2 the coordinates/ });
    const status = await text(p, 'status');
    t.same(await datex2Errors(status), []);
    t.notMatch(status, /tableReference|SiteStatus/);
  });

  t.test('the OpenAPI document of export v2 describes both publications as XML', async (t) => {
    const doc = await (await fetch(`${p.url}/v2/doc/schema`)).json();
    for (const path of ['/datex2/v3/table', '/datex2/v3/status']) {
      t.ok(doc.paths[path]?.get?.responses?.['200']?.content?.['application/xml'], `${path}: an XML response`);
      t.ok(doc.paths[path].get.responses['429'], `${path}: limited as export v2`);
    }
    t.ok(doc.paths['/datex2/v3/table'].get.responses['304'], 'the table is conditional');
    t.match(doc.info.description, /## DATEX II publications \(AFIR\)/);
    t.match(doc.info.description, /rounded half up to the cent/);
  });
});

t.test('two instances publish the same documents: the same ids and versions, the same Last-Modified, a signal on either', async (t) => {
  const a = await startTestPlatform(t, { env: ENV, fixture: publishable() });
  const b = await startTestPlatform(t, { sameStoreAs: a });
  await postSignals(a, 'pricing', [{ hrs: 'BERLA', datetime: nowIso(), products: [{ id: 'P700', gross_price: '13.855' }] }]);
  await postSignals(a, 'availability', [{ hrs: 'BERLA', datetime: nowIso(), station: { maintenance: false, limitedly_available: false }, nozzles: [{ id: 'N1', available: true }, { id: 'N2', available: false }] }]);
  // The readings reach the other instance over Redis, a few milliseconds later.
  const onB = await until('the signals on the other instance', async () => {
    const status = await text(b, 'status');
    return refillPoints(status)['BERLA-N-N1'] === 'available' && status.includes('energyRateUpdate') ? status : undefined;
  });
  const onA = await text(a, 'status');
  const strip = (xml: string) => xml.replace(/<com:publicationTime>[^<]+<\/com:publicationTime>/, '');
  t.equal(strip(onB), strip(onA), 'the status publications are the same but for their publication time');
  const [tableA, tableB] = await Promise.all([datex2(a, 'table'), datex2(b, 'table')]);
  t.equal(tableB.headers.get('last-modified'), tableA.headers.get('last-modified'), 'the same Last-Modified');
  t.equal(strip(await tableB.text()), strip(await tableA.text()), 'the same table, versions included');
});
