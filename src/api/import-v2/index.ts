import type { Logger } from 'pino';
import type { Sql } from '../../../db/connect.js';
import { SignalWriter } from '../../../db/queries/signals.js';
import type { OriginatorLookup, StationLookup } from '../../domain/stations.js';
import type { Family } from '../../http/family.js';
import type { RateLimiter } from '../../infra/rate-limit.js';
import type { HttpServer } from '../../http/server.js';
import type { TokenFinder } from '../auth.js';
import { activeStationsRoute } from './active-stations.js';
import { callLogObserver, type CallLogSink } from '../call-log.js';
import { importV2Family } from './family.js';
import type { SignalOutlet } from '../signals.js';
import { signalRoutes, type TransmissionCounter } from './signals.js';

export interface ImportV2Deps {
  sql: Sql;
  tokens: TokenFinder;
  limiter: RateLimiter;
  perMinute: number;
  log: Logger;
  registry: StationLookup & OriginatorLookup;
  callLog: CallLogSink;
  outlet: SignalOutlet;
  /** Metrics: transmissions by category and outcome, group commits' rows and seconds. */
  metrics?: { transmissions: TransmissionCounter; committed(rows: number, seconds: number): void };
}

/** Import v2: its family (./family.ts), the four signal endpoints and the active stations. */
export function importV2Api(server: HttpServer, deps: ImportV2Deps): Family {
  const family = importV2Family({ ...deps, observers: [callLogObserver(deps.callLog, deps.registry)] });
  activeStationsRoute(server, family, deps.sql);
  const writer = new SignalWriter(deps.sql, { onCommit: deps.metrics?.committed });
  signalRoutes(server, family, { registry: deps.registry, writer, outlet: deps.outlet, counted: deps.metrics?.transmissions });
  return family;
}
