import t from 'tap';
import { connect } from '../../db/connect.js';
import { firstError } from '../../src/domain/rejections.js';
import { baseFixture, berlaAssignments, TOKENS } from '../helpers/fixtures.js';
import { ADMIN_TOKEN, startTestPlatform, type TestPlatform } from '../helpers/platform.js';
import { WsClient } from '../helpers/ws.js';
import { until } from '../helpers/wait.js';

/**
 * Every import call counted per originator and hour, whatever its call-log mode keeps, exactly, across
 * two instances and through the shutdown; refused calls on every instance's admins' feed with their
 * first error; the admin API's originators with their figures.
 */

const ago = (seconds: number) => new Date(Date.now() - seconds * 1000).toISOString();
const availability = (nozzle = 'N1') => [{ hrs: 'BERLA', datetime: ago(2), nozzles: [{ id: nozzle, available: true }], station: { maintenance: false, limitedly_available: false } }];

function post(p: TestPlatform, body: unknown): Promise<number> {
  return fetch(`${p.url}/import/v2/signal/availability/`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${TOKENS.import_v2}`, 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
  }).then(async (res) => {
    await res.arrayBuffer();
    return res.status;
  });
}

t.test('the first error of an import answer, and where it points', async (t) => {
  t.same(firstError('[{}, {"datetime": ["Too old."], "nozzles": [{"id": ["Unknown."]}]}]'), { path: '[1].datetime', message: 'Too old.' });
  t.same(firstError({ non_field_errors: ['Expected a list of items but got type "dict".'] }), { path: '', message: 'Expected a list of items but got type "dict".' });
  t.same(firstError(Buffer.from('{"detail":"Invalid token."}')), { path: '', message: 'Invalid token.' });
  t.same(firstError([{ nozzles: [{}, { id: ['Unknown nozzle identifier: N9'] }] }]), { path: '[0].nozzles[1].id', message: 'Unknown nozzle identifier: N9' });
  t.same(firstError([{}, {}]), null, 'nothing to say');
  t.same(firstError('not json'), null);
  t.equal(firstError({ detail: 'x'.repeat(1000) })!.message.length, 300, 'a long message is cut');
});

t.test('two instances count every call exactly, refused ones apart; the counts survive the shutdown', async (t) => {
  const fixture = { ...baseFixture(), assignments: berlaAssignments() };
  const a = await startTestPlatform(t, { fixture, env: { IMPORT_V2_RATE_LIMIT: '100000' } });
  const b = await startTestPlatform(t, { sameStoreAs: a });
  const admin = await WsClient.connect(`${b.url.replace('http:', 'ws:')}/admin/v1/live`, { Authorization: `Bearer ${ADMIN_TOKEN}` });
  t.teardown(() => admin.close());
  await admin.nextOf('snapshot');

  const statuses = await Promise.all([
    ...Array.from({ length: 30 }, (_, i) => post(i % 2 ? a : b, availability())),
    ...Array.from({ length: 7 }, (_, i) => post(i % 2 ? a : b, availability('N9'))),
  ]);
  t.same([statuses.filter((s) => s === 204).length, statuses.filter((s) => s === 400).length], [30, 7]);

  const refused = await admin.nextOf('rejection');
  t.match(refused, { originator_id: 'mon-1', endpoint: 'POST /import/v2/signal/availability/', status: 400, hrs_ids: ['BERLA'], error: { path: '[0].nozzles[0].id', message: /N9/ } }, 'a refusal on the other instance\'s admins\' feed, with its first error');

  await a.stop('test over');
  await b.stop('test over');
  const sql = connect(a.parts.config.databaseUrl, { max: 1 });
  t.teardown(() => sql.end({ timeout: 1 }));
  const [row] = await sql<{ calls: number; rejected: number; last: Date }[]>`
    SELECT sum(calls)::int AS calls, sum(rejected)::int AS rejected, max(last_call_at) AS last FROM originator_call_stats WHERE originator_id = 'mon-1'`;
  t.same([row!.calls, row!.rejected], [37, 7], 'every call counted once, whichever instance took it, added at the shutdown');
  t.ok(Date.now() - row!.last.getTime() < 60_000, 'last seen just now');
});

t.test('GET /admin/v1/originators: last seen, calls, refusals and the error rate of the last 24 hours', async (t) => {
  const p = await startTestPlatform(t, { fixture: { ...baseFixture(), assignments: berlaAssignments() } });
  for (let i = 0; i < 3; i++) t.equal(await post(p, availability()), 204);
  t.equal(await post(p, availability('N9')), 400);
  const answer = await until('the counts added (every 5 s)', async () => {
    const res = await fetch(`${p.url}/admin/v1/originators`, { headers: { Authorization: `Bearer ${ADMIN_TOKEN}` } });
    const body = (await res.json()) as { originators: { id: string; calls_24h: number }[] };
    return body.originators.find((o) => o.id === 'mon-1')!.calls_24h === 4 ? body : undefined;
  }, 15_000, 250);
  t.match(answer.originators.find((o) => o.id === 'mon-1'), {
    id: 'mon-1',
    name: 'Monitoring One',
    call_log_mode: 'errors',
    calls_24h: 4,
    rejected_24h: 1,
    error_rate_24h: 0.25,
    last_seen: String,
    last_rejected: String,
    last_transmission: String,
    call_logs: `${p.url}/admin/v1/call-logs?originator=mon-1`,
  });
  t.notOk(answer.originators.some((o) => o.id === 'sandbox-simulator'), 'the sandbox\'s simulator is not listed');
  t.equal((await fetch(`${p.url}/admin/v1/originators`)).status, 401, 'admins only');
});
