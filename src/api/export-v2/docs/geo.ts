import {
  stationFeatureCollectionSchema,
  stationFeatureSchema,
  statusFeatureCollectionSchema,
  statusFeatureSchema,
} from '../../../domain/export-v2/geojson.js';
import { MAX_RADIUS_KM } from '../../../domain/geo.js';
import { z } from 'zod';
import { examplesOf, schemaRef } from '../../../http/openapi.js';
import { queryParameter } from '../../../http/parameters.js';
import { problemBody } from '../../export/docs.js';

/**
 * The geo extension (beyond the specification) in the export v2 document: `bbox`, `near` and
 * `radius_km` on `GET /v2/hrs` and `GET /v2/hrs/status`, `distance_km`, GeoJSON on request, its 400s.
 * Its place in the guide is GEO_DESCRIPTION; the operations take geoParameterRefs and geoJsonContent.
 */

export const GEO_DESCRIPTION =
  '## Extension: geo queries\n\nAdditive, with the same tokens and rate limits: without the parameters below and ' +
  'without asking for GeoJSON, every answer is as before.\n\n' +
  '- **`bbox=minLon,minLat,maxLon,maxLat`** on `GET /v2/hrs` and `GET /v2/hrs/status`: the stations in the box, edges ' +
  'included, sorted by `hrs_id`. WGS 84 degrees in RFC 7946 order (longitude first). A box whose `minLon` is greater than ' +
  'its `maxLon` crosses the antimeridian (RFC 7946 §5.2: `bbox=170,-20,-170,20` spans 20 degrees over ±180); a box whose ' +
  '`minLat` is greater than its `maxLat` is refused (400, inverted box).\n' +
  `- **\`near=lat,lon&radius_km=R\`** (latitude first, \`0 < R ≤ ${MAX_RADIUS_KM}\`): the stations within R kilometres ` +
  '(great circle, mean Earth radius 6371.0088 km), nearest first, equal distances by `hrs_id`; each record or status ' +
  'entry then starts with its `distance_km` (3 decimals). `radius_km` without `near`, and `bbox` with `near`, are refused.\n' +
  '- **`near=lat,lon&limit=N`**, the nearest N: `near` without `radius_km` orders every station with coordinates by ' +
  'distance. On `GET /v2/hrs` it pages like the whole list (`limit`, default 100, and `offset`; `count` is every station ' +
  'with coordinates), so its first page of `limit=N` is the nearest N; on `GET /v2/hrs/status`, which has no pages, ' +
  '`limit` (1 to 500, only with `near`) keeps the nearest N, within `radius_km` when given.\n' +
  '- Numbers are plain decimals (`52.52`, `-0.1`, `13`): no exponent, no spaces; latitudes within ±90, longitudes within ' +
  '±180. Each parameter at most once. Anything else is a 400 `invalid_parameter` whose `detail` names the parameter.\n' +
  '- Only stations whose registry entry has coordinates are found; the others are never in a filtered answer.\n' +
  '- On `GET /v2/hrs` a filter pages like the whole list (`limit`, `offset`, `count` of the stations found, `next` and ' +
  '`previous` keeping the filter) and is conditional: its `Last-Modified` is the newest change of any station or of the ' +
  'station set (a station whose coordinates change may enter or leave the answer).\n' +
  '- **GeoJSON.** Both lists answer a GeoJSON `FeatureCollection` (`Content-Type: application/geo+json`) when the ' +
  '`Accept` header weighs `application/geo+json` above `application/json` (`Accept: application/geo+json`; on equal ' +
  'weights JSON stays): one `Feature` per station with coordinates, `id` its `hrs_id`, a `Point` geometry `[lon, lat]`, ' +
  'the record or status object as `properties`; a station without coordinates is left out. The list\'s `count`, `next` ' +
  'and `previous` are foreign members of the collection. Both lists answer with `Vary: Accept`.';

/**
 * The geo parameters, which both lists take (their handlers check them). No `example`: the reference
 * page's "Try it out" would fill it in, and both filters at once are a 400.
 */
