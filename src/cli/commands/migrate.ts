import { openMigrated } from '../../../db/migrate.js';
import type { Command } from '../command.js';
import { configInUse } from '../servers.js';

/** `hrs migrate`: the database created when needed, every pending migration applied. */
export const migrate: Command = {
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
};
