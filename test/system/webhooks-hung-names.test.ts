import t, { type Test } from 'tap';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createHash, randomBytes } from 'node:crypto';
import { loadFixture } from '../../src/registry/file/load.js';
import { baseFixture, TOKENS } from '../helpers/fixtures.js';
import { netnsUnavailable, silentResolverNamespace, unixRequest, type UnixAnswer } from '../helpers/netns.js';
import { freshDatabase } from '../helpers/platform.js';
import { HRS } from '../helpers/process.js';
import { subscribe } from '../helpers/webhooks.js';

/**
 * Webhook host names that never resolve do not take the instance down. The platform (`hrs serve`, its
 * workers included) runs in a network namespace whose resolver reads every query and answers none,
 * with DATABASE_URL naming PostgreSQL by a host name (from the namespace's hosts file; docs/deploy.md
 * recommends names). A token owner registers eight webhooks for names that never answer, eight
 * subscriptions to such names get deliveries, and the pool's connections end meanwhile (as a restart,
 * a failover or the pool's idle timeout ends them), so PostgreSQL's name must be looked up again: the
 * pool connects again at once, every import is served, /readyz stays 200, and each registration is
 * answered 503 within its bound. (Resolved with dns.lookup, the names held libuv's threads for 10 s
 * each, PostgreSQL's look-up waited behind them, and no import was served for 40 s.)
 */

const HUNG = 8;
/** Importers at once, so that the pool needs several connections. */
const IMPORTERS = 8;
const PORT = 8080;
const ORIGIN = `http://127.0.0.1:${PORT}`;
/** How long the pool may take to connect again: a look-up of a hosts-file name and a connection. */
const RECONNECT_MS = 3000;
/** How long imports are sent while the names hang (the system resolver holds a thread 10 s for each). */
const WATCH_MS = 6000;
/** A generous bound on a registration's answer (WEBHOOK_RESOLVE_TIMEOUT is 3 s). */
const REGISTRATION_BOUND_MS = 10_000;
/**
 * The CPU time the platform may spend getting ready: its start (the sources through tsx, the
 * migrations checked, the registry and status loaded) took about 5 CPU-seconds here. Counted in the
 * process's own CPU time, not on the wall clock: on a shared two-core machine the same start took 19 s
 * with the cores busy with other work and 33 s with two more processes spinning beside it, so a wall
 * bound of a minute failed a start that was merely waiting for a core.
 */
const START_CPU_MS = 60_000;
/** A start that uses no CPU while not ready (waiting on something that never comes) is given up after this long. */
const START_WAIT_MS = 300_000;

/** A reading; every other one flips the nozzle, so the station's status changes and the subscriptions get deliveries. */
let flips = 0;
const reading = (id: string) => [
  { hrs: 'BERLA', datetime: new Date().toISOString(), transmission_id: id, nozzles: [{ id: 'N1', available: flips++ % 2 === 0 }], station: { maintenance: false, limitedly_available: false } },
];
const IMPORT = { Authorization: `Bearer ${TOKENS.import_v2}`, 'Content-Type': 'application/json' };
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

type Call = (path: string, init?: Parameters<typeof unixRequest>[2]) => Promise<UnixAnswer>;
const postImport = (call: Call, id: string, timeoutMs = 5000) => call('/import/v2/signal/availability/', { method: 'POST', headers: IMPORT, body: JSON.stringify(reading(id)), timeoutMs });

/** The platform in the namespace, PostgreSQL named `db.hrs.test`; ready when this returns. */
async function platformInNamespace(t: Test) {
  const { sql, config } = await freshDatabase(t);
  await loadFixture(sql, baseFixture(), { baseDir: '.' });
  const key = randomBytes(32);
  const pg = new URL(config.databaseUrl);
  const redis = new URL(config.redisUrl);
  const ns = await silentResolverNamespace(t, { hosts: { 'db.hrs.test': '127.0.0.1' }, hostPorts: [Number(pg.port || 5432), Number(redis.port || 6379)], exposed: [PORT] });
  pg.hostname = 'db.hrs.test';
  redis.hostname = '127.0.0.1';
  const platform = ns.exec(process.execPath, [HRS, 'serve'], {
    DATABASE_URL: pg.toString(), REDIS_URL: redis.toString(), REDIS_PREFIX: config.redisPrefix, HOST: '127.0.0.1', PORT: String(PORT), BASE_URL: ORIGIN,
    LOG_LEVEL: 'warn', SANDBOX: 'off', WEBHOOK_SECRET_KEY: key.toString('hex'), IMPORT_V2_RATE_LIMIT: '100000',
  });
  const call: Call = (path, init = {}) => unixRequest(ns.unixPath(PORT), path, init);
  const started = Date.now();
  while ((await call('/readyz', { timeoutMs: 2000 })).status !== 200) {
    if (platform.child.exitCode !== null) throw new Error(`the platform exited before it got ready: ${platform.output()}`);
    const cpu = cpuMs(platform.child.pid!);
    const waited = Date.now() - started;
    if (cpu > START_CPU_MS || waited > START_WAIT_MS) throw new Error(`the platform did not get ready (${cpu} ms of CPU in ${waited} ms): ${platform.output()}`);
    await sleep(200);
  }
  t.comment(`the platform got ready in ${Date.now() - started} ms, ${cpuMs(platform.child.pid!)} ms of CPU`);
  return { sql, key, call, ns, platform };
}

/** Clock ticks per second of /proc's CPU times. */
const CLOCK_TICKS = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim());

