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

/** Opening hours of the `datex2` fixture's stations: the even ones open 24/7, the odd ones these. */
export const DATEX2_HOURS = ['24/7', WEEKLY_HOURS] as const;
/** Opening hours of the `datex2` fixture's station i. */
export const datex2Hours = (i: number) => DATEX2_HOURS[i % 2]!;

/** A nozzle of a `datex2` fixture station: its id, dispenser and fuelling option. */
export interface Datex2Nozzle {
  id: string;
  dispenser: string;
  option: '700ld' | '350ld' | '700hd' | '350hd';
}

/** A product of a `datex2` fixture station: its id, pressure stage and the nozzles dispensing it. */
export interface Datex2Product {
  id: string;
  pressure: 350 | 700;
  green: number | null;
  nozzles: string[];
}

/**
 * The layout of the `datex2` fixture's station i, by i modulo 3: two nozzles on one dispenser (700ld,
 * 350ld; products P700 and P350), three (a second dispenser with a 350hd nozzle N3, which P350 also
 * dispenses), or four (a truck dispenser with 700hd N3 and 350hd N4, each its own product; two storages).
 */
export function datex2Layout(i: number): { nozzles: Datex2Nozzle[]; storages: string[]; products: Datex2Product[]; heavyDuty: boolean } {
  const car: Datex2Nozzle[] = [
    { id: 'N1', dispenser: 'D1', option: '700ld' },
    { id: 'N2', dispenser: 'D1', option: '350ld' },
  ];
  switch (i % 3) {
    case 0:
      return {
        nozzles: car,
        storages: ['S1'],
        products: [
          { id: 'P700', pressure: 700, green: null, nozzles: ['N1'] },
          { id: 'P350', pressure: 350, green: 50, nozzles: ['N2'] },
        ],
        heavyDuty: false,
      };
    case 1:
      return {
        nozzles: [...car, { id: 'N3', dispenser: 'D2', option: '350hd' }],
        storages: ['S1'],
        products: [
          { id: 'P700', pressure: 700, green: 100, nozzles: ['N1'] },
          { id: 'P350', pressure: 350, green: 100, nozzles: ['N2', 'N3'] },
        ],
        heavyDuty: true,
      };
    default:
      return {
        nozzles: [...car, { id: 'N3', dispenser: 'D2', option: '700hd' }, { id: 'N4', dispenser: 'D2', option: '350hd' }],
        storages: ['S1', 'S2'],
        products: [
          { id: 'P700', pressure: 700, green: null, nozzles: ['N1'] },
          { id: 'P350', pressure: 350, green: 30, nozzles: ['N2'] },
          { id: 'P700HD', pressure: 700, green: null, nozzles: ['N3'] },
          { id: 'P350HD', pressure: 350, green: 30, nozzles: ['N4'] },
        ],
        heavyDuty: true,
      };
  }
}

/** The daily capacity (kg) the `datex2` fixture gives station i: by its layout, 200, 600 or 1,200. */
export const datex2Capacity = (i: number) => [200, 600, 1200][i % 3]!;

/**
 * For the DATEX II publications: the standard test fixture's operator, originator, user and tokens
 * (the export v2 token TOKENS.export_v2 among them) with exactly `count` registered stations (the
 * generated ones), each publishable in DATEX II (`cumulative_daily_hydrogen_capacity` and coordinates
 * in Germany in its details, with an address and contacts), laid out as `datex2Layout` says, in time
 * zone Europe/Berlin with the hours `datex2Hours` gives, and live with mon-1 for all four signal types.
 */
export function datex2Fixture(count = STATUS_STATIONS) {
  const fixture = baseFixture();
  fixture.stations = [];
  fixture.assignments = [];
  addStations(fixture, count, SIGNAL_TYPES);
  fixture.stations.forEach((station, i) => {
    const layout = datex2Layout(i);
    const dispensers = [...new Set(layout.nozzles.map((n) => n.dispenser))];
    Object.assign(station, {
      heavy_duty: layout.heavyDuty,
      opening_hours: datex2Hours(i),
      time_zone: EXPORT_V1_TIME_ZONE,
      details: {
        address: { street: `Wasserstoffstraße`, house_number: String(1 + (i % 200)), postal_code: String(10000 + ((i * 89) % 89999)).padStart(5, '0'), city: `City ${i % 97}`, country: 'DE' },
        country: 'DE',
        coordinates: { lat: Math.round((47.5 + ((i * 37) % 700) / 100) * 1e5) / 1e5, lon: Math.round((6 + ((i * 53) % 900) / 100) * 1e5) / 1e5 },
        cumulative_daily_hydrogen_capacity: datex2Capacity(i),
        owner: 'Bench Hydrogen GmbH',
        contact: { email: 'ops@h2-demo.example', website: 'https://h2-demo.example/stations' },
        contact_phone_number: '+493012345678',
        nuts_region: 'DE300',
        vehicle_types: layout.heavyDuty ? ['M1', 'N1', 'N3'] : ['M1', 'N1'],
        payment_methods: ['fuel card', 'credit card'],
      },
      layout: {
        dispensers: dispensers.map((d) => ({
          external_id: d,
          is_certified: true,
          nozzles: layout.nozzles
            .filter((n) => n.dispenser === d)
            .map((n) => ({
              external_id: n.id,
              connector_type: `H${n.option.slice(0, 2)}${n.option.endsWith('hd') ? 'HF' : ''}`,
              vehicle_side: n.id === 'N2' || n.id === 'N4' ? 'right' : 'left',
              is_certified: true,
              fuelling_options: [n.option],
            })),
        })),
        storages: layout.storages.map((s, k) => ({ external_id: s, nominal_capacity_kg: 500, dispenser_external_ids: layout.storages.length === 1 ? dispensers : [dispensers[k]!] })),
        products: layout.products.map((p) => ({ external_id: p.id, pressure_stage: p.pressure, green_hydrogen_share: p.green, nozzle_external_ids: p.nozzles })),
      },
    });
  });
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
  datex2: datex2Fixture,
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
