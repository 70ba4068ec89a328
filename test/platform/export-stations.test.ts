import t, { type Test } from 'tap';
import { request as httpRequest } from 'node:http';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Sql } from '../../db/connect.js';
import { stationPageHeads } from '../../db/queries/stations.js';
import { StationRecords } from '../../src/api/export/records.js';
import { httpDate, parseHttpDate } from '../../src/http/dates.js';
import { loadFixture } from '../../src/registry/file/load.js';
import { seedRegistry } from '../bench/lib/seed.js';
import { baseFixture, TOKENS } from '../helpers/fixtures.js';
import { freshDatabase, get, startTestPlatform, type TestPlatform } from '../helpers/platform.js';
import sharp from 'sharp';

/** The export v2 rate limits (60 a minute) would stop these tests long before they are done. */
const ENV = { EXPORT_V2_RATE_LIMIT_MINUTE: '1000000', EXPORT_V2_RATE_LIMIT_DAY: '1000000' };
const PROBLEM = 'application/problem+json; charset=utf-8';
const LETTERS = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ';

type Fixture = ReturnType<typeof baseFixture>;
type Station = Record<string, any>;

/** `count` more stations of h2-demo (QAAAA, QAAAB, …), listed in reverse order in the file. */
function withStations(f: Fixture, count: number): Fixture {
  const extra: Station[] = [];
  for (let i = 0; i < count; i++) {
    extra.push({ hrs_id: `Q${LETTERS[Math.floor(i / 26)]}${LETTERS[i % 26]}AA`, operator: 'h2-demo', name: `Station ${i}` });
  }
  f.stations.push(...(extra.reverse() as never[]));
  return f;
}

const stationOf = (f: Fixture, hrsId: string) => f.stations.find((s) => s.hrs_id === hrsId) as Station;

/** Moves every exported timestamp an hour back, so that the next real change lands in a later second. */
async function backdate(p: TestPlatform): Promise<void> {
  await p.sql`UPDATE stations SET static_modified_at = static_modified_at - interval '1 hour'`;
  await p.sql`UPDATE station_set SET modified_at = modified_at - interval '1 hour'`;
}

/** The station's `static_modified_at` in whole seconds, read from the database. */
async function modifiedSeconds(sql: Sql, hrsId: string): Promise<number> {
  const [row] = await sql<{ s: string }[]>`
    SELECT floor(extract(epoch FROM static_modified_at))::bigint AS s FROM stations WHERE hrs_id = ${hrsId}`;
  return Number(row!.s);
}

async function body(p: TestPlatform, path: string, headers: Record<string, string> = {}): Promise<any> {
  const res = await get(`${p.url}${path}`, TOKENS.export_v2, { headers });
  if (res.status !== 200) throw new Error(`GET ${path} answered ${res.status}: ${await res.text()}`);
  return res.json();
}

async function lastModified(p: TestPlatform, path: string): Promise<string> {
  const res = await get(`${p.url}${path}`, TOKENS.export_v2);
  if (res.status !== 200) throw new Error(`GET ${path} answered ${res.status}: ${await res.text()}`);
  await res.arrayBuffer();
  return res.headers.get('last-modified')!;
}

async function conditional(p: TestPlatform, path: string, since: string, method = 'GET'): Promise<{ status: number; text: string; res: Response }> {
  const res = await get(`${p.url}${path}`, TOKENS.export_v2, { method, headers: { 'If-Modified-Since': since } });
  return { status: res.status, text: await res.text(), res };
}

const shift = (date: string, seconds: number) => httpDate(Date.parse(date) / 1000 + seconds);

async function expectProblem(t: Test, res: Response, status: number, detail: string | RegExp, code?: string): Promise<void> {
  t.equal(res.status, status, `${status}`);
  t.equal(res.headers.get('content-type'), PROBLEM, 'a problem body');
  const problem = await res.json();
  t.match(problem, { type: 'about:blank', status, detail, ...(code ? { code } : {}) });
}

/* ---- The list -------------------------------------------------------------------------------------- */

/**
 * Tests that only read the 23 stations (GET requests, no load, no write) share one platform, started once
 * for them; the export v2 limits are raised (ENV), so their requests leave each other's answers alone.
 */
