/**
 * Bad input at every state-changing endpoint of the operator and originator portal (and the admin
 * routes beside it), with fast-check: arbitrary JSON of every type, unknown fields, NUL characters,
 * huge strings, malformed JSON, wrong media types, odd path parameters. The answer is never a 5xx, a 4xx
 * is a problem body that says what is wrong, and nothing is half-applied: the registry (stations,
 * layouts, events, assignments, tokens, roles, originators) and the audit trail are exactly as before.
 * A failing confirmation leaves the old layout whole.
 */
import t from 'tap';
import fc from 'fast-check';
import { TOKENS } from '../helpers/fixtures.js';
import { ADMIN_TOKEN, get, startTestPlatform, type TestPlatform } from '../helpers/platform.js';
import { ACCOUNTS, grantPortalRoles, portalFixture, signedIn, type PortalClient } from '../helpers/portal.js';

const RUNS = Number(process.env.FUZZ_RUNS ?? 40);

/** Everything the portal can change, as one value to compare. */
async function registryState(p: TestPlatform): Promise<unknown> {
  const [state] = await p.sql<{ state: unknown }[]>`
    SELECT json_build_object(
      'stations', (SELECT json_agg(json_build_object('id', hrs_id, 'name', name, 'heavy', heavy_duty, 'hours', opening_hours, 'zone', time_zone,
                    'details', details, 'photo', encode(photo_sha256, 'hex'), 'modified', static_modified_at) ORDER BY hrs_id) FROM stations),
      'fuel_types', (SELECT json_agg(json_build_object('id', hrs_id, 'f', fuel_type) ORDER BY hrs_id, fuel_type) FROM station_v1_fuel_types),
      'events', (SELECT json_agg(e ORDER BY e.hrs_id, e.id) FROM station_events e),
      'layouts', (SELECT json_agg(json_build_object('id', hrs_id, 'kind', kind, 'version', version, 'hash', encode(content_hash, 'hex')) ORDER BY hrs_id, kind) FROM layouts),
      'parts', (SELECT json_build_array((SELECT count(*) FROM dispensers), (SELECT count(*) FROM nozzles), (SELECT count(*) FROM storages), (SELECT count(*) FROM products))),
      'assignments', (SELECT json_agg(json_build_object('o', originator_id, 's', hrs_id, 't', signal_type, 'state', state) ORDER BY originator_id, hrs_id, signal_type) FROM assignments),
      'tokens', (SELECT json_agg(json_build_object('id', id, 'revoked', revoked_at, 'expires', expires_at) ORDER BY id) FROM tokens),
      'roles', (SELECT json_build_array((SELECT json_agg(m ORDER BY m.user_id, m.operator_id) FROM operator_members m),
                                        (SELECT json_agg(m ORDER BY m.user_id, m.originator_id) FROM originator_members m),
                                        (SELECT json_agg(id ORDER BY id) FROM users WHERE is_admin))),
      'originators', (SELECT json_agg(json_build_object('id', id, 'mode', call_log_mode) ORDER BY id) FROM originators),
      'audit', (SELECT count(*) FROM audit_log)
    ) AS state`;
  return state!.state;
}

/** JSON text that no endpoint's schema accepts: a value of any type, or an object with a field none has. */
const invalidJson = fc.oneof(
  fc.jsonValue().filter((v) => v === null || typeof v !== 'object' || Array.isArray(v)).map((v) => JSON.stringify(v)),
  fc.dictionary(fc.string({ maxLength: 12 }), fc.jsonValue({ maxDepth: 3 })).map((o) => JSON.stringify({ ...o, __unknown_field: true })),
  fc.record({ name: fc.string({ unit: 'binary' }), state: fc.string({ unit: 'binary' }) }).map((o) => JSON.stringify({ ...o, extra: '\u0000' })),
  fc.string({ unit: 'binary-ascii', minLength: 1, maxLength: 50 }).map((s) => `{"name": ${s}`),
  fc.constantFrom('', '{', '[', 'null', '{"kind": "maintenance", "starts_at": "2027-01-01T00:00:00Z", "x": 1}', `{"name": "${'x'.repeat(300_000)}"}`),
);

