/**
 * The BullMQ workers as `hrs worker` runs them (startWorkers with the registry read at each run), for
 * the `webhooks` scenario: the webhook delivery worker among them, in a process of its own so its CPU
 * is its own. The parent chooses the database (migrated already) and the Redis prefix:
 * BENCH_DATABASE_URL, BENCH_REDIS_PREFIX; BENCH_PLATFORM_ENV holds further settings (the platform's,
 * WEBHOOK_SECRET_KEY and WEBHOOK_ALLOW_LOOPBACK among them); REDIS_URL is taken from the environment
 * when set. Tells the parent the workers' names when ready.
 */
import { connect } from '../../../db/connect.js';
import { readRegistryRows } from '../../../db/queries/registry.js';
import { loadConfig } from '../../../src/config/config.js';
import { closeRedis, openRedis } from '../../../src/infra/redis.js';
import { createLogger } from '../../../src/config/log.js';
import { Registry } from '../../../src/registry/registry.js';
import { startWorkers } from '../../../workers/index.js';
import { onStop, ready } from './ipc.js';

const extraEnv = JSON.parse(process.env.BENCH_PLATFORM_ENV || '{}') as Record<string, string>;
const config = loadConfig({
  ...extraEnv,
  LOG_LEVEL: 'silent',
  DATABASE_URL: process.env.BENCH_DATABASE_URL,
  REDIS_URL: process.env.REDIS_URL || undefined,
  REDIS_PREFIX: process.env.BENCH_REDIS_PREFIX,
});
const log = createLogger(config.logLevel);
const sql = connect(config.databaseUrl);
const redis = await openRedis(config.redisUrl, 'hrs-bench-worker');
const registry = new Registry(() => readRegistryRows(sql));
const workers = startWorkers(config, redis, sql, log, {
  stations: async () => {
    await registry.reload();
    return registry;
  },
});
onStop(async () => {
  await workers.close();
  await closeRedis(redis);
  await sql.end({ timeout: 5 });
});
ready({ names: workers.names });
