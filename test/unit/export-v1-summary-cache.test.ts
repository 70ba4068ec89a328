/**
 * The kept list of `GET /v1.1/hrs/status`: served from memory while nothing moved, computed again when
 * the live status or the registry moves, and never past the next opening or closing minute.
 */
import t from 'tap';
import { summaryRoutes, type SummaryDeps } from '../../src/api/export-legacy/status.js';
import type { Family } from '../../src/http/family.js';
import type { Request } from '../../src/http/request.js';
import type { HttpServer } from '../../src/http/server.js';
import type { StationEntry } from '../../src/domain/stations.js';

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
  const { LiveStatus } = await import('../../machines/live-status.js');
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

t.test('one station\'s answer is kept while its reading, freshness and registry hold, never past an opening minute', async (t) => {
  const opensAt = Date.parse('2026-11-24T09:00:00Z'); // 10:00 in Berlin
  let now = opensAt - 1;
  const station: StationEntry = { hrsId: 'OPENS', name: 'Opens', heavyDuty: false, layout: null, v1FuelTypes: ['700car'], openingHours: 'Mo-Su 10:00-20:00', timeZone: 'Europe/Berlin' };
  const stations = { version: 1, station: (id: string) => (id === 'OPENS' ? station : undefined), stationIds: () => ['OPENS'][Symbol.iterator](), hasLiveSource: () => true };
  const held = { reading: { datetime: now - 60_000, receivedAt: now - 59_000, payload: { station: { maintenance: false, limitedly_available: false }, nozzles: [], fuelling_options: { '700ld': true } } }, freshness: 'fresh' };
  let current: typeof held | undefined = held;
  const status = { availabilityVersion: 1, published: () => current };
  const single = routes({ stations, status, opening: { nextDue: () => opensAt }, now: () => new Date(now) })['/v1.1/hrs/:hrs_id/status']!;
  const one = () => {
    const req = { ...request(), params: { hrs_id: 'OPENS' } } as unknown as Request;
    return JSON.parse(String(single(req).body)) as { fuelling_options: { status: string; reason?: string }[] };
  };
  t.match(one(), { fuelling_options: [{ status: 'CLOSED' }] }, 'closed one millisecond before ten');
  const kept = single({ ...request(), params: { hrs_id: 'OPENS' } } as unknown as Request).body;
  t.equal(single({ ...request(), params: { hrs_id: 'OPENS' } } as unknown as Request).body, kept, 'served as kept (the same text)');
  now = opensAt;
  t.match(one(), { fuelling_options: [{ status: 'UNKNOWN', reason: 'not_reported', datetime: new Date(held.reading.datetime).toISOString() }] }, 'at ten: open, computed again');
  current = { reading: { ...held.reading, datetime: now - 1000 }, freshness: 'fresh' };
  t.match(one(), { fuelling_options: [{ datetime: new Date(now - 1000).toISOString() }] }, 'a new reading is answered at once');
  current = { reading: current.reading, freshness: 'unknown' };
  t.match(one(), { fuelling_options: [{ status: 'UNKNOWN' }] }, 'so is its freshness');
  current = undefined;
  t.match(one(), { fuelling_options: [{ status: 'UNKNOWN', reason: 'no_signal' }] }, 'and no reading any more');
  const before = one();
  stations.version++;
  station.openingHours = 'Mo-Su 11:00-20:00';
  t.not(JSON.stringify(one()), JSON.stringify(before), 'a registry reload is answered at once');
  t.match(one(), { fuelling_options: [{ status: 'CLOSED' }] });
});
