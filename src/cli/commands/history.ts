import { openMigrated } from '../../../db/migrate.js';
import { publishedUntil } from '../../../db/queries/history.js';
import { readRegistryRows } from '../../../db/queries/registry.js';
import { historyJobs, materialize, rollUpHours } from '../../../workers/history/jobs.js';
import { httpDate } from '../../http/dates.js';
import { Registry } from '../../registry/registry.js';
import { UsageError, type Command } from '../command.js';
import { configInUse } from '../servers.js';

/** `hrs history run`: the status history's jobs, now. */
export const history: Command = {
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
};
