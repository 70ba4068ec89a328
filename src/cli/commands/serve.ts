import { availableParallelism } from 'node:os';
import { startPlatform } from '../../platform.js';
import { UsageError, untilSignal, type Command } from '../command.js';
import { SERVERS_HELP, configWithServers } from '../servers.js';
import { serveAsOneProcess } from '../supervisor/child.js';
import { PROCESS_SLOT } from '../supervisor/messages.js';
import { serveProcesses } from '../supervisor/parent.js';

/** --processes: a whole number from 1, or `auto` (one per core Node may use). */
function processCount(value: unknown): number {
  if (value === undefined) return 1;
  if (value === 'auto') return availableParallelism();
  const count = Number(value);
  if (typeof value !== 'string' || !/^[0-9]+$/.test(value) || count < 1) throw new UsageError(`--processes takes a whole number from 1, or auto (given "${String(value)}")`);
  return count;
}

/** `hrs serve`: the platform, with local servers where none is configured, until a signal. */
export const serve: Command = {
  summary: 'serve the import, export and admin APIs (and run the workers)',
  usage: 'hrs serve [--no-workers] [--embedded] [--processes N|auto]',
  help:
    'Creates and migrates the database when needed, then serves HTTP on HOST:PORT until SIGTERM, SIGINT or\n' +
    'SIGHUP (or until the npm process running it exits: `npm start`, `npx hrs serve`).\n' +
    'The BullMQ workers run in the same process unless --no-workers is given (run `hrs worker` elsewhere).\n' +
    'A first signal shuts down in order, the local servers last; a second one stops them at once and exits\n' +
    '(code 1).\n\n' +
    '--processes N serves HOST:PORT from N processes, to use N cores (auto: one per core; default 1, a single\n' +
    'process as above). The kernel shares the connections out between them. This process then supervises:\n' +
    'it starts the local servers and migrates once, runs the N server processes and, unless --no-workers, one\n' +
    '`hrs worker` process; restarts any that dies (after a pause that grows with every death in a row); and\n' +
    'on a signal stops the servers (each finishing its requests), then the worker, then the local servers.\n' +
    '/metrics, whichever process answers, covers them all: counters summed, gauges per process.\n\n' +
    SERVERS_HELP,
  options: { 'no-workers': { type: 'boolean' }, embedded: { type: 'boolean' }, processes: { type: 'string' } },
  positionals: 0,
  async run({ values }, io) {
    if (io.env[PROCESS_SLOT] !== undefined) return serveAsOneProcess(io);
    const processes = processCount(values.processes);
    if (processes > 1) return serveProcesses(processes, { embedded: values.embedded === true, workers: values['no-workers'] !== true }, io);
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
};
