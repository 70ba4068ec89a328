import { execFile } from 'node:child_process';
import { accessSync, chmodSync, chownSync, constants, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync, appendFileSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import postgres from 'postgres';
import { withChildren } from './private-services.js';
import { freePort } from './process.js';

/**
 * A PostgreSQL primary and a streaming replica of a test's own, made with the server's own tools
 * (initdb, pg_basebackup -R, pg_ctl promote) on free ports in a fresh temporary folder: what the
 * platform meets in a deployment with a standby, to kill and fail over.
 *
 * - Both listen on 127.0.0.1 only, with trust authentication, replication included (pg_hba.conf).
 * - Synchronous mode: the PRIMARY ONLY names the replica in `synchronous_standby_names` (set with
 *   ALTER SYSTEM after the base backup, so the replica's copy of the settings does not have it) with
 *   `synchronous_commit = on`: a COMMIT is acknowledged once the replica has flushed its WAL. Once
 *   promoted, the replica runs alone and asynchronously (it has no standby to wait for), as a
 *   two-node deployment does until the old primary is rebuilt as its standby.
 * - Small and quick: 16 MB of shared buffers, 40 connections; fsync stays on (what is measured is
 *   what a real server does), initdb skips its own syncs.
 * - As root (PostgreSQL refuses it) the servers run as the `postgres` user, with runuser.
 *
 * The caller stops the pair (`stop()`, in a teardown); a process that exits without doing so still
 * kills both servers on its way out.
 */

export interface PostgresPair {
  /** postgres://postgres@127.0.0.1:P1/DB */
  primaryUrl: string;
  /** postgres://postgres@127.0.0.1:P2/DB */
  replicaUrl: string;
  /** postgres://postgres@127.0.0.1:P1,127.0.0.1:P2/DB?target_session_attrs=read-write */
  url: string;
  /** SIGKILL of the primary's postmaster and its processes: an abrupt machine loss. */
  killPrimary(): Promise<void>;
  /** pg_ctl promote; resolves when the replica accepts writes. */
  promoteReplica(): Promise<void>;
  /** Stops both, removes the data. */
  stop(): Promise<void>;
}

/** The newest PostgreSQL of Debian's packages (/usr/lib/postgresql/<major>/bin), or PG_BIN. */
const BIN =
  process.env.PG_BIN ??
  join(
    '/usr/lib/postgresql',
    (existsSync('/usr/lib/postgresql') ? readdirSync('/usr/lib/postgresql') : []).filter((v) => /^\d+$/.test(v)).sort((a, b) => Number(b) - Number(a))[0] ?? '15',
    'bin',
  );

/** Why a pair cannot run here (a test's `skip`), or undefined: PostgreSQL's server tools, and as root its `postgres` user. */
export function postgresPairMissing(): string | undefined {
  for (const tool of ['initdb', 'pg_ctl', 'postgres', 'pg_basebackup']) {
    try {
      accessSync(join(BIN, tool), constants.X_OK);
    } catch {
      return `${join(BIN, tool)} is not installed (Debian package postgresql, or PG_BIN naming its bin folder)`;
    }
  }
  if (userInfo().uid === 0 && !readFileSync('/etc/passwd', 'utf8').split('\n').some((line) => line.startsWith('postgres:'))) return 'no postgres user to run PostgreSQL as (it refuses root)';
  return undefined;
}
/** The replica's name (its `cluster_name`, which its WAL receiver reports as application_name). */
const REPLICA_NAME = 'hrs_replica';

const asRoot = userInfo().uid === 0;

function run(command: string, args: string[]): Promise<string> {
  const [file, argv] = asRoot ? ['runuser', ['-u', 'postgres', '--', join(BIN, command), ...args]] : [join(BIN, command), args];
  return new Promise((resolve, reject) => {
    execFile(file, argv, { timeout: 60_000 }, (err, stdout, stderr) =>
      err ? reject(new Error(`${command} ${args.join(' ')}: ${err.message} (${String(err.code ?? err.signal)})\n${stderr}${stdout}`)) : resolve(stdout),
    );
  });
}

/** A folder the server's user owns. */
function ownedDir(path: string): string {
  mkdirSync(path, { mode: 0o700 });
  if (asRoot) {
    const [uid, gid] = readFileSync('/etc/passwd', 'utf8')
      .split('\n')
      .find((line) => line.startsWith('postgres:'))!
      .split(':')
      .slice(2, 4)
      .map(Number) as [number, number];
    chownSync(path, uid, gid);
  }
  return path;
}

/** The postmaster's pid, from its lock file; 0 when it does not run. */
function postmasterPid(data: string): number {
  try {
    return Number(readFileSync(join(data, 'postmaster.pid'), 'utf8').split('\n')[0]) || 0;
  } catch {
    return 0;
  }
}

function kill(pids: number[]): void {
  for (const pid of pids) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // Exited.
    }
  }
}

function settings(port: number, socketDir: string, name: string): string {
  return [
    `port = ${port}`,
    `listen_addresses = '127.0.0.1'`,
    `unix_socket_directories = '${socketDir}'`,
    `cluster_name = '${name}'`,
    'wal_level = replica',
    'max_wal_senders = 5',
    'wal_keep_size = 256MB',
    'hot_standby = on',
    'shared_buffers = 16MB',
    'max_connections = 40',
    'fsync = on',
    "log_min_messages = 'warning'",
    '',
  ].join('\n');
}

