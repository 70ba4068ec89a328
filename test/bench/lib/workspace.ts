/**
 * What every benchmark scenario sets up and takes down the same way: a throwaway database and Redis
 * prefix named after the scenario and this process, the child processes it starts, and the load
 * generator's version for the printed header.
 */
import { createRequire } from 'node:module';
import { dropDatabase } from '../../helpers/platform.js';
import type { Child } from './child.js';
import { dropRedisKeys } from './redis-keys.js';

const ROOT_URL = process.env.TEST_DATABASE_ROOT ?? 'postgres://postgres@127.0.0.1:5432/postgres';

export interface Workspace {
  /** Database name, also the Redis prefix. */
  database: string;
  databaseUrl: URL;
}

/** `hrs_bench_<name>_<pid>` on the PostgreSQL TEST_DATABASE_ROOT names (default: local, user postgres). */
export function workspace(name: string): Workspace {
  const database = `hrs_bench_${name}_${process.pid}`;
  const databaseUrl = new URL(ROOT_URL);
  databaseUrl.pathname = `/${database}`;
  return { database, databaseUrl };
}

/** Stops the children, drops the database and the Redis keys under its prefix (reporting, not throwing, a Redis failure). */
export async function tearDown(space: Workspace, children: Iterable<{ child: Child } | undefined>): Promise<void> {
  await Promise.all([...children].map((server) => server?.child.stop()));
  await dropDatabase(space.database);
  await dropRedisKeys(space.database).catch((err: unknown) =>
    process.stderr.write(`removing the Redis keys under ${space.database}: failed (${(err as Error).message})\n`),
  );
}

/** The installed autocannon's version. */
export function autocannonVersion(): string {
  return createRequire(import.meta.url)('autocannon/package.json').version as string;
}
