/**
 * The `hrs` command run in this process (test/helpers/cli.ts): usage errors, help, version, settings
 * refused, servers that do not answer, migrate and load, each with its exit code and its lines.
 * test/system/cli.test.ts runs the same through spawned processes.
 */
import t from 'tap';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from '../../db/connect.js';
import { readMigrations } from '../../db/migrate.js';
import { baseFixture } from '../helpers/fixtures.js';
import { testConfig } from '../helpers/platform.js';
import { hrsHere as hrs } from '../helpers/cli.js';
import { freePort } from '../helpers/process.js';
import { WORKERS } from '../../src/cli/commands/worker.js';
import type { Io } from '../../src/cli/command.js';
import { main } from '../../src/cli/main.js';
import { createLogger, humanLine, humanLines } from '../../src/config/log.js';
import { QUEUES } from '../../workers/queues.js';
import { WEBHOOK_WORKER } from '../../workers/webhooks/processor.js';

const lines = (text: string) => text.trim().split('\n').filter(Boolean);

t.test('a terminal for people: each log record one line, without stack or fields', async (t) => {
  const lines: string[] = [];
  const log = createLogger('warn', humanLines((line) => lines.push(line)));
  log.info({ hrsId: 'BERAP' }, 'request');
  log.warn({ err: Object.assign(new Error('PostgreSQL did not answer within 2000 ms'), { stack: 'Error: …\n    at a (x.js:1:1)' }) }, 'reading the registry for DATEX II failed');
  log.error('the bus is down');
  t.equal(lines.length, 2, 'under the level: nothing');
  t.match(lines[0], /^\d\d:\d\d:\d\d warning: reading the registry for DATEX II failed: PostgreSQL did not answer within 2000 ms$/, 'time, level, message, the error\'s message');
  t.match(lines[1], /^\d\d:\d\d:\d\d error: the bus is down$/);
  t.notMatch(lines.join('\n'), /at a \(|\{/, 'no stack, no JSON');
  t.equal(humanLine('not a record'), 'not a record', 'a line that is not a record passes as it is');
});

t.test('help and usage errors', async (t) => {
  let r = await hrs(['--help']);
  t.equal(r.code, 0);
  for (const command of ['migrate', 'serve', 'worker', 'load']) t.match(r.stdout, new RegExp(`^  ${command} `, 'm'));
  r = await hrs([]);
  t.equal(r.code, 2, 'no command is a usage error');
  t.match(r.stderr, /Usage: hrs COMMAND/);
  r = await hrs(['serve', '--help']);
  t.equal(r.code, 0);
  t.match(r.stdout, /Usage: hrs serve \[--no-workers\]/);
  t.match(r.stdout, /\[--processes N\|auto\]/, 'serve takes --processes');
  t.match(r.stdout, /^--processes N serves HOST:PORT from N processes/m, 'and says what it does');
  r = await hrs(['load', '--help']);
  t.match(r.stdout, /Usage: hrs load FILE/);
  for (const command of ['serve', 'demo']) {
    r = await hrs([command, '--help']);
    t.match(r.stdout, new RegExp(`Usage: hrs ${command} .*\\[--embedded\\]`), `${command} takes --embedded`);
    t.match(r.stdout, /DATABASE_URL and REDIS_URL name your own servers/, `${command} --help says how to use one's own servers`);
    t.match(r.stdout, /nothing answers on its default port \(127\.0\.0\.1:5432, 127\.0\.0\.1:6379\), or with --embedded/, 'when local ones are started');
    t.match(r.stdout, /\$HRS_STATE_DIR \(default \$XDG_STATE_HOME\/hrs or ~\/\.local\/state\/hrs; \/var\/lib\/hrs as root\)/, 'where their data lives');
    t.match(r.stdout, /`hrs reset-local` deletes it/, 'and how to reset it');
  }
  r = await hrs(['--help']);
  t.match(r.stdout, /^  reset-local  /m, 'reset-local is listed');
  r = await hrs(['reset-local', '--help']);
  t.match(r.stdout, /Refused while an hrs process runs them/);

  for (const [args, pattern] of [
    [['frobnicate'], /^hrs: unknown command "frobnicate"/],
    [['serve', '--bogus'], /^hrs: Unknown option '--bogus'/],
    [['serve', '--processes', '0'], /^hrs: --processes takes a whole number from 1, or auto \(given "0"\)$/],
    [['load'], /^hrs: expected 1 argument \(usage: hrs load FILE\)$/],
    [['migrate', 'extra'], /^hrs: expected no arguments/],
  ] as const) {
    r = await hrs([...args]);
    t.equal(r.code, 2, `${args.join(' ')}: exit 2`);
    t.equal(lines(r.stderr).length, 1, 'one line on stderr');
    t.match(r.stderr.trim(), pattern);
  }
});

/** What `hrs ARGS` prints, run in this process (the help needs no process of its own). */
async function helpOf(args: string[]): Promise<string> {
  const lines: string[] = [];
  const io = { out: (line: string) => lines.push(line), err: (line: string) => lines.push(line), env: {} } as unknown as Io;
  await main(args, io);
  return lines.join('\n');
}

t.test('the help names every worker that runs, and PORT', async (t) => {
  const help = await helpOf(['--help']);
  const workers: (keyof typeof WORKERS)[] = [...Object.values(QUEUES), WEBHOOK_WORKER];
  t.equal(workers.length, 6, 'five BullMQ queues, each with its worker, and the webhook worker (its queue is PostgreSQL)');
  t.match(help, /^  worker +run only the BullMQ workers \(mail, call log, status history, change log, webhooks, sandbox\), to scale them out$/m, 'the summary names all six');
  const workerHelp = await helpOf(['worker', '--help']);
  for (const queue of workers) t.match(workerHelp, new RegExp(`^  ${WORKERS[queue].name}: \\S`, 'm'), `hrs worker --help says what the ${queue} worker does`);
  t.match(help, /^  PORT=9090 +where `hrs serve` and `hrs demo` listen \(default 8080; HOST, default 127\.0\.0\.1\)$/m, 'hrs --help names PORT');
  for (const command of ['serve', 'demo']) {
    t.match(await helpOf([command, '--help']), /HTTP: HOST:PORT, by default 127\.0\.0\.1:8080\. PORT=9090 listens on another port/, `${command} --help says how to choose the port`);
  }
  t.match(await helpOf(['serve', '--help']), /DATABASE_URL may name a primary and its standbys[^]*REDIS_SENTINELS=host:port/, 'serve --help names the failover settings');
});

t.test('--version and version print the package version', async (t) => {
  const { version } = JSON.parse(await readFile(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
  for (const args of [['--version'], ['-V'], ['version']]) {
    const r = await hrs(args, { DATABASE_URL: 'not a url' });
    t.equal(r.code, 0, `${args[0]}: exit 0 (no configuration needed)`);
    t.equal(r.stdout, `hrs ${version}\n`, `${args[0]} prints the version alone`);
    t.equal(r.stderr, '');
  }
  t.match((await hrs(['--help'])).stdout, /^  version  /m, 'listed with the commands');
  t.equal((await hrs(['version', 'extra'])).code, 2, 'it takes no argument');
});

t.test('configuration errors name the variable', async (t) => {
  for (const [name, value, pattern] of [
    ['PORT', 'eighty', /PORT must be a port number \(got "eighty"\)/],
    ['DATABASE_URL', 'mysql://localhost/hrs', /DATABASE_URL must be a URL starting with postgres:\/\//],
    ['STATUS_UNKNOWN_AFTER', '-5', /STATUS_UNKNOWN_AFTER must be greater than zero/],
    ['MAX_BODY_BYTES', '12', /MAX_BODY_BYTES must be at least 1024/],
    ['LOG_LEVEL', 'chatty', /LOG_LEVEL/],
    ['ADMIN_TOKEN', 'short', /ADMIN_TOKEN must be at least 16 characters long$/m],
  ] as const) {
    const r = await hrs(['serve'], { [name]: value });
    t.equal(r.code, 2, `${name}: exit 2`);
    t.equal(lines(r.stderr).length, 1, 'one line');
    t.match(r.stderr, pattern);
    if (name === 'ADMIN_TOKEN') t.notOk(r.stderr.includes('"short"'), 'the admin token is never echoed');
  }
  const r = await hrs(['serve'], { STATUS_STALE_AFTER: '3600', STATUS_UNKNOWN_AFTER: '1800' });
  t.match(r.stderr, /STATUS_STALE_AFTER must be smaller than STATUS_UNKNOWN_AFTER/);
});

t.test('unreachable PostgreSQL or Redis: which URL and how to start one, exit 1', async (t) => {
  const closed = await freePort();
  let r = await hrs(['migrate'], { DATABASE_URL: `postgres://postgres:secret@127.0.0.1:${closed}/hrs` });
  t.equal(r.code, 1);
  t.equal(lines(r.stderr).length, 1);
  t.match(r.stderr, new RegExp(`PostgreSQL at postgres://postgres:\\*\\*\\*@127\\.0\\.0\\.1:${closed}/hrs is not reachable`));
  t.match(r.stderr, /start one \(.*\), point DATABASE_URL at a running server, or leave DATABASE_URL unset and run `hrs serve` or `hrs demo`, which start a local one/);
  t.notOk(r.stderr.includes('secret'), 'the password is not shown');

  const config = testConfig(t);
  r = await hrs(['serve'], { DATABASE_URL: config.databaseUrl, REDIS_URL: `redis://127.0.0.1:${closed}`, PORT: '0' });
  t.equal(r.code, 1);
  t.match(r.stderr, new RegExp(`Redis at redis://127\\.0\\.0\\.1:${closed} is not reachable .*start one \\(.*\\), point REDIS_URL at a running server, or leave REDIS_URL unset`));
});

t.test('migrate creates the database and applies once', async (t) => {
  const config = testConfig(t);
  const env = { DATABASE_URL: config.databaseUrl };
  let r = await hrs(['migrate'], env);
  t.equal(r.code, 0, r.stderr);
  const all = (await readMigrations()).map((m) => `${String(m.version).padStart(4, '0')}_${m.name}`);
  t.equal(r.stdout.trim(), `applied ${all.join(', ')}`);
  r = await hrs(['migrate'], env);
  t.equal(r.code, 0);
  t.equal(r.stdout.trim(), 'database is up to date');
  const sql = connect(config.databaseUrl);
  t.teardown(() => sql.end());
  const rows = await sql`SELECT version, name FROM schema_migrations`;
  t.same(rows.map((x) => `${String(x.version).padStart(4, '0')}_${x.name}`), all);
});

t.test('load: success summary, bad file names the path and exits 1', async (t) => {
  const config = testConfig(t);
  const env = { DATABASE_URL: config.databaseUrl, REDIS_PREFIX: config.redisPrefix };
  const dir = await mkdtemp(join(tmpdir(), 'hrs-cli-'));
  await writeFile(join(dir, 'good.json'), JSON.stringify(baseFixture()));
  let r = await hrs(['load', join(dir, 'good.json')], env);
  t.equal(r.code, 0, r.stderr);
  t.match(r.stdout, /stations \+2 ~0 -0 =0/);
  r = await hrs(['load', join(dir, 'good.json')], env);
  t.match(r.stdout, /stations \+0 ~0 -0 =2/, 'a second load changes nothing');

  const bad = baseFixture();
  (bad.stations[0] as any).layout.products[0].pressure_stage = 500;
  await writeFile(join(dir, 'bad.json'), JSON.stringify(bad));
  r = await hrs(['load', join(dir, 'bad.json')], env);
  t.equal(r.code, 1);
  t.equal(lines(r.stderr).length, 1);
  t.match(r.stderr, /^hrs load: 1 problem\(s\): stations\[0\]\.layout\.products\[0\]\.pressure_stage: must be 350 or 700$/m);

  r = await hrs(['load', join(dir, 'absent.json')], env);
  t.equal(r.code, 1);
  t.match(r.stderr, /cannot read .*absent\.json: ENOENT/);
});
