import type { Logger } from 'pino';
import type { Sql } from '../db/connect.js';
import type { ReferenceData } from '../db/queries/reference.js';
import type { CallLogRecorder } from '../workers/call-log.js';
import type { Config } from './config.js';
import type { Bus } from './infra/bus.js';
import type { Redis } from './infra/redis.js';
import type { Registry } from './registry/registry.js';
import type { LiveStatus } from '../machines/live-status.js';
import type { Receipts } from './infra/receipts.js';
import type { TokenStore } from './registry/tokens.js';

/** What route handlers and background tasks share within one process. */
export interface Services {
  config: Config;
  log: Logger;
  sql: Sql;
  redis: Redis;
  bus: Bus;
  tokens: TokenStore;
  /** Stations, confirmed layouts, assignments in memory; reloaded on every registry announcement. */
  registry: Registry;
  reference: ReferenceData;
  /** Live status per station and signal category (the freshness actors), served from memory. */
  status: LiveStatus;
  /** Receipts of testing and unassigned transmissions, this instance's and announced ones (admins' live feed). */
  receipts: Receipts;
  /** Records API calls per originator (enqueues; the call-log worker writes them). */
  callLog: CallLogRecorder;
  lifecycle: { shuttingDown: boolean };
}
