/**
 * The kept list of `GET /v1.1/hrs/status`: served from memory while nothing moved, computed again when
 * the live status or the registry moves, and never past the next opening or closing minute.
 */
import t from 'tap';
import { summaryRoutes, type SummaryDeps } from '../src/api/export-legacy/status.js';
import type { Family } from '../src/http/family.js';
import type { Request } from '../src/http/request.js';
import type { HttpServer } from '../src/http/server.js';
import type { StationEntry } from '../src/domain/stations.js';

type Handler = (req: Request) => { status: number; body?: unknown };

function routes(deps: SummaryDeps): Record<string, Handler> {
  const found: Record<string, Handler> = {};
  const server = { route: (r: { path: string; handler: Handler }) => (found[r.path] = r.handler) } as unknown as HttpServer;
  summaryRoutes(server, { name: 'export_v1.1', prefix: '/v1.1/' } as Family, 'v1.1', deps);
  return found;
}

const request = (): Request => ({ query: new URLSearchParams(), headers: {}, params: {} }) as unknown as Request;
const body = (reply: { body?: unknown }) => JSON.parse((reply.body as Buffer).toString('utf8'));

t.test('recomputed at the opening minute, and when the status or the registry moves', async (t) => {
  const opensAt = Date.parse('2026-11-24T09:00:00Z'); // 10:00 in Berlin
  let now = opensAt - 1;
  const station: StationEntry = { hrsId: 'OPENS', name: 'Opens', heavyDuty: false, layout: null, v1FuelTypes: ['700car'], openingHours: 'Mo-Su 10:00-20:00', timeZone: 'Europe/Berlin' };
  const stations = { version: 1, station: (id: string) => (id === 'OPENS' ? station : undefined), stationIds: () => ['OPENS'][Symbol.iterator](), hasLiveSource: () => true };
  let reads = 0;
  const status = { availabilityVersion: 1, published: () => (reads++, undefined) };
  const list = routes({ stations, status, opening: { nextDue: () => opensAt }, now: () => new Date(now) })['/v1.1/hrs/status']!;

  t.match(body(list(request())), [{ hrs_id: 'OPENS', fuelling_options: [{ fuel_type: '700ld', status: 'CLOSED' }] }], 'closed one millisecond before ten');
  list(request());
  t.equal(reads, 1, 'the second request is served from the kept list');
  now = opensAt;
  t.match(body(list(request())), [{ fuelling_options: [{ status: 'UNKNOWN', reason: 'no_signal' }] }], 'at ten: open, never CLOSED');
  t.equal(reads, 2);
  status.availabilityVersion++;
  list(request());
  t.equal(reads, 3, 'a status change recomputes');
  stations.version++;
  list(request());
  t.equal(reads, 4, 'so does a registry reload');
});

t.test('only availability moves the version the summary keeps its list by', async (t) => {
  const { LiveStatus } = await import('../machines/live-status.js');
  const station: StationEntry = { hrsId: 'BERLA', name: 'Berlin', heavyDuty: false, layout: null };
  const directory = { station: (id: string) => (id === 'BERLA' ? station : undefined), stationIds: () => ['BERLA'][Symbol.iterator](), hasLiveSource: () => true };
  const log = { debug() {}, info() {}, warn() {}, error() {} };
  const status = new LiveStatus(directory, log as never, { staleAfterMs: 300_000, unknownAfterMs: 1_800_000, pricingStaleAfterMs: 90_000_000 });
  t.teardown(() => status.close());
  const signal = (category: 'usage' | 'availability') => ({ hrsId: 'BERLA', category, originatorId: 'mon-1', datetime: Date.now(), receivedAt: Date.now(), payload: {} });
  const [all, availability] = [status.version, status.availabilityVersion];
  status.publish([signal('usage')]);
  t.not(status.version, all, 'a usage reading moves the status');
  t.equal(status.availabilityVersion, availability, 'but not what the summary reads');
  status.publish([signal('availability')]);
  t.not(status.availabilityVersion, availability, 'an availability reading does');
});
