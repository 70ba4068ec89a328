import { DEFAULT_REDIS_URL } from '../../src/config/config.js';

/**
 * The PostgreSQL and Redis the suite runs against. `npm test` (test/run.ts) sets both: the servers
 * on their default local ports, or local ones it started when nothing answers there.
 */

/** A database of a PostgreSQL server on which the tests create (and drop) databases of their own. */
export const TEST_DATABASE_ROOT = process.env.TEST_DATABASE_ROOT ?? 'postgres://postgres@127.0.0.1:5432/postgres';

export const TEST_REDIS_URL = process.env.REDIS_URL || DEFAULT_REDIS_URL;

/** The test Redis with another database number (`/99`). */
export function testRedisDatabase(index: number): string {
  const url = new URL(TEST_REDIS_URL);
  url.pathname = `/${index}`;
  return url.toString();
}
