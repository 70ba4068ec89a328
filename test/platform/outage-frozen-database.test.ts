import t from 'tap';
import { legacyFixture, TOKENS } from '../helpers/fixtures.js';
import { ADMIN_TOKEN, startTestPlatform } from '../helpers/platform.js';
import { privatePostgres } from '../helpers/private-services.js';
import { timedCall, type TimedAnswer } from '../helpers/timed-call.js';

/**
 * A frozen PostgreSQL (SIGSTOP of this file's own cluster, postmaster and children, with the pool
 * warm): every request that needs it is answered 503 with Retry-After in the family's error format
 * within DATABASE_TIMEOUT (plus the time to send and read the answer), the pool's connections all
 * stuck included, readiness says not ready, and no write answered with an error commits once the
 * server resumes.
 */

const TIMEOUT_S = 1;
/** DATABASE_TIMEOUT plus room for a shared 2-core machine; without a client-side deadline these wait forever. */
const BOUND_MS = TIMEOUT_S * 1000 + 4000;

type Answer = TimedAnswer;
const call = timedCall;

const bearer = (token: string, extra: Record<string, string> = {}) => ({ Authorization: `Bearer ${token}`, ...extra });
const json = (token: string) => bearer(token, { 'Content-Type': 'application/json' });

function v2Reading(transmissionId: string) {
  return [{ hrs: 'BERLA', datetime: new Date().toISOString(), transmission_id: transmissionId, nozzles: [{ id: 'N1', available: true }], station: { maintenance: false, limitedly_available: false } }];
}

function v1Reading(datetime: string) {
  return [{ hrs: 'BERLA', datetime, dispensers: [{ fuel_type: '700ld', available: true }, { fuel_type: '350ld', available: false }], maintenance: false, limitedly_available: false }];
}

