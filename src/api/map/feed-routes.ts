import { ifModifiedSince, httpDate } from '../../http/dates.js';
import { encodedBody } from '../../http/encoding.js';
import type { Reply } from '../../http/errors.js';
import type { Family } from '../../http/family.js';
import type { Request } from '../../http/request.js';
import type { HttpServer } from '../../http/server.js';
import { notModified } from '../../http/static.js';
import type { FeedBody, MapFeed } from './feed.js';
import type { RouteDoc } from '../../http/contract.js';
import { mapFeatureCollectionSchema } from '../../domain/map/schemas.js';

/** The feed's media type (RFC 7946). */
export const GEOJSON_TYPE = 'application/geo+json';

/** `GET /map/v1/stations.geojson`: the kept body, conditional (`If-None-Match`, `If-Modified-Since`), gzip or brotli. */
export function feedRoute(server: HttpServer, family: Family, feed: MapFeed, doc?: RouteDoc): void {
  server.route({
    family,
    public: true,
    method: 'GET',
    path: '/map/v1/stations.geojson',
    response: { 200: mapFeatureCollectionSchema },
    ...(doc ? { doc } : {}),
    handler: async (req) => feedReply(req, await feed.body(), feed.now().getTime()),
  });
}

/** 304 when the client's copy is current (its ETag, else its date: RFC 9110 13.2.2; `nowMs` the server's time), else the body. */
export function feedReply(req: Request, current: FeedBody, nowMs: number): Reply {
  // no-cache: a browser revalidates every time, which the ETag makes cheap.
  const validators = { ETag: current.etag, 'Last-Modified': httpDate(current.lastModified), 'Cache-Control': 'no-cache', Vary: 'Accept-Encoding' };
  const since = ifModifiedSince(req, nowMs);
  const unchangedSince = since !== undefined && (current.lastModified < since || (current.lastModified === since && !current.sharedSecond));
  if (notModified(req, current.etag) || unchangedSince) return { status: 304, headers: validators };
  return encodedBody(req, current.body, GEOJSON_TYPE, validators, { brotli: true });
}
