/** The opening clock: a station's opening and closing minutes fire without a signal, and follow registry changes. */
import t from 'tap';
import { OpeningClock, type OpeningChange } from '../../machines/opening-clock.js';
import { isOpen } from '../../src/domain/opening-hours.js';
import type { StationDirectory, StationEntry } from '../../src/domain/stations.js';

// The first evaluation loads and parses; the timed tests below must not pay for it.
isOpen('Mo-Su 10:00-20:00; Mo-Su 10:00-22:00', 'Europe/Berlin', new Date());
/** How far ahead of this clock the change is placed, and how long the test waits for it. */
const AHEAD_MS = 600;
const WAIT_MS = 1500;

function directory(stations: StationEntry[]): StationDirectory {
  const byId = new Map(stations.map((s) => [s.hrsId, s]));
  return {
    station: (id) => byId.get(id),
    stationIds: () => byId.keys(),
    hasLiveSource: () => true,
  };
}

const station = (hrsId: string, openingHours: string | null): StationEntry => ({ hrsId, name: hrsId, heavyDuty: false, layout: null, openingHours, timeZone: 'Europe/Berlin' });

t.test('opens at the minute, without a signal; stations without hours never fire', async (t) => {
  // 10:00 in Berlin (CET, UTC+1) on a weekday, AHEAD_MS ahead of this clock.
  const opensAt = Date.parse('2026-11-24T09:00:00Z');
  const offset = opensAt - AHEAD_MS - Date.now();
  const now = () => Date.now() + offset;
  const stations = [station('OPENS', 'Mo-Su 10:00-20:00'), station('ALWAY', '24/7'), station('NOHRS', null)];
  const clock = new OpeningClock(directory(stations), now);
  t.teardown(() => clock.close());
  const changes: OpeningChange[] = [];
  clock.onChange((change) => changes.push(change));
  clock.start();
  t.equal(clock.isOpen('OPENS'), false, 'closed before ten');
  await new Promise((resolve) => setTimeout(resolve, WAIT_MS));
  t.same(changes, [{ hrsId: 'OPENS', open: true, at: opensAt }], 'one change, at the opening minute');
  t.equal(clock.isOpen('OPENS'), true);
  t.equal(clock.isOpen('NOHRS'), true, 'no opening hours: always open');
});

t.test('a registry change reschedules', async (t) => {
  const closesAt = Date.parse('2026-11-24T19:00:00Z'); // 20:00 in Berlin
  const offset = closesAt - AHEAD_MS - Date.now();
  const stations = new Map<string, StationEntry>([['SHIFT', station('SHIFT', 'Mo-Su 10:00-22:00')]]);
  const dir: StationDirectory = { station: (id) => stations.get(id), stationIds: () => stations.keys(), hasLiveSource: () => true };
  const clock = new OpeningClock(dir, () => Date.now() + offset);
  t.teardown(() => clock.close());
  const changes: OpeningChange[] = [];
  clock.onChange((change) => changes.push(change));
  clock.start();
  stations.set('SHIFT', station('SHIFT', 'Mo-Su 10:00-20:00'));
  clock.stationsChanged(new Set(['SHIFT']));
  await new Promise((resolve) => setTimeout(resolve, WAIT_MS));
  t.same(changes, [{ hrsId: 'SHIFT', open: false, at: closesAt }], 'closes at the new closing minute');
  stations.delete('SHIFT');
  clock.stationsChanged(new Set(['SHIFT']));
  t.equal(clock.isOpen('SHIFT'), true, 'a removed station is not closed');
});
