import { visibleTo, type Audience } from '../../domain/sandbox.js';
import { audienceOf } from '../auth.js';
import { DIALECT_CODES, toCanonical, type Dialect } from '../../domain/import-v1/options.js';
import { openingAt } from '../../domain/opening-hours.js';
import { toV11Summary, toV1Summary, type OptionSummary } from '../../domain/status/summary.js';
import type { StationEntry } from '../../domain/stations.js';
import { stationSummary, type SummaryDeps } from '../../domain/status/station-summary.js';
import type { PublishedReading } from '../../domain/categories/index.js';
import { EncodedBody, encodedJson } from '../../http/encoding.js';
import { HttpError, JSON_TYPE, json, notFound, type Reply } from '../../http/errors.js';
import type { Family } from '../../http/family.js';
import type { Request } from '../../http/request.js';
import type { HttpServer } from '../../http/server.js';
import { STATION_PATH } from '../export/docs.js';
import { summaryQuery } from './docs/components.js';
import { EXPORT_DIALECT_DOCS } from './docs/dialects.js';
import { listSummaryDoc, summaryDoc } from './docs/status.js';

/**
 * The five-state summary per fuelling option, export v1.1 (`700ld`, …) and v1 (`700car`, …; `700hd`
 * left out): `GET {prefix}hrs/status` (every station, sorted by hrs_id) and `GET
 * {prefix}hrs/{hrs_id}/status`, each optionally filtered by `fuelling_option`. Computed on every
 * request from what is in memory: the station's published availability reading (import v2 or
 * legacy, whichever is newest) and its freshness, its opening hours at this instant in its time zone,
 * and the options it provides, so a station is never shown `CLOSED` after it opened. The sandbox
 * token sees the sandbox's sample stations only, every other token production stations only. The
 * summary itself is shared with the public map's feed (src/domain/status/station-summary.ts).
 */

export type { SummaryDeps };

/** Single-station answers kept at most (stations × filters); past it the kept ones are dropped at once. */
const MAX_KEPT_STATIONS = 100_000;

export function summaryRoutes(server: HttpServer, family: Family, dialect: Dialect, deps: SummaryDeps): void {
  const now = deps.now ?? (() => new Date());
  const d = EXPORT_DIALECT_DOCS[dialect];
  const present = (entries: OptionSummary[]) => (dialect === 'v1' ? toV1Summary(entries) : toV11Summary(entries));
  const view = (station: StationEntry, at: Date, only: string | undefined, open?: (station: StationEntry) => boolean) => {
    const entries = present(stationSummary(deps, station, at, open));
    return { hrs_id: station.hrsId, fuelling_options: only === undefined ? entries : entries.filter((e) => e.fuel_type === only) };
  };
  // The list over every station is kept, encoded (gzip made on first demand), per filter, until the
  // live status or the registry moves or the next station opens or closes: computing it for a thousand
  // stations takes milliseconds, serving it from here microseconds.
  const kept = new Map<string, { status: number; registry: number; until: number; body: EncodedBody }>();
  const list = (audience: Audience, only: string | undefined, at: Date): EncodedBody => {
    const key = `${audience}\u0000${only ?? ''}`;
    const found = kept.get(key);
    const nowMs = at.getTime();
    if (found && found.status === deps.status.availabilityVersion && found.registry === deps.stations.version && nowMs < found.until) return found.body;
    const status = deps.status.availabilityVersion;
    const registry = deps.stations.version;
    const until = deps.opening.nextDue() ?? Number.POSITIVE_INFINITY;
    const out = [];
    const open = openingAt(at);
    for (const hrsId of [...deps.stations.stationIds()].sort()) {
      const station = deps.stations.station(hrsId);
      if (!station || !visibleTo(audience, station)) continue;
      const summary = view(station, at, only, open);
      // Filtered: stations without that option are left out.
      if (only !== undefined && summary.fuelling_options.length === 0) continue;
      out.push(summary);
    }
    const body = new EncodedBody(JSON.stringify(out));
    kept.set(key, { status, registry, until, body });
    return body;
  };
  server.route({
    family,
    method: 'GET',
    path: `${family.prefix}hrs/status`,
    query: summaryQuery(d),
    response: { 200: d.bodies.StatusSummaryList },
    doc: listSummaryDoc(d),
    handler: (req) => {
      return encodedJson(req, list(audienceOf(req), optionFilter(req, dialect), now()));
    },
  });
  // One station's answer is kept too, per filter, as long as what it was computed from holds: the same
  // published reading (each new one is a new object) with the same freshness, the same registry, and
  // no station opening or closing since. Computing it evaluates the station's opening hours in its
  // time zone, several times what serving it costs.
  const single = new Map<string, { reading: PublishedReading | undefined; freshness: string | undefined; registry: number; until: number; body: string }>();
  server.route({
    family,
    method: 'GET',
    path: `${family.prefix}hrs/:hrs_id/status`,
    params: STATION_PATH,
    query: summaryQuery(d),
    response: { 200: d.bodies.StatusSummary },
    doc: summaryDoc(d),
    handler: (req): Reply => {
      const only = optionFilter(req, dialect);
      const hrsId = req.params.hrs_id!;
      const station = deps.stations.station(hrsId);
      if (!station || !visibleTo(audienceOf(req), station)) throw notFound(`No station with hrs_id "${hrsId}".`);
      const at = now();
      const key = only === undefined ? hrsId : `${hrsId}\u0000${only}`;
      const held = deps.status.published(hrsId, 'availability');
      const registry = deps.stations.version;
      const found = single.get(key);
      if (found && found.reading === held?.reading && found.freshness === held?.freshness && found.registry === registry && at.getTime() < found.until) {
        return { status: 200, headers: { 'Content-Type': JSON_TYPE }, body: found.body };
      }
      const until = deps.opening.nextDue() ?? Number.POSITIVE_INFINITY;
      const reply = json(200, view(station, at, only));
      if (single.size >= MAX_KEPT_STATIONS) single.clear();
      single.set(key, { reading: held?.reading, freshness: held?.freshness, registry, until, body: reply.body as string });
      return reply;
    },
  });
}

/** `fuelling_option`: one code of the family's vocabulary, or absent; anything else is a 400 naming the allowed ones. */
function optionFilter(req: Request, dialect: Dialect): string | undefined {
  const values = req.query.getAll('fuelling_option');
  if (values.length === 0) return undefined;
  const allowed = DIALECT_CODES[dialect];
  if (values.length > 1) throw new HttpError(400, 'invalid_parameter', 'fuelling_option: give it once.');
  const code = values[0]!;
  if (toCanonical(dialect, code) === undefined) {
    throw new HttpError(400, 'invalid_parameter', `fuelling_option: must be one of ${allowed.join(', ')} (got "${code}").`);
  }
  return code;
}