t.test('reading 23 stations', async (t) => {
  let p: TestPlatform;
  t.before(async () => {
    p = await startTestPlatform(t, { env: ENV, fixture: withStations(baseFixture(), 21) });
  });

  t.test('pagination: limits, offsets, the last page, past the end, absolute links', async (t) => {
    const base = p.baseUrl;
    t.match(base, /^http:\/\/127\.0\.0\.1:\d+$/);
    const all = ['BERLA', 'HAMBG', ...Array.from({ length: 21 }, (_, i) => `Q${LETTERS[Math.floor(i / 26)]}${LETTERS[i % 26]}AA`)].sort();
    const ids = (page: any) => page.results.map((r: Station) => r.hrs_id);
    const link = (limit: number, offset: number) => `${base}/v2/hrs?limit=${limit}&offset=${offset}`;

    const first = await body(p, '/v2/hrs');
    t.same(Object.keys(first), ['count', 'next', 'previous', 'sync_token', 'results']);
    t.match(first.sync_token, /^[A-Za-z0-9_-]+$/, 'every page carries the delta extension\'s sync_token');
    const { sync_token: _, ...plain } = first;
    t.same({ ...plain, results: ids(first) }, { count: 23, next: null, previous: null, results: all }, 'default limit 100: everything, by hrs_id');

    const cases: [string, number, string | null, string | null, string[]][] = [
      ['limit=5', 23, link(5, 5), null, all.slice(0, 5)],
      ['limit=5&offset=0', 23, link(5, 5), null, all.slice(0, 5)],
      ['limit=5&offset=5', 23, link(5, 10), link(5, 0), all.slice(5, 10)],
      ['limit=5&offset=3', 23, link(5, 8), link(5, 0), all.slice(3, 8)],
      ['limit=5&offset=20', 23, null, link(5, 15), all.slice(20)],
      ['limit=5&offset=18', 23, null, link(5, 13), all.slice(18)],
      ['limit=1&offset=22', 23, null, link(1, 21), all.slice(22)],
      ['limit=23', 23, null, null, all],
      ['limit=22', 23, link(22, 22), null, all.slice(0, 22)],
      ['limit=5&offset=23', 23, null, link(5, 18), []],
      ['limit=5&offset=1000', 23, null, link(5, 995), []],
      ['limit=500', 23, null, null, all],
      ['offset=7', 23, null, link(100, 0), all.slice(7)],
      ['limit=5&offset=05', 23, link(5, 10), link(5, 0), all.slice(5, 10)],
    ];
    for (const [query, count, next, previous, results] of cases) {
      const page = await body(p, `/v2/hrs?${query}`);
      t.same({ count: page.count, next: page.next, previous: page.previous, results: ids(page) }, { count, next, previous, results }, query);
    }
    // No fuelling_option filter on v2 (spec), and no other parameter: refused, never silently ignored.
    const unknown = await get(`${p.url}/v2/hrs?limit=5&fuelling_option=700ld&foo=bar`, TOKENS.export_v2);
    t.equal(unknown.status, 400, 'unknown parameters are refused');
    t.match(await unknown.json(), { code: 'invalid_parameter', detail: 'unknown parameter(s): fuelling_option, foo; this path takes limit, offset, since, updated_since, bbox, near, radius_km.' });

    const other = await startTestPlatform(t, { env: { ...ENV, BASE_URL: 'https://export.example.org/hrs-platform/' }, fixture: baseFixture() });
    const page = await body(other, '/v2/hrs?limit=1');
    t.equal(page.next, 'https://export.example.org/hrs-platform/v2/hrs?limit=1&offset=1', 'links are built on BASE_URL, not on the request');
    t.equal((await body(other, '/v2/hrs?limit=1&offset=1')).previous, 'https://export.example.org/hrs-platform/v2/hrs?limit=1&offset=0');
  });

  t.test('a crawl following next sees every station once, and list records equal single records', async (t) => {
    const seen: string[] = [];
    const records = new Map<string, Station>();
    let url: string | null = `${p.url}/v2/hrs?limit=5`;
    let pages = 0;
    while (url) {
      const res = await get(url, TOKENS.export_v2);
      t.equal(res.status, 200);
      const page = (await res.json()) as { next: string | null; results: Station[]; count: number };
      t.equal(page.count, 23);
      for (const r of page.results) {
        seen.push(r.hrs_id);
        records.set(r.hrs_id, r);
      }
      url = page.next;
      pages++;
      if (pages > 10) throw new Error('the crawl does not end');
    }
    t.equal(pages, 5, 'five pages of five (the last has three)');
    t.equal(seen.length, 23);
    t.equal(new Set(seen).size, 23, 'no station twice');
    t.same(seen, [...seen].sort(), 'in hrs_id order');
    for (const [hrsId, record] of records) {
      const res = await get(`${p.url}/v2/hrs/${hrsId}`, TOKENS.export_v2);
      t.same(await res.json(), record, `${hrsId}: the list's record is the station's record`);
    }
  });
});

/**
 * Tests that only read the base registry share one platform, started once for them. Their refused
 * requests (12 failed authentications) stay below the 30 a client may fail in a minute.
 */
t.test('reading the base registry', async (t) => {
  let p: TestPlatform;
  t.before(async () => {
    p = await startTestPlatform(t, { env: ENV, fixture: baseFixture() });
  });

  t.test('a bad limit or offset is a 400 problem, never clamped', async (t) => {
    const limits = ['0', '501', '1000', '-1', '-0', 'abc', '1.5', '5.0', '', '1e2', ' 5', '5 ', '+5', '0x10', '99999999999999999999'];
    for (const value of limits) {
      const res = await get(`${p.url}/v2/hrs?limit=${encodeURIComponent(value)}`, TOKENS.export_v2);
      await expectProblem(t, res, 400, 'limit: must be a whole number from 1 to 500.', 'invalid_parameter');
    }
    for (const value of ['-1', 'x', '1.5', '', '1e3', '99999999999999999999']) {
      const res = await get(`${p.url}/v2/hrs?offset=${encodeURIComponent(value)}`, TOKENS.export_v2);
      await expectProblem(t, res, 400, 'offset: must be a whole number, 0 or more.', 'invalid_parameter');
    }
    await expectProblem(t, await get(`${p.url}/v2/hrs?limit=5&limit=6`, TOKENS.export_v2), 400, /^limit: give it once/, 'invalid_parameter');
    await expectProblem(t, await get(`${p.url}/v2/hrs?offset=1&offset=1`, TOKENS.export_v2), 400, /^offset: give it once/, 'invalid_parameter');
    t.equal((await get(`${p.url}/v2/hrs?limit=500`, TOKENS.export_v2)).status, 200, '500 is the maximum');
    t.equal((await get(`${p.url}/v2/hrs?limit=1`, TOKENS.export_v2)).status, 200, '1 is the minimum');
    t.equal((await get(`${p.url}/v2/hrs?offset=999999999999999`, TOKENS.export_v2)).status, 200, 'a huge offset is an empty page');
  });

  t.test('unknown stations and authentication', async (t) => {
    for (const path of ['/v2/hrs/NOPEX', '/v2/hrs/NOPEX/events', '/v2/hrs/NOPEX/photo', '/v2/hrs/berla']) {
      const res = await get(`${p.url}${path}`, TOKENS.export_v2);
      await expectProblem(t, res, 404, /^No station with hrs_id "(NOPEX|berla)"\.$/, 'not_found');
    }
    for (const path of ['/v2/hrs', '/v2/hrs/BERLA', '/v2/hrs/BERLA/events', '/v2/hrs/BERLA/photo']) {
      for (const token of [undefined, TOKENS.export_v1, TOKENS.import_v2]) {
        const res = await get(`${p.url}${path}`, token);
        t.equal(res.status, 401, `${path} with ${token ?? 'no token'}`);
        t.equal(res.headers.get('last-modified'), null);
      }
    }
  });
});

