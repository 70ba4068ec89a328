/**
 * The public map's feed on its own, against a registry, a live status and a clock of the test's: what
 * each kind of change tells the stream (a `station` message per five-state change, `changed` for the
 * static fields and the station set, nothing for a change no client sees), and when a new body (ETag)
 * is made.
 */
import t from 'tap';
import { MapFeed, SETTLE_DELAY_MS, STATICS_WAIT_MS, type FeedChange } from '../../src/api/map/feed.js';
import type { PublishedReading } from '../../src/domain/categories/index.js';
import type { MapStationRow } from '../../db/queries/map.js';
import type { StationEntry } from '../../src/domain/stations.js';
import { createLogger } from '../../src/config/log.js';

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
  let staticRows: MapStationRow[] = [{ hrs_id: 'BERLA', operator_name: 'H2', address: { street: 'Ring', house_number: '1', city: 'Berlin' }, country: 'de', postcode: null, city: null, modified_ms: 0 }];
  /** While set, a read of the static fields waits for it (a slow PostgreSQL). */
  let gate: Promise<void> | undefined;
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
    readStatics: async () => {
      const rows = staticRows;
      await gate;
      return rows;
    },
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
    /** A registry reload: the stations as `edit` leaves them, and the static fields PostgreSQL now has. */
    reload(edit: (all: Map<string, StationEntry>) => void, rows: MapStationRow[] = staticRows) {
      edit(stations);
      staticRows = rows;
      version++;
    },
    /** Holds every read of the static fields until the returned function is called. */
    holdReads(): () => void {
      let release!: () => void;
      gate = new Promise((r) => (release = r));
      return () => {
        gate = undefined;
        release();
      };
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

const featuresOf = async (feed: MapFeed) => JSON.parse((await feed.body()).body.identity.toString()).features as { id: string; properties: Record<string, unknown> }[];

t.test('a registry reload makes one new body and one changed, with the static fields read after it', async (t) => {
  const w = world();
  await w.feed.start();
  const before = await w.feed.body();
  await settled();
  w.told.length = 0;

  // BERLA moves (a new address, a new name) and ADDED joins; reading their static fields takes a while.
  const release = w.holdReads();
  w.reload(
    (all) => {
      all.set('BERLA', { ...all.get('BERLA')!, name: 'Berlin Mitte' });
      all.set('ADDED', { hrsId: 'ADDED', name: 'Added', heavyDuty: false, layout: LAYOUT, point: { lat: 50, lon: 8 } });
    },
    [
      { hrs_id: 'ADDED', operator_name: 'H2 Nord', address: { street: 'Weg', house_number: '2', city: 'Kiel' }, country: 'de', postcode: null, city: null, modified_ms: 1 },
      { hrs_id: 'BERLA', operator_name: 'H2', address: { street: 'Allee', house_number: '9', city: 'Berlin' }, country: 'de', postcode: null, city: null, modified_ms: 1 },
    ],
  );
  const reading = w.feed.refreshStatics();
  // A request while the read is under way waits for it: never a body with the old address or no operator,
  // nor the body from before the reload.
  let answered = false;
  const during = w.feed.body().then((body) => ((answered = true), body));
  await settled();
  t.equal(answered, false, 'a request during the read waits for it');
  t.same(w.told, [], 'and nothing is told meanwhile');
  release();
  await reading;
  const got = await during;
  t.not(got.etag, before.etag, 'then it gets the new registry\'s body');
  await settled();
  const after = await w.feed.body();
  t.equal(got.etag, after.etag, 'the one new body');
  t.same(w.told, [{ type: 'changed', etag: after.etag }], 'one changed, naming the new body');
  const features = await featuresOf(w.feed);
  t.same(features.map((f) => f.id), ['ADDED', 'BERLA']);
  t.match(features[0]!.properties, { operator: 'H2 Nord', street: 'Weg 2', city: 'Kiel' }, 'the new station with its operator and address from the first body that lists it');
  t.match(features[1]!.properties, { name: 'Berlin Mitte', street: 'Allee 9' });
  w.feed.close();
});

t.test('a read of the static fields that hangs holds the feed back for STATICS_WAIT_MS at most', async (t) => {
  const w = world();
  await w.feed.start();
  await w.feed.body();
  await settled();
  w.told.length = 0;
  const release = w.holdReads();
  w.reload((all) => all.set('BERLA', { ...all.get('BERLA')!, name: 'Berlin Mitte' }));
  void w.feed.refreshStatics();
  await settled();
  t.same(w.told, [], 'nothing yet');
  await new Promise((r) => setTimeout(r, STATICS_WAIT_MS));
  t.match(w.told, [{ type: 'changed' }], 'then the reload is settled with the static fields as they were, unasked');
  t.equal((await featuresOf(w.feed))[0]!.properties.name, 'Berlin Mitte');
  release();
  w.feed.close();
});

t.test('a station that loses its coordinates or becomes a sandbox station leaves the feed: changed, and no station message for it', async (t) => {
  const w = world();
  w.reload((all) => all.set('OTHER', { hrsId: 'OTHER', name: 'Other', heavyDuty: false, layout: LAYOUT, point: { lat: 51, lon: 7 } }));
  await w.feed.start();
  t.same((await featuresOf(w.feed)).map((f) => f.id), ['BERLA', 'OTHER']);
  await settled();
  w.told.length = 0;

  w.reload((all) => all.set('BERLA', { ...all.get('BERLA')!, point: null }));
  await w.feed.refreshStatics();
  await settled();
  let body = await w.feed.body();
  t.same(w.told, [{ type: 'changed', etag: body.etag }], 'coordinates lost: changed');
  t.same((await featuresOf(w.feed)).map((f) => f.id), ['OTHER']);
  t.equal(await w.feed.feature('BERLA'), undefined, 'nor a detail');
  // A signal for it now is no station message.
  w.told.length = 0;
  w.signal({ station: { maintenance: false, limitedly_available: false }, nozzles: [{ id: 'N1', available: true }] });
  await settled();
  t.same(w.told, [], 'a signal for a station off the map tells nothing');
  t.equal((await w.feed.body()).etag, body.etag);

  w.reload((all) => all.set('BERLA', { ...all.get('BERLA')!, point: { lat: 52.4, lon: 13.5 } }));
  await w.feed.refreshStatics();
  await settled();
  t.same((await featuresOf(w.feed)).map((f) => f.id), ['BERLA', 'OTHER'], 'back with its coordinates');
  w.told.length = 0;

  w.reload((all) => all.set('OTHER', { ...all.get('OTHER')!, sandbox: true }));
  await w.feed.refreshStatics();
  await settled();
  body = await w.feed.body();
  t.same(w.told, [{ type: 'changed', etag: body.etag }], 'a sandbox station now: changed');
  t.same((await featuresOf(w.feed)).map((f) => f.id), ['BERLA']);
  w.feed.close();
});

t.test('requests after a change share one body: made once, each encoding once', async (t) => {
  const w = world();
  await w.feed.start();
  const before = await w.feed.body();
  w.setNow('2026-11-30T10:00:00Z');
  w.opened();
  // Many requests at once, before the settling's timer: the first settles, the others find its body.
  const bodies = await Promise.all(Array.from({ length: 20 }, () => w.feed.body()));
  t.not(bodies[0]!.etag, before.etag, 'a new body');
  t.ok(bodies.every((b) => b === bodies[0]), 'one body for all of them');
  t.equal(bodies[0]!.body.brotli, bodies[19]!.body.brotli, 'brotli made once');
  t.equal(bodies[0]!.body.gzip, bodies[19]!.body.gzip, 'gzip made once');
  await settled();
  t.equal(await w.feed.body(), bodies[0], 'the settling after them finds nothing new');
  w.feed.close();
});

t.test('Last-Modified never goes back, even when the clock does', async (t) => {
  const w = world();
  await w.feed.start();
  w.setNow('2026-11-30T10:00:05Z');
  w.opened();
  const first = await w.feed.body();
  t.equal(first.lastModified, Date.parse('2026-11-30T10:00:05Z') / 1000);
  // The clock steps back four seconds (a time sync), then a signal changes a value.
  w.setNow('2026-11-30T10:00:01Z');
  w.signal({ station: { maintenance: false, limitedly_available: false }, nozzles: [{ id: 'N1', available: true }] });
  const second = await w.feed.body();
  t.not(second.etag, first.etag);
  t.equal(second.lastModified, first.lastModified, 'the later body is not dated before the earlier one');
  t.ok(second.sharedSecond, 'and shares its date: If-Modified-Since with it is answered with the body');
  w.feed.close();
});
