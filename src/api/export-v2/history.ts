import type { Sql } from '../../../db/connect.js';
import { isPeriod } from '../../domain/history/figures.js';
import { isSandboxId } from '../../domain/sandbox.js';
import type { StationLookup } from '../../domain/stations.js';
import { CATEGORIES, isCategory } from '../../domain/categories/index.js';
import { ifModifiedSince, parseInstant } from '../../http/dates.js';
import { HttpError, type Reply } from '../../http/errors.js';
import type { Family } from '../../http/family.js';
import type { Request } from '../../http/request.js';
import type { HttpServer } from '../../http/server.js';
import { HOUR_MS } from '../../domain/history/figures.js';
import { MAX_PAGE_MS, historyPage, notPublished, publishedHistory, reliability } from '../history.js';
import { conditionalHeaders, notModified, notModifiedSince, unknownStation } from '../export/replies.js';
import { STATION_PATH } from '../export/docs.js';
import { historyDoc, historyQuery, reliabilityDoc, reliabilityQuery } from './docs/history.js';
import { historyPageSchema, reliabilitySchema } from '../../domain/export-v2/history.js';

/**
 * The export v2 extension beyond the specification: `GET /v2/hrs/{hrs_id}/reliability` and
 * `GET /v2/hrs/{hrs_id}/history` (src/api/history.ts computes them). Both answer from the history up
 * to the end of the last hour rolled up (an hour is published once materialised and rolled up, never
 * before), under a `Last-Modified` that moves whenever what is published changes (each roll-up, the
 * retention's deletions, the station's registry entry): `If-Modified-Since` gets a 304 until then.
 * Before the first roll-up nothing is published: a 503 with `Retry-After`.
 */

export interface HistoryRouteDeps {
  sql: Sql;
  stations: StationLookup;
  unknownAfterMs: number;
  baseUrl: () => string;
  /** How many days of history are kept (HISTORY_RETENTION_DAYS): no `previous` page before them. */
  retentionDays: number;
  /** The platform's clock: the server's time `If-Modified-Since` is held to. */
  now: () => Date;
}

const invalid = (detail: string) => new HttpError(400, 'invalid_parameter', detail);

export function historyRoutes(server: HttpServer, family: Family, deps: HistoryRouteDeps): void {
  server.route({ family, method: 'GET', path: '/v2/hrs/:hrs_id/reliability', params: STATION_PATH, query: reliabilityQuery(), response: { 200: reliabilitySchema }, doc: reliabilityDoc(), handler: (req) => reliabilityReply(deps, req) });
  server.route({ family, method: 'GET', path: '/v2/hrs/:hrs_id/history', params: STATION_PATH, query: historyQuery(), response: { 200: historyPageSchema }, doc: historyDoc(), handler: (req) => historyReply(deps, req) });
}

function station(deps: HistoryRouteDeps, req: Request): string {
  const hrsId = req.params.hrs_id!;
  // The export v1.1 sandbox's stations are not export v2's.
  if (isSandboxId(hrsId) || deps.stations.station(hrsId) === undefined) throw unknownStation(hrsId);
  return hrsId;
}

/** Each parameter given at most once (the core has refused names the route does not declare). */
function once(req: Request, names: readonly string[]): void {
  for (const name of names) if (req.query.getAll(name).length > 1) throw invalid(`${name}: give it once.`);
}

async function reliabilityReply(deps: HistoryRouteDeps, req: Request): Promise<Reply> {
  const hrsId = station(deps, req);
  once(req, ['period']);
  const period = req.query.get('period') ?? '24h';
  if (!isPeriod(period)) throw invalid('period: must be one of 24h, 7d, 30d.');
  const published = await publishedHistory(deps.sql, hrsId);
  if (published === null) throw notPublished();
  const { hour, modified } = published;
  const modifiedUs = modified * 1000;
  const since = ifModifiedSince(req, deps.now().getTime());
  if (since !== undefined && notModifiedSince(modifiedUs, since)) return notModified(modifiedUs);
  const body = await reliability(deps, hrsId, period, hour);
  return { status: 200, headers: conditionalHeaders(modifiedUs), body: JSON.stringify(body) };
}

/** An instant parameter: a date-time with an offset (or Z) in the accepted range (src/http/dates.ts). */
function instant(req: Request, name: string): number | undefined {
  const text = req.query.get(name);
  if (text === null) return undefined;
  const parsed = parseInstant(text);
  if (!parsed.ok) throw invalid(`${name}: ${parsed.problem}.`);
  return parsed.ms;
}

async function historyReply(deps: HistoryRouteDeps, req: Request): Promise<Reply> {
  const hrsId = station(deps, req);
  once(req, ['category', 'from', 'to']);
  const category = req.query.get('category') ?? 'availability';
  if (!isCategory(category)) throw invalid(`category: must be one of ${CATEGORIES.join(', ')}.`);
  const fromAsked = instant(req, 'from');
  const toAsked = instant(req, 'to');
  const published = await publishedHistory(deps.sql, hrsId);
  if (published === null) throw notPublished();
  const { hour, modified } = published;
  const modifiedUs = modified * 1000;
  const from = fromAsked ?? hour - 24 * HOUR_MS;
  if (from >= hour) throw invalid(`from: the history is published up to ${new Date(hour).toISOString()} (the end of the last hour published: materialised and rolled up); ask for an earlier from.`);
  const asked = toAsked ?? Math.min(from + MAX_PAGE_MS, hour);
  if (asked <= from) throw invalid('to: must be after from.');
  if (asked - from > MAX_PAGE_MS) throw invalid('to: a page covers at most 7 days after from.');
  const to = Math.min(asked, hour);
  const since = ifModifiedSince(req, deps.now().getTime());
  if (since !== undefined && notModifiedSince(modifiedUs, since)) return notModified(modifiedUs);
  const page = await historyPage(deps, hrsId, category, from, to, hour);
  const length = asked - from;
  const link = (a: number, b: number) =>
    `${deps.baseUrl()}/v2/hrs/${hrsId}/history?category=${category}&from=${encodeURIComponent(new Date(a).toISOString())}&to=${encodeURIComponent(new Date(b).toISOString())}`;
  const next = page.continueFrom !== null ? link(page.continueFrom, asked) : to < hour ? link(to, to + length) : null;
  // From the published end rather than the clock, so that the page is a function of what is published.
  const kept = hour - deps.retentionDays * 24 * HOUR_MS;
  const previous = from - length >= kept ? link(from - length, from) : null;
  const body = {
    hrs_id: hrsId,
    category,
    from: new Date(from).toISOString(),
    to: new Date(to).toISOString(),
    intervals: page.intervals,
    fuelling_options: page.fuelling_options,
    readings: page.readings,
    next,
    previous,
  };
  return { status: 200, headers: conditionalHeaders(modifiedUs), body: JSON.stringify(body) };
}
