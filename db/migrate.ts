import { createHash } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { ensureDatabase, openDatabase, type DatabaseTimeouts, type Sql } from './connect.js';

const MIGRATIONS_DIR = fileURLToPath(new URL('./migrations/', import.meta.url));
// Any constant; two processes migrating at once queue on it.
const MIGRATION_LOCK = 0x4852535f6d6967n;

export interface Migration {
  version: number;
  name: string;
  sql: string;
  checksum: string;
}

export class MigrationError extends Error {
  readonly code = 'MIGRATION_INVALID';
}

/** Reads `NNNN_name.sql` files; numbering must start at 1 and have no gaps or repeats. */
export async function readMigrations(dir = MIGRATIONS_DIR): Promise<Migration[]> {
  const files = (await readdir(dir)).filter((file) => file.endsWith('.sql')).sort();
  const migrations: Migration[] = [];
  for (const file of files) {
    const match = /^(\d{4})_([a-z0-9_]+)\.sql$/.exec(file);
    if (!match) throw new MigrationError(`migration file ${file} is not named NNNN_name.sql`);
    const version = Number(match[1]);
    if (version !== migrations.length + 1) {
      throw new MigrationError(`migration ${file} breaks the numbering: expected ${migrations.length + 1}`);
    }
    const sql = await readFile(dir + file, 'utf8');
    const checksum = createHash('sha256').update(sql).digest('hex');
    migrations.push({ version, name: match[2]!, sql, checksum });
  }
  return migrations;
}

/**
 * Applies every pending migration in one transaction and records each. Forward-only: an applied
 * migration whose file changed since is an error, not something to re-run.
 */
export async function migrate(sql: Sql, dir?: string): Promise<Migration[]> {
  const migrations = await readMigrations(dir);
  return sql.begin(async (tx) => {
    await tx`SELECT pg_advisory_xact_lock(${MIGRATION_LOCK.toString()}::bigint)`;
    await tx`
      CREATE TABLE IF NOT EXISTS schema_migrations (
        version    integer PRIMARY KEY,
        name       text NOT NULL,
        checksum   text NOT NULL,
        applied_at timestamptz NOT NULL DEFAULT clock_timestamp()
      )`;
    const applied = await tx<{ version: number; name: string; checksum: string }[]>`
      SELECT version, name, checksum FROM schema_migrations ORDER BY version`;
    for (const row of applied) {
      const known = migrations[row.version - 1];
      if (!known) {
        throw new MigrationError(`the database has migration ${row.version} (${row.name}) that this code does not know`);
      }
      if (known.checksum !== row.checksum) {
        throw new MigrationError(`migration ${row.version} (${row.name}) changed after it was applied`);
      }
    }
    const pending = migrations.slice(applied.length);
    for (const migration of pending) {
      await tx.unsafe(migration.sql);
      await tx`
        INSERT INTO schema_migrations (version, name, checksum)
        VALUES (${migration.version}, ${migration.name}, ${migration.checksum})`;
    }
    return pending;
  });
}

/**
 * What every command that uses the database does first: create the database `url` names when it
 * does not exist, open a pool, apply pending migrations. Returns the pool and what was applied; on a
 * failure the pool is closed again and the error thrown.
 */
export async function openMigrated(url: string, options: DatabaseTimeouts = {}): Promise<{ sql: Sql; applied: Migration[] }> {
  await ensureDatabase(url);
  // Migrations run unbounded on a pool of their own (they may wait for another instance's or take long).
  const migrating = await openDatabase(url, { max: 1 });
  let applied: Migration[];
  try {
    applied = await migrate(migrating);
  } finally {
    await migrating.end({ timeout: 1 });
  }
  return { sql: await openDatabase(url, options), applied };
}
