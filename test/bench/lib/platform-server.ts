/**
 * The platform as `hrs serve` runs it (startPlatform), with the standard test fixture loaded.
 * The parent chooses the database (created and migrated here) and the Redis prefix:
 * BENCH_DATABASE_URL, BENCH_REDIS_PREFIX; REDIS_URL is taken from the environment when set.
 */
import { loadConfig } from '../../../src/config.js';
import { loadFixture } from '../../../src/fixtures/load.js';
import { createLogger } from '../../../src/log.js';
import { startPlatform } from '../../../src/platform.js';
import { baseFixture } from '../../helpers/fixtures.js';
import { ROOT } from './child.js';
import { onStop, ready } from './ipc.js';

const config = loadConfig({
  PORT: '0',
  HOST: '127.0.0.1',
  LOG_LEVEL: 'silent',
  DATABASE_URL: process.env.BENCH_DATABASE_URL,
  REDIS_URL: process.env.REDIS_URL || undefined,
  REDIS_PREFIX: process.env.BENCH_REDIS_PREFIX,
});
// Only HTTP is measured: no BullMQ workers in this process.
const platform = await startPlatform(config, createLogger(config.logLevel), { workers: false });
onStop(() => platform.stop('benchmark over'));
await loadFixture(platform.services.sql, baseFixture(), { baseDir: ROOT });
platform.services.tokens.invalidate();
ready({ port: platform.port });