async function waitUntil(what: string, ms: number, test: () => Promise<boolean>): Promise<void> {
  const until = Date.now() + ms;
  for (;;) {
    if (await test().catch(() => false)) return;
    if (Date.now() > until) throw new Error(`${what} did not happen within ${ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

async function query<T>(url: string, fn: (sql: postgres.Sql) => Promise<T>): Promise<T> {
  const sql = postgres(url, { max: 1, connect_timeout: 2, onnotice: () => {} });
  try {
    return await fn(sql);
  } finally {
    await sql.end({ timeout: 1 });
  }
}

export async function startPostgresPair(options: { synchronous: boolean; database?: string }): Promise<PostgresPair> {
  const database = options.database ?? 'hrs';
  const root = mkdtempSync(join(tmpdir(), 'hrs-pg-pair-'));
  chmodSync(root, 0o755);
  const primary = join(root, 'primary');
  const replica = join(root, 'replica');
  const sockets = ownedDir(join(root, 'sockets'));
  const [p1, p2] = [await freePort(), await freePort()];
  const url = (ports: string, query = '') => `postgres://postgres@${ports}/${database}${query}`;

  const killAll = () => kill([primary, replica].flatMap((data) => (postmasterPid(data) ? withChildren(postmasterPid(data)) : [])));
  process.once('exit', killAll);
  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    for (const data of [replica, primary]) {
      if (postmasterPid(data)) await run('pg_ctl', ['stop', '-D', data, '-m', 'immediate', '-w', '-t', '10']).catch(() => {});
    }
    killAll();
    process.off('exit', killAll);
    rmSync(root, { recursive: true, force: true });
  };

  try {
    ownedDir(primary);
    await run('initdb', ['-D', primary, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--locale=C', '--no-sync']);
    appendFileSync(join(primary, 'postgresql.conf'), settings(p1, sockets, 'hrs_primary'));
    writeFileSync(
      join(primary, 'pg_hba.conf'),
      ['local all all trust', 'host all all 127.0.0.1/32 trust', 'host replication all 127.0.0.1/32 trust', ''].join('\n'),
    );
    await run('pg_ctl', ['start', '-D', primary, '-w', '-t', '30', '-l', join(sockets, 'primary.log')]);
    await query(`postgres://postgres@127.0.0.1:${p1}/postgres`, (sql) => sql`CREATE DATABASE ${sql(database)}`);

    // The base backup copies the settings files; -R adds standby.signal and primary_conninfo.
    await run('pg_basebackup', ['-h', '127.0.0.1', '-p', String(p1), '-U', 'postgres', '-D', ownedDir(replica), '-R', '-X', 'stream', '-c', 'fast', '--no-sync']);
    appendFileSync(join(replica, 'postgresql.conf'), settings(p2, sockets, REPLICA_NAME));
    await run('pg_ctl', ['start', '-D', replica, '-w', '-t', '30', '-l', join(sockets, 'replica.log')]);

    const primaryUrl = url(`127.0.0.1:${p1}`);
    await waitUntil('the replica streaming', 20_000, () =>
      query(primaryUrl, async (sql) => (await sql`SELECT 1 FROM pg_stat_replication WHERE application_name = ${REPLICA_NAME} AND state = 'streaming'`).length === 1),
    );
    if (options.synchronous) {
      // On the primary only: the replica's copy of the settings was taken before.
      await query(primaryUrl, async (sql) => {
        await sql.unsafe(`ALTER SYSTEM SET synchronous_standby_names = '${REPLICA_NAME}'`);
        await sql.unsafe(`ALTER SYSTEM SET synchronous_commit = 'on'`);
        await sql`SELECT pg_reload_conf()`;
      });
      await waitUntil('the replica synchronous', 10_000, () =>
        query(primaryUrl, async (sql) => (await sql`SELECT 1 FROM pg_stat_replication WHERE application_name = ${REPLICA_NAME} AND sync_state = 'sync'`).length === 1),
      );
    }
    return {
      primaryUrl,
      replicaUrl: url(`127.0.0.1:${p2}`),
      url: url(`127.0.0.1:${p1},127.0.0.1:${p2}`, '?target_session_attrs=read-write'),
      async killPrimary() {
        const pid = postmasterPid(primary);
        if (!pid) throw new Error('the primary is not running');
        // The postmaster first, so that it restarts nothing; then every process it had.
        const all = withChildren(pid);
        kill(all);
        await waitUntil('the primary gone', 10_000, async () => all.every((p) => !alive(p)));
      },
      async promoteReplica() {
        await run('pg_ctl', ['promote', '-D', replica, '-w', '-t', '30']);
        await waitUntil('the promoted replica writable', 30_000, () =>
          query(url(`127.0.0.1:${p2}`), async (sql) => {
            const [row] = await sql<{ recovery: boolean }[]>`SELECT pg_is_in_recovery() AS recovery`;
            if (row!.recovery) return false;
            await sql`SELECT txid_current()`;
            return true;
          }),
        );
      },
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}

/** Whether a process still runs (a zombie waiting for its parent does not). */
function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false;
  }
}
