import { isSandboxId } from '../../domain/sandbox.js';
import { stationStatusListSchema, stationStatusSchema } from '../../domain/export-v2/schemas.js';
import { EncodedBody, encodedJson } from '../../http/encoding.js';
import { JSON_TYPE, notFound } from '../../http/errors.js';
import type { Family } from '../../http/family.js';
import type { HttpServer } from '../../http/server.js';
import { listStatusDoc, stationStatusDoc } from './docs/status.js';

/** What the status routes read of the live status (machines/live-status.ts). */
export interface StatusSource {
  /** `{"stations": [...]}` over every registered station, sorted by hrs_id. */
  allJson(): string;
  /** One station's status object as JSON; undefined for a station not in the registry. */
  stationJson(hrsId: string): string | undefined;
  /** Moves whenever anything `allJson` returns may have changed. */
  readonly version: number;
}

/**
 * Export v2 live status, served from memory: `GET /v2/hrs/status` (every registered station, sorted by
 * hrs_id) and `GET /v2/hrs/{hrs_id}/status`. Not conditional (no Last-Modified), as the spec says.
 */
export function statusRoutes(server: HttpServer, family: Family, status: StatusSource): void {
  // A thousand stations make close to a megabyte of JSON: kept encoded until the status changes,
  // gzip made on the first request that takes it.
  let all: { version: number; body: EncodedBody } | undefined;
  server.route({
    family,
    method: 'GET',
    path: '/v2/hrs/status',
    response: { 200: stationStatusListSchema },
    doc: listStatusDoc(),
    handler: (req) => {
      if (all?.version !== status.version) all = { version: status.version, body: new EncodedBody(status.allJson()) };
      return encodedJson(req, all.body);
    },
  });
  // Declared as the list's route above; this one answers one station's status, not cached.
  server.route({
    family,
    method: 'GET',
    path: '/v2/hrs/:hrs_id/status',
    response: { 200: stationStatusSchema },
    doc: stationStatusDoc(),
    handler: (req) => {
      const hrsId = req.params.hrs_id!;
      // The export v1.1 sandbox's stations are not export v2's.
      const body = isSandboxId(hrsId) ? undefined : status.stationJson(hrsId);
      if (body === undefined) throw notFound(`No station with hrs_id "${hrsId}".`);
      return { status: 200, headers: { 'Content-Type': JSON_TYPE }, body };
    },
  });
}
