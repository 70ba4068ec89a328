/**
 * Bytes that are not UTF-8 are refused, never stored as U+FFFD: a raw `FF` or an encoded surrogate
 * (`ED A0 80`) in any string of any body of any family is a 400 `parse_error` in the family's own error
 * format, naming the byte offset, and nothing is written. The routes and their text fields are found
 * from the routes' own contracts (test/helpers/schema-fields.ts), so a route or field added later is
 * covered without being named here. Before bodies were decoded strictly, the same requests were stored
 * with U+FFFD in place of the bytes (station names, event texts, token names, webhook descriptions,
 * import v2 `transmission_id`, ...). Registry files are read the same way.
 */
import { isUtf8 } from 'node:buffer';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { z } from 'zod';
import { utf8Fault } from '../../src/domain/text.js';
import type { AnyRoute } from '../../src/http/contract.js';
import { PROBLEM_ERRORS } from '../../src/http/errors.js';
import type { HttpServer } from '../../src/http/server.js';
import { FixtureError, loadFixtureFile } from '../../src/registry/file/load.js';
import { TOKENS } from '../helpers/fixtures.js';
import { rawBodySchema } from '../helpers/input-targets.js';
import { ADMIN_TOKEN, startTestPlatform, type TestPlatform } from '../helpers/platform.js';
import { ACCOUNTS, grantPortalRoles, portalFixture, signedIn } from '../helpers/portal.js';
import { exampleOf, textFields, valueAt, withValueAt } from '../helpers/schema-fields.js';

const INVALID: Record<string, Buffer> = { FF: Buffer.from([0xff]), 'ED A0 80': Buffer.from([0xed, 0xa0, 0x80]) };

let server: HttpServer | undefined;
const p = await startTestPlatform(t, {
  fixture: portalFixture(),
  routes: (s) => (server = s),
  // Webhooks answer 503 without a key, before they read a body.
  env: { WEBHOOK_SECRET_KEY: 'q3Jd0vXkZr8mWb2Yt5LpN7aHc4UeS1fGx6iKo9RwE-s', WEBHOOK_RATE_LIMIT: '1000' },
});
await grantPortalRoles(p);
const admin = await signedIn(p, ACCOUNTS.admin);
const { cookie } = admin;

/** Path parameters that name what the fixture has. */
function pathOf(route: AnyRoute): string {
  const named: Record<string, string> = { hrs_id: 'BERLA', originator_id: 'mon-1', operator_id: 'h2-demo', signal_type: 'availability', event_id: 'ev-1' };
  const id = route.path.startsWith('/admin/v1/users/') ? ACCOUNTS.none
    : route.path.startsWith('/admin/v1/originators/') ? 'mon-1'
    : route.path.startsWith('/portal/v1/tokens/') ? String(token.body.token.id)
    : String(webhook.body.id);
  return route.path.replace(/:([a-z_]+)/g, (_, name: string) => named[name] ?? id);
}

function credential(route: AnyRoute): Record<string, string> {
  if (route.family.name === 'portal') return { Cookie: cookie!, Origin: p.url };
  const bearer: Record<string, string> = { import_v2: TOKENS.import_v2, import_v1: TOKENS.import_v1, 'import_v1.1': TOKENS.import_v1, admin: ADMIN_TOKEN };
  return bearer[route.family.name] ? { Authorization: `Bearer ${bearer[route.family.name]}` } : {};
}

const soon = () => new Date(Date.now() + 86_400_000).toISOString();
/**
 * A body each route would take, where its schema has no example: the field under test is put into
 * it, so that every other check passes and only the bytes are wrong.
 */
