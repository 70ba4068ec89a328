/**
 * The platform as `hrs serve` runs it (startPlatform), with a fixture loaded.
 * The parent chooses the database (created and migrated here) and the Redis prefix:
 * BENCH_DATABASE_URL, BENCH_REDIS_PREFIX; REDIS_URL is taken from the environment when set.
 * BENCH_FIXTURE names the fixture (./fixtures.ts; default `base`, the standard test fixture);
 * BENCH_PLATFORM_ENV is a JSON object of further configuration variables, e.g.
 * `{"IMPORT_V2_RATE_LIMIT":"100000000"}`.
 */
import { loadConfig } from '../../../src/config/config.js';
import { loadFixture } from '../../../src/registry/file/load.js';
import { unbounded } from '../../../db/deadline.js';
import { createLogger } from '../../../src/config/log.js';
import { startPlatform } from '../../../src/platform.js';
import { ROOT } from './child.js';
import { benchFixture } from './fixtures.js';
import { onStop, ready } from './ipc.js';

const extraEnv = JSON.parse(process.env.BENCH_PLATFORM_ENV || '{}') as Record<string, string>;
const fixture = benchFixture(process.env.BENCH_FIXTURE || 'base');

const config = loadConfig({
  ...extraEnv,
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
// As `hrs load` does: a fixture of 1,000 stations takes longer than a request may wait (DATABASE_TIMEOUT).
await loadFixture(unbounded(platform.parts.sql), fixture, { baseDir: ROOT });
platform.parts.tokens.invalidate();
// Signals resolve against the registry in memory, read at start (before the fixture was there).
await platform.parts.registry.reload();
ready({ port: platform.port });
