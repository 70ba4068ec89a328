import { fileURLToPath } from 'node:url';
import type { Sql } from '../../db/connect.js';
import { deleteSandbox, lockRegistryFile, sandboxClashes } from '../../db/queries/registry-file.js';
import {
  SANDBOX_OPERATOR,
  SANDBOX_ORIGINATOR,
  SANDBOX_STATIONS,
  type SandboxStation,
} from '../domain/sandbox.js';
import type { FuellingOption } from '../domain/vocabulary.js';
import { loadFixture } from './file/load.js';

/**
 * The export v1.1 sandbox in the registry: its sample stations (src/domain/sandbox.ts) written as a
 * registry file of their own, through the same loader and validation as any other, flagged `sandbox`.
 * Installed at every start while `SANDBOX` is on (loading the same stations again changes nothing),
 * removed at start when it is off.
 */

const CONNECTORS: Record<FuellingOption, string> = { '700ld': 'H70', '350ld': 'H35', '700hd': 'H70HF', '350hd': 'H35HF' };
const PRESSURES: Record<FuellingOption, number> = { '700ld': 700, '350ld': 350, '700hd': 700, '350hd': 350 };
const DAY_MS = 24 * 3600_000;

/** The photo of a sample station: a file of the project's examples, found from this file. */
function photoPath(file: string): string {
  return fileURLToPath(new URL(`../../examples/photos/${file}`, import.meta.url));
}

function layout(s: SandboxStation) {
  const dispensers = Array.from({ length: s.dispensers }, (_, i) => ({
    external_id: `D${i + 1}`,
    is_certified: true,
    nozzles: s.options.map((option) => ({
      external_id: `D${i + 1}-${option.toUpperCase()}`,
      connector_type: CONNECTORS[option],
      vehicle_side: 'left',
      is_certified: true,
      fuelling_options: [option],
    })),
  }));
  const nozzles = dispensers.flatMap((d) => d.nozzles);
  const stages = [...new Set(s.options.map((option) => PRESSURES[option]))];
  return {
    dispensers,
    storages: [{ external_id: 'T1', nominal_capacity_kg: s.heavy_duty ? 1200 : 500, dispenser_external_ids: dispensers.map((d) => d.external_id) }],
    products: stages.map((stage) => ({
      external_id: `H2-${stage}`,
      pressure_stage: stage,
      green_hydrogen_share: 100,
      nozzle_external_ids: nozzles.filter((n) => PRESSURES[n.fuelling_options[0]!] === stage).map((n) => n.external_id),
    })),
  };
}

/** The complete AFIR dataset, made up and plainly so: every field the v1.1 record can carry. */
function details(s: SandboxStation, index: number) {
  return {
    address: { street: 'Sandboxstraße', house_number: String(index + 1), postal_code: '00000', city: s.city, country: s.country },
    coordinates: { lat: s.lat, lon: s.lon },
    entrance_coordinates: { lat: Number((s.lat + 0.0004).toFixed(4)), lon: Number((s.lon - 0.0003).toFixed(4)) },
    city: s.city,
    country: s.country,
    owner: 'Sandbox Hydrogen (sample data)',
    amenities: ['toilets', 'shop'],
    access_restrictions: 'none',
    payment_methods: ['credit_card', 'fuel_card'],
    authorisation_methods: ['card_reader', 'app'],
    contact: { email: 'sandbox@example.org', website: 'https://example.org/sandbox' },
    nuts_region: s.country === 'CH' ? 'CH040' : `${s.country}0`,
    location_directions: 'Sample station of the export v1.1 sandbox: not a real place.',
    vehicle_types: s.heavy_duty ? ['M1', 'N1', 'M3', 'N3'] : ['M1', 'N1'],
    max_vehicle_mass: s.heavy_duty ? 44 : 3.5,
    max_vehicle_height: s.heavy_duty ? 4 : 2.5,
    max_vehicle_length: s.heavy_duty ? 18.75 : 6,
    max_vehicle_width: s.heavy_duty ? 2.55 : 2.2,
    parking_spaces: 4,
    parking_spaces_disabled: 1,
    service_support: 'Sandbox helpdesk, around the clock (sample data)',
    contact_phone_number: '+4930901820',
    cumulative_daily_hydrogen_capacity: s.heavy_duty ? 1000 : 400,
  };
}

