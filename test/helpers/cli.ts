import { Writable } from 'node:stream';
import type { Io } from '../../src/cli/command.js';
import { main } from '../../src/cli/main.js';
import { loadConfig } from '../../src/config/config.js';
import { createLogger } from '../../src/config/log.js';
import type { Finished } from './process.js';

/**
 * `hrs ARGS` run in this process through the command's own entry (`main` with an `Io`): what it prints
 * on stdout and stderr (its log lines on stdout, as the process writes them) and its exit code, in the
 * shape `hrs()` of ./process.js gives for a spawned one. The environment is the test's plus `env`, with
 * LOG_LEVEL=warn as a spawned `hrs` gets. What only a process can show (signals, the loader, the built
 * binary) stays with the spawned runs in test/system/.
 */
export async function hrsHere(args: string[], env: Record<string, string | undefined> = {}): Promise<Finished> {
  const merged: Record<string, string | undefined> = { ...process.env, LOG_LEVEL: 'warn', ...env };
  let stdout = '';
  let stderr = '';
  const logs = new Writable({
    write(chunk: Buffer, _encoding, done) {
      stdout += chunk.toString();
      done();
    },
  });
  const io: Io = {
    out: (line) => (stdout += `${line}\n`),
    err: (line) => (stderr += `${line}\n`),
    env: merged,
    config: (local = {}) =>
      loadConfig({
        ...merged,
        ...(local.databaseUrl ? { DATABASE_URL: local.databaseUrl } : {}),
        ...(local.redisUrl ? { REDIS_URL: local.redisUrl } : {}),
      }),
    logger: (config) => createLogger(config.logLevel, logs),
  };
  const code = await main(args, io);
  return { code, signal: null, stdout, stderr };
}