/** The state-changing requests, their path parameters sometimes odd. */
const target = fc.oneof(
  fc.constantFrom(
    ['PUT', '/portal/v1/stations/BERLA'],
    ['PUT', '/portal/v1/stations/BERLA/layout/draft'],
    ['POST', '/portal/v1/stations/BERLA/layout/confirm'],
    ['POST', '/portal/v1/stations/BERLA/events'],
    ['PATCH', '/portal/v1/stations/BERLA/events/ev-1'],
    ['POST', '/portal/v1/stations/BERLA/events/ev-1/end'],
    ['POST', '/portal/v1/operators/h2-demo/events'],
    ['PUT', '/portal/v1/stations/BERLA/assignments/mon-2/pricing'],
    ['PUT', '/portal/v1/stations/BERLA/assignments/mon-1/v1'],
    ['POST', '/portal/v1/originators/mon-1/tokens'],
    ['PUT', '/admin/v1/users/staff/roles'],
    ['PATCH', '/admin/v1/originators/mon-1'],
  ),
  fc
    .tuple(
      fc.constantFrom('/portal/v1/stations/%s', '/portal/v1/stations/%s/layout/draft', '/portal/v1/stations/BERLA/events/%s', '/portal/v1/originators/%s/tokens', '/portal/v1/stations/BERLA/assignments/%s/usage'),
      fc.oneof(fc.constantFrom('%00', '..', '%ED%A0%80', 'berla', 'BERL%41', ' ', '%25'), fc.string({ minLength: 1, maxLength: 30 }).map(encodeURIComponent)),
    )
    .map(([pattern, param]) => [pattern.includes('events') ? 'PATCH' : pattern.endsWith('tokens') ? 'POST' : 'PUT', pattern.replace('%s', param)]),
);

const contentType = fc.constantFrom('application/json', 'application/json; charset=utf-8', 'text/plain', 'application/x-www-form-urlencoded', undefined);

async function send(p: TestPlatform, client: PortalClient, method: string, path: string, body: string, type: string | undefined) {
  const admin = path.startsWith('/admin/');
  const res = await fetch(`${p.url}${path}`, {
    method,
    headers: {
      ...(admin ? { Authorization: `Bearer ${ADMIN_TOKEN}` } : { Origin: p.url, Cookie: client.cookie! }),
      ...(type ? { 'Content-Type': type } : {}),
    },
    body,
  });
  const text = await res.text();
  return { status: res.status, type: res.headers.get('content-type') ?? '', text };
}

t.test('arbitrary bad input: never a 5xx, a clear problem, nothing applied', async (t) => {
  const p = await startTestPlatform(t, { fixture: portalFixture() });
  await grantPortalRoles(p);
  // An admin: every request passes authorisation, so what is checked is the input.
  const client = await signedIn(p, ACCOUNTS.admin);
  // A draft whose confirmation a malformed body must not trigger either.
  const layout = (await client.call('GET', '/portal/v1/stations/BERLA/layout')).body.confirmed.layout;
  t.equal((await client.call('PUT', '/portal/v1/stations/BERLA/layout/draft', { ...layout, products: [] })).status, 200);
  const before = await registryState(p);
  let answered = 0;
  await fc.assert(
    fc.asyncProperty(target, invalidJson, contentType, async ([method, path], body, type) => {
      // A confirmation and an end take no body at all: an empty one is that, and valid.
      fc.pre(!(body === '' && /\/(confirm|end)$/.test(path!)));
      const res = await send(p, client, method!, path!, body, type);
      answered++;
      if (res.status >= 500) throw new Error(`${method} ${path} ${type}: ${res.status} ${res.text.slice(0, 300)}`);
      if (res.status < 400) throw new Error(`${method} ${path} ${type} ${body.slice(0, 100)}: accepted (${res.status}) ${res.text.slice(0, 200)}`);
      const problem = JSON.parse(res.text) as { detail?: string };
      if (typeof problem.detail !== 'string' || problem.detail.length === 0) throw new Error(`${method} ${path}: ${res.status} without a detail`);
      if (!path!.startsWith('/admin/') && !res.type.startsWith('application/problem+json')) throw new Error(`${method} ${path}: ${res.type}`);
    }),
    { numRuns: RUNS * 12 },
  );
  t.ok(answered >= RUNS * 10, `${answered} bad requests answered`);
  t.same(await registryState(p), before, 'nothing applied, no audit entry');
});

