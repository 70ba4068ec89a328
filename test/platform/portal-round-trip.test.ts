/**
 * GET-modify-PUT on a station of the portal: the body of `GET /portal/v1/stations/{hrs_id}` goes back
 * to its `PUT` as it is, changed where wanted. The read-only fields (`hrs_id`, `operator`, `photo`,
 * `static_modified_at`) are ignored when they equal what GET shows, a 400 `read_only` naming the field
 * when they would change it, and `static_modified_at` of an older copy is a 409: nothing is changed then.
 */
import t from 'tap';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.js';
import { ACCOUNTS, grantPortalRoles, portalFixture, signedIn, type PortalClient } from '../helpers/portal.js';

/** A 1×1 PNG (a real image, whatever checks the photo upload makes). */
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==', 'base64');

async function setup(t: Parameters<typeof startTestPlatform>[0]): Promise<{ p: TestPlatform; staff: PortalClient }> {
  const p = await startTestPlatform(t, { fixture: portalFixture() });
  await grantPortalRoles(p);
  return { p, staff: await signedIn(p, ACCOUNTS.staff) };
}

const auditCount = async (p: TestPlatform) => (await p.sql`SELECT count(*)::int AS n FROM audit_log WHERE hrs_id = 'BERLA'`)[0]!.n as number;

t.test('the body of GET, sent back unchanged, is accepted and changes nothing', async (t) => {
  const { p, staff } = await setup(t);
  const got = await staff.call('GET', '/portal/v1/stations/BERLA');
  t.equal(got.status, 200);
  t.ok(['hrs_id', 'operator', 'photo', 'static_modified_at'].every((k) => k in got.body), 'GET shows the read-only fields');
  const audits = await auditCount(p);
  const put = await staff.call('PUT', '/portal/v1/stations/BERLA', got.body);
  t.equal(put.status, 200, `accepted (${JSON.stringify(put.body)})`);
  t.same(put.body, got.body, 'the answer is the station as it was');
  t.equal(await auditCount(p), audits, 'no change recorded');
});

t.test('GET, change the name, PUT: changed; the same older copy again is a 409', async (t) => {
  const { p, staff } = await setup(t);
  const got = (await staff.call('GET', '/portal/v1/stations/BERLA')).body;
  const put = await staff.call('PUT', '/portal/v1/stations/BERLA', { ...got, name: 'Berlin Airport South' });
  t.equal(put.status, 200);
  t.equal(put.body.name, 'Berlin Airport South');
  t.ok(Date.parse(put.body.static_modified_at) > Date.parse(got.static_modified_at), 'static_modified_at moved');
  t.same((await staff.call('GET', '/portal/v1/stations/BERLA')).body, put.body, 'GET shows what PUT answered');

  // Someone else's copy, read before that change.
  const stale = await staff.call('PUT', '/portal/v1/stations/BERLA', { ...got, heavy_duty: true });
  t.equal(stale.status, 409);
  t.equal(stale.body.code, 'version_conflict');
  t.match(stale.body.detail, /BERLA changed at .* after the copy sent .*nothing was changed/);
  const now = (await staff.call('GET', '/portal/v1/stations/BERLA')).body;
  t.same(now, put.body, 'nothing changed');

  // The same change without static_modified_at: made whatever happened meanwhile (as before).
  const { static_modified_at: _, ...unconditional } = got;
  const forced = await staff.call('PUT', '/portal/v1/stations/BERLA', { ...unconditional, heavy_duty: true });
  t.equal(forced.status, 200);
  t.equal(forced.body.heavy_duty, true);
  t.equal(forced.body.name, 'Berlin Airport', 'the whole record is the body: the name sent back is the old one');

  // A change elsewhere (an event) moves static_modified_at too: a copy from before it is refused.
  const before = (await staff.call('GET', '/portal/v1/stations/BERLA')).body;
  t.equal((await staff.call('POST', '/portal/v1/stations/BERLA/events', { kind: 'maintenance', starts_at: new Date(Date.now() + 86_400_000).toISOString() })).status, 201);
  const after = (await staff.call('GET', '/portal/v1/stations/BERLA')).body;
  if (after.static_modified_at !== before.static_modified_at) {
    t.equal((await staff.call('PUT', '/portal/v1/stations/BERLA', { ...before, name: 'X' })).status, 409, 'an event since the copy: 409');
  }
  t.equal((await staff.call('PUT', '/portal/v1/stations/BERLA', { ...after, name: 'Berlin' })).status, 200, 'a fresh copy: accepted');
});