t.test('a page of 500 seeded stations with their layouts', async (t) => {
  const p = await startTestPlatform(t, { env: ENV });
  await seedRegistry(p.sql, { stations: 620 });
  await p.load({ users: [{ id: 'alice', email: 'alice@example.org' }], tokens: baseFixture().tokens.filter((x) => x.user) });
  const page = await body(p, '/v2/hrs?limit=500');
  t.equal(page.count, 620);
  t.equal(page.results.length, 500);
  t.equal(page.next, `${p.baseUrl}/v2/hrs?limit=500&offset=500`);
  t.ok(page.results.every((r: Station) => Array.isArray(r.dispensers) && r.dispensers[0].nozzles.length === 2), 'every record with its layout');
  const last = await body(p, '/v2/hrs?limit=500&offset=500');
  t.equal(last.results.length, 120);
  t.equal(last.next, null);
  t.equal(new Set([...page.results, ...last.results].map((r: Station) => r.hrs_id)).size, 620);
  t.equal((await get(`${p.url}/v2/hrs?limit=501`, TOKENS.export_v2)).status, 400);
});

t.test('records are read in a handful of statements and kept per station version', async (t) => {
  const { sql } = await freshDatabase(t);
  await seedRegistry(sql, { stations: 520 });
  let statements = 0;
  const idsAsked: number[] = [];
  const counting = ((strings: TemplateStringsArray, ...values: unknown[]) => {
    statements++;
    for (const value of values) if (Array.isArray(value)) idsAsked.push(value.length);
    return (sql as unknown as (s: TemplateStringsArray, ...v: unknown[]) => unknown)(strings, ...values);
  }) as unknown as Sql;
  const records = new StationRecords(counting, () => 'http://x.example');
  const heads = (await stationPageHeads(sql, 500, 0)).stations;
  const first = await records.get(heads);
  t.equal(first.bodies.length, 500);
  t.equal(statements, 1, 'one statement for 500 records');
  t.same(idsAsked, [500]);
  const again = await records.get(heads);
  t.equal(statements, 1, 'nothing read again while the versions are unchanged');
  t.same(again.bodies, first.bodies);

  await sql`UPDATE stations SET static_modified_at = clock_timestamp(), name = 'Renamed' WHERE hrs_id = ${heads[7]!.hrsId}`;
  const changed = (await stationPageHeads(sql, 500, 0)).stations;
  const third = await records.get(changed);
  t.equal(statements, 2);
  t.same(idsAsked, [500, 1], 'only the changed station is read again');
  t.equal(JSON.parse(third.bodies[7]!.toString()).name, 'Renamed');
  t.equal(third.newestUs, changed[7]!.modifiedUs, 'the newest version is the changed station\'s');
});

/* ---- The record ------------------------------------------------------------------------------------ */

/** BERLA with a second, uncertified dispenser, an unmapped product and a declared share; a draft besides. */
function recordFixture(): Fixture {
  const f = baseFixture();
  const berla = stationOf(f, 'BERLA');
  berla.details = { city: 'Berlin', vehicle_types: ['M1', 'N1'], name: 'shadowed', hrs_id: 'OSLO1', dispensers: 'no', coordinates: { lat: 52.36, lon: 13.5 } };
  berla.layout.dispensers.push({
    external_id: 'D2',
    is_certified: false,
    nozzles: [{ external_id: 'N3', connector_type: 'H70-HF', vehicle_side: 'both', is_certified: true, fuelling_options: ['700hd', '700ld'] }],
  });
  berla.layout.storages.push({ external_id: 'S2', nominal_capacity_kg: 1234.5, dispenser_external_ids: ['D2', 'D1'] });
  berla.layout.products.push({ external_id: 'P700HD', pressure_stage: 700, green_hydrogen_share: 33.33, nozzle_external_ids: [] });
  berla.draft_layout = { dispensers: [{ external_id: 'DRAFT1', is_certified: true, nozzles: [] }] };
  f.stations.push({ hrs_id: 'EMPTY', operator: 'h2-demo', name: 'Empty Layout', layout: { dispensers: [], storages: [], products: [] } } as never);
  return f;
}

