import t, { type Test } from 'tap';
import sharp from 'sharp';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Sql } from '../../db/connect.js';
import { readRegistryRows } from '../../db/queries/registry.js';
import { FixtureError, loadFixture, loadFixtureFile } from '../../src/registry/file/load.js';
import { Registry } from '../../src/registry/registry.js';
import { hashToken } from '../../src/registry/tokens.js';
import { baseFixture, TOKENS } from '../helpers/fixtures.js';
import { freshDatabase as freshPool } from '../helpers/platform.js';

async function freshDatabase(test: Test): Promise<Sql> {
  return (await freshPool(test)).sql;
}

const load = (sql: Sql, data: unknown) => loadFixture(sql, data, { baseDir: process.cwd() });

/** Everything a fixture can change, as one comparable value. */
async function snapshot(sql: Sql): Promise<string> {
  const tables = [
    'operators', 'stations', 'station_v1_fuel_types', 'station_events', 'layouts', 'dispensers', 'nozzles',
    'nozzle_fuelling_options', 'storages', 'storage_dispensers', 'products', 'product_nozzles', 'originators',
    'assignments', 'users', 'tokens', 'station_set',
  ];
  const parts: unknown[] = [];
  for (const table of tables) parts.push(await sql`SELECT * FROM ${sql(table)} ORDER BY 1, 2`);
  return JSON.stringify(parts, (_k, v) => (typeof v === 'bigint' ? String(v) : v));
}

async function expectProblem(test: Test, promise: Promise<unknown>, pattern: RegExp) {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  test.type(err, FixtureError, 'a FixtureError');
  test.match((err as FixtureError).problems.join('\n'), pattern);
}

t.test('a valid fixture loads the whole registry', async (t) => {
  const sql = await freshDatabase(t);
  const summary = await load(sql, baseFixture());
  t.match(summary.stations, { added: 2, changed: 0, removed: 0 });
  t.match(summary.tokens, { added: 4 });
  t.same(summary.changedStations, ['BERLA', 'HAMBG']);

  const [station] = await sql`SELECT * FROM stations WHERE hrs_id = 'BERLA'`;
  t.match(station, { operator_id: 'h2-demo', name: 'Berlin Airport', heavy_duty: false, opening_hours: '24/7', details: { city: 'Berlin' } });
  const fuel = await sql`SELECT fuel_type FROM station_v1_fuel_types WHERE hrs_id = 'BERLA' ORDER BY fuel_type`;
  t.same(fuel.map((r) => r.fuel_type), ['350car', '700car']);

  const nozzles = await sql`
    SELECT n.external_id, n.is_effectively_certified, n.dispenser_external_id,
           array(SELECT fuelling_option FROM nozzle_fuelling_options f WHERE f.nozzle_id = n.id ORDER BY position) AS options
    FROM layout_nozzles n JOIN layouts l ON l.id = n.layout_id
    WHERE l.hrs_id = 'BERLA' AND l.kind = 'confirmed' ORDER BY n.position`;
  t.same(
    nozzles.map((n) => ({ ...n })),
    [
      { external_id: 'N1', is_effectively_certified: true, dispenser_external_id: 'D1', options: ['700ld'] },
      { external_id: 'N2', is_effectively_certified: false, dispenser_external_id: 'D1', options: ['350ld'] },
    ],
  );
  const products = await sql`
    SELECT p.external_id, p.pressure_stage, p.green_hydrogen_share::float AS share,
           array(SELECT n.external_id FROM product_nozzles pn JOIN nozzles n ON n.id = pn.nozzle_id WHERE pn.product_id = p.id) AS nozzles
    FROM products p JOIN layouts l ON l.id = p.layout_id WHERE l.hrs_id = 'BERLA' ORDER BY p.position`;
  t.same(products.map((p) => ({ ...p })), [
    { external_id: 'P700', pressure_stage: 700, share: null, nozzles: ['N1'] },
    { external_id: 'P350', pressure_stage: 350, share: 50, nozzles: ['N2'] },
  ]);

  const layouts = await sql`SELECT hrs_id, kind, version FROM layouts ORDER BY hrs_id, kind`;
  t.same(layouts.map((l) => ({ ...l })), [
    { hrs_id: 'BERLA', kind: 'confirmed', version: 1 },
    { hrs_id: 'HAMBG', kind: 'draft', version: 1 },
  ], 'HAMBG has only a draft: no confirmed layout');

  const tokens = await sql`SELECT generation, originator_id, user_id, hash, expires_at FROM tokens ORDER BY id`;
  t.same(
    tokens.map((row) => (row.hash as Buffer).toString('hex')).sort(),
    Object.values(TOKENS).map((value) => hashToken(value).toString('hex')).sort(),
    'every token of the fixture is stored, as its hash, and no other',
  );
  t.ok(tokens[0]!.hash.equals(hashToken(TOKENS.import_v2)), 'tokens are stored as SHA-256 of the value');
  const stored = await snapshot(sql);
  for (const value of Object.values(TOKENS)) t.notOk(stored.includes(value), 'no token value is stored');
  const inAYear = Date.now() + 365 * 24 * 3600 * 1000;
  t.ok(Math.abs(tokens[0]!.expires_at.getTime() - inAYear) < 60_000, 'expiry defaults to one year from loading');
  t.equal(tokens[2]!.expires_at.toISOString(), '2099-06-01T00:00:00.000Z');
});

