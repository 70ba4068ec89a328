import type { Config } from '../config.js';
import type { Logger } from '../log.js';
import { VERSION } from '../version.js';

/**
 * What every `hrs` command is (src/cli/commands/<command>.ts, one file each) and what it is handed:
 * the dispatcher (src/cli/main.ts) parses its arguments and turns its errors into exit codes.
 */

/** A wrong invocation: exit code 2. */
export class UsageError extends Error {}

export interface Command {
  summary: string;
  usage: string;
  help: string;
  options?: Record<string, { type: 'boolean' | 'string' }>;
  positionals: number;
  run(args: { positionals: string[]; values: Record<string, unknown> }, io: Io): Promise<number>;
}

export interface Io {
  out: (line: string) => void;
  err: (line: string) => void;
  /** The environment the command reads. */
  env: Record<string, string | undefined>;
  /** The configuration from `env`, with the URLs of local servers in place of the defaults. */
  config: (local?: { databaseUrl?: string; redisUrl?: string }) => Config;
  logger: (config: Config) => Logger;
}

/** Runs until SIGTERM or SIGINT, then `stop`; a second signal exits at once. */
export function untilSignal(log: Logger, stop: (signal: string) => Promise<void>): Promise<void> {
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

/** `hrs 0.1.0`: what `hrs --version` and `hrs version` print. */
export function versionLine(): string {
  return `hrs ${VERSION}`;
}