const BASES: Record<string, () => unknown> = {
  'POST /admin/v1/users': () => ({ email: 'utf8@example.org', name: 'New account' }),
  'POST /admin/v1/personal-tokens': () => ({ email: 'newcomer@example.org', name: 'Newcomer', token_name: 'laptop' }),
  'PUT /admin/v1/users/:id/roles': () => ({ admin: false, operators: ['h2-demo'], originators: ['mon-1'] }),
  'PATCH /admin/v1/originators/:id': () => ({ call_log_mode: 'always' }),
  'PUT /portal/v1/stations/:hrs_id/layout/draft': () => ({
    dispensers: [{ external_id: 'D1', is_certified: true, nozzles: [{ external_id: 'N1', connector_type: 'H70', vehicle_side: 'left', is_certified: true, fuelling_options: ['700ld'] }] }],
    storages: [{ external_id: 'S1', nominal_capacity_kg: 500, dispenser_external_ids: ['D1'] }],
    products: [{ external_id: 'P700', pressure_stage: 700, green_hydrogen_share: null, nozzle_external_ids: ['N1'] }],
  }),
  'POST /portal/v1/stations/:hrs_id/layout/confirm': () => ({}),
  'POST /portal/v1/stations/:hrs_id/events': () => ({ kind: 'maintenance', starts_at: soon(), description: 'Compressor service' }),
  'PATCH /portal/v1/stations/:hrs_id/events/:event_id': () => ({ description: 'Compressor service' }),
  'POST /portal/v1/stations/:hrs_id/events/:event_id/end': () => ({ ends_at: soon() }),
  'POST /portal/v1/operators/:operator_id/events': () => ({ kind: 'closure', starts_at: soon(), description: 'Road works', hrs_ids: ['BERLA'] }),
  'PUT /portal/v1/stations/:hrs_id/assignments/:originator_id/:signal_type': () => ({ state: 'testing' }),
  'POST /portal/v1/originators/:originator_id/tokens': () => ({ generation: 'import_v2', name: 'monitoring' }),
  // An address that needs no name resolution.
  'POST /portal/v1/webhooks': () => ({ url: 'https://93.184.215.14/hooks/hrs', kinds: ['events'], description: 'Dashboard' }),
};

// A token and a webhook of the account, for the routes that change one.
const token = await admin.call('POST', '/portal/v1/tokens', { name: 'laptop' });
const webhook = await admin.call('POST', '/portal/v1/webhooks', BASES['POST /portal/v1/webhooks']!());
if (token.status !== 201 || webhook.status !== 201) throw new Error(`setup: ${token.status} ${webhook.status} ${JSON.stringify(webhook.body)}`);

/** The route's body schema: its contract's, or the one it reads its body with; 'bytes' for the photo. */
const schemaOf = (route: AnyRoute) => (route.body instanceof z.ZodType ? route.body : route.body === true ? rawBodySchema(route) : undefined);

/** A body the route takes: its schema's example (signals measured now), the table's, or the resource as its GET shows it. */
async function baseOf(route: AnyRoute, schema: z.ZodType): Promise<unknown> {
  const key = `${route.method} ${route.path}`;
  if (BASES[key]) return BASES[key]();
  const example = exampleOf(schema);
  if (example !== undefined) {
    const now = new Date().toISOString();
    return Array.isArray(example) ? example.map((signal) => ({ ...signal, datetime: now })) : example;
  }
  const res = await fetch(`${p.url}${pathOf(route)}`, { headers: credential(route) });
  if (res.status !== 200) throw new Error(`${key}: no base body (GET answered ${res.status})`);
  // Unconditional, so that each field is tried on its own whatever an earlier try changed.
  const { static_modified_at: _, ...current } = (await res.json()) as Record<string, unknown>;
  return current;
}

/** What a refused request must leave as it was: every table but the call log (which records failed calls by design). */
async function snapshot(p: TestPlatform): Promise<Record<string, string>> {
  const tables = await p.sql<{ name: string }[]>`
    SELECT table_name AS name FROM information_schema.tables
    WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'
      AND table_name NOT IN ('call_logs', 'originator_call_stats', 'portal_sessions') ORDER BY 1`;
  const result: Record<string, string> = {};
  for (const { name } of tables) {
    // A token's last use is written after its request is answered, batched: the probes' own tokens.
    const [row] = await p.sql.unsafe(`SELECT md5(coalesce(string_agg((to_jsonb(t) - 'last_used_at')::text, '|' ORDER BY (to_jsonb(t) - 'last_used_at')::text), '')) AS h FROM "${name}" t`);
    result[name] = row!.h as string;
  }
  return result;
}