/** Events dated from the day of `now`: one ongoing, one upcoming, so `/events` shows both kinds. */
function events(s: SandboxStation, now: number) {
  const day = Math.floor(now / DAY_MS) * DAY_MS;
  const at = (ms: number) => new Date(ms).toISOString();
  if (s.hrs_id === 'SBXBE') {
    return [{ id: 'sandbox-upcoming-service', kind: 'maintenance', starts_at: at(day + 3 * DAY_MS), ends_at: at(day + 3 * DAY_MS + 4 * 3600_000), description: 'Sample event: a compressor service in three days.' }];
  }
  if (s.hrs_id === 'SBXHH') {
    return [{ id: 'sandbox-lane-works', kind: 'limited-service', starts_at: at(day - DAY_MS), ends_at: at(day + 7 * DAY_MS), description: 'Sample event: one truck lane closed for works.' }];
  }
  return [];
}

/** The sandbox as a registry file (`now` dates its events). */
export function sandboxFixture(now = Date.now()) {
  return {
    operators: [{ id: SANDBOX_OPERATOR, name: 'Sandbox Hydrogen (sample data)', email: null }],
    stations: SANDBOX_STATIONS.map((s, index) => ({
      hrs_id: s.hrs_id,
      operator: SANDBOX_OPERATOR,
      name: s.name,
      heavy_duty: s.heavy_duty,
      opening_hours: s.opening_hours,
      details: details(s, index),
      layout: layout(s),
      photo: s.hrs_id === 'SBXBE' ? photoPath('demo-station-day.png') : null,
      events: events(s, now),
    })),
    originators: [{ id: SANDBOX_ORIGINATOR, name: 'Sandbox signal simulator', call_log_mode: 'disabled' }],
    assignments: SANDBOX_STATIONS.map((s) => ({ originator: SANDBOX_ORIGINATOR, hrs_id: s.hrs_id, signal_type: 'v1', state: 'live' })),
  };
}

/** What installing or removing the sandbox changed: the stations to announce. */
export interface SandboxChange {
  changedStations: string[];
}

/** Raised when the registry already uses a name the sandbox needs (written before the names were reserved). */
export class SandboxClashError extends Error {
  readonly code = 'SANDBOX_CLASH';
}

/**
 * Writes the sandbox's stations (unchanged ones stay as they are); `now` dates their events. Refuses,
 * changing nothing, when a production station, operator or originator already has a name the sandbox
 * uses: the sandbox never overwrites production data.
 */
export async function installSandbox(sql: Sql, now = new Date()): Promise<SandboxChange> {
  const clashes = await sandboxClashes(sql, SANDBOX_OPERATOR, SANDBOX_ORIGINATOR);
  if (clashes.length > 0) {
    throw new SandboxClashError(
      `the registry already uses what the export v1.1 sandbox needs (${clashes.join('; ')}): rename it, or set SANDBOX=off`,
    );
  }
  const summary = await loadFixture(sql, sandboxFixture(now.getTime()), { baseDir: '/', now, sandbox: true });
  return { changedStations: summary.changedStations };
}

/** Removes the sandbox's stations (with their signals), operator and originator. */
export async function removeSandbox(sql: Sql): Promise<SandboxChange> {
  const changedStations = await sql.begin(async (tx) => {
    await lockRegistryFile(tx);
    return deleteSandbox(tx, SANDBOX_OPERATOR, SANDBOX_ORIGINATOR);
  });
  return { changedStations: [...changedStations].sort() };
}
