import { CACHE_BUSTER } from '../../http/query.js';
import type { Sql } from '../../../db/connect.js';
import { originatorLastSeen, originatorReportsOn } from '../../../db/queries/history-reads.js';
import { originatorCallStats } from '../../../db/queries/call-stats.js';
import { PERIODS, isPeriod, type Period } from '../../domain/history/figures.js';
import { HttpError, json, type Reply } from '../../http/errors.js';
import type { Family } from '../../http/family.js';
import type { Request } from '../../http/request.js';
import type { HttpServer } from '../../http/server.js';
import { materializedUntil, notPublished, originatorReliability, publishedHistory, reliability, stationSignals, timeline, type HistoryDeps } from '../history.js';
import { originatorAccess, stationAccess } from './access.js';
import { pathParams } from '../../http/parameters.js';
import { PORTAL_PATH } from './docs/components.js';
import { figuresQuery, historyDocs, timelineQuery } from './docs/history.js';
import type { Forecasts } from '../forecast.js';

/**
 * Signals, timeline and reliability in the portal (src/api/history.ts computes them, as for the export
 * extension): operator staff see them for their stations (`/portal/v1/stations/{hrs_id}/…`), originator
 * managers for the stations their originator reports on (`/portal/v1/originators/{id}/stations/{hrs_id}/…`)
 * and for the originator as a whole (`/portal/v1/originators/{id}/reliability`). The timeline reaches
 * up to the time the history is materialised (about a minute ago: intervals are final once
 * materialised); the figures, as export v2's, to the end of the last hour rolled up, never further.
 * Before the first materialisation (timeline) or roll-up (figures) there is nothing to show: a 503.
 * Operator staff also get a station's availability forecast (`/portal/v1/stations/{hrs_id}/forecast`):
 * the body of export v2's and the public map's (src/api/forecast.ts), the same 503 before the first
 * hour of history is published.
 */

const NO_STORE = { 'Cache-Control': 'no-store' };
const TIMELINE_PERIODS = ['24h', '7d'] as const;

function periodOf(req: Request, allowed: readonly Period[], fallback: Period): Period {
  const unknown = [...req.query.keys()].filter((k) => k !== 'period' && k !== CACHE_BUSTER);
  if (unknown.length > 0) throw new HttpError(400, 'invalid_query', `unknown parameter(s): ${unknown.join(', ')}`);
  const period = req.query.get('period') ?? fallback;
  if (!isPeriod(period) || !allowed.includes(period)) throw new HttpError(400, 'invalid_query', `period: must be one of ${allowed.join(', ')}`);
  return period;
}

export function portalHistoryRoutes(server: HttpServer, family: Family, deps: { sql: Sql; history: HistoryDeps; forecasts: Pick<Forecasts, 'station'> }): void {
  const { sql, history } = deps;
  // The timeline and the figures take `period`, each its own; the signals none.
  const queryOf = (path: string) => (path.endsWith('/timeline') ? timelineQuery() : path.endsWith('/reliability') ? figuresQuery() : undefined);
  const docs = historyDocs();
  const route = (path: string, doc: string, handler: (req: Request) => Promise<Reply>) =>
    server.route({ family, method: 'GET', path, params: pathParams(path, PORTAL_PATH), query: queryOf(path), doc: docs[doc], handler });

  /** The station the path names, when the originator in it reports on it (404 otherwise). */
  const reportedOn = async (req: Request): Promise<string> => {
    const { originator } = originatorAccess(req);
    const hrsId = req.params.hrs_id!;
    if (!(await originatorReportsOn(sql, originator, hrsId))) throw new HttpError(404, 'not_found', `Originator "${originator}" does not report on a station "${hrsId}".`);
    return hrsId;
  };
  const signals = async (hrsId: string) =>
    json(200, { hrs_id: hrsId, time_zone: history.stations.station(hrsId)?.timeZone ?? null, signals: await stationSignals(sql, hrsId) }, NO_STORE);
  const stationTimeline = async (hrsId: string, req: Request) => {
    const period = periodOf(req, TIMELINE_PERIODS, '24h');
    const materialized = await materializedUntil(sql);
    if (materialized === null) throw notPublished();
    return json(200, { period, ...(await timeline(history, hrsId, materialized - PERIODS[period], materialized)) }, NO_STORE);
  };
  const stationReliability = async (hrsId: string, req: Request) => {
    const period = periodOf(req, ['24h', '7d', '30d'], '24h');
    const published = await publishedHistory(sql);
    if (published === null) throw notPublished();
    return json(200, await reliability(history, hrsId, period, published.hour), NO_STORE);
  };

  route('/portal/v1/stations/:hrs_id/signals', 'stationSignals', async (req) => signals((await stationAccess(sql, req)).hrsId));
  route('/portal/v1/stations/:hrs_id/timeline', 'stationTimeline', async (req) => stationTimeline((await stationAccess(sql, req)).hrsId, req));
  route('/portal/v1/stations/:hrs_id/reliability', 'stationReliability', async (req) => stationReliability((await stationAccess(sql, req)).hrsId, req));
  route('/portal/v1/stations/:hrs_id/forecast', 'stationForecast', async (req) => {
    const { hrsId } = await stationAccess(sql, req);
    // Removed between the database's answer and the registry's reload: as unknown as any other.
    const station = history.stations.station(hrsId);
    if (station === undefined) throw new HttpError(404, 'not_found', `No station "${hrsId}".`);
    const forecast = await deps.forecasts.station(station);
    if (forecast === null) throw notPublished();
    return json(200, forecast, NO_STORE);
  });
  route('/portal/v1/originators/:originator_id/stations/:hrs_id/signals', 'stationReportedSignals', async (req) => signals(await reportedOn(req)));
  route('/portal/v1/originators/:originator_id/stations/:hrs_id/timeline', 'stationReportedTimeline', async (req) => stationTimeline(await reportedOn(req), req));
  route('/portal/v1/originators/:originator_id/stations/:hrs_id/reliability', 'stationReportedReliability', async (req) => stationReliability(await reportedOn(req), req));
  route('/portal/v1/originators/:originator_id/reliability', 'originatorReliability', async (req) => {
    const { originator } = originatorAccess(req);
    const period = periodOf(req, ['24h', '7d', '30d'], '24h');
    const published = await publishedHistory(sql);
    if (published === null) throw notPublished();
    const { hour } = published;
    const from = new Date(hour - PERIODS[period]);
    const [figures, lastSeen, [calls]] = await Promise.all([
      originatorReliability(sql, originator, period, hour),
      originatorLastSeen(sql, originator),
      originatorCallStats(sql, from, originator),
    ]);
    const total = calls?.calls ?? 0;
    const rejected = calls?.rejected ?? 0;
    return json(
      200,
      {
        ...figures,
        last_signal_received: lastSeen?.toISOString() ?? null,
        calls: { total, rejected, error_rate: total > 0 ? Math.round((rejected / total) * 10_000) / 10_000 : null },
      },
      NO_STORE,
    );
  });
}
