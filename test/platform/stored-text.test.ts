/**
 * The one rule for stored text (src/domain/text.ts) over every family: a NUL or an unpaired surrogate in
 * any field, and a name or id made only of spaces or control characters, is a 400 in the family's
 * format naming the field, and nothing is written. The lone surrogate travels as a client sends it, the
 * JSON escape `"\ud800"` (JSON.stringify writes it so), which JSON.parse turns back into a lone surrogate.
 */
import t from 'tap';
import { FixtureError, loadFixture } from '../../src/registry/file/load.js';
import { isBlank, nameProblem, textFault, textFaults, textProblem } from '../../src/domain/text.js';
import { unstorableProblem } from '../../src/domain/import-v2/fields.js';
import { TOKENS } from '../helpers/fixtures.js';
import { ADMIN_TOKEN, startTestPlatform, type TestPlatform } from '../helpers/platform.js';
import { ACCOUNTS, grantPortalRoles, portalFixture, signedIn } from '../helpers/portal.js';

const NUL = 'X\u0000';
const LONE = 'X\ud800';
const BLANKS = ['   ', ' \t\u0001 ', '\u00a0\u3000'];

t.test('the rule', async (t) => {
  t.same(textFault('a\u0000b'), { kind: 'nul' });
  t.same(textFault('a\ud800b'), { kind: 'surrogate', code: 0xd800 });
  t.same(textFault('\udc00\ud800'), { kind: 'surrogate', code: 0xdc00 }, 'a low before a high is no pair');
  t.equal(textFault('run 😀 ü'), undefined, 'a pair is an ordinary character');
  t.equal(textProblem('a\u0000'), 'must not contain the NUL character (U+0000)');
  t.equal(textProblem('\udfff'), 'must not contain an unpaired surrogate (U+DFFF)');
  for (const blank of [...BLANKS, '', '\u007f\u0085']) t.ok(isBlank(blank), `${JSON.stringify(blank)} is blank`);
  t.notOk(isBlank(' a '));
  t.equal(nameProblem(' \u0007 '), 'must not be blank (only spaces or control characters)');
  t.equal(nameProblem('Kiel 😀'), undefined);
  t.same(textFaults({ a: ['ok', 'b\u0000'], ['k\ud800']: 1, n: { m: 'x\udc00' } }), [
    { path: ['a', 1], problem: 'must not contain the NUL character (U+0000)' },
    { path: ['k\ud800'], problem: 'key must not contain an unpaired surrogate (U+D800)' },
    { path: ['n', 'm'], problem: 'must not contain an unpaired surrogate (U+DC00)' },
  ]);
  t.equal(unstorableProblem('a\u0000'), 'Null characters are not allowed.', 'import v2 words the same rule its way');
  t.equal(unstorableProblem('a\ud800'), 'Surrogate characters are not allowed: U+D800.');
});

let shared: Promise<TestPlatform> | undefined;
/**
 * One platform for the file: each test compares the registry with its own snapshot taken before its
 * requests, the one that writes changes only BERLA's name and a token of its own, and no test stores a
 * signal. Stopped when the file ends.
 */
const platform = () => (shared ??= startTestPlatform(t, { fixture: portalFixture() }));

/** What a refused request must leave as it was: every table a portal or admin change writes. */
async function snapshot(p: TestPlatform): Promise<string> {
  const rows = await Promise.all([
    p.sql`SELECT hrs_id, name, opening_hours, details, static_modified_at FROM stations ORDER BY hrs_id`,
    p.sql`SELECT hrs_id, id, kind, starts_at, ends_at, description FROM station_events ORDER BY hrs_id, id`,
    p.sql`SELECT * FROM layouts ORDER BY 1, 2`,
    p.sql`SELECT id, generation, name, revoked_at FROM tokens ORDER BY id`,
    p.sql`SELECT id, email, name FROM users ORDER BY id`,
    p.sql`SELECT count(*)::int AS n FROM reveal_links`,
    p.sql`SELECT * FROM operator_members ORDER BY 1, 2`,
    p.sql`SELECT * FROM originator_members ORDER BY 1, 2`,
    p.sql`SELECT count(*)::int AS n FROM audit_log`,
  ]);
  return JSON.stringify(rows);
}

