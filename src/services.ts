import type { Logger } from 'pino';
import type { Sql } from '../db/connect.js';
import type { ReferenceData } from '../db/queries/reference.js';
import type { Config } from './config.js';
import type { Bus } from './infra/bus.js';
import type { Redis } from './infra/redis.js';
import type { TokenStore } from './tokens/store.js';

/** What route handlers and background tasks share within one process. */
export interface Services {
  config: Config;
  log: Logger;
  sql: Sql;
  redis: Redis;
  bus: Bus;
  tokens: TokenStore;
  reference: ReferenceData;
  lifecycle: { shuttingDown: boolean };
}
