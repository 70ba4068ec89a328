/** Fixtures the benchmarked platform can be started with (platform-server.ts, BENCH_FIXTURE). */
import { baseFixture } from '../../helpers/fixtures.js';

/** Number of generated stations in the `import-v2` fixture. */
export const IMPORT_V2_STATIONS = 50;

/** Station ids `BNAAA`, `BNAAB`, …: five uppercase letters, none of them in the base fixture. */
export function stationIds(count: number): string[] {
  if (count > 26 ** 3) throw new Error(`at most ${26 ** 3} generated stations`);
  const letter = (n: number) => String.fromCharCode(65 + (Math.floor(n) % 26));
  return Array.from({ length: count }, (_, i) => `BN${letter(i / 676)}${letter(i / 26)}${letter(i)}`);
}

/** The four import v2 signal types, each a section of the export v2 station status. */
export const SIGNAL_TYPES = ['availability', 'usage', 'hydrogen-storage', 'pricing'] as const;

/**
 * Adds `count` generated stations to `fixture`, each with BERLA's confirmed layout (nozzles N1 and N2
 * on dispenser D1, storage S1, products P700 and P350) and a live assignment of the originator mon-1
 * for each of `signalTypes`.
 */
function addStations(fixture: ReturnType<typeof baseFixture>, count: number, signalTypes: readonly string[]) {
  const berla = baseFixture().stations[0]!;
  for (const [i, hrsId] of stationIds(count).entries()) {
    fixture.stations.push({
      hrs_id: hrsId,
      operator: berla.operator,
      name: `Benchmark station ${i + 1}`,
      heavy_duty: false,
      opening_hours: '24/7',
      layout: structuredClone(berla.layout),
    } as Record<string, unknown> as typeof berla);
    for (const signalType of signalTypes) {
      fixture.assignments.push({ originator: 'mon-1', hrs_id: hrsId, signal_type: signalType, state: 'live' });
    }
  }
  return fixture;
}

/**
 * The standard test fixture plus `count` stations with BERLA's layout, each with a live availability
 * assignment for the originator mon-1, whose import v2 token is TOKENS.import_v2.
 */
export function importV2Fixture(count = IMPORT_V2_STATIONS) {
  return addStations(baseFixture(), count, ['availability']);
}

/**
 * The `import-v2` fixture with mon-1 also live on the legacy import (signal type `v1`) for each
 * generated station, so one platform takes the same stations' availability over import v2 and over
 * import v1/v1.1 (mon-1's import v1 token is TOKENS.import_v1). The stations' confirmed layout
 * provides 700ld and 350ld, the codes a v1.1 signal names them by.
 */
export function importV1Fixture(count = IMPORT_V2_STATIONS) {
  const fixture = importV2Fixture(count);
  // BERLA's v1 fuel types: import v1 (not v1.1) names them (700car is N1's 700ld, 350car N2's 350ld).
  for (const station of fixture.stations) Object.assign(station, { v1_fuel_types: ['700car', '350car'] });
  for (const hrsId of stationIds(count)) fixture.assignments.push({ originator: 'mon-1', hrs_id: hrsId, signal_type: 'v1', state: 'live' });
  return fixture;
}

/** Number of generated stations in the `status` fixture. */
export const STATUS_STATIONS = 1000;

/**
 * The standard test fixture's operator, originator, user and tokens with exactly `count` registered
 * stations (the generated ones: BERLA and HAMBG and their assignments are left out), each live with
 * mon-1 for all four signal types.
 */
export function statusFixture(count = STATUS_STATIONS) {
  const fixture = baseFixture();
  fixture.stations = [];
  fixture.assignments = [];
  return addStations(fixture, count, SIGNAL_TYPES);
}

/** Opening hours of the `export-v1` fixture's stations other than every fourth, in their time zone. */
export const WEEKLY_HOURS = 'Mo-Fr 06:00-22:00; Sa,Su 08:00-20:00';
/** The time zone of every `export-v1` fixture station. */
export const EXPORT_V1_TIME_ZONE = 'Europe/Berlin';

/** Opening hours of the `export-v1` fixture's station i: every fourth (i = 0, 4, …) always open. */
export const exportV1Hours = (i: number) => (i % 4 === 0 ? '24/7' : WEEKLY_HOURS);

/**
 * For the export v1/v1.1 summary: the standard test fixture's operator, originator, user and tokens
 * (the export v1 token TOKENS.export_v1 among them) with exactly `count` registered stations (the
 * generated ones), each live with mon-1 for availability (700ld and 350ld from BERLA's layout) and
 * usage, in time zone Europe/Berlin, every fourth open 24/7 and the others `WEEKLY_HOURS`.
 */
export function exportV1Fixture(count = STATUS_STATIONS) {
  const fixture = baseFixture();
  fixture.stations = [];
  fixture.assignments = [];
  addStations(fixture, count, ['availability', 'usage']);
  fixture.stations.forEach((station, i) => Object.assign(station, { opening_hours: exportV1Hours(i), time_zone: EXPORT_V1_TIME_ZONE }));
  return fixture;
}

/** Only the data user alice and her export v2 token: for registries seeded in SQL (./seed.ts). */
function exportTokenFixture() {
  const base = baseFixture();
  return { users: base.users, tokens: base.tokens.filter((token) => token.generation === 'export_v2') };
}

const FIXTURES: Record<string, () => unknown> = {
  base: baseFixture,
  'export-token': exportTokenFixture,
  'export-v1': exportV1Fixture,
  'import-v1': importV1Fixture,
  'import-v2': importV2Fixture,
  status: statusFixture,
};

export function benchFixture(name: string): unknown {
  const make = FIXTURES[name];
  if (!make) throw new Error(`unknown benchmark fixture "${name}"; known: ${Object.keys(FIXTURES).join(', ')}`);
  return make();
}