t.test('read-only fields that would change are a 400 naming them; nothing is changed', async (t) => {
  const { p, staff } = await setup(t);
  const got = (await staff.call('GET', '/portal/v1/stations/BERLA')).body;
  const audits = await auditCount(p);
  const cases: [string, Record<string, unknown>, RegExp][] = [
    ['hrs_id', { hrs_id: 'HAMBG' }, /^hrs_id: read-only: this is station "BERLA"/],
    ['operator', { operator: 'north-h2' }, /^operator: read-only: the station belongs to "h2-demo"/],
    ['photo', { photo: { media_type: 'image/png', bytes: 10, sha256: 'a'.repeat(64) } }, /^photo: read-only: upload a photo with PUT \/portal\/v1\/stations\/BERLA\/photo/],
  ];
  for (const [field, change, message] of cases) {
    const res = await staff.call('PUT', '/portal/v1/stations/BERLA', { ...got, name: 'Changed', ...change });
    t.equal(res.status, 400, `${field}: 400`);
    t.equal(res.body.code, 'read_only', `${field}: read_only`);
    t.match(res.body.detail, message, `${field}: named (${res.body.detail})`);
    t.match(res.body.detail, /Nothing was changed\.$/);
  }
  const both = await staff.call('PUT', '/portal/v1/stations/BERLA', { ...got, hrs_id: 'HAMBG', operator: 'north-h2' });
  t.match(both.body.detail, /^hrs_id: .*; operator: /, 'every such field is named');
  const wrongType = await staff.call('PUT', '/portal/v1/stations/BERLA', { ...got, static_modified_at: 'yesterday' });
  t.equal(wrongType.status, 400);
  t.equal(wrongType.body.code, 'invalid_body', 'a read-only field is still checked for its form');
  t.match(wrongType.body.detail, /^static_modified_at: /);
  t.same((await staff.call('GET', '/portal/v1/stations/BERLA')).body, got, 'the station is as it was');
  t.equal(await auditCount(p), audits, 'nothing recorded');
});

t.test('a station with a photo: the round trip works, the photo stays', async (t) => {
  const { staff } = await setup(t);
  const uploaded = await staff.send('PUT', '/portal/v1/stations/BERLA/photo', PNG, { 'Content-Type': 'image/png' });
  t.equal(uploaded.status, 200, `photo uploaded (${JSON.stringify(uploaded.body)})`);
  const got = (await staff.call('GET', '/portal/v1/stations/BERLA')).body;
  t.ok(got.photo, 'GET shows the photo');
  const put = await staff.call('PUT', '/portal/v1/stations/BERLA', { ...got, opening_hours: 'Mo-Fr 06:00-22:00' });
  t.equal(put.status, 200, `accepted (${JSON.stringify(put.body)})`);
  t.same(put.body.photo, got.photo, 'the photo is kept');
  t.equal(put.body.opening_hours, 'Mo-Fr 06:00-22:00');
  const removed = await staff.call('PUT', '/portal/v1/stations/BERLA', { ...put.body, photo: null });
  t.equal(removed.status, 400, 'a photo is not removed by the record');
  t.equal(removed.body.code, 'read_only');
});

t.test('an event as the list gives it may be sent back to its PATCH; its id is read-only', async (t) => {
  const { p, staff } = await setup(t);
  const [event] = (await staff.call('GET', '/portal/v1/stations/BERLA/events')).body.events.filter((e: { id: string }) => e.id === 'ev-1');
  t.ok(event, 'the event is listed');
  const changed = await staff.call('PATCH', '/portal/v1/stations/BERLA/events/ev-1', { ...event, description: 'Compressor swap' });
  t.equal(changed.status, 200, `accepted (${JSON.stringify(changed.body)})`);
  t.same(changed.body, { ...event, description: 'Compressor swap' });
  const audits = await auditCount(p);
  const other = await staff.call('PATCH', '/portal/v1/stations/BERLA/events/ev-1', { ...event, id: 'ev-2' });
  t.equal(other.status, 400);
  t.equal(other.body.code, 'read_only');
  t.match(other.body.detail, /^id: read-only: this is the event "ev-1"/);
  t.equal(await auditCount(p), audits, 'nothing changed');
});
