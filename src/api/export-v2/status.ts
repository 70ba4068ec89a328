import { isSandboxId } from '../../domain/sandbox.js';
import { stationStatusListSchema, stationStatusSchema } from '../../domain/export-v2/schemas.js';
import { EncodedBody, encodedBody } from '../../http/encoding.js';
import { JSON_TYPE, notFound } from '../../http/errors.js';
import type { Family } from '../../http/family.js';
import type { HttpServer } from '../../http/server.js';
import { listStatusDoc, stationStatusDoc } from './docs/status.js';
import { kmText, type GeoFilter } from '../../domain/geo.js';
import { z } from 'zod';
import { STATION_PATH } from '../export/docs.js';
import { geoQueryFields, nearLimitField } from './docs/geo.js';
import { featureJson, GEOJSON_TYPE, geoFilterOf, nearLimitOf, VARY_ACCEPT, wantsGeoJson, type StationPoints } from './geo.js';

/** What the status routes read of the live status (machines/live-status.ts). */
export interface StatusSource {
  /** `{"stations": [...]}` over every registered station, sorted by hrs_id. */
  allJson(): string;
  /** One station's status object as JSON; undefined for a station not in the registry. */
  stationJson(hrsId: string): string | undefined;
  /** The same as UTF-8 bytes, as one station's status answers it (kept while it holds). */
  stationBody(hrsId: string): Buffer | undefined;
  /** Moves whenever anything `allJson` returns may have changed. */
  readonly version: number;
}

/**
 * Export v2 live status, served from memory: `GET /v2/hrs/status` (every registered station, sorted by
 * hrs_id; with a geo filter, the stations it finds: ./geo.ts; GeoJSON when the client prefers it) and
 * `GET /v2/hrs/{hrs_id}/status`. Not conditional (no Last-Modified), as the spec says.
 */
export function statusRoutes(server: HttpServer, family: Family, status: StatusSource, points: StationPoints): void {
  // A thousand stations make close to a megabyte of JSON: kept encoded until the status changes,
  // gzip made on the first request that takes it.
  let all: { version: number; body: EncodedBody } | undefined;
  let allFeatures: { version: number; points: number; body: EncodedBody } | undefined;
  server.route({
    family,
    method: 'GET',
    path: '/v2/hrs/status',
    query: z.object({ ...geoQueryFields(), ...nearLimitField() }),
    response: { 200: stationStatusListSchema },
    doc: listStatusDoc(),
    handler: (req) => {
      const filter = geoFilterOf(req);
      const limit = nearLimitOf(req, filter);
      const geoJson = wantsGeoJson(req);
      if (filter) return encodedBody(req, new EncodedBody(filteredJson(status, points, filter, geoJson, limit)), geoJson ? GEOJSON_TYPE : JSON_TYPE, VARY);
      if (geoJson) {
        if (allFeatures?.version !== status.version || allFeatures.points !== points.version) {
          allFeatures = { version: status.version, points: points.version, body: new EncodedBody(listJson(status, points, points.ids(), undefined, true)) };
        }
        return encodedBody(req, allFeatures.body, GEOJSON_TYPE, VARY);
      }
      if (all?.version !== status.version) all = { version: status.version, body: new EncodedBody(status.allJson()) };
      return encodedBody(req, all.body, JSON_TYPE, VARY);
    },
  });
  // Declared as the list's route above; this one answers one station's status, not cached.
  server.route({
    family,
    method: 'GET',
    path: '/v2/hrs/:hrs_id/status',
    params: STATION_PATH,
    response: { 200: stationStatusSchema },
    doc: stationStatusDoc(),
    handler: (req) => {
      const hrsId = req.params.hrs_id!;
      // The export v1.1 sandbox's stations are not export v2's.
      const body = isSandboxId(hrsId) ? undefined : status.stationBody(hrsId);
      if (body === undefined) throw notFound(`No station with hrs_id "${hrsId}".`);
      return { status: 200, headers: { 'Content-Type': JSON_TYPE }, body };
    },
  });
}

/** Both encodings' `Vary` (../../http/encoding.ts sets `Accept-Encoding`; policies join list-valued headers). */
const VARY = { Vary: `${VARY_ACCEPT}, Accept-Encoding` };

function filteredJson(status: StatusSource, points: StationPoints, filter: GeoFilter, geoJson: boolean, limit: number | undefined): string {
  const matches = points.match(filter, limit);
  return listJson(status, points, matches.ids, matches.distancesKm, geoJson);
}

/**
 * `{"stations":[…]}` of these stations (each with its `distance_km` when given), or their
 * FeatureCollection; a station no longer registered is left out.
 */
function listJson(status: StatusSource, points: StationPoints, ids: readonly string[], distancesKm: readonly number[] | undefined, geoJson: boolean): string {
  const items: string[] = [];
  for (let i = 0; i < ids.length; i++) {
    const id = ids[i]!;
    let json = status.stationJson(id);
    if (json === undefined) continue;
    const km = distancesKm?.[i];
    if (km !== undefined) json = `{"distance_km":${kmText(km)},${json.slice(1)}`;
    const point = points.pointOf(id);
    if (!geoJson) items.push(json);
    else if (point) items.push(featureJson(id, point, json));
  }
  return geoJson ? `{"type":"FeatureCollection","features":[${items.join(',')}]}` : `{"stations":[${items.join(',')}]}`;
}
