import { resetLocal as resetLocalServers } from '../../local/reset.js';
import { stateDir } from '../../local/state.js';
import type { Command } from '../command.js';

/** `hrs reset-local`: the local servers' data deleted. */
export const resetLocal: Command = {
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
    const removed = await resetLocalServers(dir);
    io.out(removed.length === 0 ? `nothing to delete in ${dir}` : `deleted ${removed.join(', ')}`);
    return 0;
  },
};