t.test('the station record, field by field: confirmed, unconfirmed and empty layouts; drafts invisible', async (t) => {
  const p = await startTestPlatform(t, { env: ENV, fixture: recordFixture() });
  const res = await get(`${p.url}/v2/hrs/BERLA`, TOKENS.export_v2);
  t.equal(res.status, 200);
  t.equal(res.headers.get('content-type'), 'application/json; charset=utf-8');
  t.equal(res.headers.get('etag'), null, 'no ETag');
  t.equal(res.headers.get('last-modified'), httpDate(await modifiedSeconds(p.sql, 'BERLA')), 'Last-Modified: the station\'s static_modified_at');
  const text = await res.text();
  t.notMatch(text, /DRAFT1/, 'the draft is invisible');
  const record = JSON.parse(text);
  t.same(Object.keys(record), [
    'hrs_id', 'name', 'operator', 'heavy_duty', 'opening_hours', 'city', 'coordinates', 'vehicle_types',
    'fuel_types', 'photo_url', 'dispensers', 'storages', 'products',
  ]);
  t.same(record, {
    hrs_id: 'BERLA',
    name: 'Berlin Airport',
    operator: { id: 'h2-demo', name: 'H2 Demo GmbH' },
    heavy_duty: false,
    opening_hours: '24/7',
    city: 'Berlin',
    coordinates: { lat: 52.36, lon: 13.5 },
    vehicle_types: ['M1', 'N1'],
    fuel_types: [
      { fuel_type: '700ld', dispensers: 2 },
      { fuel_type: '350ld', dispensers: 1 },
      { fuel_type: '700hd', dispensers: 1 },
    ],
    photo_url: null,
    dispensers: [
      {
        external_id: 'D1',
        is_certified: true,
        nozzles: [
          { external_id: 'N1', connector_type: 'H70', vehicle_side: 'left', is_certified: true, is_effectively_certified: true, fuelling_options: ['700ld'], protocol_configs: null },
          { external_id: 'N2', connector_type: 'H35', vehicle_side: 'right', is_certified: false, is_effectively_certified: false, fuelling_options: ['350ld'], protocol_configs: null },
        ],
      },
      {
        external_id: 'D2',
        is_certified: false,
        nozzles: [
          { external_id: 'N3', connector_type: 'H70-HF', vehicle_side: 'both', is_certified: true, is_effectively_certified: false, fuelling_options: ['700hd', '700ld'], protocol_configs: null },
        ],
      },
    ],
    storages: [
      { external_id: 'S1', nominal_capacity_kg: 500, dispenser_external_ids: ['D1'] },
      { external_id: 'S2', nominal_capacity_kg: 1234.5, dispenser_external_ids: ['D2', 'D1'] },
    ],
    products: [
      { external_id: 'P700', pressure_stage: 700, green_hydrogen_share: null, nozzle_external_ids: ['N1'] },
      { external_id: 'P350', pressure_stage: 350, green_hydrogen_share: 50, nozzle_external_ids: ['N2'] },
      { external_id: 'P700HD', pressure_stage: 700, green_hydrogen_share: 33.33, nozzle_external_ids: [] },
    ],
  });

  t.same(await body(p, '/v2/hrs/HAMBG'), {
    hrs_id: 'HAMBG',
    name: 'Hamburg Port',
    operator: { id: 'h2-demo', name: 'H2 Demo GmbH' },
    heavy_duty: true,
    opening_hours: null,
    fuel_types: [],
    photo_url: null,
    dispensers: null,
    storages: null,
    products: null,
  }, 'only a draft: the layout sections are null');
  t.same(await body(p, '/v2/hrs/EMPTY'), {
    hrs_id: 'EMPTY',
    name: 'Empty Layout',
    operator: { id: 'h2-demo', name: 'H2 Demo GmbH' },
    heavy_duty: false,
    opening_hours: null,
    fuel_types: [],
    photo_url: null,
    dispensers: [],
    storages: [],
    products: [],
  }, 'a confirmed, empty layout: empty arrays');

  // Confirming the draft (it becomes the layout) shows it; the old layout is gone.
  const f = recordFixture();
  const hambg = stationOf(f, 'HAMBG');
  hambg.layout = hambg.draft_layout;
  hambg.draft_layout = null;
  await p.load(f);
  t.same((await body(p, '/v2/hrs/HAMBG')).dispensers, [{ external_id: 'DX', is_certified: false, nozzles: [] }]);
  t.same((await body(p, '/v2/hrs/HAMBG')).storages, []);

  const list = await body(p, '/v2/hrs');
  t.same(list.results.map((r: Station) => r.hrs_id), ['BERLA', 'EMPTY', 'HAMBG']);
  t.same(list.results[0], record, 'the list carries the same record');
});

/* ---- Last-Modified and If-Modified-Since -------------------------------------------------------------- */

