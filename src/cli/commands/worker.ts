import { openDatabase } from '../../../db/connect.js';
import { readRegistryRows } from '../../../db/queries/registry.js';
import { startWorkers } from '../../../workers/index.js';
import { QUEUES, type QueueName } from '../../../workers/queues.js';
import { WEBHOOK_WORKER } from '../../../workers/webhooks/processor.js';
import { namespaceFields, resolveNamespace } from '../../infra/namespace.js';
import { databaseIdentity } from '../../../db/queries/platform.js';
import { closeRedis, openRedis } from '../../infra/redis.js';
import { watchRedis } from '../../infra/redis-outage.js';
import { Registry } from '../../registry/registry.js';
import { untilSignal, type Command } from '../command.js';
import { configInUse } from '../servers.js';

/**
 * The workers, as `hrs --help` and `hrs worker --help` name them: one entry per BullMQ queue of
 * workers/queues.ts (a queue added there without one here does not typecheck), and the webhook worker,
 * whose queue is PostgreSQL.
 */
export const WORKERS: Record<QueueName | typeof WEBHOOK_WORKER, { name: string; does: string }> = {
  [QUEUES.mail]: { name: 'mail', does: 'sends the token e-mails and sweeps up unsent ones (only with SMTP_URL set)' },
  [QUEUES.callLog]: { name: 'call log', does: "writes the import APIs' call logs to PostgreSQL" },
  [QUEUES.history]: { name: 'status history', does: 'materialises the status history, rolls up its hours, keeps its partitions' },
  [QUEUES.changeLog]: { name: 'change log', does: "writes the events' ended changes and prunes the change log (delta sync, webhooks), every 30 s" },
  [WEBHOOK_WORKER]: { name: 'webhooks', does: 'delivers the change log to webhook subscriptions, signed (only with WEBHOOK_SECRET_KEY set)' },
  [QUEUES.sandbox]: { name: 'sandbox', does: "posts the export v1.1 sandbox's simulated signals every minute (unless SANDBOX=off)" },
};

const workerList = Object.values(WORKERS);

/** `hrs worker`: only the BullMQ workers, until a signal. */
export const worker: Command = {
  summary: `run only the BullMQ workers (${workerList.map((w) => w.name).join(', ')}), to scale them out`,
  usage: 'hrs worker',
  help:
    'Runs the background workers against REDIS_URL and DATABASE_URL (migrated by `hrs migrate` or `hrs serve`)\n' +
    'until SIGTERM, SIGINT or SIGHUP; active jobs finish before it exits. `hrs serve` runs the same workers in its own\n' +
    'process unless --no-workers is given. The workers:\n' +
    workerList.map((w) => `  ${w.name}: ${w.does}`).join('\n'),
  positionals: 0,
  async run(_, io) {
    const lines: string[] = [];
    const given = await configInUse(io, (line) => lines.push(line));
    const log = io.logger(given);
    for (const line of lines) log.info(line);
    const sql = await openDatabase(given.databaseUrl, { timeoutMs: given.databaseTimeoutMs });
    let redis;
    let config;
    try {
      // The platform's Redis namespace, as `hrs serve` settles it (src/infra/namespace.ts).
      config = await resolveNamespace(given, () => databaseIdentity(sql));
      log.info(namespaceFields(config), 'redis namespace');
      redis = await openRedis(config.redisUrl, 'hrs-worker', { waitMs: config.redisTimeoutMs, sentinel: config.redisSentinel });
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
