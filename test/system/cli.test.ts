/**
 * The `hrs` command as a process: what only a process shows. test/platform/cli.test.ts runs every
 * command's cases through the same entry in-process; here a few of them run through bin/hrs.js as a
 * user starts it (the built dist/ when it is newer than the sources, else the sources through tsx), so
 * the exit codes reach the shell, usage goes to the right stream, and the loader and the migrations
 * are found from the binary.
 */
import t from 'tap';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readMigrations } from '../../db/migrate.js';
import { baseFixture } from '../helpers/fixtures.js';
import { testConfig } from '../helpers/platform.js';
import { freePort, hrs } from '../helpers/process.js';

const lines = (text: string) => text.trim().split('\n').filter(Boolean);

t.test('usage: help on stdout with 0, no command on stderr with 2, an unknown one in one line with 2', async (t) => {
  let r = await hrs(['--help']);
  t.equal(r.code, 0);
  t.match(r.stdout, /^Usage: hrs COMMAND/m);
  r = await hrs([]);
  t.equal(r.code, 2, 'no command is a usage error');
  t.match(r.stderr, /Usage: hrs COMMAND/);
  t.equal(r.stdout, '', 'nothing on stdout');
  r = await hrs(['frobnicate']);
  t.equal(r.code, 2);
  t.equal(lines(r.stderr).length, 1, 'one line on stderr');
  t.match(r.stderr, /^hrs: unknown command "frobnicate"/);
});

t.test('a setting refused: exit 2, the variable named; PostgreSQL not answering: exit 1, the URL without its password', async (t) => {
  let r = await hrs(['serve'], { PORT: 'eighty' });
  t.equal(r.code, 2);
  t.match(r.stderr, /PORT must be a port number \(got "eighty"\)/);
  const closed = await freePort();
  r = await hrs(['migrate'], { DATABASE_URL: `postgres://postgres:secret@127.0.0.1:${closed}/hrs` });
  t.equal(r.code, 1);
  t.match(r.stderr, new RegExp(`PostgreSQL at postgres://postgres:\\*\\*\\*@127\\.0\\.0\\.1:${closed}/hrs is not reachable`));
  t.notOk(r.stderr.includes('secret'), 'the password is not shown');
});

t.test('migrate and load from the binary: the migrations and the registry file found, exit codes to the shell', async (t) => {
  const config = testConfig(t);
  const env = { DATABASE_URL: config.databaseUrl, REDIS_PREFIX: config.redisPrefix };
  let r = await hrs(['migrate'], env);
  t.equal(r.code, 0, r.stderr);
  const all = (await readMigrations()).map((m) => `${String(m.version).padStart(4, '0')}_${m.name}`);
  t.equal(r.stdout.trim(), `applied ${all.join(', ')}`);
  const dir = await mkdtemp(join(tmpdir(), 'hrs-cli-'));
  await writeFile(join(dir, 'good.json'), JSON.stringify(baseFixture()));
  r = await hrs(['load', join(dir, 'good.json')], env);
  t.equal(r.code, 0, r.stderr);
  t.match(r.stdout, /stations \+2 ~0 -0 =0/);
  r = await hrs(['load', join(dir, 'absent.json')], env);
  t.equal(r.code, 1);
  t.match(r.stderr, /cannot read .*absent\.json: ENOENT/);
});