t.test('Last-Modified moves on layout, event, station and operator changes, not on a signal or a draft', async (t) => {
  const p = await startTestPlatform(t, { env: ENV, fixture: baseFixture() });
  await backdate(p);
  const before = await lastModified(p, '/v2/hrs/BERLA');
  t.equal(before, httpDate(await modifiedSeconds(p.sql, 'BERLA')));
  t.ok(Date.parse(before) < Date.now() - 3000 * 1000, 'backdated');
  const hambgBefore = await lastModified(p, '/v2/hrs/HAMBG');

  // A live signal (BERLA is live for availability with mon-1).
  const signal = await fetch(`${p.url}/import/v2/signal/availability/`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${TOKENS.import_v2}`, 'Content-Type': 'application/json' },
    body: JSON.stringify([
      { hrs: 'BERLA', datetime: new Date(Date.now() - 5000).toISOString(), nozzles: [{ id: 'N1', available: true }], station: { maintenance: false, limitedly_available: false } },
    ]),
  });
  t.equal(signal.status, 204);
  t.not((await body(p, '/v2/hrs/BERLA/status')).availability, null, 'the signal is published');
  t.equal(await lastModified(p, '/v2/hrs/BERLA'), before, 'a signal does not move Last-Modified');
  t.equal((await conditional(p, '/v2/hrs/BERLA', before)).status, 304);

  // A draft does not move it either.
  const f = baseFixture();
  stationOf(f, 'BERLA').draft_layout = { dispensers: [{ external_id: 'D9', is_certified: true, nozzles: [] }] };
  await p.load(f);
  t.equal(await lastModified(p, '/v2/hrs/BERLA'), before, 'a draft does not move Last-Modified');

  const changes: [string, (f: Fixture) => void][] = [
    ['a layout change', (f) => void (stationOf(f, 'BERLA').layout.storages[0].nominal_capacity_kg = 750)],
    ['a new event', (f) => void stationOf(f, 'BERLA').events.push({ id: 'ev-2', kind: 'closure', starts_at: '2027-01-01T00:00:00Z', ends_at: null, description: '' })],
    ['an event\'s change', (f) => void (stationOf(f, 'BERLA').events[0].description = 'Compressor and valve service')],
    ['an event\'s removal', (f) => void (stationOf(f, 'BERLA').events = [])],
    ['a station field', (f) => void (stationOf(f, 'BERLA').opening_hours = 'Mo-Fr 06:00-22:00')],
    ['the details', (f) => void (stationOf(f, 'BERLA').details = { city: 'Schönefeld' })],
    ['the operator\'s name', (f) => void (f.operators[0]!.name = 'H2 Demo AG')],
  ];
  let fixture = baseFixture();
  stationOf(fixture, 'BERLA').draft_layout = { dispensers: [{ external_id: 'D9', is_certified: true, nozzles: [] }] };
  for (const [what, change] of changes) {
    await backdate(p);
    const old = await lastModified(p, '/v2/hrs/BERLA');
    const oldList = await lastModified(p, '/v2/hrs');
    change(fixture);
    await p.load(fixture);
    const now = await lastModified(p, '/v2/hrs/BERLA');
    t.ok(Date.parse(now) > Date.parse(old), `${what} moves the record's Last-Modified`);
    t.equal(now, httpDate(await modifiedSeconds(p.sql, 'BERLA')));
    t.ok(Date.parse(await lastModified(p, '/v2/hrs')) > Date.parse(oldList), `${what} moves the list's Last-Modified`);
    const revalidated = await conditional(p, '/v2/hrs/BERLA', old);
    t.equal(revalidated.status, 200, `${what}: the old date gets the new record`);
    t.equal(revalidated.res.headers.get('last-modified'), now);
    t.equal((await conditional(p, '/v2/hrs/BERLA', now)).status, 304, `${what}: the new date gets 304`);
    fixture = JSON.parse(JSON.stringify(fixture)) as Fixture;
  }
  const operatorChange = await body(p, '/v2/hrs/BERLA');
  t.same(operatorChange.operator, { id: 'h2-demo', name: 'H2 Demo AG' });
  t.equal(operatorChange.city, 'Schönefeld');
  t.not(await lastModified(p, '/v2/hrs/HAMBG'), hambgBefore, 'the operator\'s name is part of every station of that operator');
});

