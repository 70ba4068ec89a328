import { fileURLToPath } from 'node:url';
import { CATEGORIES } from '../../domain/categories/index.js';

/**
 * The demo registry: a dozen stations with realistic layouts, one originator live on everything, and
 * photos and events on some stations, so every export endpoint has something to show.
 */

export const DEMO_TOKENS = {
  import_v2: 'demo-import-v2-token',
  import_v1: 'demo-import-v1-token',
  export_v2: 'demo-export-v2-token',
  export_v1: 'demo-export-v1-token',
} as const;

/** The demo's admin token (dashboard, admin API) when ADMIN_TOKEN does not set one. */
export const DEMO_ADMIN_TOKEN = 'demo-admin-token-0001';

export const DEMO_ORIGINATOR = 'demo-monitoring';

/** The demo's data user: signs in on the portal with a link e-mailed to this address. */
export const DEMO_USER_EMAIL = 'demo-user@demo-h2.example';
/** The demo operator's staff: stations, layouts, events, photos and assignments in the portal. */
export const DEMO_OPERATOR_EMAIL = 'staff@demo-h2.example';
/** The demo originators' manager: their import tokens, stations and call logs in the portal. */
export const DEMO_MANAGER_EMAIL = 'manager@demo-monitoring.example';

/** A monitoring system still on the legacy import (v1.1), live for the availability of a few stations. */
export const DEMO_LEGACY_ORIGINATOR = 'demo-legacy-monitoring';
export const DEMO_LEGACY_STATIONS: readonly string[] = ['COPEN', 'LYONP', 'LEIPZ'];

/**
 * A demo station, described by the same place fields (id, name, city, country, position, hours) as the
 * sandbox's SandboxStation (src/domain/sandbox.ts), as both are written into a registry file. The rest
 * differs: the demo gives prices and always opening hours, the sandbox fuelling options and a behaviour;
 * a shared base type would tie the demo to the export sandbox for six fields.
 */
interface DemoStation {
  hrs_id: string;
  name: string;
  city: string;
  country: string;
  lat: number;
  lon: number;
  opening_hours: string;
  heavy_duty: boolean;
  dispensers: number;
  price700: string | null;
  price350: string | null;
  /** A file of examples/photos/ shown as the station's photo. */
  photo?: string;
}

/**
 * The demo photos, by absolute path: `hrs demo` loads the fixture with the working directory as its
 * base, which need not be the project's root, so the path is found from this file instead.
 */
export function demoPhotoPath(file: string): string {
  return fileURLToPath(new URL(`../../../examples/photos/${file}`, import.meta.url));
}