/** The legacy stations, BERLA taking v1 signals from mon-1 live. */
function fixture() {
  const f = legacyFixture();
  f.assignments.push({ originator: 'mon-1', hrs_id: 'BERLA', signal_type: 'v1', state: 'live' });
  return f;
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

t.test('PostgreSQL frozen with the pool warm: every route that needs it answers 503 in time, nothing commits after unless its answer said it may', async (t) => {
  const pg = await privatePostgres(t);
  const p = await startTestPlatform(t, {
    env: { DATABASE_URL: pg.url('hrs_frozen'), DATABASE_TIMEOUT: String(TIMEOUT_S), LOG_LEVEL: 'fatal', IMPORT_V2_RATE_LIMIT: '100000', IMPORT_V1_RATE_LIMIT: '100000' },
    fixture: fixture(),
  });
  const u = (path: string) => `${p.url}${path}`;
  const routes = (tag: string, v1At: string): Array<() => Promise<Answer>> => [
    () => call('import v2 availability', u('/import/v2/signal/availability/'), { method: 'POST', headers: json(TOKENS.import_v2), body: JSON.stringify(v2Reading(`frozen-${tag}`)) }),
    () => call('import v1.1 availability', u('/import/v1.1/hrs-availability'), { method: 'POST', headers: json(TOKENS.import_v1), body: JSON.stringify(v1Reading(v1At)) }),
    () => call('import v2 active stations', u('/import/v2/active-stations/'), { headers: bearer(TOKENS.import_v2) }),
    () => call('export v2 photo', u('/v2/hrs/BERLA/photo'), { headers: bearer(TOKENS.export_v2) }),
    () => call('export v2 stations', u('/v2/hrs'), { headers: bearer(TOKENS.export_v2) }),
    () => call('DATEX II table', u('/datex2/v3/table'), { headers: bearer(TOKENS.export_v2) }),
    () => call('export v1.1 record', u('/v1.1/hrs/BERLA'), { headers: bearer(TOKENS.export_v1) }),
    () => call('a token not seen before', u('/v2/fuel-type'), { headers: bearer(`hrs_pat_never-seen-${tag}-0123456789abcdef`) }),
    () => call('admin token list', u('/admin/v1/tokens'), { headers: bearer(ADMIN_TOKEN) }),
  ];

  // Warm: every route answers, the pool holds open connections, the known tokens are cached.
  for (const route of routes('warm', new Date(Date.now() - 60_000).toISOString())) {
    const answer = await route();
    t.ok(answer.status > 0 && answer.status < 500, `${answer.name} answers while the server runs (${answer.status})`);
    if (answer.status >= 400) t.comment(answer.body.slice(0, 300));
  }

  const v1At = new Date(Date.now() - 30_000).toISOString();
  pg.freeze();
  let thawed = false;
  t.teardown(() => (thawed ? undefined : pg.thaw()));
  // The routes at once, with enough reads beside them to leave every pooled connection stuck.
  const crowd = Array.from({ length: 24 }, (_, i) => () => call(`crowd ${i}`, u('/v2/hrs'), { headers: bearer(TOKENS.export_v2) }));
  const answers = await Promise.all([...routes('down', v1At), ...crowd].map((route) => route()));
  const ready = await call('readiness', u('/readyz'));

  for (const answer of answers) {
    t.equal(answer.status, 503, `${answer.name}: 503 (${answer.status === 0 ? answer.body : Math.round(answer.ms) + ' ms'})`);
    t.equal(answer.retryAfter, '5', `${answer.name}: with Retry-After`);
    t.ok(answer.ms < BOUND_MS, `${answer.name}: within DATABASE_TIMEOUT (${Math.round(answer.ms)} ms)`);
  }
  const v2 = answers.find((a) => a.name === 'import v2 availability')!;
  t.match(v2.type, /json/, 'import v2 answers in its own error format');
  const export2 = answers.find((a) => a.name === 'export v2 stations')!;
  t.match(export2.type, /application\/problem\+json/, 'export v2 answers a problem document');
  t.match(JSON.parse(export2.body), { status: 503, detail: /unavailable/ });
  t.equal(ready.status, 503, 'readiness: not ready');
  t.match(JSON.parse(ready.body || '{}'), { status: 'not-ready', postgres: 'unavailable' });
  t.ok(ready.ms < BOUND_MS, `readiness within the bound (${Math.round(ready.ms)} ms)`);
  const longest = Math.max(...answers.map((a) => a.ms), ready.ms);
  t.comment(`longest answer with PostgreSQL frozen: ${Math.round(longest)} ms (DATABASE_TIMEOUT ${TIMEOUT_S * 1000} ms)`);

  pg.thaw();
  thawed = true;
  const back = performance.now();
  while ((await call('readiness', u('/readyz'))).status !== 200) {
    if (performance.now() - back > 20_000) throw new Error('not ready 20 s after PostgreSQL resumed');
    await sleep(100);
  }
  // Whatever the resumed server still had to read has been read by now.
  await sleep(1500);
  // A signal is written as one statement: sent and not answered, it may commit when the server
  // resumes, and then its 503 must have said so; otherwise it must not be there.
  const v2Rows = await p.sql`SELECT 1 FROM signal_history WHERE transmission_id = 'frozen-down'`;
  const v1Rows = await p.sql`SELECT 1 FROM signal_history WHERE hrs_id = 'BERLA' AND measured_at = ${new Date(v1At)}`;
  for (const [name, rows] of [['import v2 availability', v2Rows.length], ['import v1.1 availability', v1Rows.length]] as const) {
    const answer = answers.find((a) => a.name === name)!;
    const said = /may have been applied/.test(answer.body);
    t.ok(rows === 0 || said, `${name}: committed after the server resumed only if its 503 said it may have been (${rows} row(s); ${answer.body.slice(0, 160)})`);
    t.ok(said || /unavailable/.test(answer.body), `${name}: its 503 says what happened`);
  }
  const again = await routes('again', new Date().toISOString())[0]!();
  t.equal(again.status, 204, 'imports are taken again once the server resumed');
  t.equal((await p.sql`SELECT 1 FROM signal_history WHERE transmission_id = 'frozen-again'`).length, 1, 'and stored');
});
