import type { Logger } from 'pino';
import type { Sql } from '../../../db/connect.js';
import { activeStationsV1 } from '../../../db/queries/assignments.js';
import type { ReferenceData } from '../../../db/queries/reference.js';
import type { SignalWriter } from '../../../db/queries/signals.js';
import type { OriginatorLookup, StationLookup } from '../../domain/stations.js';
import { V1_SCHEMAS, v11ActiveStationsSchema } from '../../domain/import-v1/schemas.js';
import { json } from '../../http/errors.js';
import type { Family } from '../../http/family.js';
import type { RateLimiter } from '../../infra/rate-limit.js';
import type { HttpServer } from '../../http/server.js';
import type { TokenFinder } from '../auth.js';
import { originatorOf } from '../auth.js';
import { callLogObserver, type CallLogSink } from '../call-log.js';
import type { SignalOutlet } from '../signals.js';
import type { LegacyImport } from './declaration.js';
import { dialectDoc } from './docs/dialects.js';
import { activeStationsDoc, fuelTypeDoc } from './docs/stations.js';
import { legacyImportFamily } from './family.js';
import { legacySignalRoute, type LegacySignalCounter } from './signals.js';

export interface LegacyImportDeps {
  sql: Sql;
  tokens: TokenFinder;
  reference: ReferenceData;
  limiter: RateLimiter;
  perMinute: number;
  log: Logger;
  registry: StationLookup & OriginatorLookup;
  callLog: CallLogSink;
  /** One group-commit writer for v1 and v1.1. */
  writer: SignalWriter;
  outlet: SignalOutlet;
  counted?: LegacySignalCounter;
}

/** The family, its reference list, `POST {prefix}hrs-availability` and (v1.1) the active stations. */
export function legacyImportApi(server: HttpServer, declared: LegacyImport, deps: LegacyImportDeps): Family {
  const family = legacyImportFamily(declared, { ...deps, observers: [callLogObserver(deps.callLog, deps.registry)] });
  const d = dialectDoc(declared);
  const fuelTypes = declared.fuelTypes(deps.reference);
  server.route({
    family,
    method: 'GET',
    path: `${declared.prefix}fuel-type`,
    response: { 200: V1_SCHEMAS[declared.dialect].fuelTypes },
    doc: fuelTypeDoc(d, deps.reference),
    handler: () => fuelTypes,
  });
  legacySignalRoute(server, family, d, deps);
  if (declared.activeStations) {
    server.route({
      family,
      method: 'GET',
      path: `${declared.prefix}active-stations`,
      response: { 200: v11ActiveStationsSchema },
      doc: activeStationsDoc(),
      handler: async (req) => json(200, await activeStationsV1(deps.sql, originatorOf(req))),
    });
  }
  return family;
}