const STATIONS: DemoStation[] = [
  { hrs_id: 'BERAP', name: 'Berlin Airport', city: 'Schönefeld', country: 'DE', lat: 52.3667, lon: 13.5033, opening_hours: '24/7', heavy_duty: false, dispensers: 2, price700: '13.850', price350: '12.850', photo: 'demo-station-day.png' },
  { hrs_id: 'HAMPT', name: 'Hamburg Port Truck Stop', city: 'Hamburg', country: 'DE', lat: 53.5333, lon: 9.9667, opening_hours: 'Mo-Sa 05:00-23:00', heavy_duty: true, dispensers: 2, price700: null, price350: '11.990', photo: 'demo-truck-stop.png' },
  { hrs_id: 'MUNCE', name: 'Munich Centre', city: 'München', country: 'DE', lat: 48.1374, lon: 11.5755, opening_hours: 'Mo-Su 06:00-22:00', heavy_duty: false, dispensers: 1, price700: '14.200', price350: null },
  { hrs_id: 'COLOG', name: 'Cologne Ring', city: 'Köln', country: 'DE', lat: 50.9375, lon: 6.9603, opening_hours: '24/7', heavy_duty: false, dispensers: 1, price700: '13.950', price350: null },
  { hrs_id: 'FRANK', name: 'Frankfurt Cargo City', city: 'Frankfurt am Main', country: 'DE', lat: 50.0379, lon: 8.5622, opening_hours: '24/7', heavy_duty: true, dispensers: 3, price700: '13.600', price350: '12.400', photo: 'demo-station-dusk.png' },
  { hrs_id: 'STUTT', name: 'Stuttgart Nord', city: 'Stuttgart', country: 'DE', lat: 48.8122, lon: 9.1775, opening_hours: 'Mo-Fr 06:00-22:00; Sa,Su 08:00-20:00', heavy_duty: false, dispensers: 1, price700: '14.050', price350: null },
  { hrs_id: 'ZURIC', name: 'Zürich Hardbrücke', city: 'Zürich', country: 'CH', lat: 47.3856, lon: 8.5170, opening_hours: '24/7', heavy_duty: true, dispensers: 2, price700: '15.900', price350: '14.900' },
  { hrs_id: 'VIENN', name: 'Wien Simmering', city: 'Wien', country: 'AT', lat: 48.1667, lon: 16.4333, opening_hours: 'Mo-Su 06:00-22:00', heavy_duty: false, dispensers: 1, price700: '13.990', price350: null },
  { hrs_id: 'AMSTE', name: 'Amsterdam Westpoort', city: 'Amsterdam', country: 'NL', lat: 52.4000, lon: 4.8167, opening_hours: '24/7', heavy_duty: true, dispensers: 2, price700: '14.500', price350: '13.500' },
  { hrs_id: 'COPEN', name: 'København Sydhavn', city: 'København', country: 'DK', lat: 55.6500, lon: 12.5333, opening_hours: 'Mo-Su 07:00-21:00', heavy_duty: false, dispensers: 1, price700: '14.300', price350: null },
  { hrs_id: 'LYONP', name: 'Lyon Port Edouard Herriot', city: 'Lyon', country: 'FR', lat: 45.7278, lon: 4.8389, opening_hours: 'Mo-Fr 06:00-20:00', heavy_duty: true, dispensers: 1, price700: null, price350: '12.700' },
  { hrs_id: 'LEIPZ', name: 'Leipzig Messe', city: 'Leipzig', country: 'DE', lat: 51.3967, lon: 12.4006, opening_hours: '24/7', heavy_duty: false, dispensers: 1, price700: '13.700', price350: '12.700' },
];

/** The layout of a demo station: each dispenser has a 700 bar nozzle for cars, plus 350 bar where sold. */
function layout(s: DemoStation) {
  const dispensers = Array.from({ length: s.dispensers }, (_, i) => {
    const d = `D${i + 1}`;
    const nozzles = [];
    if (s.price700) nozzles.push({ external_id: `${d}-H70`, connector_type: 'H70', vehicle_side: 'left', is_certified: true, fuelling_options: s.heavy_duty && i > 0 ? ['700hd'] : ['700ld'] });
    if (s.price350) nozzles.push({ external_id: `${d}-H35`, connector_type: s.heavy_duty ? 'H35HF' : 'H35', vehicle_side: 'right', is_certified: i === 0, fuelling_options: s.heavy_duty ? ['350hd'] : ['350ld'] });
    return { external_id: d, is_certified: true, nozzles };
  });
  const nozzles = dispensers.flatMap((d) => d.nozzles.map((n) => n.external_id));
  const products = [];
  if (s.price700) products.push({ external_id: 'H2-700', pressure_stage: 700, green_hydrogen_share: s.country === 'CH' ? 100 : 40, nozzle_external_ids: nozzles.filter((n) => n.endsWith('H70')) });
  if (s.price350) products.push({ external_id: 'H2-350', pressure_stage: 350, green_hydrogen_share: null, nozzle_external_ids: nozzles.filter((n) => n.endsWith('H35')) });
  return {
    dispensers,
    storages: [{ external_id: 'T1', nominal_capacity_kg: s.heavy_duty ? 1500 : 600, dispenser_external_ids: dispensers.map((d) => d.external_id) }],
    products,
  };
}

const HOUR = 3600_000;