/** The CPU time (user and system) a process has used, in milliseconds (`ip netns exec` runs the program in its own process). */
function cpuMs(pid: number): number {
  // The fields after the command's name, which ends with the last `)`: utime and stime are the 12th and 13th of them.
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return Math.round(((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS);
}

/** Rounds of imports at once until one is served whole (each pooled connection found ended is replaced), within RECONNECT_MS. */
async function reconnected(call: Call): Promise<{ statuses: number[]; ms: number }> {
  const started = performance.now();
  let round: UnixAnswer[] = [];
  while (performance.now() - started < RECONNECT_MS) {
    const at = Math.round(performance.now());
    round = await Promise.all(Array.from({ length: IMPORTERS }, (_, n) => postImport(call, `back-${at}-${n}`, RECONNECT_MS)));
    if (round.every((a) => a.status === 204)) break;
    await sleep(100);
  }
  return { statuses: round.map((a) => a.status), ms: Math.round(performance.now() - started) };
}

/** IMPORTERS importers and a readiness probe for `ms`: every answer. */
async function importsFor(call: Call, ms: number): Promise<{ served: UnixAnswer[]; ready: UnixAnswer[] }> {
  const served: UnixAnswer[] = [];
  const ready: UnixAnswer[] = [];
  const until = performance.now() + ms;
  const importer = async (n: number) => {
    for (let i = 0; performance.now() < until; i++) {
      served.push(await postImport(call, `during-${n}-${i}`));
      await sleep(50);
    }
  };
  const probe = async () => {
    for (; performance.now() < until; await sleep(500)) ready.push(await call('/readyz', { timeoutMs: 5000 }));
  };
  await Promise.all([...Array.from({ length: IMPORTERS }, (_, n) => importer(n)), probe()]);
  return { served, ready };
}

t.test('webhook names that never resolve leave imports, readiness and PostgreSQL\'s own look-ups alone', { skip: netnsUnavailable() }, async (t) => {
  const { sql, key, call, ns, platform } = await platformInNamespace(t);
  for (let i = 0; i < HUNG; i++) await subscribe(sql, key, { url: `https://sink-${i}.never-answers.example/h`, kinds: ['station_status'] });
  const secret = randomBytes(32).toString('base64url');
  await sql`INSERT INTO portal_sessions (hash, user_id, expires_at) VALUES (${createHash('sha256').update(secret).digest()}, 'alice', clock_timestamp() + interval '1 hour')`;
  const portal = { Origin: ORIGIN, Cookie: `hrs_portal=${secret}`, 'Content-Type': 'application/json' };
  t.equal((await postImport(call, 'before')).status, 204, 'an import before');

  const registrations = Array.from({ length: HUNG }, (_, i) =>
    call('/portal/v1/webhooks', { method: 'POST', headers: portal, body: JSON.stringify({ url: `https://hook-${i}.never-answers.example/h`, kinds: ['events'] }), timeoutMs: 15_000 }),
  );
  // Once every registration's name is being asked for (each past its session's check), the pool's connections end.
  const asked = () => new Set(ns.queries().filter((name) => name.startsWith('hook-'))).size;
  for (const started = Date.now(); asked() < HUNG && Date.now() - started < REGISTRATION_BOUND_MS; ) await sleep(50);
  t.equal(asked(), HUNG, 'every registration\'s name is asked for');
  await sql`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()`;
  const back = await reconnected(call);
  t.same(back.statuses, Array(IMPORTERS).fill(204), `imports are served again within ${RECONNECT_MS} ms of the connections' end (${back.ms} ms)`);
  const { served, ready } = await importsFor(call, WATCH_MS);

  const ok = served.filter((a) => a.status === 204);
  t.comment(`imports answered 204 in ${WATCH_MS} ms while ${HUNG} registrations and ${HUNG} deliveries hung: ${ok.length} of ${served.length}; resolver queries read: ${ns.queries().length}`);
  for (const a of served.filter((a) => a.status !== 204).slice(0, 3)) t.comment(`an import: ${a.status} after ${Math.round(a.ms)} ms: ${a.body.slice(0, 200)}`);
  if (ok.length < served.length) t.comment(platform.output().split('\n').filter((l) => l.includes('"err"')).slice(0, 2).map((l) => l.slice(0, 300)).join('\n'));
  // A platform that went away (imports then end in "socket hang up") says why on its stderr, which is not JSON.
  if (platform.child.exitCode !== null || platform.child.signalCode !== null) {
    t.comment(`the platform exited (code ${platform.child.exitCode}, signal ${platform.child.signalCode}); its last lines:\n${platform.output().split('\n').slice(-30).join('\n')}`);
  }
  t.equal(ok.length, served.length, 'every import is served');
  t.ok(served.length >= 20, `imports kept coming (${served.length})`);
  t.same([...new Set(ready.map((a) => a.status))], [200], '/readyz stays 200');

  for (const [i, a] of (await Promise.all(registrations)).entries()) {
    t.match({ status: a.status, body: a.body, retryAfter: a.headers['retry-after'] }, { status: 503, body: /"code":"host_unresolved"/, retryAfter: /^\d+$/ }, `registration ${i}: 503 host_unresolved`);
    t.ok(a.ms < REGISTRATION_BOUND_MS, `registration ${i} answered in ${Math.round(a.ms)} ms`);
  }
  let attempts: { error: string | null }[] = [];
  for (const started = Date.now(); attempts.length === 0 && Date.now() - started < REGISTRATION_BOUND_MS; await sleep(200)) {
    attempts = await sql<{ error: string | null }[]>`SELECT error FROM webhook_deliveries`;
  }
  t.ok(attempts.length > 0, `deliveries were attempted (${attempts.length})`);
  for (const a of attempts) t.match(a.error, /^ETIMEOUT: no answer for sink-\d\.never-answers\.example within \d+ ms$/, 'a delivery attempt fails on its bound');
});
