/**
 * The public map's feed on its own, against a registry, a live status and a clock of the test's: what
 * each kind of change tells the stream (a `station` message per five-state change, `changed` for the
 * static fields and the station set, nothing for a change no client sees), and when a new body (ETag)
 * is made.
 */
import t from 'tap';
import { MapFeed, SETTLE_DELAY_MS, type FeedChange } from '../src/api/map/feed.js';
import type { PublishedReading } from '../src/domain/categories/index.js';
import type { StationEntry } from '../src/domain/stations.js';
import { createLogger } from '../src/log.js';

const LAYOUT = {
  nozzles: new Map([['N1', { dispenser: 'D1', fuellingOptions: ['700ld'] }]]),
  dispensers: new Map([['D1', ['N1']]]),
  storages: new Set<string>(),
  products: new Set<string>(),
};

function world() {
  let now = new Date('2026-11-30T09:59:00Z');
  const stations = new Map<string, StationEntry>([
    ['BERLA', { hrsId: 'BERLA', name: 'Berlin', heavyDuty: false, layout: LAYOUT, openingHours: 'Mo-Su 10:00-22:00', timeZone: 'UTC', point: { lat: 52.4, lon: 13.5 } }],
    ['NOPTS', { hrsId: 'NOPTS', name: 'No point', heavyDuty: false, layout: LAYOUT, point: null }],
    ['SANDX', { hrsId: 'SANDX', name: 'Sandbox', heavyDuty: false, layout: LAYOUT, sandbox: true, point: { lat: 1, lon: 1 } }],
  ]);
  let version = 1;
  const readings = new Map<string, { reading: PublishedReading; freshness: string }>();
  let availabilityVersion = 0;
  const statusListeners: ((c: { hrsId: string; category: string }) => void)[] = [];
  const openingListeners: ((c: { hrsId: string }) => void)[] = [];
  const directory = {
    station: (id: string) => stations.get(id),
    stationIds: () => stations.keys(),
    hasLiveSource: () => true,
    get version() {
      return version;
    },
  };
  const feed = new MapFeed({
    stations: directory,
    status: {
      published: (id) => readings.get(id),
      get availabilityVersion() {
        return availabilityVersion;
      },
      onChange: (l) => (statusListeners.push(l), () => undefined),
    },
    opening: { nextDue: () => Date.parse('2026-11-30T10:00:00Z') },
    openingChanges: { onChange: (l) => (openingListeners.push(l), () => undefined) },
    readStatics: async () => [{ hrs_id: 'BERLA', operator_name: 'H2', address: { street: 'Ring', house_number: '1', city: 'Berlin' }, country: 'de', postcode: null, city: null, modified_ms: 0 }],
    log: createLogger('silent'),
    now: () => now,
  });
  const told: FeedChange[] = [];
  feed.onChanges((changes) => told.push(...changes));
  return {
    feed,
    told,
    setNow: (iso: string) => (now = new Date(iso)),
    signal(payload: Record<string, unknown>, freshness = 'fresh') {
      readings.set('BERLA', { reading: { datetime: now.getTime() - 1000, receivedAt: now.getTime(), payload }, freshness });
      availabilityVersion++;
      for (const l of statusListeners) l({ hrsId: 'BERLA', category: 'availability' });
    },
    opened() {
      for (const l of openingListeners) l({ hrsId: 'BERLA' });
    },
    rename(name: string) {
      stations.set('BERLA', { ...stations.get('BERLA')!, name });
      version++;
    },
  };
}

const settled = () => new Promise((r) => setTimeout(r, SETTLE_DELAY_MS + 30));

t.test('each kind of change and what the stream hears of it', async (t) => {
  const w = world();
  await w.feed.start();
  const first = await w.feed.body();
  const collection = JSON.parse(first.body.identity.toString());
  t.same(collection.features.map((f: { id: string }) => f.id), ['BERLA'], 'neither the station without a point nor the sandbox station');
  t.match(collection.features[0].properties, { operator: 'H2', street: 'Ring 1', city: 'Berlin', country: 'DE', postcode: null, open_now: false });
  t.same(collection.features[0].properties.fuelling_options, [{ fuelling_option: '700ld', status: 'CLOSED', reason: 'outside_opening_hours', datetime: null }]);
  await settled();
  w.told.length = 0;

  // The station opens at 10:00: one station message, a new body.
  w.setNow('2026-11-30T10:00:00Z');
  w.opened();
  await settled();
  t.same(w.told, [{ type: 'station', hrs_id: 'BERLA', open_now: true, fuelling_options: [{ fuelling_option: '700ld', status: 'UNKNOWN', reason: 'no_signal', datetime: null }] }], 'opening: open_now and UNKNOWN');
  const opened = await w.feed.body();
  t.not(opened.etag, first.etag, 'a new ETag');
  w.told.length = 0;

  // A signal: one station message.
  w.signal({ station: { maintenance: false, limitedly_available: false }, nozzles: [{ id: 'N1', available: true }] });
  await settled();
  t.match(w.told, [{ type: 'station', hrs_id: 'BERLA', fuelling_options: [{ status: 'AVAILABLE', reason: 'reported_available' }] }]);
  t.equal(w.told.length, 1);
  const signalled = await w.feed.body();
  w.told.length = 0;

  // The same reading (same time) turning stale changes no five-state value: nothing told, the same body.
  const held = signalled;
  w.signal({ station: { maintenance: false, limitedly_available: false }, nozzles: [{ id: 'N1', available: true }] }, 'stale');
  await settled();
  t.same(w.told, [], 'the reading turning stale: nothing to tell');
  t.equal((await w.feed.body()).etag, held.etag, 'and the same body');
  // The freshness fallback: UNKNOWN no_signal.
  w.signal({ station: { maintenance: false, limitedly_available: false }, nozzles: [{ id: 'N1', available: true }] }, 'unknown');
  await settled();
  t.match(w.told, [{ type: 'station', fuelling_options: [{ status: 'UNKNOWN', reason: 'no_signal' }] }], 'the fallback is a station message');
  w.told.length = 0;

  // Nothing changed at all: no message, the same body.
  const quiet = await w.feed.body();
  await settled();
  t.same(w.told, []);
  t.equal((await w.feed.body()).etag, quiet.etag, 'no change, no new body');

  // A registry change of a static field: changed, with the new ETag.
  w.rename('Berlin BER');
  const renamed = await w.feed.body();
  t.same(w.told, [{ type: 'changed', etag: renamed.etag }]);
  t.equal(JSON.parse(renamed.body.identity.toString()).features[0].properties.name, 'Berlin BER');
  w.feed.close();
});
