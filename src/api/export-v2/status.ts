import { acceptsGzip } from '../../http/encoding.js';
import { JSON_TYPE, notFound } from '../../http/errors.js';
import type { HttpServer } from '../../http/server.js';
import type { Services } from '../../services.js';

/**
 * Export v2 live status, served from memory: `GET /v2/hrs/status` (every registered station, sorted by
 * hrs_id) and `GET /v2/hrs/{hrs_id}/status`. Not conditional (no Last-Modified), as the spec says.
 */
export function statusRoutes(server: HttpServer, { status }: Services): void {
  server.route({
    method: 'GET',
    path: '/v2/hrs/status',
    auth: 'export_v2',
    handler: (req) => {
      // A thousand stations make close to a megabyte of JSON: kept encoded, gzip when the client takes it.
      const body = status.allBody();
      const gzip = acceptsGzip(req.headers['accept-encoding']);
      return {
        status: 200,
        headers: { 'Content-Type': JSON_TYPE, Vary: 'Accept-Encoding', ...(gzip ? { 'Content-Encoding': 'gzip' } : {}) },
        body: gzip ? body.gzip : body.identity,
      };
    },
  });
  server.route({
    method: 'GET',
    path: '/v2/hrs/:hrs_id/status',
    auth: 'export_v2',
    handler: (req) => {
      const hrsId = req.params.hrs_id!;
      const body = status.stationJson(hrsId);
      if (body === undefined) throw notFound(`No station with hrs_id "${hrsId}".`);
      return { status: 200, headers: { 'Content-Type': JSON_TYPE }, body };
    },
  });
}