t.test('the list\'s Last-Modified: the newest of its page and of the station set', async (t) => {
  const p = await startTestPlatform(t, { env: ENV, fixture: withStations(baseFixture(), 8) });
  await backdate(p);
  // Pages of five: BERLA, HAMBG, QAAAA, QABAA, QACAA | QADAA … QAHAA.
  const page1 = await lastModified(p, '/v2/hrs?limit=5');
  const page2 = await lastModified(p, '/v2/hrs?limit=5&offset=5');
  const [expected] = await p.sql<{ s: string }[]>`
    SELECT floor(extract(epoch FROM greatest(
      (SELECT max(static_modified_at) FROM (SELECT static_modified_at FROM stations ORDER BY hrs_id LIMIT 5) page),
      (SELECT modified_at FROM station_set))))::bigint AS s`;
  t.equal(page1, httpDate(Number(expected!.s)));

  // A change on page 2 moves page 2 only.
  const f = withStations(baseFixture(), 8);
  stationOf(f, 'QAFAA').name = 'Renamed';
  await p.load(f);
  t.equal(await lastModified(p, '/v2/hrs?limit=5'), page1, 'page 1 unchanged');
  t.equal((await conditional(p, '/v2/hrs?limit=5', page1)).status, 304);
  const moved = await lastModified(p, '/v2/hrs?limit=5&offset=5');
  t.ok(Date.parse(moved) > Date.parse(page2), 'page 2 moved');
  t.equal((await conditional(p, '/v2/hrs?limit=5&offset=5', page2)).status, 200);

  // Removing a station (left out of its operator's file) moves every page, even one it was not on.
  await backdate(p);
  const before = await lastModified(p, '/v2/hrs?limit=5');
  const beforeBerla = await lastModified(p, '/v2/hrs/BERLA');
  const without = withStations(baseFixture(), 8);
  stationOf(without, 'QAFAA').name = 'Renamed';
  without.stations = without.stations.filter((s) => s.hrs_id !== 'QAHAA');
  without.assignments = without.assignments.filter((a) => a.hrs_id !== 'QAHAA');
  const summary = await p.load(without);
  t.equal(summary.stations.removed, 1);
  const after = await lastModified(p, '/v2/hrs?limit=5');
  t.ok(Date.parse(after) > Date.parse(before), 'a removal moves the list\'s Last-Modified');
  const revalidated = await conditional(p, '/v2/hrs?limit=5', before);
  t.equal(revalidated.status, 200);
  t.equal(JSON.parse(revalidated.text).count, 9);
  t.equal(await lastModified(p, '/v2/hrs/BERLA'), beforeBerla, 'BERLA itself did not change');

  // Adding one moves it too.
  await backdate(p);
  const beforeAdd = await lastModified(p, '/v2/hrs?limit=5');
  const added = JSON.parse(JSON.stringify(without)) as Fixture;
  added.stations.push({ hrs_id: 'ZZZZZ', operator: 'h2-demo', name: 'Last one' } as never);
  await p.load(added);
  t.ok(Date.parse(await lastModified(p, '/v2/hrs?limit=5')) > Date.parse(beforeAdd), 'an addition moves the list\'s Last-Modified');
  t.equal((await conditional(p, '/v2/hrs?limit=5', beforeAdd)).status, 200);
});

t.test('304 and If-Modified-Since: older, equal, newer, garbage, the future', async (t) => {
  const p = await startTestPlatform(t, { env: ENV, fixture: baseFixture() });
  await backdate(p);
  for (const path of ['/v2/hrs/BERLA', '/v2/hrs', '/v2/hrs?limit=1']) {
    const lm = await lastModified(p, path);
    const seconds = Date.parse(lm) / 1000;
    const equal = await conditional(p, path, lm);
    t.equal(equal.status, 304, `${path}: equal → 304`);
    t.equal(equal.text, '', 'empty body');
    t.equal(equal.res.headers.get('content-length'), null, 'no Content-Length on a 304');
    t.equal(equal.res.headers.get('last-modified'), lm, 'the 304 repeats Last-Modified');
    t.equal(equal.res.headers.get('etag'), null);
    t.equal((await conditional(p, path, shift(lm, 60))).status, 304, `${path}: newer (still past) → 304`);
    t.equal((await conditional(p, path, shift(lm, -1))).status, 200, `${path}: one second older → 200`);
    t.equal((await conditional(p, path, shift(lm, -86400))).status, 200, `${path}: older → 200`);
    t.equal((await conditional(p, path, httpDate(Math.floor(Date.now() / 1000) + 86400))).status, 200, `${path}: the future is ignored`);
    t.equal((await conditional(p, path, httpDate(Math.floor(Date.now() / 1000) - 2))).status, 304, `${path}: just now → 304`);
    const rfc850 = new Date(seconds * 1000);
    const days = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];
    const pad = (n: number) => String(n).padStart(2, '0');
    const months = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
    const time = `${pad(rfc850.getUTCHours())}:${pad(rfc850.getUTCMinutes())}:${pad(rfc850.getUTCSeconds())}`;
    const obsolete = `${days[rfc850.getUTCDay()]}, ${pad(rfc850.getUTCDate())}-${months[rfc850.getUTCMonth()]}-${pad(rfc850.getUTCFullYear() % 100)} ${time} GMT`;
    t.equal((await conditional(p, path, obsolete)).status, 304, `${path}: RFC 850 form (${obsolete})`);
    const asctime = `${days[rfc850.getUTCDay()]!.slice(0, 3)} ${months[rfc850.getUTCMonth()]} ${String(rfc850.getUTCDate()).padStart(2, ' ')} ${time} ${rfc850.getUTCFullYear()}`;
    t.equal((await conditional(p, path, asctime)).status, 304, `${path}: asctime form (${asctime})`);
    for (const garbage of ['garbage', '', 'yesterday', String(seconds), new Date(seconds * 1000).toISOString(), lm.toLowerCase(), `${lm}, ${lm}`, lm.replace('GMT', 'UTC'), 'Mon, 30 Feb 2026 10:00:00 GMT']) {
      t.equal((await conditional(p, path, garbage)).status, 200, `${path}: ${JSON.stringify(garbage)} is ignored`);
    }
    const both = await get(`${p.url}${path}`, TOKENS.export_v2, { headers: { 'If-Modified-Since': lm, 'If-None-Match': '"x"' } });
    t.equal(both.status, 200, `${path}: If-None-Match present → If-Modified-Since ignored`);
    const head = await conditional(p, path, lm, 'HEAD');
    t.equal(head.status, 304, `${path}: HEAD → 304`);
  }
  // Status is never conditional.
  const status = await conditional(p, '/v2/hrs/BERLA/status', httpDate(Math.floor(Date.now() / 1000)));
  t.equal(status.status, 200);
  t.equal(status.res.headers.get('last-modified'), null);
});