t.test('photos that are not JPEG, PNG or WebP, of any size up to the cap: 4xx, nothing stored', async (t) => {
  const p = await startTestPlatform(t, { fixture: portalFixture() });
  await grantPortalRoles(p);
  const client = await signedIn(p, ACCOUNTS.staff);
  const before = await registryState(p);
  await fc.assert(
    fc.asyncProperty(fc.uint8Array({ maxLength: 2000 }), fc.constantFrom('image/png', 'image/jpeg', 'application/octet-stream', 'text/plain'), async (bytes, type) => {
      const body = Buffer.concat([Buffer.from('X'), Buffer.from(bytes)]);
      const res = await client.send('PUT', '/portal/v1/stations/BERLA/photo', body, { 'Content-Type': type });
      if (res.status !== 415) throw new Error(`${res.status} ${JSON.stringify(res.body)}`);
    }),
    { numRuns: RUNS },
  );
  const empty = await client.send('PUT', '/portal/v1/stations/BERLA/photo', Buffer.alloc(0));
  t.equal(empty.status, 400);
  t.same(await registryState(p), before, 'no photo stored');
});

t.test('a failing confirmation leaves the old layout whole, and the draft too', async (t) => {
  const p = await startTestPlatform(t, { fixture: portalFixture() });
  await grantPortalRoles(p);
  const staff = await signedIn(p, ACCOUNTS.staff);
  const exported = async () => (await (await get(`${p.url}/v2/hrs/BERLA`, TOKENS.export_v2)).json()) as Record<string, unknown>;
  const { confirmed } = (await staff.call('GET', '/portal/v1/stations/BERLA/layout')).body;
  // Without its 350 bar nozzle (and the product on it), and with a new nozzle T1, the layout contradicts the
  // v1 fuel types (700car, 350car): the legacy import checks signals against both.
  const contradicting = {
    ...confirmed.layout,
    dispensers: [
      ...confirmed.layout.dispensers.map((d: any) => ({ ...d, nozzles: d.nozzles.filter((n: any) => n.external_id !== 'N2') })),
      { external_id: 'DT', is_certified: true, nozzles: [{ external_id: 'T1', connector_type: 'H70', vehicle_side: 'left', is_certified: true, fuelling_options: ['700ld'] }] },
    ],
    products: confirmed.layout.products.filter((x: any) => x.external_id !== 'P350'),
  };
  t.equal((await staff.call('PUT', '/portal/v1/stations/BERLA/layout/draft', contradicting)).status, 200);
  const before = { state: await registryState(p), record: await exported(), layouts: (await staff.call('GET', '/portal/v1/stations/BERLA/layout')).body };

  const refused = await staff.call('POST', '/portal/v1/stations/BERLA/layout/confirm', { expected_version: confirmed.version });
  t.equal(refused.status, 422);
  t.match(refused.body, { code: 'layout_contradiction', detail: /350car/ });
  const stale = await staff.call('POST', '/portal/v1/stations/BERLA/layout/confirm', { expected_version: confirmed.version + 1 });
  t.equal(stale.status, 409);
  t.match(stale.body, { code: 'version_conflict' });
  t.same(await registryState(p), before.state, 'no row changed, no audit entry');
  t.same(await exported(), before.record, 'export shows the old layout, whole');
  t.same((await staff.call('GET', '/portal/v1/stations/BERLA/layout')).body, before.layouts, 'the confirmed layout and the draft as they were');
  const signal = await fetch(`${p.url}/import/v2/signal/availability/`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${TOKENS.import_v2}`, 'Content-Type': 'application/json' },
    body: JSON.stringify([{ hrs: 'BERLA', datetime: new Date().toISOString(), nozzles: [{ id: 'T1', available: true }], station: { maintenance: false, limitedly_available: false } }]),
  });
  t.equal(signal.status, 400, 'the draft nozzle stays unknown to import');
});