const MARK = 'zzutf8probezz';

t.test('the UTF-8 check: the first ill-formed sequence, its offset and what is wrong', async (t) => {
  const cases: [number[], { offset: number; bytes: string; reason: RegExp } | undefined][] = [
    [[0x61, 0xc3, 0xbc, 0xe2, 0x82, 0xac, 0xf0, 0x9f, 0x98, 0x80], undefined], // a ü € 😀
    [[0x61, 0xff], { offset: 1, bytes: 'FF', reason: /never occurs/ }],
    [[0x80], { offset: 0, bytes: '80', reason: /continuation byte/ }],
    [[0x61, 0x62, 0xed, 0xa0, 0x80], { offset: 2, bytes: 'ED A0 80', reason: /surrogate/ }],
    [[0xed, 0xbf, 0xbf], { offset: 0, bytes: 'ED BF BF', reason: /surrogate/ }],
    [[0xc0, 0x80], { offset: 0, bytes: 'C0', reason: /never occurs/ }],
    [[0xe0, 0x80, 0x80], { offset: 0, bytes: 'E0 80 80', reason: /overlong/ }],
    [[0xf4, 0x90, 0x80, 0x80], { offset: 0, bytes: 'F4 90 80 80', reason: /above U\+10FFFF/ }],
    [[0x61, 0xe2, 0x82], { offset: 1, bytes: 'E2 82', reason: /incomplete sequence at the end/ }],
    [[0xe2, 0x41, 0x42], { offset: 0, bytes: 'E2 41', reason: /incomplete sequence/ }],
  ];
  for (const [bytes, expected] of cases) {
    const fault = utf8Fault(Uint8Array.from(bytes));
    if (expected === undefined) t.equal(fault, undefined, `${Buffer.from(bytes).toString('hex')}: UTF-8`);
    else t.match(fault, expected, `${Buffer.from(bytes).toString('hex')}: ${expected.reason}`);
  }
  // The same verdict as Node's own check, on random bytes of every kind.
  let disagreements = 0;
  for (let i = 0; i < 20_000; i++) {
    const bytes = randomBytes(1 + (i % 7));
    if ((utf8Fault(bytes) === undefined) !== isUtf8(bytes)) disagreements++;
  }
  t.equal(disagreements, 0, 'agrees with buffer.isUtf8 on 20,000 random byte strings');
});

