/**
 * The registry cache without a database: it is built from the rows a reader function returns, so its
 * maps, lookups and the changed-station sets its reloads report are tested on rows made here.
 */
import t from 'tap';
import type { RegistryRows } from '../../db/queries/registry.js';
import { Registry } from '../../src/registry/registry.js';

function rows(overrides: Partial<RegistryRows> = {}): RegistryRows {
  return {
    stations: [
      { hrs_id: 'BERLA', name: 'Berlin Airport', heavy_duty: false, confirmed: true },
      { hrs_id: 'HAMBG', name: 'Hamburg', heavy_duty: true, confirmed: false },
    ],
    nozzles: [
      { hrs_id: 'BERLA', dispenser: 'D1', nozzle: 'N1', options: ['700ld'] },
      { hrs_id: 'BERLA', dispenser: 'D1', nozzle: 'N2', options: ['350ld', '350hd'] },
      { hrs_id: 'BERLA', dispenser: 'D2', nozzle: null, options: [] },
    ],
    storages: [{ hrs_id: 'BERLA', external_id: 'S1' }],
    products: [{ hrs_id: 'BERLA', external_id: 'P700' }],
    assignments: [
      { originator_id: 'mon-1', hrs_id: 'BERLA', signal_type: 'availability', state: 'live' },
      { originator_id: 'mon-2', hrs_id: 'BERLA', signal_type: 'pricing', state: 'testing' },
    ],
    originators: [{ id: 'mon-1', call_log_mode: 'always' }],
    ...overrides,
  };
}

t.test('stations, confirmed layouts, assignments and call-log modes from the rows', async (t) => {
  const registry = new Registry(async () => rows());
  await registry.reload();
  const berla = registry.station('BERLA')!;
  t.same([...berla.layout!.dispensers], [['D1', ['N1', 'N2']], ['D2', []]], 'dispensers keep their nozzles in order, empty ones too');
  t.same(berla.layout!.nozzles.get('N2'), { dispenser: 'D1', fuellingOptions: ['350ld', '350hd'] });
  t.same([...berla.layout!.storages, ...berla.layout!.products], ['S1', 'P700']);
  t.equal(registry.station('HAMBG')!.layout, null, 'no confirmed layout: null');
  t.equal(registry.station('NOPEX'), undefined);
  t.same([...registry.stationIds()].sort(), ['BERLA', 'HAMBG']);
  t.equal(registry.assignment('mon-1', 'BERLA', 'availability'), 'live');
  t.equal(registry.assignment('mon-2', 'BERLA', 'pricing'), 'testing');
  t.equal(registry.assignment('mon-1', 'BERLA', 'pricing'), undefined);
  t.ok(registry.hasLiveSource('BERLA', 'availability'));
  t.notOk(registry.hasLiveSource('BERLA', 'pricing'), 'testing is no live source');
  t.equal(registry.callLogMode('mon-1'), 'always');
  t.equal(registry.callLogMode('mon-9'), 'errors', 'the default mode');
});

t.test('a reload reports the stations whose published status may differ', async (t) => {
  let current = rows();
  const registry = new Registry(async () => current);
  const reports: string[][] = [];
  registry.onReload((changed) => reports.push([...changed].sort()));
  await registry.reload();
  t.same(reports.pop(), ['BERLA', 'HAMBG'], 'the first reload: every station is new');
  await registry.reload();
  t.same(reports.pop(), [], 'nothing changed: nothing reported');
  current = rows({ storages: [] });
  await registry.reload();
  t.same(reports.pop(), ['BERLA'], 'a layout change');
  current = rows({ storages: [], assignments: [{ originator_id: 'mon-1', hrs_id: 'HAMBG', signal_type: 'usage', state: 'live' }] });
  await registry.reload();
  t.same(reports.pop(), ['BERLA', 'HAMBG'], 'live sources moved from one station to another');
  current = rows({ storages: [], stations: [current.stations[0]!], assignments: [] });
  await registry.reload();
  t.same(reports.pop(), ['HAMBG'], 'a removed station (BERLA is as it was)');
  const berla = current.stations[0]!;
  current = { ...current, stations: [{ ...berla, opening_hours: 'Mo-Fr 06:00-22:00', time_zone: 'Europe/Berlin' }] };
  await registry.reload();
  t.same(reports.pop(), ['BERLA'], 'new opening hours (the summary and the opening clock follow them)');
  current = { ...current, stations: [{ ...berla, opening_hours: 'Mo-Fr 06:00-22:00', time_zone: 'Europe/Vienna' }] };
  await registry.reload();
  t.same(reports.pop(), ['BERLA'], 'another time zone');
  current = { ...current, stations: [{ ...berla, opening_hours: 'Mo-Fr 06:00-22:00', time_zone: 'Europe/Vienna', v1_fuel_types: ['700car'] }] };
  await registry.reload();
  t.same(reports.pop(), ['BERLA'], 'other v1 fuel types');
});

t.test('concurrent reloads coalesce into at most one more read', async (t) => {
  let reads = 0;
  const registry = new Registry(async () => {
    reads++;
    await new Promise((resolve) => setTimeout(resolve, 20));
    return rows();
  });
  await Promise.all([registry.reload(), registry.reload(), registry.reload(), registry.reload()]);
  t.equal(reads, 2, 'one read under way, one more for everything asked meanwhile');
});

t.test('each station carries its opening hours, time zone and holiday country', async (t) => {
  const registry = new Registry(async () =>
    rows({
      stations: [
        { hrs_id: 'BERLA', name: 'Berlin Airport', heavy_duty: false, confirmed: true, opening_hours: 'Mo-Sa 05:00-23:00', time_zone: 'Europe/Berlin', country: 'DE' },
        { hrs_id: 'HAMBG', name: 'Hamburg', heavy_duty: true, confirmed: false },
      ],
    }),
  );
  await registry.reload();
  t.match(registry.station('BERLA'), { openingHours: 'Mo-Sa 05:00-23:00', timeZone: 'Europe/Berlin', holidayCountry: 'de' });
  t.match(registry.station('HAMBG'), { openingHours: null, timeZone: null, holidayCountry: null }, 'none given: null');
});
