/**
 * One rule for repeated values in a list (src/domain/lists.ts): a value twice in one list is refused
 * with a 400 in the family's format naming it, in every list field of every body and in registry files,
 * and nothing is written; the OpenAPI documents say `uniqueItems: true`. Before, webhook `kinds` and
 * `hrs_ids` and `v1_fuel_types` refused repeats while a station's `vehicle_types`, `amenities` and
 * `payment_methods` were stored and exported as sent, and an event broadcast's `hrs_ids` dropped them.
 */
import t from 'tap';
import { FixtureError, loadFixture } from '../../src/registry/file/load.js';
import { ADMIN_TOKEN, startTestPlatform, type TestPlatform } from '../helpers/platform.js';
import { ACCOUNTS, grantPortalRoles, portalFixture, signedIn } from '../helpers/portal.js';

const p = await startTestPlatform(t, {
  fixture: portalFixture(),
  env: { WEBHOOK_SECRET_KEY: 'q3Jd0vXkZr8mWb2Yt5LpN7aHc4UeS1fGx6iKo9RwE-s', WEBHOOK_RATE_LIMIT: '1000' },
});
await grantPortalRoles(p);
const staff = await signedIn(p, ACCOUNTS.staff);

/** What a refused request must leave as it was. */
async function snapshot(p: TestPlatform): Promise<string> {
  const rows = await Promise.all([
    p.sql`SELECT hrs_id, name, details, static_modified_at FROM stations ORDER BY hrs_id`,
    p.sql`SELECT hrs_id, id, description FROM station_events ORDER BY hrs_id, id`,
    p.sql`SELECT * FROM layouts ORDER BY 1, 2`,
    p.sql`SELECT * FROM operator_members ORDER BY 1, 2`,
    p.sql`SELECT * FROM originator_members ORDER BY 1, 2`,
    p.sql`SELECT count(*)::int AS n FROM webhook_subscriptions`,
    p.sql`SELECT count(*)::int AS n FROM audit_log`,
  ]);
  return JSON.stringify(rows);
}

const soon = () => new Date(Date.now() + 86_400_000).toISOString();
const station = { name: 'Berlin Airport', heavy_duty: false, opening_hours: '24/7', details: { city: 'Berlin', vehicle_types: ['M1'] }, v1_fuel_types: ['700car', '350car'] };
const layout = (options: string[]) => ({
  dispensers: [{ external_id: 'D1', is_certified: true, nozzles: [{ external_id: 'N1', connector_type: 'H70', vehicle_side: 'left', is_certified: true, fuelling_options: options }] }],
  storages: [],
  products: [{ external_id: 'P700', pressure_stage: 700, green_hydrogen_share: null, nozzle_external_ids: ['N1', 'N1'] }],
});

