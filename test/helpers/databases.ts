import { appendFileSync, readFileSync, writeFileSync } from 'node:fs';
import { connect } from '../../db/connect.js';
import { migrate } from '../../db/migrate.js';

/**
 * A migrated database to copy, made once per test run. Running every migration took the better part
 * of a second for each of the suite's fresh databases; `CREATE DATABASE … TEMPLATE` copies the migrated
 * files instead, in about a third of that. test/run.ts makes the template before tap starts and names
 * it in TEST_DATABASE_TEMPLATE; a test run without it (a file run alone) migrates each database as before.
 *
 * PostgreSQL refuses to copy a database anyone is connected to, and test files run in parallel: the
 * template is closed to connections once migrated, so copies never wait on or fail because of each other.
 */
export const TEMPLATE_VARIABLE = 'TEST_DATABASE_TEMPLATE';

/**
 * A file test/run.ts names for the databases tests are done with. PostgreSQL checkpoints on every DROP
 * DATABASE (one to ten seconds on a busy machine): a test that waited for it spent that long after its
 * last assertion. Under test/run.ts the test writes the name here and run.ts drops it meanwhile, many
 * at once (concurrent drops share their checkpoints).
 */
export const DROPS_VARIABLE = 'TEST_DATABASE_DROPS';

/**
 * The server (`host:port`) the template and the list of databases to drop belong to. Some tests start
 * a PostgreSQL of their own (to freeze or stop it): a database there is migrated and dropped by the
 * test itself, as without test/run.ts.
 */
export const SERVER_VARIABLE = 'TEST_DATABASE_SERVER';

/** `host:port` of a PostgreSQL URL. */
export const serverOf = (url: string) => {
  const parsed = new URL(url);
  return `${parsed.hostname}:${parsed.port || '5432'}`;
};

/** Whether `url` is on the server this run's template and drop list are for. */
const onRunServer = (url: string) => process.env[SERVER_VARIABLE] !== undefined && serverOf(url) === process.env[SERVER_VARIABLE];

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
 * the run has none, or `url` is on another server, so the caller migrates instead.
 */
export async function copyTemplate(url: string): Promise<boolean> {
  const template = process.env[TEMPLATE_VARIABLE];
  if (!template || !onRunServer(url)) return false;
  const target = new URL(url);
  const name = decodeURIComponent(target.pathname.replace(/^\//, ''));
  target.pathname = '/postgres';
  const admin = connect(target.toString(), { max: 1 });
  try {
    // FILE_COPY (PostgreSQL 15 and later) copies the template's files as they are. The default since 15,
    // WAL_LOG, writes each of its pages through shared buffers and into the WAL: with ~300 copies a run
    // that was 2.3 GB of WAL and most of the 3.6 GB the checkpoints and backends wrote; with FILE_COPY 1 GB.
    const [server] = await admin<{ version: number }[]>`SELECT current_setting('server_version_num')::int AS version`;
    if ((server?.version ?? 0) >= 150000) await admin`CREATE DATABASE ${admin(name)} TEMPLATE ${admin(template)} STRATEGY = FILE_COPY`;
    else await admin`CREATE DATABASE ${admin(name)} TEMPLATE ${admin(template)}`;
  } finally {
    await admin.end({ timeout: 1 });
  }
  return true;
}

/**
 * Drops database `name` now, or leaves it to test/run.ts to drop soon when the run has a list of
 * databases to drop (nothing of the test uses it any more: this runs after its pools are closed).
 */
export async function releaseDatabase(rootUrl: string, name: string): Promise<void> {
  const list = process.env[DROPS_VARIABLE];
  if (list && onRunServer(rootUrl)) {
    appendFileSync(list, `${name}\n`);
    return;
  }
  await dropDatabase(rootUrl, name);
}

/** Drops database `name` on the server of `rootUrl`, closing whatever connections it still has. */
export async function dropDatabase(rootUrl: string, name: string): Promise<void> {
  const sql = connect(rootUrl, { max: 1 });
  try {
    await sql`DROP DATABASE IF EXISTS ${sql(name)} WITH (FORCE)`;
  } finally {
    await sql.end({ timeout: 1 });
  }
}

/**
 * How many databases are dropped at once: each DROP DATABASE asks for a checkpoint, and the requests of
 * concurrent drops coalesce, so a round costs one or two (16 at once: each holds a connection).
 * Dropped as tests released them, a few at a time, the suite's 300 databases made 300 checkpoints a
 * run: the checkpointer wrote every page dirtied since the last one each time (over 2 GB a run), and
 * every page's next change wrote it whole to the WAL again.
 */
const DROPS_AT_ONCE = 16;

/**
 * Drops the databases listed in `list` (see DROPS_VARIABLE) while the tests run, in rounds of
 * DROPS_AT_ONCE; `finish` drops what is left and resolves when all are gone.
 */
export function dropReleased(rootUrl: string, list: string): { finish(): Promise<void> } {
  writeFileSync(list, '');
  let dropped = 0;
  let finishing = false;
  const dropOne = (name: string) =>
    dropDatabase(rootUrl, name).catch((err: Error) => process.stderr.write(`# could not drop ${name}: ${err.message}\n`));
  const dropListed = async () => {
    // The last piece is a name still being written, or the empty rest after the last newline.
    const names = readFileSync(list, 'utf8').split('\n').slice(0, -1).slice(dropped);
    if (!finishing && names.length < DROPS_AT_ONCE) return;
    for (let i = 0; i < names.length; i += DROPS_AT_ONCE) await Promise.all(names.slice(i, i + DROPS_AT_ONCE).map(dropOne));
    dropped += names.length;
  };
  const dropping = (async () => {
    while (!finishing) {
      await dropListed();
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
    await dropListed();
  })();
  return {
    finish() {
      finishing = true;
      return dropping;
    },
  };
}