t.test('loading the same file twice changes nothing', async (t) => {
  const sql = await freshDatabase(t);
  await load(sql, baseFixture());
  const before = await snapshot(sql);
  const summary = await load(sql, baseFixture());
  t.equal(await snapshot(sql), before, 'every row, timestamps included, is unchanged');
  t.same(summary.changedStations, []);
  t.match(summary.stations, { added: 0, changed: 0, removed: 0, unchanged: 2 });
  t.match(summary.tokens, { added: 0, changed: 0, unchanged: 4 });
});

t.test('a changed file upserts and removes what was left out', async (t) => {
  const sql = await freshDatabase(t);
  await load(sql, baseFixture());
  const [before] = await sql`SELECT static_modified_at FROM stations WHERE hrs_id = 'BERLA'`;
  const [setBefore] = await sql`SELECT modified_at FROM station_set`;

  const changed = baseFixture();
  const berla = changed.stations[0] as any;
  berla.layout.products = berla.layout.products.filter((p: any) => p.external_id !== 'P350');
  berla.layout.dispensers[0]!.nozzles = berla.layout.dispensers[0]!.nozzles.filter((n: any) => n.external_id !== 'N2');
  berla.v1_fuel_types = ['700car']; // the 350 bar option went with N2
  changed.stations = [berla];
  changed.assignments = changed.assignments.filter((a) => a.hrs_id !== 'HAMBG');
  const summary = await load(sql, changed);
  t.match(summary.stations, { removed: 1, changed: 1 });
  t.same(summary.changedStations, ['BERLA', 'HAMBG']);

  t.same((await sql`SELECT hrs_id FROM stations`).map((r) => r.hrs_id), ['BERLA'], 'the left-out station is gone');
  t.same((await sql`SELECT count(*)::int AS n FROM layouts WHERE hrs_id = 'HAMBG'`)[0]!.n, 0, 'with its layouts');
  const nozzles = await sql`SELECT n.external_id FROM nozzles n JOIN layouts l ON l.id = n.layout_id WHERE l.kind = 'confirmed'`;
  t.same(nozzles.map((r) => r.external_id), ['N1'], 'the left-out nozzle is gone');
  const products = await sql`SELECT p.external_id FROM products p JOIN layouts l ON l.id = p.layout_id`;
  t.same(products.map((r) => r.external_id), ['P700'], 'the left-out product is gone');
  const [layout] = await sql`SELECT version FROM layouts WHERE hrs_id = 'BERLA' AND kind = 'confirmed'`;
  t.equal(layout!.version, 2, 'a changed confirmed layout is a new version');
  const assignments = await sql`SELECT hrs_id FROM assignments ORDER BY hrs_id`;
  t.notOk(assignments.some((a) => a.hrs_id === 'HAMBG'), 'assignments of a removed station go with it');

  const [after] = await sql`SELECT static_modified_at FROM stations WHERE hrs_id = 'BERLA'`;
  t.ok(after!.static_modified_at > before!.static_modified_at, 'a layout change moves the station\'s last-modified');
  const [setAfter] = await sql`SELECT modified_at FROM station_set`;
  t.ok(setAfter!.modified_at > setBefore!.modified_at, 'removing a station moves the station set\'s last-modified');
});