t.test('every list field: a repeated value is a 400 naming it, nothing written', async (t) => {
  const before = await snapshot(p);
  const cases: [string, string, string, unknown, RegExp][] = [
    ['vehicle_types', 'PUT', '/portal/v1/stations/BERLA', { ...station, details: { vehicle_types: ['M1', 'N3', 'M1'] } }, /^details\.vehicle_types\.2: duplicate vehicle category "M1"$/],
    ['amenities', 'PUT', '/portal/v1/stations/BERLA', { ...station, details: { amenities: ['shop', 'shop'] } }, /^details\.amenities\.1: duplicate amenity "shop"$/],
    ['payment_methods', 'PUT', '/portal/v1/stations/BERLA', { ...station, details: { payment_methods: ['card', 'app', 'card'] } }, /^details\.payment_methods\.2: duplicate payment method "card"$/],
    ['authorisation_methods', 'PUT', '/portal/v1/stations/BERLA', { ...station, details: { authorisation_methods: ['rfid', 'rfid'] } }, /^details\.authorisation_methods\.1: duplicate authorisation method "rfid"$/],
    ['v1_fuel_types', 'PUT', '/portal/v1/stations/BERLA', { ...station, v1_fuel_types: ['700car', '700car'] }, /^v1_fuel_types\.1: duplicate fuel type "700car"$/],
    ['broadcast hrs_ids', 'POST', '/portal/v1/operators/h2-demo/events', { kind: 'closure', starts_at: soon(), hrs_ids: ['BERLA', 'HAMBG', 'BERLA'] }, /^hrs_ids\.2: duplicate station "BERLA"$/],
    ['draft fuelling_options', 'PUT', '/portal/v1/stations/BERLA/layout/draft', layout(['700ld', '700ld']), /fuelling_options\.1: duplicate fuelling option "700ld"/],
    ['confirm v1_fuel_types', 'POST', '/portal/v1/stations/BERLA/layout/confirm', { v1_fuel_types: ['700car', '700car'] }, /^v1_fuel_types\.1: duplicate fuel type "700car"$/],
    ['webhook kinds', 'POST', '/portal/v1/webhooks', { url: 'https://93.184.215.14/hooks/hrs', kinds: ['events', 'events'] }, /kinds: names events more than once/],
    ['webhook hrs_ids', 'POST', '/portal/v1/webhooks', { url: 'https://93.184.215.14/hooks/hrs', kinds: ['events'], hrs_ids: ['BERLA', 'BERLA'] }, /hrs_ids: names BERLA more than once/],
  ];
  for (const [what, method, path, body, detail] of cases) {
    const res = await staff.call(method, path, body);
    t.equal(res.status, 400, `${what}: 400`);
    t.match(res.body, { status: 400, detail }, `${what}: names the repeated value (${res.body?.detail})`);
  }
  for (const list of ['operators', 'originators'] as const) {
    const res = await fetch(`${p.url}/admin/v1/users/${ACCOUNTS.none}/roles`, {
      method: 'PUT',
      headers: { Authorization: `Bearer ${ADMIN_TOKEN}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ admin: false, operators: [], originators: [], [list]: list === 'operators' ? ['h2-demo', 'h2-demo'] : ['mon-1', 'mon-1'] }),
    });
    t.equal(res.status, 400, `admin roles ${list}: 400`);
    t.match(await res.json(), { detail: new RegExp(`^${list}\\.1: duplicate ${list.slice(0, -1)} "`) }, `admin roles ${list}: in { detail }`);
  }
  t.equal(await snapshot(p), before, 'nothing written: no station, event, layout, role, webhook or audit entry');
});

t.test('the same lists without repeats are stored as sent', async (t) => {
  const res = await staff.call('PUT', '/portal/v1/stations/BERLA', { ...station, details: { vehicle_types: ['N3', 'M1'], amenities: ['shop', 'toilets'], payment_methods: ['card', 'app'] } });
  t.equal(res.status, 200);
  t.match(res.body.details, { vehicle_types: ['N3', 'M1'], amenities: ['shop', 'toilets'], payment_methods: ['card', 'app'] }, 'in the order sent');
});

t.test('registry files: the same rule, each repeat with its path, nothing loaded', async (t) => {
  const before = await snapshot(p);
  const fixture = portalFixture();
  (fixture.stations[0] as { details: object }).details = { city: 'Berlin', vehicle_types: ['M1', 'M1'], amenities: ['shop', 'shop'] };
  const err = await loadFixture(p.sql, fixture, { baseDir: '.' }).catch((e: unknown) => e);
  t.ok(err instanceof FixtureError, 'refused');
  t.same((err as FixtureError).problems, ['stations[0].details.amenities[1]: duplicate amenity "shop"', 'stations[0].details.vehicle_types[1]: duplicate vehicle category "M1"']);
  t.equal(await snapshot(p), before, 'nothing loaded');
});

/** Every array of texts or choices in a JSON Schema, with its path, `$ref`s into `document` followed (each once). */
function stringLists(schema: unknown, document: Record<string, any>, path = '$', seen = new Set<unknown>()): { path: string; unique: boolean }[] {
  if (schema === null || typeof schema !== 'object' || seen.has(schema)) return [];
  seen.add(schema);
  const node = schema as Record<string, unknown>;
  if (typeof node.$ref === 'string' && node.$ref.startsWith('#/')) {
    const target = node.$ref.slice(2).split('/').reduce((at: any, key) => at?.[key], document);
    return stringLists(target, document, node.$ref, seen);
  }
  const found: { path: string; unique: boolean }[] = [];
  const items = node.items as Record<string, unknown> | undefined;
  if (node.type === 'array' && items && (items.type === 'string' || Array.isArray(items.enum))) found.push({ path, unique: node.uniqueItems === true });
  for (const [key, value] of Object.entries(node)) {
    if (key === 'examples' || key === 'example') continue;
    if (Array.isArray(value)) value.forEach((v, i) => found.push(...stringLists(v, document, `${path}.${key}[${i}]`, seen)));
    else if (typeof value === 'object') found.push(...stringLists(value, document, `${path}.${key}`, seen));
  }
  return found;
}

t.test('the OpenAPI documents: every list of texts or choices a request body takes says uniqueItems', async (t) => {
  const documents = ['/portal/v1/doc/schema', '/import/v2/doc/schema', '/import/v1/doc/schema', '/import/v1.1/doc/schema'];
  const lists: string[] = [];
  for (const at of documents) {
    const document = (await (await fetch(`${p.url}${at}`)).json()) as Record<string, any>;
    for (const [path, operations] of Object.entries(document.paths as Record<string, Record<string, any>>)) {
      for (const [method, operation] of Object.entries(operations)) {
        const schema = operation?.requestBody?.content?.['application/json']?.schema;
        for (const list of stringLists(schema, document)) {
          lists.push(`${method} ${path} ${list.path}`);
          if (!list.unique) t.fail(`${at}: ${method.toUpperCase()} ${path} ${list.path}: no uniqueItems`);
        }
      }
    }
  }
  t.ok(lists.length >= 10, `${lists.length} lists checked: ${[...new Set(lists.map((l) => l.split(' ').pop()))].join(', ')}`);
});