export const geoQueryFields = () => ({
  bbox: queryParameter({
    component: 'bbox',
    description:
      'Extension: only the stations in this box, `minLon,minLat,maxLon,maxLat` (WGS 84 degrees, plain decimals, edges ' +
      'included), e.g. `5.9,47.3,15.0,55.1`. `minLon > maxLon` is a box across the antimeridian (RFC 7946 §5.2); `minLat > maxLat` ' +
      'is a 400. Not with `near`.',
    values: z.string().regex(/^-?\d+(\.\d+)?(,-?\d+(\.\d+)?){3}$/),
  }),
  near: queryParameter({
    component: 'near',
    description:
      'Extension: only the stations within `radius_km` of this point, `lat,lon` (latitude first, plain decimals, e.g. ' +
      '`52.52,13.405`), nearest ' +
      'first, each with its `distance_km`. Without `radius_km`: every station with coordinates, nearest first (`limit` ' +
      'keeps the nearest N). Not with `bbox`.',
    values: z.string().regex(/^-?\d+(\.\d+)?,-?\d+(\.\d+)?$/),
  }),
  radius_km: queryParameter({
    component: 'radius_km',
    description: `Extension: the radius of \`near\` in kilometres (great circle), more than 0 and at most ${MAX_RADIUS_KM}, a plain decimal (\`50\`, \`12.5\`; no exponent, no \`+\`). Only with \`near\`.`,
    values: z.number().positive().max(MAX_RADIUS_KM),
  }),
});

/** The status list's `limit`: only with `near` (the list has no pages); its handler checks it (nearLimitOf of ../geo.ts). */
export const nearLimitField = () => ({
  limit: queryParameter({
    component: 'near_limit',
    description:
      'Extension: with `near` only, the nearest this many stations (1 to 500), within `radius_km` when given. The status ' +
      'list is not paged: without `near` it is a 400.',
    values: z.int().min(1).max(500),
  }),
});

/** The GeoJSON schemas, for the document's components. */
export const geoSchemas = () => ({
  StationFeatureCollection: stationFeatureCollectionSchema,
  StationFeature: stationFeatureSchema,
  StationStatusFeatureCollection: statusFeatureCollectionSchema,
  StationStatusFeature: statusFeatureSchema,
});

/** A list's 200 content beside its JSON: the GeoJSON answer, under its schema's name. */
export function geoJsonContent(name: 'StationFeatureCollection' | 'StationStatusFeatureCollection'): Record<string, unknown> {
  const schema = name === 'StationFeatureCollection' ? stationFeatureCollectionSchema : statusFeatureCollectionSchema;
  return { 'application/geo+json': { schema: schemaRef(name), examples: examplesOf(schema) } };
}

/** The 400s of the geo parameters, as examples of a bad-parameter response. */
export const geoProblemExamples = () => ({
  bad_bbox: {
    value: problemBody(400, 'Bad Request', 'invalid_parameter', 'bbox: must be minLon,minLat,maxLon,maxLat, four decimal numbers (e.g. bbox=5.9,47.3,15.0,55.1).'),
  },
  inverted_box: { value: problemBody(400, 'Bad Request', 'invalid_parameter', 'bbox: inverted box: minLat (55.1) is north of maxLat (47.3).') },
  out_of_range: { value: problemBody(400, 'Bad Request', 'invalid_parameter', 'near: latitude 91 is out of range (from -90 to 90).') },
  radius_too_large: {
    value: problemBody(400, 'Bad Request', 'invalid_parameter', `radius_km: must be a decimal number of kilometres, more than 0 and at most ${MAX_RADIUS_KM}.`),
  },
  radius_without_near: { value: problemBody(400, 'Bad Request', 'invalid_parameter', 'radius_km: only with near=lat,lon.') },
  status_limit_without_near: {
    value: problemBody(400, 'Bad Request', 'invalid_parameter', 'limit: only with near=lat,lon (the nearest N; the status list has no pages).'),
  },
  both_filters: { value: problemBody(400, 'Bad Request', 'invalid_parameter', 'bbox, near: give one of them, not both.') },
});
