/**
 * Roles and the audit trail: roles set by admins (the admin API and the registry file), shown by the
 * session; every change through the portal and the admin API in the audit trail (who, when, what,
 * before and after), readable by admins and by operator staff for their own stations only; the call-log
 * mode set by admins applying from the next call; testing and unassigned transmissions with their
 * payloads for admins; the editor's refusals (a record contradicting the layout, an event not running).
 */
import t from 'tap';
import { createHash } from 'node:crypto';
import sharp from 'sharp';
import { loadFixture } from '../../src/registry/file/load.js';
import { createLogger } from '../../src/config/log.js';
import { startWorkers } from '../../workers/index.js';
import { TOKENS } from '../helpers/fixtures.js';
import { ADMIN_TOKEN, startTestPlatform } from '../helpers/platform.js';
import { ACCOUNTS, grantPortalRoles, portalFixture, signedIn } from '../helpers/portal.js';
import { until } from '../helpers/wait.js';

const admin = (p: { url: string }, method: string, path: string, body?: unknown) =>
  fetch(`${p.url}${path}`, {
    method,
    headers: { Authorization: `Bearer ${ADMIN_TOKEN}`, ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  }).then(async (res) => ({ status: res.status, body: (await res.json().catch(() => undefined)) as any }));

const ago = (seconds: number) => new Date(Date.now() - seconds * 1000).toISOString();

t.test('roles: set by admins whole, refused for unknown ids, shown by the session, audited', async (t) => {
  const p = await startTestPlatform(t, { fixture: portalFixture() });
  await grantPortalRoles(p);
  const session = await (await signedIn(p, ACCOUNTS.staff)).call('GET', '/portal/v1/session');
  t.same(session.body.roles, { admin: false, operators: [{ id: 'h2-demo', name: 'H2 Demo GmbH' }], originators: [] });
  t.same((await admin(p, 'GET', `/admin/v1/users/${ACCOUNTS.manager}/roles`)).body, {
    admin: false, operators: [], originators: [{ id: 'mon-1', name: 'Monitoring One' }],
  });

  const refused = await admin(p, 'PUT', `/admin/v1/users/${ACCOUNTS.staff}/roles`, { admin: false, operators: ['h2-demo', 'nope'], originators: ['gone'] });
  t.equal(refused.status, 400);
  t.match(refused.body.detail, /operators: unknown operator "nope".*originators: unknown originator "gone"/);
  t.same((await admin(p, 'GET', `/admin/v1/users/${ACCOUNTS.staff}/roles`)).body.operators, [{ id: 'h2-demo', name: 'H2 Demo GmbH' }], 'nothing changed');
  t.equal((await admin(p, 'PUT', '/admin/v1/users/nobody/roles', { admin: false, operators: [], originators: [] })).status, 404);
  t.equal((await admin(p, 'PUT', `/admin/v1/users/${ACCOUNTS.staff}/roles`, { admin: 'yes', operators: [], originators: [] })).status, 400);

  // A membership taken away applies to the next request of an open session.
  const staff = await signedIn(p, ACCOUNTS.staff);
  t.equal((await staff.call('GET', '/portal/v1/stations/BERLA')).status, 200);
  t.equal((await admin(p, 'PUT', `/admin/v1/users/${ACCOUNTS.staff}/roles`, { admin: false, operators: [], originators: [] })).status, 200);
  const denied = await staff.call('GET', '/portal/v1/stations/BERLA');
  t.equal(denied.status, 403);
  t.match(denied.body.detail, /staff membership of the operator "h2-demo"/);

  const audit = (await admin(p, 'GET', `/admin/v1/audit?actor=admin-token&limit=500`)).body.entries as any[];
  const last = audit.find((e) => e.action === 'user.roles' && e.subject === ACCOUNTS.staff)!;
  t.match(last, { via: 'admin', before: { operators: ['h2-demo'] }, after: { operators: [] } }, 'before and after');
  t.ok(Date.parse(last.at) > Date.now() - 60_000, 'when');
});

t.test('the registry file gives accounts roles: given ones replace, left-out ones are kept, unknown ids refused with the path', async (t) => {
  const p = await startTestPlatform(t, { fixture: portalFixture() });
  const fixture = portalFixture();
  const users = fixture.users.map((u) => (u.id === ACCOUNTS.staff ? { ...u, operators: ['h2-demo', 'north-h2'] } : u.id === ACCOUNTS.admin ? { ...u, admin: true } : u));
  const summary = await loadFixture(p.sql, { ...fixture, users }, { baseDir: '.' });
  t.equal(summary.users.changed, 2);
  t.same((await admin(p, 'GET', `/admin/v1/users/${ACCOUNTS.staff}/roles`)).body.operators.map((o: any) => o.id), ['h2-demo', 'north-h2']);
  t.equal((await admin(p, 'GET', `/admin/v1/users/${ACCOUNTS.admin}/roles`)).body.admin, true);
  // Left out: kept.
  await loadFixture(p.sql, fixture, { baseDir: '.' });
  t.same((await admin(p, 'GET', `/admin/v1/users/${ACCOUNTS.staff}/roles`)).body.operators.map((o: any) => o.id), ['h2-demo', 'north-h2']);
  const bad = fixture.users.map((u) => (u.id === ACCOUNTS.manager ? { ...u, originators: ['mon-1', 'ghost'] } : u));
  await t.rejects(loadFixture(p.sql, { ...fixture, users: bad }, { baseDir: '.' }), { message: 'users[3].originators[1]: unknown originator "ghost"' });
});

t.test('the audit trail: portal and admin changes, who/what/before/after; operator staff read their stations\' only', async (t) => {
  const p = await startTestPlatform(t, { fixture: portalFixture() });
  await grantPortalRoles(p);
  const staff = await signedIn(p, ACCOUNTS.staff);
  const other = await signedIn(p, ACCOUNTS.otherStaff);
  const record = (await staff.call('GET', '/portal/v1/stations/BERLA')).body;
  const { hrs_id: _id, operator: _op, photo: _photo, static_modified_at: _at, ...fields } = record;
  t.equal((await staff.call('PUT', '/portal/v1/stations/BERLA', { ...fields, name: 'Berlin BER' })).status, 200);
  t.equal((await other.call('PUT', '/portal/v1/stations/KIELX', { name: 'Kiel Port' })).status, 200);
  const created = await admin(p, 'POST', '/admin/v1/users', { email: 'new@example.org' });
  t.equal(created.status, 201);
  t.equal((await admin(p, 'POST', `/admin/v1/users/${created.body.id}/deactivate`)).status, 200);
  const tokens = (await admin(p, 'GET', '/admin/v1/tokens?originator=mon-1')).body.tokens as any[];
  t.equal((await admin(p, 'POST', `/admin/v1/tokens/${tokens[0].id}/revoke`)).status, 200);
  t.equal((await admin(p, 'POST', `/admin/v1/tokens/${tokens[0].id}/revoke`)).status, 200, 'again: nothing to record');
  const alice = await signedIn(p, ACCOUNTS.none);
  const made = await alice.call('POST', '/portal/v1/tokens', { name: 'ci' });
  t.equal(made.status, 201);

  const all = (await admin(p, 'GET', '/admin/v1/audit')).body.entries as any[];
  const actions = all.map((e) => `${e.actor} ${e.action} ${e.hrs_id ?? e.subject}`);
  t.match(actions, [
    `user:alice personal_token.create ${made.body.token.id}`,
    `admin-token token.revoke ${tokens[0].id}`,
    `admin-token user.deactivate ${created.body.id}`,
    `admin-token user.create ${created.body.id}`,
    'user:north-staff station.update KIELX',
    'user:staff station.update BERLA',
  ]);
  t.equal(actions.filter((a) => a.includes('token.revoke')).length, 1, 'a revocation that changed nothing is not recorded');
  const berla = all.find((e) => e.action === 'station.update' && e.hrs_id === 'BERLA');
  t.match(berla, { via: 'portal', operator_id: 'h2-demo', before: { name: 'Berlin Airport' }, after: { name: 'Berlin BER' } });
  t.notOk(JSON.stringify(all).includes(made.body.value), 'never a token value');

  const mine = (await staff.call('GET', '/portal/v1/operators/h2-demo/audit')).body.entries as any[];
  t.ok(mine.length > 0 && mine.every((e) => e.operator_id === 'h2-demo'), 'the operator\'s entries only');
  t.equal((await staff.call('GET', '/portal/v1/stations/KIELX/audit')).status, 403);
  t.equal((await other.call('GET', '/portal/v1/operators/h2-demo/audit')).status, 403);
  const page1 = await staff.call('GET', '/portal/v1/stations/BERLA/audit?limit=1');
  t.equal(page1.body.entries.length, 1);
  t.equal((await staff.call('GET', '/portal/v1/stations/BERLA/audit?limit=0')).status, 400);
  t.equal((await staff.call('GET', '/portal/v1/stations/BERLA/audit?cursor=nonsense')).status, 400);
});

t.test('call-log mode set by an admin applies from the next call; testing and unassigned transmissions for admins', async (t) => {
  const p = await startTestPlatform(t, { fixture: portalFixture() });
  const workers = startWorkers(p.parts.config, p.parts.redis, p.sql, createLogger('silent'));
  t.teardown(() => workers.close());
  const post = (category: string, body: unknown) =>
    fetch(`${p.url}/import/v2/signal/${category}/`, { method: 'POST', headers: { Authorization: `Bearer ${TOKENS.import_v2}`, 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
  t.same((await admin(p, 'PATCH', '/admin/v1/originators/mon-1', { call_log_mode: 'always' })).body, { id: 'mon-1', call_log_mode: 'always' });
  t.equal((await admin(p, 'PATCH', '/admin/v1/originators/mon-1', { call_log_mode: 'sometimes' })).status, 400);
  t.equal((await admin(p, 'PATCH', '/admin/v1/originators/nobody', { call_log_mode: 'always' })).status, 404);
  // BERLA pricing: testing; KIELX: mon-1 is not assigned at all.
  t.equal((await post('pricing', [{ hrs: 'BERLA', datetime: ago(2), products: [{ id: 'P700', gross_price: '13.85' }] }])).status, 204);
  t.equal((await post('usage', [{ hrs: 'KIELX', datetime: ago(1), nozzles: [{ id: 'KN1', usage_status: 'free' }] }])).status, 204);
  // The call log is written by a worker after the answer: both calls are waited for, then checked.
  const logs = await until('both calls logged (mode always)', async () => {
    const res = await admin(p, 'GET', '/admin/v1/call-logs?originator=mon-1');
    return res.body.call_logs.length >= 2 ? res.body.call_logs : undefined;
  });
  t.same(logs.map((l: any) => l.status), [204, 204], 'every call, not only failed ones');

  const testing = (await admin(p, 'GET', '/admin/v1/transmissions?state=testing')).body;
  t.match(testing.transmissions, [{ originator: 'mon-1', hrs_id: 'BERLA', category: 'pricing', state: 'testing', payload: { products: [{ id: 'P700', gross_price: '13.85' }] } }]);
  const unassigned = (await admin(p, 'GET', '/admin/v1/transmissions?state=unassigned&originator=mon-1')).body;
  t.match(unassigned.transmissions, [{ hrs_id: 'KIELX', category: 'usage', state: 'unassigned' }]);
  t.equal((await admin(p, 'GET', '/admin/v1/transmissions')).status, 400, 'state is required');
  const one = (await admin(p, 'GET', '/admin/v1/transmissions?state=testing&limit=1')).body;
  t.equal(one.transmissions.length, 1);
  t.type(one.next, 'string', 'a full page links to the next');
  t.same((await admin(p, 'GET', one.next)).body.transmissions, [], 'which is empty here');
});

t.test('the editor refuses what would break the registry, and changes nothing then', async (t) => {
  const p = await startTestPlatform(t, { fixture: portalFixture() });
  await grantPortalRoles(p);
  const staff = await signedIn(p, ACCOUNTS.staff);
  const record = (await staff.call('GET', '/portal/v1/stations/BERLA')).body;
  const { hrs_id: _id, operator: _op, photo: _photo, static_modified_at: _at, ...fields } = record;
  const contradiction = await staff.call('PUT', '/portal/v1/stations/BERLA', { ...fields, v1_fuel_types: ['700car'] });
  t.equal(contradiction.status, 422);
  t.match(contradiction.body, { code: 'layout_contradiction', detail: /^v1_fuel_types: / });
  t.same((await staff.call('GET', '/portal/v1/stations/BERLA')).body, record, 'unchanged');

  const future = await staff.call('POST', '/portal/v1/stations/BERLA/events', { id: 'later', kind: 'maintenance', starts_at: new Date(Date.now() + 86_400_000).toISOString() });
  t.equal(future.status, 201);
  const end = await staff.call('POST', '/portal/v1/stations/BERLA/events/later/end');
  t.equal(end.status, 409);
  t.match(end.body.detail, /has not started yet/);
  t.equal((await staff.call('POST', '/portal/v1/stations/BERLA/events', { id: 'later', kind: 'closure', starts_at: ago(60) })).status, 409, 'the id is taken');
  const running = await staff.call('POST', '/portal/v1/stations/BERLA/events', { kind: 'limited-service', starts_at: ago(3600), description: 'one dispenser' });
  const ended = await staff.call('POST', `/portal/v1/stations/BERLA/events/${running.body.id}/end`);
  t.equal(ended.status, 200);
  t.ok(Date.parse(ended.body.ends_at) <= Date.now(), 'ended now');
  t.equal((await staff.call('POST', `/portal/v1/stations/BERLA/events/${running.body.id}/end`)).status, 409, 'ended already');
  const changed = await staff.call('PATCH', '/portal/v1/stations/BERLA/events/later', { description: 'Compressor swap', ends_at: ago(0) });
  t.equal(changed.status, 400, 'the whole event is checked: ends before it starts');
  t.match(changed.body.detail, /ends_at: must be after starts_at/);

  const broadcastOther = await staff.call('POST', '/portal/v1/operators/h2-demo/events', { kind: 'maintenance', starts_at: ago(10), hrs_ids: ['BERLA', 'KIELX'] });
  t.equal(broadcastOther.status, 422, 'a station of another operator refuses the whole broadcast');
  t.notOk((await staff.call('GET', '/portal/v1/stations/BERLA/events')).body.events.some((e: any) => e.kind === 'maintenance' && e.id !== 'later' && e.id !== 'ev-1'), 'nothing broadcast');

  const png = await sharp({ create: { width: 2, height: 2, channels: 3, background: '#123456' } }).png().toBuffer();
  t.equal((await staff.send('PUT', '/portal/v1/stations/BERLA/photo', Buffer.from('GIF89a....'))).status, 415);
  const put = await staff.send('PUT', '/portal/v1/stations/BERLA/photo', png);
  t.equal(put.status, 200);
  const exported = await fetch(`${p.url}/v2/hrs/BERLA/photo`, { headers: { Authorization: `Bearer ${TOKENS.export_v2}` } });
  t.equal(exported.status, 200);
  t.equal(exported.headers.get('content-type'), 'image/png', 'served by export as today');
  t.equal(createHash('sha256').update(Buffer.from(await exported.arrayBuffer())).digest('hex'), put.body.photo.sha256, 'the image as stored');
  const big = Buffer.concat([png, Buffer.alloc(5 * 1024 * 1024)]);
  t.equal((await staff.send('PUT', '/portal/v1/stations/BERLA/photo', big)).status, 413);
  t.equal((await staff.call('DELETE', '/portal/v1/stations/BERLA/photo')).status, 204);
  t.equal((await fetch(`${p.url}/v2/hrs/BERLA/photo`, { headers: { Authorization: `Bearer ${TOKENS.export_v2}` } })).status, 404);
});
