import { parseArgs } from 'node:util';
import { ConfigError, loadConfig } from '../config/config.js';
import { createLogger, humanLines } from '../config/log.js';
import { FixtureError } from '../registry/file/load.js';
import { UsageError, versionLine, type Command, type Io } from './command.js';
import { demo } from './commands/demo.js';
import { forecast } from './commands/forecast.js';
import { history } from './commands/history.js';
import { load } from './commands/load.js';
import { migrate } from './commands/migrate.js';
import { resetLocal } from './commands/reset-local.js';
import { serve } from './commands/serve.js';
import { version } from './commands/version.js';
import { worker } from './commands/worker.js';

/** The `hrs` command: dispatches to one command of src/cli/commands/ and turns its outcome into an exit code. */

/** Every command by name, in the order `hrs --help` lists them. */
const COMMANDS: Record<string, Command> = {
  migrate,
  serve,
  worker,
  demo,
  'reset-local': resetLocal,
  history,
  forecast,
  version,
  load,
};

function usage(): string {
  const width = Math.max(...Object.keys(COMMANDS).map((name) => name.length));
  return [
    'Usage: hrs COMMAND [options]',
    '',
    'Commands:',
    ...Object.entries(COMMANDS).map(([name, c]) => `  ${name.padEnd(width)}  ${c.summary}`),
    '',
    'Run `hrs COMMAND --help` for a command, `hrs --version` for the version.',
    'Configuration comes from the environment (docs/configuration.md lists every variable), for example:',
    '  PORT=9090       where `hrs serve` and `hrs demo` listen (default 8080; HOST, default 127.0.0.1)',
    '  DATABASE_URL    your own PostgreSQL; REDIS_URL your own Redis (unset: local ones, see `hrs serve --help`)',
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
  logger: (config, human) => createLogger(config.logLevel, human ? humanLines(human) : undefined),
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

function oneLine(err: unknown): string {
  if (err instanceof FixtureError) return `${err.problems.length} problem(s): ${err.problems.join('; ')}`;
  const message = err instanceof Error ? err.message : String(err);
  return message.replace(/\s*\n\s*/g, ' ');
}