/** Ongoing and upcoming events, dated from `now` so the export API (which shows no past event) always has some. */
function demoEvents(hrsId: string, now: number) {
  const day = Math.floor(now / (24 * HOUR)) * 24 * HOUR;
  const at = (ms: number) => new Date(ms).toISOString();
  switch (hrsId) {
    case 'BERAP':
      return [{ id: 'compressor-service', kind: 'maintenance', starts_at: at(day + 32 * HOUR), ends_at: at(day + 36 * HOUR), description: 'Compressor service: one dispenser at a time out of use.' }];
    case 'HAMPT':
      return [{ id: 'lane-works', kind: 'limited-service', starts_at: at(day - 24 * HOUR), ends_at: at(day + 4 * 24 * HOUR), description: 'Road works at the entrance: trucks over 40 t use the north gate.' }];
    case 'LEIPZ':
      return [
        { id: 'second-dispenser', kind: 'opening', starts_at: at(day + 14 * 24 * HOUR + 8 * HOUR), ends_at: null, description: 'A second dispenser opens, with 350 bar for buses.' },
        { id: 'closure-for-works', kind: 'closure', starts_at: at(day + 13 * 24 * HOUR + 6 * HOUR), ends_at: at(day + 13 * 24 * HOUR + 18 * HOUR), description: 'Closed for the installation works.' },
      ];
    default:
      return [];
  }
}

export function demoStations(): DemoStation[] {
  return STATIONS;
}

export function demoFixture(now = Date.now()) {
  return {
    operators: [{ id: 'demo-h2', name: 'Demo Hydrogen Networks', email: 'operations@demo-h2.example' }],
    stations: STATIONS.map((s) => ({
      hrs_id: s.hrs_id,
      operator: 'demo-h2',
      name: s.name,
      heavy_duty: s.heavy_duty,
      opening_hours: s.opening_hours,
      details: {
        city: s.city, country: s.country, lat: s.lat, lon: s.lon, vehicle_types: s.heavy_duty ? ['M1', 'N1', 'M3', 'N3'] : ['M1', 'N1'],
        cumulative_daily_hydrogen_capacity: s.heavy_duty ? 1000 : 400,
      },
      v1_fuel_types: [...(s.price700 ? ['700car'] : []), ...(s.price350 ? [s.heavy_duty ? '350bus' : '350car'] : [])],
      layout: layout(s),
      photo: s.photo === undefined ? null : demoPhotoPath(s.photo),
      events: demoEvents(s.hrs_id, now),
    })),
    originators: [
      { id: DEMO_ORIGINATOR, name: 'Demo station monitoring', call_log_mode: 'errors' },
      { id: DEMO_LEGACY_ORIGINATOR, name: 'Demo legacy monitoring (import v1.1)', call_log_mode: 'errors' },
    ],
    // The v2 originator reports everything except the availability of the legacy originator's stations.
    assignments: [
      ...STATIONS.flatMap((s) =>
        CATEGORIES
          .filter((signal_type) => signal_type !== 'availability' || !DEMO_LEGACY_STATIONS.includes(s.hrs_id))
          .map((signal_type) => ({ originator: DEMO_ORIGINATOR, hrs_id: s.hrs_id, signal_type: signal_type as string, state: 'live' })),
      ),
      ...DEMO_LEGACY_STATIONS.map((hrs_id) => ({ originator: DEMO_LEGACY_ORIGINATOR, hrs_id, signal_type: 'v1', state: 'live' })),
    ],
    users: [
      { id: 'demo-user', email: DEMO_USER_EMAIL, name: 'Demo data user' },
      { id: 'demo-staff', email: DEMO_OPERATOR_EMAIL, name: 'Demo operator staff', operators: ['demo-h2'] },
      { id: 'demo-manager', email: DEMO_MANAGER_EMAIL, name: 'Demo originator manager', originators: [DEMO_ORIGINATOR, DEMO_LEGACY_ORIGINATOR] },
    ],
    tokens: [
      { generation: 'import_v2', originator: DEMO_ORIGINATOR, name: 'demo monitoring', value: DEMO_TOKENS.import_v2, expires_at: null },
      { generation: 'import_v1', originator: DEMO_LEGACY_ORIGINATOR, name: 'demo legacy monitoring', value: DEMO_TOKENS.import_v1, expires_at: null },
      { generation: 'export_v2', user: 'demo-user', name: 'demo', value: DEMO_TOKENS.export_v2, expires_at: null },
      { generation: 'export_v1', name: 'demo legacy client', value: DEMO_TOKENS.export_v1, expires_at: null },
    ],
  };
}
