import type { Config } from '../config/config.js';
import { stopLocalServers } from '../local/servers.js';
import type { Logger } from '../config/log.js';
import { VERSION } from '../config/version.js';
import { npmWrapper, watchWrapper, type Wrapper } from './wrapper.js';

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
  /** The platform's logger: JSON lines, or with `human`, one line for people per record written there (config/log.ts humanLines). */
  logger: (config: Config, human?: (line: string) => void) => Logger;
}

/** What stops a long-running command: SIGHUP too, which a closing terminal sends. */
export const STOP_SIGNALS: readonly NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];
/** npm passes on a signal sent to its whole process group: its copy comes within this time of the original. */
const REPEAT_MS = 1000;

/** The process-wide state of stopping: one request, then perhaps a second signal that hurries it. */
const stopping = {
  installed: false,
  wrapper: undefined as Wrapper | undefined,
  unwatch: () => {},
  requested: undefined as { signal: string; at: number } | undefined,
  /** Set by untilSignal once the command runs; before, a request stops what was started and exits. */
  onRequest: undefined as ((signal: string) => void) | undefined,
  hurrying: false,
  warn: (fields: Record<string, unknown>, message: string) => {
    process.stderr.write(`hrs: ${message} (${Object.values(fields).join(', ')})\n`);
  },
};

/**
 * From now on SIGINT, SIGTERM and SIGHUP never kill hrs outright, and the npm process that runs it
 * (./wrapper.ts) is watched: the local servers it starts (src/local/) run detached, out of reach of
 * the signals a terminal or `kill -- -PGID` sends, so hrs must stop them itself whatever happens.
 * Called before local servers start; a signal before the command runs stops them and exits (code 1).
 */
export function catchStopSignals(env: Record<string, string | undefined> = process.env): void {
  if (stopping.installed) return;
  stopping.installed = true;
  for (const signal of STOP_SIGNALS) process.on(signal, onSignal);
  stopping.wrapper = npmWrapper(env);
  if (stopping.wrapper) stopping.unwatch = watchWrapper(stopping.wrapper, () => onSignal('npm exited'));
  // A process of `hrs serve --processes` (forked with an IPC channel): its supervisor gone, it stops too.
  if (process.send) process.once('disconnect', () => onSignal('supervisor exited'));
}

function onSignal(signal: string): void {
  const { requested, wrapper } = stopping;
  if (requested === undefined) {
    stopping.requested = { signal, at: Date.now() };
    stopping.unwatch();
    // Once the terminal is gone (SIGHUP) writing to it fails: that must not interrupt the shutdown.
    for (const stream of [process.stdout, process.stderr]) stream.on('error', () => {});
    if (stopping.onRequest) stopping.onRequest(signal);
    else exitAfterStopping(false, signal, 'stopping while starting: the local servers it started stop first');
    return;
  }
  // npm's copy (relayed through its script shell too, when one sits between): not a second signal.
  if (wrapper && signal === requested.signal && Date.now() - requested.at < REPEAT_MS) return;
  exitAfterStopping(true, signal, 'second signal: exiting at once (local servers stop immediately)');
}

/** Stops the local servers (at once for a second signal), then exits with code 1. */
function exitAfterStopping(now: boolean, signal: string, message: string): void {
  if (now) {
    if (stopping.hurrying) return;
    stopping.hurrying = true;
  }
  stopping.warn({ signal }, message);
  void stopLocalServers(now)
    .catch(() => {})
    .finally(() => process.exit(1));
}

/**
 * Runs until SIGTERM, SIGINT or SIGHUP (or until the npm process running hrs exits), then `stop`, after
 * which any local server still running is stopped too. A second signal stops the local servers at
 * once (PostgreSQL as `pg_ctl stop -m immediate` does) and exits with code 1.
 */
export function untilSignal(log: Logger, stop: (signal: string) => Promise<void>): Promise<void> {
  catchStopSignals();
  stopping.warn = (fields, message) => log.warn(fields, message);
  return new Promise((resolve, reject) => {
    stopping.onRequest = (signal) => {
      stop(signal)
        .finally(() => stopLocalServers(false))
        .then(resolve, reject);
    };
  });
}

/** `hrs 0.1.0`: what `hrs --version` and `hrs version` print. */
export function versionLine(): string {
  return `hrs ${VERSION}`;
}
