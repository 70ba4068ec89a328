import { startPlatform } from '../../platform.js';
import { untilSignal, type Command } from '../command.js';
import { SERVERS_HELP, configWithServers } from '../servers.js';

/** `hrs serve`: the platform, with local servers where none is configured, until a signal. */
export const serve: Command = {
  summary: 'serve the import, export and admin APIs (and run the workers)',
  usage: 'hrs serve [--no-workers] [--embedded]',
  help:
    'Creates and migrates the database when needed, then serves HTTP on HOST:PORT until SIGTERM, SIGINT or\n' +
    'SIGHUP (or until the npm process running it exits: `npm start`, `npx hrs serve`).\n' +
    'The BullMQ workers run in the same process unless --no-workers is given (run `hrs worker` elsewhere).\n' +
    'A first signal shuts down in order, the local servers last; a second one stops them at once and exits\n' +
    '(code 1).\n\n' +
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
};