const admin = (p: TestPlatform, method: string, path: string, body: unknown) =>
  fetch(`${p.url}${path}`, {
    method,
    headers: { Authorization: `Bearer ${ADMIN_TOKEN}`, 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
  }).then(async (res) => ({ status: res.status, type: res.headers.get('content-type'), body: (await res.json().catch(() => undefined)) as any }));

const MESSAGE = {
  nul: /must not contain the NUL character \(U\+0000\)/,
  lone: /must not contain an unpaired surrogate \(U\+D800\)/,
  blank: /must not be blank \(only spaces or control characters\)/,
};

interface Case {
  what: string;
  family: 'portal' | 'admin';
  method: string;
  path: string;
  field: string;
  body: (value: string) => unknown;
  /** A name or id: blank values are refused too. */
  name: boolean;
}

const soon = () => new Date(Date.now() + 86_400_000).toISOString();
const layout = (nozzle: string) => ({
  dispensers: [{ external_id: 'D1', is_certified: true, nozzles: [{ external_id: nozzle, connector_type: 'H70', vehicle_side: 'left', is_certified: true, fuelling_options: ['700ld'] }] }],
  storages: [],
  products: [],
});
const record = { name: 'Berlin Airport', heavy_duty: false, opening_hours: '24/7', details: { city: 'Berlin', vehicle_types: ['M1'] }, v1_fuel_types: ['700car', '350car'] };

const CASES: Case[] = [
  { what: 'station name', family: 'portal', method: 'PUT', path: '/portal/v1/stations/BERLA', field: 'name', name: true, body: (v) => ({ ...record, name: v }) },
  { what: 'station details', family: 'portal', method: 'PUT', path: '/portal/v1/stations/BERLA', field: 'details.city', name: false, body: (v) => ({ ...record, details: { ...record.details, city: v } }) },
  { what: 'station opening hours', family: 'portal', method: 'PUT', path: '/portal/v1/stations/BERLA', field: 'opening_hours', name: false, body: (v) => ({ ...record, opening_hours: v }) },
  { what: 'new event id', family: 'portal', method: 'POST', path: '/portal/v1/stations/BERLA/events', field: 'id', name: true, body: (v) => ({ id: v, kind: 'maintenance', starts_at: soon() }) },
  { what: 'new event description', family: 'portal', method: 'POST', path: '/portal/v1/stations/BERLA/events', field: 'description', name: false, body: (v) => ({ kind: 'maintenance', starts_at: soon(), description: v }) },
  { what: 'changed event description', family: 'portal', method: 'PATCH', path: '/portal/v1/stations/BERLA/events/ev-1', field: 'description', name: false, body: (v) => ({ description: v }) },
  { what: 'broadcast id', family: 'portal', method: 'POST', path: '/portal/v1/operators/h2-demo/events', field: 'id', name: true, body: (v) => ({ id: v, kind: 'closure', starts_at: soon() }) },
  { what: 'broadcast description', family: 'portal', method: 'POST', path: '/portal/v1/operators/h2-demo/events', field: 'description', name: false, body: (v) => ({ kind: 'closure', starts_at: soon(), description: v }) },
  { what: 'draft nozzle id', family: 'portal', method: 'PUT', path: '/portal/v1/stations/BERLA/layout/draft', field: 'dispensers.0.nozzles.0.external_id', name: true, body: (v) => layout(v) },
  { what: 'personal token name', family: 'portal', method: 'POST', path: '/portal/v1/tokens', field: 'name', name: true, body: (v) => ({ name: v }) },
  { what: 'import token name', family: 'portal', method: 'POST', path: '/portal/v1/originators/mon-1/tokens', field: 'name', name: true, body: (v) => ({ generation: 'import_v2', name: v }) },
  { what: 'admin: user name', family: 'admin', method: 'POST', path: '/admin/v1/users', field: 'name', name: true, body: (v) => ({ email: 'new@example.org', name: v }) },
  { what: 'admin: personal token name', family: 'admin', method: 'POST', path: '/admin/v1/personal-tokens', field: 'token_name', name: true, body: (v) => ({ email: 'newcomer@example.org', token_name: v }) },
  { what: 'admin: personal token account name', family: 'admin', method: 'POST', path: '/admin/v1/personal-tokens', field: 'name', name: true, body: (v) => ({ email: 'newcomer@example.org', name: v, token_name: 'laptop' }) },
  { what: 'admin: role list', family: 'admin', method: 'PUT', path: `/admin/v1/users/${ACCOUNTS.none}/roles`, field: 'operators.0', name: true, body: (v) => ({ admin: false, operators: [v], originators: [] }) },
  { what: 'admin: role list (originators)', family: 'admin', method: 'PUT', path: `/admin/v1/users/${ACCOUNTS.none}/roles`, field: 'originators.0', name: true, body: (v) => ({ admin: false, operators: [], originators: [v] }) },
];

t.test('portal and admin API: every listed field, with NUL, a lone surrogate and a blank name: 400 naming it, nothing written', async (t) => {
  const p = await platform();
  await grantPortalRoles(p);
  const staff = await signedIn(p, ACCOUNTS.staff);
  const manager = await signedIn(p, ACCOUNTS.manager);
  const before = await snapshot(p);
  for (const c of CASES) {
    const values: [string, RegExp][] = [[NUL, MESSAGE.nul], [LONE, MESSAGE.lone]];
    if (c.name) for (const blank of BLANKS) values.push([blank, MESSAGE.blank]);
    for (const [value, message] of values) {
      const label = `${c.what} = ${JSON.stringify(value)}`;
      const res =
        c.family === 'admin'
          ? await admin(p, c.method, c.path, c.body(value))
          : await (c.path.startsWith('/portal/v1/originators') ? manager : staff).call(c.method, c.path, c.body(value));
      t.equal(res.status, 400, `${label}: 400`);
      if (c.family === 'portal') {
        t.match(res.body, { status: 400, code: 'invalid_body' }, `${label}: a problem body`);
      } else {
        t.same(Object.keys(res.body ?? {}), ['detail'], `${label}: the admin API's { detail }`);
      }
      const detail = String(res.body?.detail);
      t.ok(detail.startsWith(`${c.field}: `), `${label}: names the field (${detail})`);
      t.match(detail, message, `${label}: says what is wrong`);
    }
  }
  t.equal(await snapshot(p), before, 'nothing was written: no station, event, layout, token, account, link, role or audit entry');
});

t.test('a key of a station\'s details breaking the rule is named too', async (t) => {
  const p = await platform();
  await grantPortalRoles(p);
  const staff = await signedIn(p, ACCOUNTS.staff);
  const before = await snapshot(p);
  const res = await staff.call('PUT', '/portal/v1/stations/BERLA', { ...record, details: { ...record.details, ['c\u0000']: 'x' } });
  t.equal(res.status, 400);
  t.equal(res.body.detail, 'details."c\\u0000": key must not contain the NUL character (U+0000)');
  t.equal(await snapshot(p), before);
});

t.test('a name with text around it, and a surrogate pair, are stored as sent', async (t) => {
  const p = await platform();
  await grantPortalRoles(p);
  const staff = await signedIn(p, ACCOUNTS.staff);
  const res = await staff.call('PUT', '/portal/v1/stations/BERLA', { ...record, name: 'Berlin 😀 Süd' });
  t.equal(res.status, 200);
  t.equal((await p.sql`SELECT name FROM stations WHERE hrs_id = 'BERLA'`)[0]!.name, 'Berlin 😀 Süd');
  const token = await staff.call('POST', '/portal/v1/tokens', { name: '  laptop 😀 ' });
  t.equal(token.status, 201);
  t.equal(token.body.token.name, 'laptop 😀', 'a token name has its surrounding spaces dropped, as before');
});

t.test('registry files: the same rule, each problem with its path, nothing loaded', async (t) => {
  const p = await platform();
  const before = await snapshot(p);
  const cases: [string, (f: ReturnType<typeof portalFixture>) => void, RegExp][] = [
    ['stations[0].name', (f) => (f.stations[0]!.name = LONE), MESSAGE.lone],
    ['stations[0].name', (f) => (f.stations[0]!.name = ' \u0001'), MESSAGE.blank],
    ['stations[0].details.city', (f) => ((f.stations[0] as any).details.city = NUL), MESSAGE.nul],
    ['stations[0].events[0].description', (f) => ((f.stations[0] as any).events[0].description = LONE), MESSAGE.lone],
    ['stations[0].events[0].id', (f) => ((f.stations[0] as any).events[0].id = '  '), MESSAGE.blank],
    ['stations[0].layout.dispensers[0].nozzles[0].external_id', (f) => ((f.stations[0] as any).layout.dispensers[0].nozzles[0].external_id = LONE), MESSAGE.lone],
    ['operators[0].name', (f) => (f.operators[0]!.name = '\t'), MESSAGE.blank],
    ['originators[0].name', (f) => (f.originators[0]!.name = NUL), MESSAGE.nul],
    ['users[0].name', (f) => ((f.users[0] as any).name = '   '), MESSAGE.blank],
    ['tokens[0].name', (f) => (f.tokens[0]!.name = LONE), MESSAGE.lone],
    ['tokens[0].name', (f) => (f.tokens[0]!.name = ' '), MESSAGE.blank],
  ];
  for (const [path, change, message] of cases) {
    const fixture = portalFixture();
    change(fixture);
    // Through JSON text, as a file is read: the lone surrogate as its escape.
    const data = JSON.parse(JSON.stringify(fixture)) as unknown;
    const err = await loadFixture(p.sql, data, { baseDir: '.' }).catch((e: unknown) => e);
    t.ok(err instanceof FixtureError, `${path}: refused`);
    const problems = (err as FixtureError).problems ?? [];
    t.ok(problems.some((problem) => problem.startsWith(`${path}: `) && message.test(problem)), `${path}: ${problems.join('; ')}`);
  }
  t.equal(await snapshot(p), before, 'nothing loaded');
  const empty = portalFixture();
  (empty.tokens[3] as { name?: string }).name = '';
  await t.resolves(loadFixture(p.sql, empty, { baseDir: '.' }), 'an empty token name still means none');
});

t.test('import v1, v1.1 and v2: the same rule in their words, nothing stored', async (t) => {
  const p = await platform();
  const at = new Date(Date.now() - 2000).toISOString();
  const post = async (path: string, token: string, body: unknown) => {
    const res = await fetch(`${p.url}${path}`, { method: 'POST', headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
    return { status: res.status, body: (await res.json().catch(() => undefined)) as any };
  };
  const v2 = await post('/import/v2/signal/availability/', TOKENS.import_v2, [
    { hrs: 'BERLA', datetime: at, transmission_id: LONE, nozzles: [{ id: NUL, available: true }], station: { maintenance: false, limitedly_available: false } },
  ]);
  t.equal(v2.status, 400);
  t.match(v2.body, [{ transmission_id: ['Surrogate characters are not allowed: U+D800.'], nozzles: [{ id: ['Null characters are not allowed.'] }] }]);
  for (const path of ['/import/v1/hrs-availability', '/import/v1.1/hrs-availability']) {
    const v1 = await post(path, TOKENS.import_v1, [{ hrs: 'BERLA', datetime: at, dispensers: [], maintenance: false, limitedly_available: false, transmission_id: LONE }]);
    t.equal(v1.status, 400, `${path}: 400`);
    t.match(v1.body, [{ transmission_id: ['Surrogate characters are not allowed: U+D800.'] }], `${path}: names the field`);
  }
  t.equal((await p.sql`SELECT count(*)::int AS n FROM signal_latest`)[0]!.n, 0, 'nothing stored');
});