t.test('parseHttpDate', async (t) => {
  const now = Date.parse('2026-11-22T10:00:00Z');
  const s = Date.parse('1994-11-06T08:49:37Z') / 1000;
  t.equal(parseHttpDate('Sun, 06 Nov 1994 08:49:37 GMT', now), s, 'IMF-fixdate');
  t.equal(parseHttpDate('Sunday, 06-Nov-94 08:49:37 GMT', now), s, 'RFC 850');
  t.equal(parseHttpDate('Sun Nov  6 08:49:37 1994', now), s, 'asctime');
  t.equal(parseHttpDate('  Sun, 06 Nov 1994 08:49:37 GMT ', now), s, 'surrounding whitespace');
  t.equal(parseHttpDate('Thursday, 01-Jan-76 00:00:00 GMT', now), Date.parse('2076-01-01T00:00:00Z') / 1000, 'two-digit year up to 50 years ahead');
  t.equal(parseHttpDate('Friday, 01-Jan-77 00:00:00 GMT', now), Date.parse('1977-01-01T00:00:00Z') / 1000, 'more than 50 years ahead: the past century');
  t.equal(parseHttpDate('Sun, 06 Nov 1994 23:59:60 GMT', now), Date.parse('1994-11-06T23:59:59Z') / 1000, 'a leap second');
  for (const bad of [
    'Sun, 06 Nov 1994 08:49:37',
    'Sun, 6 Nov 1994 08:49:37 GMT',
    'Sun, 06 nov 1994 08:49:37 GMT',
    'sun, 06 Nov 1994 08:49:37 GMT',
    'Sun, 31 Nov 1994 08:49:37 GMT',
    'Sun, 06 Nov 1994 24:00:00 GMT',
    'Sun, 06 Nov 1994 08:60:00 GMT',
    'Sunday, 06-Nov-1994 08:49:37 GMT',
    'Sun, 06 Nov 1994 08:49:37 +0000',
    '1994-11-06T08:49:37Z',
    'Sun, 29 Feb 2026 00:00:00 GMT',
  ]) {
    t.equal(parseHttpDate(bad, now), undefined, bad);
  }
  t.equal(parseHttpDate('Sun, 29 Feb 2028 00:00:00 GMT', now), Date.parse('2028-02-29T00:00:00Z') / 1000, 'a leap day');
});

t.test('records follow every change at once, on every instance, whoever loaded it', async (t) => {
  const a = await startTestPlatform(t, { env: ENV, fixture: baseFixture() });
  const b = await startTestPlatform(t, { sameStoreAs: a });
  t.equal((await body(a, '/v2/hrs/BERLA')).name, 'Berlin Airport');
  t.equal((await body(b, '/v2/hrs')).results[0].name, 'Berlin Airport');
  // Straight into the database, with no announcement: no instance is told.
  const f = baseFixture();
  stationOf(f, 'BERLA').name = 'Berlin BER';
  stationOf(f, 'BERLA').layout.products.pop();
  await loadFixture(a.sql, f, { baseDir: process.cwd() });
  for (const p of [a, b]) {
    const record = await body(p, '/v2/hrs/BERLA');
    t.equal(record.name, 'Berlin BER');
    t.same(record.products.map((x: Station) => x.external_id), ['P700']);
    t.equal((await body(p, '/v2/hrs')).results[0].name, 'Berlin BER');
  }
  // A removed station is gone at once too.
  f.stations = f.stations.filter((s) => s.hrs_id !== 'HAMBG');
  f.assignments = f.assignments.filter((x) => x.hrs_id !== 'HAMBG');
  await loadFixture(a.sql, f, { baseDir: process.cwd() });
  for (const p of [a, b]) {
    t.equal((await get(`${p.url}/v2/hrs/HAMBG`, TOKENS.export_v2)).status, 404);
    t.same((await body(p, '/v2/hrs')).results.map((r: Station) => r.hrs_id), ['BERLA']);
  }
});

/* ---- Events ---------------------------------------------------------------------------------------- */

t.test('events: ongoing and upcoming, open-ended included, ended excluded, by start', async (t) => {
  const at = (hours: number) => new Date(Date.now() + hours * 3600_000).toISOString();
  const f = baseFixture();
  stationOf(f, 'BERLA').events = [
    { id: 'upcoming-late', kind: 'opening', starts_at: at(48), ends_at: null, description: 'New 700 bar HD dispenser' },
    { id: 'ended', kind: 'maintenance', starts_at: at(-5), ends_at: at(-1), description: 'Done' },
    { id: 'ongoing', kind: 'limited-service', starts_at: at(-2), ends_at: at(2), description: 'One dispenser only' },
    { id: 'upcoming', kind: 'maintenance', starts_at: at(3), ends_at: at(5), description: 'Compressor service' },
    { id: 'open-ended', kind: 'other', starts_at: at(-72), ends_at: null, description: '' },
    { id: 'long-ago', kind: 'closure', starts_at: at(-800), ends_at: at(-700), description: 'Old' },
    { id: 'offset', kind: 'closure', starts_at: new Date(Date.now() + 24 * 3600_000).toISOString().replace('Z', '+00:00'), ends_at: at(25), description: 'Given with an offset' },
  ];
  stationOf(f, 'HAMBG').events = [{ id: 'past', kind: 'closure', starts_at: at(-3), ends_at: at(-2) }];
  const p = await startTestPlatform(t, { env: ENV, fixture: f });
  const res = await get(`${p.url}/v2/hrs/BERLA/events`, TOKENS.export_v2);
  t.equal(res.status, 200);
  t.equal(res.headers.get('content-type'), 'application/json; charset=utf-8');
  const events = (await res.json()) as Station[];
  t.same(events.map((e) => e.id), ['open-ended', 'ongoing', 'upcoming', 'offset', 'upcoming-late']);
  const given = stationOf(f, 'BERLA').events as Station[];
  for (const event of events) {
    const source = given.find((e) => e.id === event.id)!;
    t.same(Object.keys(event), ['id', 'kind', 'starts_at', 'ends_at', 'description']);
    t.same(event, {
      id: source.id,
      kind: source.kind,
      starts_at: new Date(source.starts_at).toISOString(),
      ends_at: source.ends_at === null ? null : new Date(source.ends_at).toISOString(),
      description: source.description,
    }, event.id);
  }
  t.match(events[3]!.starts_at, /Z$/, 'in UTC whatever offset was given');
  t.same(await body(p, '/v2/hrs/HAMBG/events'), [], 'only ended events: an empty list');
  const noEvents = baseFixture();
  stationOf(noEvents, 'BERLA').events = [];
  await p.load(noEvents);
  t.same(await body(p, '/v2/hrs/BERLA/events'), [], 'no events: an empty list');
});

