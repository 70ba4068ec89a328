import t from 'tap';
import { baseFixture, berlaAssignments, TOKENS } from '../helpers/fixtures.js';
import { ADMIN_TOKEN, get, startTestPlatform, type TestPlatform, postSignals as post } from '../helpers/platform.js';
import { until } from '../helpers/wait.js';
import { WsClient } from '../helpers/ws.js';

/**
 * The admins' live feed says what changed, not only that something did: a `change` carries the
 * section the feed last carried (`previous_section`) and whether the reading repeats the published
 * value (`repeat`); repeats stay out of the tail an admin gets on connecting. Station rows say whether
 * they are the sandbox's. `GET /admin/v1/originators` says how each originator fares (`health`).
 */

const ago = (seconds: number) => new Date(Date.now() - seconds * 1000).toISOString();
const adminUrl = (p: TestPlatform) => `${p.url.replace('http:', 'ws:')}/admin/v1/live`;
const availability = (hrs: string, datetime: string, n1: boolean, maintenance = false) => ({
  hrs,
  datetime,
  nozzles: [
    { id: 'N1', available: n1 },
    { id: 'N2', available: true },
  ],
  station: { maintenance, limitedly_available: false },
});

async function admin(t: { teardown(fn: () => unknown): void }, p: TestPlatform): Promise<{ ws: WsClient; snapshot: Record<string, any>; tail: Record<string, any> }> {
  const ws = await WsClient.connect(adminUrl(p));
  t.teardown(() => ws.close());
  ws.send({ type: 'auth', token: ADMIN_TOKEN });
  await ws.nextOf('authenticated');
  const snapshot = await ws.nextOf('snapshot');
  const tail = await ws.nextOf('tail');
  return { ws, snapshot, tail };
}

t.test('a change carries the section before it, and a repeat is marked and left out of the tail', async (t) => {
  const f = baseFixture();
  f.assignments = berlaAssignments('testing');
  const p = await startTestPlatform(t, { fixture: f, env: { SANDBOX: 'on', EXPORT_V2_RATE_LIMIT_MINUTE: '1000000' } });
  // A reading published before any admin connects: the snapshot is what the first change is measured against.
  await post(p, 'availability', [availability('BERLA', ago(30), true)]);

  const { ws, snapshot } = await admin(t, p);
  const berla = snapshot.stations.find((s: { hrs_id: string }) => s.hrs_id === 'BERLA');
  t.equal(berla.sandbox, false, 'a production station says so');
  const sandbox = snapshot.stations.filter((s: { sandbox: boolean }) => s.sandbox).map((s: { hrs_id: string }) => s.hrs_id);
  t.ok(sandbox.length >= 8 && sandbox.every((id: string) => id.startsWith('SBX')), `the sandbox's stations are flagged (${sandbox.length})`);

  const changes = () => ws.messages.filter((m) => m.type === 'change' && m.hrs_id === 'BERLA' && m.category === 'availability');
  await post(p, 'availability', [availability('BERLA', ago(20), true)]);
  await until('the repeat', () => changes()[0]);
  const [repeat] = changes();
  t.equal(repeat!.repeat, true, 'the same value again is a repeat');
  t.same(repeat!.previous_section.nozzles, repeat!.section.nozzles, 'its previous section is the snapshot\'s');
  t.not(repeat!.previous_section.datetime, repeat!.section.datetime, 'though its times differ');

  await post(p, 'availability', [availability('BERLA', ago(10), false, true)]);
  await until('the value change', () => changes()[1]);
  const change = changes()[1]!;
  t.equal(change.repeat, false, 'a new value is no repeat');
  t.match(change.previous_section, { station: { maintenance: false }, nozzles: [{ id: 'N1', available: true }] }, 'the value before');
  t.match(change.section, { station: { maintenance: true }, nozzles: [{ id: 'N1', available: false }] }, 'and after');
  t.match(change, { cause: 'signal', previous: 'fresh', freshness: 'fresh' }, 'a signal that kept the reading fresh');

  const { tail } = await admin(t, p);
  const kept = tail.events.filter((m: Record<string, any>) => m.type === 'change' && m.hrs_id === 'BERLA');
  t.same(kept.map((m: Record<string, any>) => m.repeat), [false], 'the tail keeps the value change, not the repeat');
  t.same(kept[0].previous_section, change.previous_section, 'with its previous section');
});

t.test('originators: health says which are failing (last call refused, or silent)', async (t) => {
  const f = baseFixture();
  f.originators.push({ id: 'aaa-ok', name: 'A fine one', call_log_mode: 'errors' }, { id: 'zzz-old', name: 'Gone quiet', call_log_mode: 'errors' }, { id: 'new-1', name: 'Not yet', call_log_mode: 'errors' });
  f.tokens.push({ generation: 'import_v2', originator: 'aaa-ok', value: 'test-import-v2-token-aaa-ok' });
  f.assignments.push({ originator: 'aaa-ok', hrs_id: 'BERLA', signal_type: 'usage', state: 'live' });
  const p = await startTestPlatform(t, { fixture: f, env: { STATUS_STALE_AFTER: '60', STATUS_UNKNOWN_AFTER: '120' } });
  await p.sql`INSERT INTO originator_call_stats (originator_id, hour, calls, rejected, last_call_at, last_rejected_at)
    VALUES ('zzz-old', date_trunc('hour', now() - interval '2 hours'), 3, 0, now() - interval '2 hours', NULL)`;
  const ok = await fetch(`${p.url}/import/v2/signal/usage/`, {
    method: 'POST',
    headers: { Authorization: 'Bearer test-import-v2-token-aaa-ok', 'Content-Type': 'application/json' },
    body: JSON.stringify([{ hrs: 'BERLA', datetime: ago(1), nozzles: [{ id: 'N1', usage_status: 'free' }] }]),
  });
  t.ok(ok.status < 300, `aaa-ok's call is accepted (${ok.status})`);
  const refused = await fetch(`${p.url}/import/v2/signal/availability/`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${TOKENS.import_v2}`, 'Content-Type': 'application/json' },
    body: JSON.stringify([{ ...availability('BERLA', ago(1), true), nozzles: [{ id: 'N9', available: true }] }]),
  });
  t.equal(refused.status, 400, "mon-1's call is refused");

  const body = await until('the calls counted', async () => {
    const res = (await (await get(`${p.url}/admin/v1/originators`, ADMIN_TOKEN)).json()) as { silent_after: number; originators: Record<string, any>[] };
    const counted = res.originators.filter((o) => o.calls_24h > 0).length;
    return counted >= 3 ? res : undefined;
  }, 20_000, 250);
  t.equal(body.silent_after, 60, 'silent after STATUS_STALE_AFTER');
  const health = Object.fromEntries(body.originators.map((o) => [o.id, o.health]));
  t.same(health, { 'aaa-ok': 'ok', 'mon-1': 'refused', 'new-1': 'never_seen', 'zzz-old': 'silent' }, 'each originator\'s health');
  t.same(body.originators.map((o) => o.id), ['aaa-ok', 'mon-1', 'new-1', 'zzz-old'], 'listed by id, as before');
});