t.test('draft layout changes do not touch the exported last-modified; event changes do', async (t) => {
  const sql = await freshDatabase(t);
  await load(sql, baseFixture());
  const modified = async () => (await sql`SELECT static_modified_at FROM stations WHERE hrs_id = 'BERLA'`)[0]!.static_modified_at;
  const first = await modified();

  const withDraft = baseFixture();
  withDraft.stations[0]!.draft_layout = { dispensers: [{ external_id: 'D9', is_certified: true, nozzles: [] }] };
  await load(sql, withDraft);
  t.same(await modified(), first, 'a draft is invisible to the export');
  const [draft] = await sql`SELECT version FROM layouts WHERE hrs_id = 'BERLA' AND kind = 'draft'`;
  t.equal(draft!.version, 2, 'a draft is numbered as the version it would become');

  const withEvent = baseFixture();
  withEvent.stations[0]!.draft_layout = withDraft.stations[0]!.draft_layout;
  (withEvent.stations[0] as { events: unknown[] }).events = [];
  await load(sql, withEvent);
  t.ok((await modified()) > first, 'removing an event changes exported content');
  t.equal((await sql`SELECT count(*)::int AS n FROM station_events`)[0]!.n, 0);
});

t.test('an invalid file changes nothing and names the JSON path', async (t) => {
  const sql = await freshDatabase(t);
  await load(sql, baseFixture());
  const before = await snapshot(sql);

  const cases: [string, (f: ReturnType<typeof baseFixture>) => void, RegExp][] = [
    ['pressure stage', (f) => ((f.stations[0] as any).layout.products[0].pressure_stage = 500), /^stations\[0\]\.layout\.products\[0\]\.pressure_stage: must be 350 or 700$/m],
    ['hrs id', (f) => ((f.stations[1] as any).hrs_id = 'hamb1'), /^stations\[1\]\.hrs_id: must be exactly five uppercase letters/m],
    ['unknown operator', (f) => ((f.stations[1] as any).operator = 'nobody'), /^stations\[1\]\.operator: unknown operator "nobody"$/m],
    ['duplicate nozzle', (f) => ((f.stations[0] as any).layout.dispensers[0].nozzles[1].external_id = 'N1'), /^stations\[0\]\.layout\.dispensers\[0\]\.nozzles\[1\]\.external_id: duplicate nozzle "N1"/m],
    ['product nozzle ref', (f) => ((f.stations[0] as any).layout.products[1].nozzle_external_ids = ['N9']), /^stations\[0\]\.layout\.products\[1\]\.nozzle_external_ids\[0\]: unknown nozzle "N9"$/m],
    ['storage dispenser ref', (f) => ((f.stations[0] as any).layout.storages[0].dispenser_external_ids = ['DX']), /^stations\[0\]\.layout\.storages\[0\]\.dispenser_external_ids\[0\]: unknown dispenser "DX"$/m],
    ['fuelling option', (f) => ((f.stations[0] as any).layout.dispensers[0].nozzles[0].fuelling_options = ['700car']), /^stations\[0\]\.layout\.dispensers\[0\]\.nozzles\[0\]\.fuelling_options\[0\]: must be one of 700ld/m],
    ['unknown field', (f) => ((f.stations[0] as any).colour = 'blue'), /^stations\[0\]: Unrecognized key: "colour"$/m],
    ['event end before start', (f) => ((f.stations[0] as any).events[0].ends_at = '2026-11-30T00:00:00Z'), /^stations\[0\]\.events\[0\]\.ends_at: must be after starts_at$/m],
    ['event datetime without offset', (f) => ((f.stations[0] as any).events[0].starts_at = '2026-12-01T08:00:00'), /^stations\[0\]\.events\[0\]\.starts_at: must be an ISO 8601 date-time with a UTC offset$/m],
    ['assignment to unknown station', (f) => (f.assignments[0]!.hrs_id = 'NOWHR'), /^assignments\[0\]\.hrs_id: unknown station "NOWHR"$/m],
    ['assignment state', (f) => (f.assignments[0]!.state = 'inactive'), /^assignments\[0\]\.state: must be live or testing for a v2 signal type/m],
    ['two live originators', (f) => {
      f.originators.push({ id: 'mon-2', name: 'Monitoring Two', call_log_mode: 'always' });
      f.assignments.push({ originator: 'mon-2', hrs_id: 'BERLA', signal_type: 'availability', state: 'live' });
    }, /^assignments\[3\]\.state: BERLA already has a live availability originator \("mon-1"\)/m],
    ['token owner', (f) => ((f.tokens[2] as any).user = 'bob'), /^tokens\[2\]\.user: unknown user "bob"$/m],
    ['token without originator', (f) => delete (f.tokens[0] as any).originator, /^tokens\[0\]\.originator: is required for an import_v2 token$/m],
    ['personal export_v1', (f) => ((f.tokens[3] as any).user = 'alice'), /^tokens\[3\]\.user: is not allowed on an export_v1 token/m],
    ['short token', (f) => ((f.tokens[0] as any).value = 'short'), /^tokens\[0\]\.value: must be at least 16 characters long$/m],
    ['call log mode', (f) => (f.originators[0]!.call_log_mode = 'sometimes'), /^originators\[0\]\.call_log_mode: must be one of disabled, errors, always$/m],
    ['missing photo', (f) => ((f.stations[0] as any).photo = 'no/such.png'), /^stations\[0\]\.photo: cannot read "no\/such.png"/m],
    ['opening hours', (f) => ((f.stations[0] as any).opening_hours = 'Mo-Fr 25:00-26:00'), /^stations\[0\]\.opening_hours: Mo-Fr 25:00 <--- \(a time range starts between 00:00 and 23:59 \(it may end after midnight, such as "22:00-02:00"\)\)$/m],
    ['opening hours syntax', (f) => ((f.stations[1] as any).opening_hours = 'Mx 08:00-18:00'), /^stations\[1\]\.opening_hours: Mx <--- \("m" is not understood here: write days, then times/m],
    ['public holidays without a country', (f) => ((f.stations[0] as any).opening_hours = 'Mo-Fr 08:00-18:00; PH off'), /^stations\[0\]\.opening_hours: public holidays \("PH"\) and school holidays \("SH"\) need the station's country: set details\.country/m],
    ['time zone', (f) => ((f.stations[1] as any).time_zone = 'Mars/Olympus'), /^stations\[1\]\.time_zone: unknown time zone "Mars\/Olympus"/m],
    ['time zone as an offset', (f) => ((f.stations[0] as any).time_zone = '+01:00'), /^stations\[0\]\.time_zone: must be an IANA time zone name/m],
  ];
  for (const [name, mutate, pattern] of cases) {
    const fixture = baseFixture();
    mutate(fixture);
    await t.test(name, (t) => expectProblem(t, load(sql, fixture), pattern));
  }
  await t.test('v1 fuel types that contradict the confirmed layout', (t) => {
    const fixture = baseFixture();
    (fixture.stations[0] as any).v1_fuel_types = ['700car', '350bus'];
    return expectProblem(
      t,
      load(sql, fixture),
      /stations\[0\]\.v1_fuel_types: v1 fuel type 350bus has no nozzle with fuelling option 350hd on the confirmed layout[\s\S]*stations\[0\]\.v1_fuel_types: fuelling option 350ld on the confirmed layout is missing from the v1 fuel types \(350car\)/,
    );
  });
  for (const [name, details, pattern] of [
    ['a phone number not in E.164 form', { contact_phone_number: '030 12345678' }, /^stations\[0\]\.details\.contact_phone_number: must be a valid phone number in E\.164 form, e\.g\. \+493012345678 \(got "030 12345678"\)$/m],
    ['a phone number that cannot exist', { contact_phone_number: '+4900' }, /^stations\[0\]\.details\.contact_phone_number: must be a valid phone number in E\.164 form/m],
    ['coordinates out of range', { coordinates: { lat: 91, lon: 13 } }, /^stations\[0\]\.details\.coordinates\.lat: must be from -90 to 90$/m],
    ['an unknown vehicle category', { vehicle_types: ['M1', 'X9'] }, /^stations\[0\]\.details\.vehicle_types\[1\]: must be one of M1, M2, M3, N1, N2, N3$/m],
    ['a negative parking count', { parking_spaces: -1 }, /^stations\[0\]\.details\.parking_spaces: must be 0 or more$/m],
    ['a NUTS code that is none', { nuts_region: 'Berlin' }, /^stations\[0\]\.details\.nuts_region: must be a NUTS code/m],
  ] as const) {
    const fixture = baseFixture();
    (fixture.stations[0] as any).details = details;
    await t.test(`AFIR details: ${name}`, (t) => expectProblem(t, load(sql, fixture), pattern));
  }
  await t.test('not an object', (t) => expectProblem(t, load(sql, []), /^\(root\): /m));
  await t.test('several problems are all reported', async (t) => {
    const fixture = baseFixture();
    (fixture.stations[0] as any).layout.products[0].pressure_stage = 1;
    (fixture.stations[1] as any).name = '';
    await expectProblem(t, load(sql, fixture), /pressure_stage[\s\S]*stations\[1\]\.name: must not be empty/);
  });
  t.equal(await snapshot(sql), before, 'the registry is exactly as before every failed load');
});

t.test('a sixth active personal token is refused', async (t) => {
  const sql = await freshDatabase(t);
  const fixture = baseFixture();
  for (let i = 2; i <= 6; i++) {
    fixture.tokens.push({ generation: 'export_v2', user: 'alice', name: `device ${i}`, value: `alice-personal-token-${i}-xxxx`, expires_at: '2099-01-01T00:00:00Z' });
  }
  await expectProblem(t, load(sql, fixture), /^tokens\[8\]\.user: user "alice" would have 6 active personal tokens; at most 5 are allowed$/m);
  t.equal((await sql`SELECT count(*)::int AS n FROM tokens`)[0]!.n, 0, 'nothing was loaded');
  fixture.tokens.pop();
  await load(sql, fixture);
  t.equal((await sql`SELECT count(*)::int AS n FROM tokens WHERE user_id = 'alice'`)[0]!.n, 5);
});

t.test('a re-load keeps a revoked token revoked and its default expiry', async (t) => {
  const sql = await freshDatabase(t);
  await load(sql, baseFixture());
  await sql`UPDATE tokens SET revoked_at = now() WHERE generation = 'import_v1'`;
  const [before] = await sql`SELECT expires_at FROM tokens WHERE generation = 'import_v2'`;
  await loadFixture(sql, baseFixture(), { baseDir: '.', now: new Date(Date.now() + 86_400_000) });
  const [after] = await sql`SELECT expires_at FROM tokens WHERE generation = 'import_v2'`;
  t.same(after!.expires_at, before!.expires_at, 'the default expiry is set once, at first load');
  t.equal((await sql`SELECT count(*)::int AS n FROM tokens WHERE revoked_at IS NOT NULL`)[0]!.n, 1);
});

t.test('files: photos are decoded and re-encoded, JSON errors are reported', async (t) => {
  const sql = await freshDatabase(t);
  const dir = await mkdtemp(join(tmpdir(), 'hrs-fixture-'));
  const png = Buffer.concat([await sharp({ create: { width: 3, height: 2, channels: 3, background: '#fff' } }).png().toBuffer(), Buffer.from('trailing')]);
  await writeFile(join(dir, 'station.png'), png);
  await writeFile(join(dir, 'fake.jpg'), 'GIF89a not really');
  await writeFile(join(dir, 'signature.png'), Buffer.from('89504e470d0a1a0a0000000d49484452', 'hex'));
  const fixture = baseFixture();
  (fixture.stations[0] as any).photo = 'station.png';
  await writeFile(join(dir, 'ok.json'), JSON.stringify(fixture));
  await loadFixtureFile(sql, join(dir, 'ok.json'));
  const [row] = await sql`SELECT photo, photo_media_type FROM stations WHERE hrs_id = 'BERLA'`;
  t.equal(row!.photo_media_type, 'image/png');
  t.same((await sharp(row!.photo).metadata()).width, 3, 'the image is stored');
  t.notOk(row!.photo.includes('trailing'), 're-encoded: nothing after the image');

  (fixture.stations[0] as any).photo = 'fake.jpg';
  await writeFile(join(dir, 'bad.json'), JSON.stringify(fixture));
  await expectProblem(t, loadFixtureFile(sql, join(dir, 'bad.json')), /^stations\[0\]\.photo: "fake.jpg" is not a JPEG, PNG or WebP image$/m);
  (fixture.stations[0] as any).photo = 'signature.png';
  await writeFile(join(dir, 'bad.json'), JSON.stringify(fixture));
  await expectProblem(t, loadFixtureFile(sql, join(dir, 'bad.json')), /^stations\[0\]\.photo: "signature.png": the image is not a valid PNG image: it cannot be decoded/m);

  await writeFile(join(dir, 'broken.json'), '{"stations": [');
  await expectProblem(t, loadFixtureFile(sql, join(dir, 'broken.json')), /broken\.json is not valid JSON/);
  await expectProblem(t, loadFixtureFile(sql, join(dir, 'missing.json')), /cannot read .*missing\.json: ENOENT/);
});

t.test('time zones: named in the file, else found at the coordinates, else none', async (t) => {
  const sql = await freshDatabase(t);
  const fixture = baseFixture();
  const [berla, hambg] = fixture.stations as any[];
  // A named zone wins over the coordinates.
  berla.time_zone = 'Europe/Zurich';
  berla.details = { city: 'Berlin', lat: 52.3667, lon: 13.5033 };
  hambg.details = { city: 'Hamburg', coordinates: { lat: 53.5333, lon: 9.9667 } };
  hambg.opening_hours = 'Mo-Sa 05:00-23:00';
  fixture.stations.push(
    { hrs_id: 'NYCTY', operator: 'h2-demo', name: 'New York', details: { latitude: 40.7128, longitude: -74.006 } } as any,
    { hrs_id: 'NOCOO', operator: 'h2-demo', name: 'Nowhere', opening_hours: 'Mo-Fr 08:00-18:00; PH off', details: { country: 'DE' } } as any,
  );
  await load(sql, fixture);
  const zones = async () => Object.fromEntries((await sql`SELECT hrs_id, time_zone FROM stations`).map((r) => [r.hrs_id, r.time_zone]));
  t.same(await zones(), { BERLA: 'Europe/Zurich', HAMBG: 'Europe/Berlin', NYCTY: 'America/New_York', NOCOO: null });

  const registry = new Registry(() => readRegistryRows(sql));
  await registry.reload();
  t.match(registry.station('BERLA'), { openingHours: '24/7', timeZone: 'Europe/Zurich', holidayCountry: null });
  t.match(registry.station('HAMBG'), { openingHours: 'Mo-Sa 05:00-23:00', timeZone: 'Europe/Berlin' });
  t.match(registry.station('NYCTY'), { openingHours: null, timeZone: 'America/New_York' });
  t.match(registry.station('NOCOO'), { openingHours: 'Mo-Fr 08:00-18:00; PH off', timeZone: null, holidayCountry: 'de' });

  const again = await load(sql, fixture);
  t.match(again.stations, { added: 0, changed: 0, unchanged: 4 }, 'loading the same file again changes nothing');

  const [before] = await sql`SELECT static_modified_at FROM stations WHERE hrs_id = 'BERLA'`;
  delete berla.time_zone;
  const summary = await load(sql, fixture);
  t.match(summary.stations, { changed: 1, unchanged: 3 });
  t.same(summary.changedStations, ['BERLA'], 'a station whose zone changed is announced');
  t.match(await zones(), { BERLA: 'Europe/Berlin' }, 'without a named zone, the one at its coordinates');
  const [after] = await sql`SELECT static_modified_at FROM stations WHERE hrs_id = 'BERLA'`;
  t.ok(after!.static_modified_at > before!.static_modified_at, 'the zone is published (its offset, in DATEX II): last-modified moves');
});

t.test('the AFIR details of a station load as given, checked where the dataset says what they are', async (t) => {
  const sql = await freshDatabase(t);
  const fixture = baseFixture();
  const details = {
    address: { street: 'Flughafenstraße', house_number: '1', postal_code: '12529', city: 'Schönefeld', country: 'DE' },
    coordinates: { lat: 52.3667, lon: 13.5033 },
    entrance_coordinates: { lat: 52.3669, lon: 13.5031 },
    owner: 'H2 Demo GmbH',
    amenities: ['toilets', 'shop'],
    payment_methods: ['credit_card', 'fuel_card'],
    authorisation_methods: ['app', 'rfid'],
    contact: { email: 'ops@h2-demo.example', website: 'https://h2-demo.example' },
    nuts_region: 'DE40G',
    vehicle_types: ['M1', 'N1'],
    max_vehicle_mass: 3.5,
    parking_spaces: 4,
    parking_spaces_disabled: 1,
    contact_phone_number: '+493012345678',
    cumulative_daily_hydrogen_capacity: 1000,
    something_else: { kept: true },
  };
  (fixture.stations[0] as any).details = details;
  await load(sql, fixture);
  const [row] = await sql`SELECT details FROM stations WHERE hrs_id = 'BERLA'`;
  t.same(row!.details, details, 'stored as given, unknown fields too');
});
