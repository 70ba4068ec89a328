import t from 'tap';
import { baseFixture, TOKENS } from '../helpers/fixtures.js';
import { ADMIN_TOKEN, get, startTestPlatform, type TestPlatform } from '../helpers/platform.js';
import { privatePostgres, privateRedis } from '../helpers/private-services.js';

/**
 * Outages of PostgreSQL and Redis under load, against servers of this file's own that are stopped and
 * started again mid-test: honest status codes in bounded time, nothing acknowledged lost, nothing
 * committed after an error answer, reads from memory unaffected, logs JSON and one line per outage.
 */

const TIMEOUT_S = 1;
const BOUND_MS = (TIMEOUT_S + 3) * 1000;

interface Answer {
  id: string;
  status: number;
  ms: number;
  retryAfter: string | null;
  /** When the request was sent (performance.now()). */
  startedAt: number;
}

/** Imports one reading per request from `workers` clients until `until()` says stop. */
async function importLoad(p: TestPlatform, until: () => boolean, workers = 4): Promise<Answer[]> {
  const answers: Answer[] = [];
  let next = 0;
  const worker = async () => {
    while (!until()) {
      const id = `load-${next++}`;
      const started = performance.now();
      const res = await fetch(`${p.url}/import/v2/signal/availability/`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${TOKENS.import_v2}`, 'Content-Type': 'application/json' },
        body: JSON.stringify([{ hrs: 'BERLA', datetime: new Date().toISOString(), transmission_id: id, nozzles: [{ id: 'N1', available: true }], station: { maintenance: false, limitedly_available: false } }]),
      });
      await res.arrayBuffer();
      answers.push({ id, status: res.status, ms: performance.now() - started, retryAfter: res.headers.get('retry-after'), startedAt: started });
      await sleep(40);
    }
  };
  await Promise.all(Array.from({ length: workers }, worker));
  return answers;
}

async function timedGet(url: string, token?: string): Promise<{ res: Response; ms: number; body: string }> {
  const started = performance.now();
  const res = await get(url, token);
  const body = await res.text();
  return { res, ms: performance.now() - started, body };
}

t.test('PostgreSQL stopped mid-load: 503 with Retry-After in bounded time, memory reads served, nothing lost or committed late', async (t) => {
  const pg = await privatePostgres(t);
  const p = await startTestPlatform(t, {
    env: { DATABASE_URL: pg.url('hrs_outage'), DATABASE_TIMEOUT: String(TIMEOUT_S), LOG_LEVEL: 'warn', IMPORT_V2_RATE_LIMIT: '100000' },
    fixture: baseFixture(),
  });
  t.equal((await get(`${p.url}/v2/hrs/status`, TOKENS.export_v2)).status, 200, 'the export token is known (cached)');

  let phase: 'up' | 'down' | 'done' = 'up';
  const load = importLoad(p, () => phase === 'done');
  await sleep(500);
  await pg.stop();
  phase = 'down';
  const downAt = performance.now();
  await sleep(1500);
  const status = await timedGet(`${p.url}/v2/hrs/status`, TOKENS.export_v2);
  t.equal(status.res.status, 200, 'status is served from memory for a known token');
  t.ok(status.ms < BOUND_MS, `within the bound (${Math.round(status.ms)} ms)`);
  const unknown = await timedGet(`${p.url}/v2/hrs/status`, 'no-such-token-0123456789');
  t.equal(unknown.res.status, 503, 'an unknown token cannot be checked: 503, not 401');
  t.equal(unknown.res.headers.get('retry-after'), '5');
  const ready = await timedGet(`${p.url}/readyz`);
  t.equal(ready.res.status, 503);
  t.same(JSON.parse(ready.body), { status: 'not-ready', postgres: 'unavailable', redis: 'ok' }, 'names the dependency, no error text');
  const stations = await timedGet(`${p.url}/v2/hrs`, TOKENS.export_v2);
  t.equal(stations.res.status, 503, 'a read that needs PostgreSQL is a 503');
  t.ok(stations.ms < BOUND_MS, `within the bound (${Math.round(stations.ms)} ms)`);
  await sleep(Math.max(0, 2500 - (performance.now() - downAt)));

  await pg.start();
  phase = 'up';
  const back = performance.now();
  while ((await get(`${p.url}/readyz`)).status !== 200) {
    if (performance.now() - back > 10_000) throw new Error('not ready 10 s after PostgreSQL came back');
    await sleep(100);
  }
  const readyAt = performance.now();
  await sleep(1000);
  phase = 'done';
  const answers = await load;

  const unexpected = answers.filter((a) => a.status !== 204 && a.status !== 503);
  t.same(unexpected, [], 'every import answered 204 or 503, never 500');
  const refused = answers.filter((a) => a.status === 503);
  t.ok(refused.length > 0, `imports were refused while PostgreSQL was down (${refused.length} of ${answers.length})`);
  t.ok(refused.every((a) => a.retryAfter === '5'), 'each 503 has Retry-After');
  const slowest = Math.max(...answers.map((a) => a.ms));
  t.ok(slowest < BOUND_MS, `every answer within DATABASE_TIMEOUT + 3 s (slowest ${Math.round(slowest)} ms)`);
  // A request sent while PostgreSQL was down may be answered (503) after it is back: judge by sending time.
  const afterRecovery = answers.filter((a) => a.startedAt > readyAt);
  t.ok(afterRecovery.length > 0, `imports were sent after the restart (${afterRecovery.length})`);
  t.same(afterRecovery.filter((a) => a.status !== 204), [], 'imports succeed again after the restart');

  const stored = new Set((await p.sql<{ transmission_id: string }[]>`SELECT transmission_id FROM signal_history`).map((r) => r.transmission_id));
  const acknowledged = answers.filter((a) => a.status === 204);
  t.same(acknowledged.filter((a) => !stored.has(a.id)).map((a) => a.id), [], 'every 204 is stored');
  t.same(refused.filter((a) => stored.has(a.id)).map((a) => a.id), [], 'no 503 was committed');
});

t.test('Redis stopped: imports still 204, revocation 200 at once, one warning and one info line, all JSON', async (t) => {
  const redis = await privateRedis(t);
  const p = await startTestPlatform(t, { env: { REDIS_URL: redis.url, LOG_LEVEL: 'info' }, fixture: baseFixture() });
  await redis.stop();
  await sleep(300);

  let done = false;
  const load = importLoad(p, () => done, 2);
  await sleep(1500);
  const list = (await (await get(`${p.url}/admin/v1/tokens?generation=export_v2`, ADMIN_TOKEN)).json()) as { tokens: { id: string }[] };
  const started = performance.now();
  const revoked = await fetch(`${p.url}/admin/v1/tokens/${list.tokens[0]!.id}/revoke`, { method: 'POST', headers: { Authorization: `Bearer ${ADMIN_TOKEN}` } });
  const revokeMs = performance.now() - started;
  t.equal(revoked.status, 200, 'the committed revocation is a 200');
  t.ok(revokeMs < 1000, `at once (${Math.round(revokeMs)} ms)`);
  t.equal((await get(`${p.url}/v2/hrs/status`, TOKENS.export_v2)).status, 401, 'this instance stops accepting it at once');
  done = true;
  const answers = await load;
  t.ok(answers.length > 5 && answers.every((a) => a.status === 204), `imports answered 204 (${answers.length})`);

  await redis.start();
  const back = performance.now();
  while (!p.logs.lines.some((l) => l.msg === 'Redis available again')) {
    if (performance.now() - back > 10_000) throw new Error('no recovery line 10 s after Redis came back');
    await sleep(100);
  }
  const warnings = p.logs.lines.filter((l) => (l.level as number) >= 40 && !/^request/.test(String(l.msg)));
  const outage = warnings.filter((l) => /^Redis unavailable/.test(String(l.msg)));
  t.equal(outage.length, 1, 'one warning for the outage');
  t.same(warnings.filter((l) => !outage.includes(l)).map((l) => l.msg), [], 'nothing else: the missed announcement is under the outage\'s warning');
  t.ok(
    p.logs.lines.some((l) => l.level === 30 && /^token change not announced/.test(String(l.msg))),
    'the missed announcement is an info line',
  );
  t.equal(p.logs.lines.filter((l) => l.msg === 'Redis available again').length, 1, 'one info line on recovery');
  t.equal(p.logs.raw.length, p.logs.lines.length, 'every line is JSON');
});

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