/* ---- Photo ----------------------------------------------------------------------------------------- */

/** A 1×1 PNG. */
const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==',
  'base64',
);
/** A 2×1 JPEG, made by the image library. */
const JPEG = await sharp({ create: { width: 2, height: 1, channels: 3, background: '#808080' } }).jpeg().toBuffer();

function rawHeaders(url: string, token: string, method = 'GET'): Promise<{ status: number; headers: string[]; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method, headers: { Authorization: `Bearer ${token}` } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.rawHeaders, body: Buffer.concat(chunks) }));
    });
    req.on('error', reject);
    req.end();
  });
}

t.test('photo: the stored image (checked and re-encoded on the way in) with its media type; 404 without one', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'hrs-photo-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  await writeFile(join(dir, 'berla.png'), PNG);
  await writeFile(join(dir, 'hambg.jpg'), JPEG);
  const p = await startTestPlatform(t, { env: ENV });
  const f = baseFixture();
  (stationOf(f, 'BERLA') as Station).photo = 'berla.png';
  const reload = async (fixture: unknown) => {
    await loadFixture(p.sql, fixture, { baseDir: dir });
    p.parts.tokens.invalidate();
    await p.parts.registry.reload();
  };
  await reload(f);

  const [stored] = await p.sql<{ photo: Buffer }[]>`SELECT photo FROM stations WHERE hrs_id = 'BERLA'`;
  const res = await get(`${p.url}/v2/hrs/BERLA/photo`, TOKENS.export_v2);
  t.equal(res.status, 200);
  t.equal(res.headers.get('content-type'), 'image/png');
  t.equal(res.headers.get('content-length'), String(stored!.photo.length));
  t.same(Buffer.from(await res.arrayBuffer()), stored!.photo, 'the bytes as stored');
  t.same((await sharp(stored!.photo).metadata()).width, 1, 'the image loaded');
  const raw = await rawHeaders(`${p.url}/v2/hrs/BERLA/photo`, TOKENS.export_v2);
  const lengths = raw.headers.filter((_, i) => i % 2 === 0 && raw.headers[i]!.toLowerCase() === 'content-length');
  t.equal(lengths.length, 1, 'exactly one Content-Length');
  t.same(raw.body, stored!.photo);
  const head = await rawHeaders(`${p.url}/v2/hrs/BERLA/photo`, TOKENS.export_v2, 'HEAD');
  t.equal(head.status, 200);
  t.equal(head.headers[head.headers.findIndex((h) => h.toLowerCase() === 'content-length') + 1], String(stored!.photo.length), 'HEAD: the length, no body');
  t.equal(head.body.length, 0);
  t.equal((await body(p, '/v2/hrs/BERLA')).photo_url, `${p.baseUrl}/v2/hrs/BERLA/photo`, 'the record links the photo');

  await expectProblem(t, await get(`${p.url}/v2/hrs/HAMBG/photo`, TOKENS.export_v2), 404, 'Station "HAMBG" has no photo.', 'not_found');
  t.equal((await body(p, '/v2/hrs/HAMBG')).photo_url, null);

  // A new photo replaces the old one and moves the record's Last-Modified; a JPEG is served as one.
  await backdate(p);
  const before = await lastModified(p, '/v2/hrs/HAMBG');
  (stationOf(f, 'HAMBG') as Station).photo = 'hambg.jpg';
  await reload(f);
  const jpeg = await get(`${p.url}/v2/hrs/HAMBG/photo`, TOKENS.export_v2);
  t.equal(jpeg.headers.get('content-type'), 'image/jpeg');
  t.same((await sharp(Buffer.from(await jpeg.arrayBuffer())).metadata()).format, 'jpeg');
  t.ok(Date.parse(await lastModified(p, '/v2/hrs/HAMBG')) > Date.parse(before), 'a photo change moves Last-Modified');

  // Removing the photo: 404 again.
  (stationOf(f, 'BERLA') as Station).photo = null;
  await reload(f);
  await expectProblem(t, await get(`${p.url}/v2/hrs/BERLA/photo`, TOKENS.export_v2), 404, 'Station "BERLA" has no photo.');
  t.equal((await body(p, '/v2/hrs/BERLA')).photo_url, null);
});
