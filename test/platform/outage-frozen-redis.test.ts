import t from 'tap';
import { baseFixture, TOKENS } from '../helpers/fixtures.js';
import { ADMIN_TOKEN, get, startTestPlatform } from '../helpers/platform.js';
import { privateRedis } from '../helpers/private-services.js';
import { WsClient } from '../helpers/ws.js';
import { GIVE_UP_MS, timedCall, type TimedAnswer } from '../helpers/timed-call.js';

/**
 * A frozen Redis (SIGSTOP of this file's own redis-server: its connections stay open, nothing is
 * answered): every route that touches Redis answers within REDIS_TIMEOUT (plus the time to send and
 * read the answer) and truthfully: a revocation or a user's deactivation is committed and answered
 * 200 with the committed state, imports and exports go on without rate limits, readiness says Redis is
 * unavailable, and one warning is logged for the outage and one line when Redis answers again.
 */

const TIMEOUT_S = 1;
/** REDIS_TIMEOUT plus room for a shared 2-core machine; without a bound these wait until Redis resumes. */
const BOUND_MS = TIMEOUT_S * 1000 + 4000;

type Answer = TimedAnswer;
const call = timedCall;

const STREAM_TOKEN = 'test-export-v2-token-0002';

/** Opens a status stream (its stream slot is taken in Redis) and waits for its first message. */
async function openStream(url: string): Promise<Answer> {
  const started = performance.now();
  try {
    const ws = await WsClient.connect(url, { Authorization: `Bearer ${STREAM_TOKEN}` });
    const first = await Promise.race([ws.next(), new Promise((resolve) => setTimeout(() => resolve({ type: 'nothing' }), GIVE_UP_MS))]);
    ws.close();
    return { name: 'status stream', status: 101, ms: performance.now() - started, body: JSON.stringify(first), retryAfter: null, type: null };
  } catch (err) {
    return { name: 'status stream', status: (err as { status?: number }).status ?? 0, ms: performance.now() - started, body: String(err), retryAfter: null, type: null };
  }
}

const admin = (extra: Record<string, string> = {}) => ({ Authorization: `Bearer ${ADMIN_TOKEN}`, ...extra });

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

t.test('Redis frozen: admin changes answer 200 with what was committed, every route in time, one warning', async (t) => {
  const redis = await privateRedis(t);
  const fixture = baseFixture();
  fixture.tokens.push({ generation: 'export_v2', user: 'alice', name: 'streams', value: STREAM_TOKEN, expires_at: '2099-06-01T00:00:00Z' });
  const p = await startTestPlatform(t, { env: { REDIS_URL: redis.url, REDIS_TIMEOUT: String(TIMEOUT_S), LOG_LEVEL: 'info' }, fixture });
  const u = (path: string) => `${p.url}${path}`;
  const list = JSON.parse((await call('tokens', u('/admin/v1/tokens?generation=export_v2'), { headers: admin() })).body) as { tokens: { id: string; name: string }[] };
  const tokenId = list.tokens.find((token) => token.name === 'laptop')!.id;
  t.equal((await get(u('/v2/hrs/status'), TOKENS.export_v2)).status, 200, 'the export token works before');

  redis.freeze();
  let thawed = false;
  t.teardown(() => (thawed ? undefined : redis.thaw()));
  const reading = () => JSON.stringify([{ hrs: 'BERLA', datetime: new Date().toISOString(), nozzles: [{ id: 'N1', available: true }], station: { maintenance: false, limitedly_available: false } }]);
  const importV2 = (name: string) =>
    call(name, u('/import/v2/signal/availability/'), { method: 'POST', headers: { Authorization: `Bearer ${TOKENS.import_v2}`, 'Content-Type': 'application/json' }, body: reading() });

  // First the calls that meet the frozen Redis themselves, at once.
  const [revoke, deactivate, imported, exported, ready, streamed] = await Promise.all([
    call('revoke a token', u(`/admin/v1/tokens/${tokenId}/revoke`), { method: 'POST', headers: admin() }),
    call('deactivate a user', u('/admin/v1/users/alice/deactivate'), { method: 'POST', headers: admin() }),
    importV2('import v2 (rate limited)'),
    call('export v2 (rate limited)', u('/v2/hrs'), { headers: { Authorization: `Bearer ${TOKENS.export_v2}` } }),
    call('readiness', u('/readyz')),
    openStream(`${p.url.replace('http:', 'ws:')}/v2/hrs/status/stream`),
  ]);
  // Then the ones that come once the platform knows Redis is not answering.
  const reactivate = await call('reactivate a user', u('/admin/v1/users/alice/reactivate'), { method: 'POST', headers: admin() });
  const issued = await call('issue a personal token', u('/admin/v1/personal-tokens'), {
    method: 'POST', headers: admin({ 'Content-Type': 'application/json' }), body: JSON.stringify({ email: 'dana@example.org', token_name: 'frozen' }),
  });
  const signIn = await call('portal sign-in', u('/portal/v1/sign-in'), { method: 'POST', headers: { 'Content-Type': 'application/json', Origin: p.url }, body: JSON.stringify({ email: 'alice@example.org' }) });
  const again = await importV2('import v2 again');
  const answers = [revoke, deactivate, imported, exported, ready, streamed, reactivate, issued, signIn, again];

  for (const a of answers) t.ok(a.status > 0 && a.ms < BOUND_MS, `${a.name}: answered within REDIS_TIMEOUT (${a.status}, ${Math.round(a.ms)} ms)`);
  t.equal(revoke.status, 200, 'the committed revocation is a 200');
  t.match(JSON.parse(revoke.body), { id: tokenId, revoked_at: String }, 'with the committed state');
  t.equal((await get(u('/v2/hrs/status'), TOKENS.export_v2)).status, 401, 'this instance refuses the revoked token at once');
  t.equal(deactivate.status, 200, 'the committed deactivation is a 200');
  t.ok(JSON.parse(deactivate.body).deactivated_at, 'with the committed state');
  t.equal(reactivate.status, 200, 'the reactivation too');
  t.equal(JSON.parse(reactivate.body).deactivated_at, null);
  t.equal(imported.status, 204, 'an import is taken (rate limits fail open)');
  t.equal(again.status, 204, 'and the next one');
  t.equal(exported.status, 200, 'an export is served');
  t.equal(streamed.status, 101, `a status stream opens, without a slot (${streamed.body})`);
  t.equal(ready.status, 503, 'readiness: not ready');
  t.match(JSON.parse(ready.body), { status: 'not-ready', postgres: 'ok', redis: 'unavailable' });
  for (const a of [issued, signIn]) {
    t.ok([201, 202, 503].includes(a.status), `${a.name}: answered (${a.status})`);
    if (a.status === 503) t.equal(a.retryAfter, '5', `${a.name}: 503 with Retry-After`);
  }
  const longest = Math.max(...answers.map((a) => a.ms));
  t.comment(`longest answer with Redis frozen: ${Math.round(longest)} ms (REDIS_TIMEOUT ${TIMEOUT_S * 1000} ms)`);

  redis.thaw();
  thawed = true;
  const back = performance.now();
  while ((await call('readiness', u('/readyz'))).status !== 200) {
    if (performance.now() - back > 15_000) throw new Error('not ready 15 s after Redis resumed');
    await sleep(100);
  }
  const outage = p.logs.lines.filter((l) => /^Redis unavailable/.test(String(l.msg)));
  t.equal(outage.length, 1, 'one warning for the outage');
  t.equal(p.logs.lines.filter((l) => l.msg === 'Redis available again').length, 1, 'one info line once it answers again');
});
