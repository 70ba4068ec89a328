import { connect } from '../../db/connect.js';
import { migrate } from '../../db/migrate.js';

/**
 * A migrated database to copy, made once per test run. Running every migration took the better part
 * of a second for each of the suite's fresh databases; `CREATE DATABASE … TEMPLATE` copies the migrated
 * files instead, in about a third of that. test/run.ts makes the template before tap starts and names it in
 * TEST_DATABASE_TEMPLATE; a test run without it (a file run alone) migrates each database as before.
 *
 * PostgreSQL refuses to copy a database anyone is connected to, and test files run in parallel: the
 * template is closed to connections once migrated, so copies never wait on or fail because of each other.
 */
export const TEMPLATE_VARIABLE = 'TEST_DATABASE_TEMPLATE';

/** The same server as `rootUrl`, database `name`. */
function databaseUrl(rootUrl: string, name: string): string {
  const url = new URL(rootUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

/** Creates database `name` on the server of `rootUrl`, migrates it and closes it to connections. */
export async function createTemplate(rootUrl: string, name: string): Promise<void> {
  await dropTemplate(rootUrl, name);
  const admin = connect(rootUrl, { max: 1 });
  try {
    await admin`CREATE DATABASE ${admin(name)}`;
    const sql = connect(databaseUrl(rootUrl, name), { max: 1 });
    try {
      await migrate(sql);
    } finally {
      await sql.end({ timeout: 1 });
    }
    await admin`ALTER DATABASE ${admin(name)} WITH IS_TEMPLATE true ALLOW_CONNECTIONS false`;
  } finally {
    await admin.end({ timeout: 1 });
  }
}

/** Drops the template (a template must be made an ordinary database again first). */
export async function dropTemplate(rootUrl: string, name: string): Promise<void> {
  const admin = connect(rootUrl, { max: 1 });
  try {
    const [found] = await admin`SELECT 1 AS one FROM pg_database WHERE datname = ${name}`;
    if (!found) return;
    await admin`ALTER DATABASE ${admin(name)} WITH IS_TEMPLATE false`;
    await admin`DROP DATABASE ${admin(name)}`;
  } finally {
    await admin.end({ timeout: 1 });
  }
}

/**
 * Creates the database `url` names as a copy of this run's template; false (and nothing created) when
 * the run has none, so the caller migrates instead.
 */
export async function copyTemplate(url: string): Promise<boolean> {
  const template = process.env[TEMPLATE_VARIABLE];
  if (!template) return false;
  const target = new URL(url);
  const name = decodeURIComponent(target.pathname.replace(/^\//, ''));
  target.pathname = '/postgres';
  const admin = connect(target.toString(), { max: 1 });
  try {
    await admin`CREATE DATABASE ${admin(name)} TEMPLATE ${admin(template)}`;
  } finally {
    await admin.end({ timeout: 1 });
  }
  return true;
}
