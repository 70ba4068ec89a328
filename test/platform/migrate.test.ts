import t from 'tap';
import { cp, mkdtemp, writeFile, appendFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { connect, ensureDatabase } from '../../db/connect.js';
import { migrate, readMigrations, MigrationError } from '../../db/migrate.js';
import { testConfig } from '../helpers/platform.js';

const SHIPPED = fileURLToPath(new URL('../../db/migrations/', import.meta.url));

t.test('migrations apply once, in one transaction, and are recorded', async (t) => {
  const config = testConfig(t);
  await ensureDatabase(config.databaseUrl);
  await ensureDatabase(config.databaseUrl); // idempotent
  const sql = connect(config.databaseUrl);
  t.teardown(() => sql.end());
  const dir = await mkdtemp(join(tmpdir(), 'hrs-migrations-'));
  await cp(SHIPPED, dir, { recursive: true });

  const applied = await migrate(sql, `${dir}/`);
  t.same(applied.map((m) => m.version), (await readMigrations()).map((m) => m.version));
  t.same(await migrate(sql, `${dir}/`), [], 'a second run applies nothing');
  const [count] = await sql`SELECT count(*)::int AS n FROM fuelling_options`;
  t.equal(count!.n, 4, 'reference data seeded once');

  const next = `${String(applied.length + 1).padStart(4, '0')}_broken.sql`;
  await writeFile(join(dir, next), 'CREATE TABLE half_done (id int); SELECT * FROM no_such_table;');
  await t.rejects(migrate(sql, `${dir}/`), /no_such_table/);
  const [table] = await sql`SELECT to_regclass('half_done') AS t`;
  t.equal(table!.t, null, 'a failed migration leaves nothing behind');
  t.equal((await sql`SELECT count(*)::int AS n FROM schema_migrations`)[0]!.n, applied.length);

  await writeFile(join(dir, next), 'CREATE TABLE extra (id int);');
  await appendFile(join(dir, '0001_registry.sql'), '\n-- edited\n');
  await t.rejects(migrate(sql, `${dir}/`), { message: 'migration 1 (registry) changed after it was applied' });
});

t.test('numbering is checked', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'hrs-numbering-'));
  await writeFile(join(dir, '0001_a.sql'), 'SELECT 1;');
  await writeFile(join(dir, '0003_c.sql'), 'SELECT 1;');
  await t.rejects(readMigrations(`${dir}/`), new MigrationError('migration 0003_c.sql breaks the numbering: expected 2'));
  await writeFile(join(dir, '0002_b.sql'), 'SELECT 1;');
  t.same((await readMigrations(`${dir}/`)).map((m) => m.name), ['a', 'b', 'c']);
  await writeFile(join(dir, 'notes.sql'), 'SELECT 1;');
  await t.rejects(readMigrations(`${dir}/`), /notes\.sql is not named NNNN_name\.sql/);
});

t.test('0009 partitions the readings already kept: every row moves, ids go on', async (t) => {
  const config = testConfig(t);
  await ensureDatabase(config.databaseUrl);
  const sql = connect(config.databaseUrl);
  t.teardown(() => sql.end());
  const dir = await mkdtemp(join(tmpdir(), 'hrs-migrations-'));
  await cp(SHIPPED, dir, { recursive: true, filter: (path) => !/\/0009_|\/00(1\d|[2-9]\d)_/.test(path) });
  t.same((await migrate(sql, `${dir}/`)).map((m) => m.version).at(-1), 8, 'up to 0008');
  await sql`INSERT INTO operators (id, name) VALUES ('op', 'Op')`;
  await sql`INSERT INTO stations (hrs_id, operator_id, name) VALUES ('OLDIE', 'op', 'Old station')`;
  await sql`INSERT INTO originators (id, name) VALUES ('mon', 'Mon')`;
  // Readings of 60 days ago, of yesterday and of now.
  for (const days of [60, 1, 0]) {
    await sql`INSERT INTO signal_history (hrs_id, category, originator_id, measured_at, received_at, payload)
      VALUES ('OLDIE', 'availability', 'mon', now() - ${days} * interval '1 day', now() - ${days} * interval '1 day', ${sql.json({ days })})`;
  }
  const before = await sql<{ id: string; days: number }[]>`SELECT id::text, (payload->>'days')::int AS days FROM signal_history ORDER BY id`;
  await cp(SHIPPED, dir, { recursive: true });
  t.same((await migrate(sql, `${dir}/`)).map((m) => m.version)[0], 9, 'then 0009 and on');
  const after = await sql<{ id: string; days: number; part: string }[]>`
    SELECT id::text, (payload->>'days')::int AS days, tableoid::regclass::text AS part FROM signal_history ORDER BY id`;
  t.same(after.map((r) => [r.id, r.days]), before.map((r) => [r.id, r.days]), 'every reading kept, with its id');
  t.ok(after.every((r) => /^signal_history_w\d{8}$/.test(r.part)), 'each in its week\'s partition, none in DEFAULT');
  await sql`INSERT INTO signal_history (hrs_id, category, originator_id, measured_at, received_at, payload)
    VALUES ('OLDIE', 'availability', 'mon', now(), now(), '{}')`;
  const [next] = await sql<{ id: string }[]>`SELECT max(id)::text AS id FROM signal_history`;
  t.equal(BigInt(next!.id), BigInt(before.at(-1)!.id) + 1n, 'new readings number on');
});
