import postgres from 'postgres';
import { redactUrl } from '../src/config.js';

export type Sql = postgres.Sql;
export type Tx = postgres.TransactionSql;

/** Raised when PostgreSQL cannot be reached or used at start. */
export class DatabaseUnavailableError extends Error {
  readonly code = 'DATABASE_UNAVAILABLE';
}

const HOW_TO_START =
  'start one with `pg_ctlcluster <version> main start`, `docker compose up -d postgres`, ' +
  'or point DATABASE_URL at a running server';

export function connect(url: string, options: postgres.Options<{}> = {}): Sql {
  return postgres(url, {
    max: 10,
    onnotice: () => {},
    connect_timeout: 5,
    ...options,
  });
}

function databaseName(url: string): string {
  const name = decodeURIComponent(new URL(url).pathname.replace(/^\//, ''));
  if (!name) throw new DatabaseUnavailableError(`DATABASE_URL ${redactUrl(url)} names no database`);
  return name;
}

function unreachable(url: string, err: unknown): DatabaseUnavailableError {
  const reason = err instanceof Error ? err.message : String(err);
  return new DatabaseUnavailableError(
    `PostgreSQL at ${redactUrl(url)} is not reachable (${reason}); ${HOW_TO_START}`,
  );
}

/** Creates the database DATABASE_URL names when it does not exist yet. */
export async function ensureDatabase(url: string): Promise<void> {
  const name = databaseName(url);
  const admin = new URL(url);
  admin.pathname = '/postgres';
  const sql = connect(admin.toString(), { max: 1 });
  try {
    const [found] = await sql`SELECT 1 AS one FROM pg_database WHERE datname = ${name}`;
    if (!found) await sql`CREATE DATABASE ${sql(name)}`;
  } catch (err) {
    // Another process created it between our look and our CREATE.
    if ((err as { code?: string }).code === '42P04') return;
    if (err instanceof postgres.PostgresError) throw err;
    throw unreachable(url, err);
  } finally {
    await sql.end({ timeout: 1 });
  }
}

/** Opens the pool and proves the server answers. */
export async function openDatabase(url: string, options: postgres.Options<{}> = {}): Promise<Sql> {
  const sql = connect(url, options);
  try {
    await sql`SELECT 1`;
  } catch (err) {
    await sql.end({ timeout: 1 }).catch(() => {});
    if ((err as { code?: string }).code === '3D000') {
      throw new DatabaseUnavailableError(
        `database ${databaseName(url)} does not exist at ${redactUrl(url)}; run \`hrs migrate\` first`,
      );
    }
    throw unreachable(url, err);
  }
  return sql;
}