t.test('every text field of every body, with FF and ED A0 80: a 400 parse_error in the family\'s format naming the offset, nothing stored', async (t) => {
  const routes = server!.contracts().filter((route) => route.body && schemaOf(route) !== 'bytes');
  const families = new Set(routes.map((route) => route.family.name));
  t.same([...families].sort(), ['admin', 'import_v1', 'import_v1.1', 'import_v2', 'portal'], 'the families that take a JSON body');
  const before = await snapshot(p);
  let probes = 0;
  const accepted = new Set<string>();
  const wrong: string[] = [];
  for (const route of routes) {
    const schema = schemaOf(route) as z.ZodType;
    const base = await baseOf(route, schema);
    for (const field of textFields(schema)) {
      const given = valueAt(base, field.path) ?? exampleOf(field.schema);
      const text = JSON.stringify(withValueAt(base, field.path, `${typeof given === 'string' ? given : 'x'}${MARK}`));
      const [head, tail] = text.split(MARK) as [string, string];
      const at = Buffer.byteLength(head);
      for (const [name, bytes] of Object.entries(INVALID)) {
        const where = `${route.method} ${route.path} ${field.path.join('.') || '(the body)'} with ${name}`;
        const res = await fetch(`${p.url}${pathOf(route)}`, {
          method: route.method,
          headers: { ...credential(route), 'Content-Type': 'application/json' },
          body: Buffer.concat([Buffer.from(head), bytes, Buffer.from(tail)]),
        });
        const type = res.headers.get('content-type') ?? '';
        const answer = (await res.json().catch(() => undefined)) as Record<string, unknown> | undefined;
        probes++;
        if (res.status < 400) accepted.add(`${route.method} ${route.path} ${field.path.join('.')}`);
        const problem = route.family.errors === PROBLEM_ERRORS;
        const formatted = problem
          ? type.startsWith('application/problem+json') && answer?.code === 'parse_error' && answer.status === 400
          : type.startsWith('application/json') && answer !== undefined && Object.keys(answer).join() === 'detail';
        const detail = `JSON parse error - the request body is not valid UTF-8: ${name === 'FF' ? 'a byte that never occurs in UTF-8' : 'an encoded surrogate (U+D800 to U+DFFF)'} at byte offset ${at} (${name}).`;
        if (res.status !== 400 || !formatted || answer?.detail !== detail) wrong.push(`${where}: ${res.status} ${type} ${JSON.stringify(answer)}`);
      }
    }
  }
  t.comment(`${probes} requests over ${routes.length} routes; fields that accepted bytes that are not UTF-8: ${accepted.size}`);
  t.ok(probes >= 200, `every text field probed (${probes} requests)`);
  t.same(wrong, [], 'each one a 400 parse_error in its family\'s format, naming the byte offset');
  t.same([...accepted], [], 'no field accepted them');
  t.same(await snapshot(p), before, 'nothing was written: no station, event, layout, token, account, webhook or signal');
});

t.test('the same text escaped, and text that is UTF-8, are unaffected', async (t) => {
  const staff = await signedIn(p, ACCOUNTS.staff);
  const res = await staff.call('POST', '/portal/v1/stations/BERLA/events', { kind: 'maintenance', starts_at: soon(), description: 'Wartung 😀 ü' });
  t.equal(res.status, 201, 'UTF-8 text is stored');
  t.equal(res.body.description, 'Wartung 😀 ü');
  await p.sql`DELETE FROM station_events WHERE id = ${res.body.id as string}`;
  const escaped = await fetch(`${p.url}/import/v2/signal/availability/`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${TOKENS.import_v2}`, 'Content-Type': 'application/json' },
    body: `[{"hrs":"BERLA","datetime":"${new Date().toISOString()}","transmission_id":"run\\ud800","nozzles":[{"id":"N1","available":true}],"station":{"maintenance":false,"limitedly_available":false}}]`,
  });
  t.equal(escaped.status, 400, 'a lone surrogate escaped in JSON is refused by the text rule, as before');
  t.match(await escaped.json(), [{ transmission_id: ['Surrogate characters are not allowed: U+D800.'] }]);
});

t.test('a registry file that is not UTF-8: refused naming the file and the byte offset, nothing loaded', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'hrs-utf8-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const before = await snapshot(p);
  for (const [name, bytes] of Object.entries(INVALID)) {
    const fixture = portalFixture();
    fixture.stations[0]!.name = `Berlin ${MARK}`;
    const text = Buffer.from(JSON.stringify(fixture, null, 2));
    const split = text.indexOf(MARK);
    const file = join(dir, `registry-${name.replace(/ /g, '')}.json`);
    await writeFile(file, Buffer.concat([text.subarray(0, split), bytes, text.subarray(split + MARK.length)]));
    const err = await loadFixtureFile(p.sql, file).catch((e: unknown) => e);
    t.ok(err instanceof FixtureError, `${name}: refused`);
    t.match((err as FixtureError).problems, [new RegExp(`^${file.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')} is not valid UTF-8: .* at byte offset ${split} \\(${name}\\)$`)], `${name}: names the file, the offset and the bytes`);
  }
  t.same(await snapshot(p), before, 'nothing loaded');
});
