import { openDatabase } from '../../../db/connect.js';
import { readRegistryRows } from '../../../db/queries/registry.js';
import { startWorkers } from '../../../workers/index.js';
import { closeRedis, openRedis, watchRedis } from '../../infra/redis.js';
import { Registry } from '../../registry/registry.js';
import { untilSignal, type Command } from '../command.js';
import { configInUse } from '../servers.js';

/** `hrs worker`: only the BullMQ workers, until a signal. */
export const worker: Command = {
  summary: 'run only the BullMQ workers (mail, call log), to scale them out',
  usage: 'hrs worker',
  help:
    'Runs the background workers against REDIS_URL (and DATABASE_URL, where call logs go; migrated by\n' +
    '`hrs migrate` or `hrs serve`) until SIGTERM, SIGINT or SIGHUP; active jobs finish before it exits.',
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
};
