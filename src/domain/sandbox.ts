import type { FuellingOption } from './vocabulary.js';

/**
 * The export v1.1 sandbox: a shared, published token that needs no account, and a sample set of
 * stations whose live signals are simulated, so that anyone can try the v1.1 API (the records, the
 * five-state summary in each of its states) before asking for a token of their own.
 *
 * The rules it keeps:
 * - the sandbox token authenticates on export v1.1 only (401 elsewhere, saying so);
 * - it sees sandbox stations only, and no other token ever sees them: every export path filters by
 *   the station's `sandbox` flag against the principal's audience;
 * - station ids starting with `SBX`, the operator `sandbox` and the originator `sandbox-simulator`
 *   are reserved: a registry file cannot name them, so production and sandbox never share a record.
 */

/** The sandbox token: public on purpose (docs/api-export.md, the v1.1 reference page, `hrs demo`). */
export const SANDBOX_TOKEN = 'hrs-sandbox-v1.1-public';

/** Who the sandbox stations belong to, and who sends their simulated signals. */
export const SANDBOX_OPERATOR = 'sandbox';
export const SANDBOX_ORIGINATOR = 'sandbox-simulator';

/** Station ids starting with this are the sandbox's. */
export const SANDBOX_ID_PREFIX = 'SBX';

export function isSandboxId(hrsId: string): boolean {
  return hrsId.startsWith(SANDBOX_ID_PREFIX);
}

/** Which stations a request may see: production data, or the sandbox's sample set. */
export type Audience = 'production' | 'sandbox';

/** Whether a station (flagged `sandbox` or not) is visible to an audience. */
export function visibleTo(audience: Audience, station: { sandbox?: boolean }): boolean {
  return (station.sandbox === true) === (audience === 'sandbox');
}

/** What a sample station's simulated signals do over time (see `simulatedReading`). */
export type Scenario =
  /** every option available, every minute */
  | 'steady'
  /** options go unavailable for ten-minute stretches, now one, now another */
  | 'busy'
  /** in maintenance for the first 20 minutes of every hour */
  | 'maintenance'
  /** limitedly available from minute 30 to 44 of every hour */
  | 'limited'
  /** reports for 40 minutes, then falls silent for 50: unknown for the last 20 of them */
  | 'flaky'
  /** the 700 bar truck option is never reported (shown as not reported) */
  | 'partial'
  /** never sends anything */
  | 'silent';

export interface SandboxStation {
  hrs_id: string;
  name: string;
  city: string;
  country: string;
  lat: number;
  lon: number;
  opening_hours: string | null;
  heavy_duty: boolean;
  /** The fuelling options it provides, one nozzle each on its dispensers. */
  options: readonly FuellingOption[];
  dispensers: number;
  scenario: Scenario;
}

/**
 * The sample set: one station per scenario, in several time zones, with opening hours where a
 * `CLOSED` state is to be seen. Every state and reason of the summary occurs within any hour and a
 * half (and `CLOSED` outside the hours of SBXPA and SBXVI).
 */
export const SANDBOX_STATIONS: readonly SandboxStation[] = [
  { hrs_id: 'SBXBE', name: 'Sandbox Berlin Mitte', city: 'Berlin', country: 'DE', lat: 52.52, lon: 13.405, opening_hours: '24/7', heavy_duty: false, options: ['700ld', '350ld'], dispensers: 2, scenario: 'steady' },
  { hrs_id: 'SBXPA', name: 'Sandbox Paris Bercy', city: 'Paris', country: 'FR', lat: 48.8386, lon: 2.3822, opening_hours: 'Mo-Fr 07:00-21:00; Sa 09:00-17:00', heavy_duty: false, options: ['700ld'], dispensers: 1, scenario: 'steady' },
  { hrs_id: 'SBXHH', name: 'Sandbox Hamburg Truck Hub', city: 'Hamburg', country: 'DE', lat: 53.5461, lon: 9.9665, opening_hours: '24/7', heavy_duty: true, options: ['700ld', '700hd', '350hd'], dispensers: 2, scenario: 'partial' },
  { hrs_id: 'SBXMU', name: 'Sandbox München Ost', city: 'München', country: 'DE', lat: 48.1275, lon: 11.6047, opening_hours: '24/7', heavy_duty: false, options: ['700ld', '350ld'], dispensers: 2, scenario: 'busy' },
  { hrs_id: 'SBXVI', name: 'Sandbox Wien Prater', city: 'Wien', country: 'AT', lat: 48.2167, lon: 16.3958, opening_hours: 'Mo-Su 06:00-22:00', heavy_duty: false, options: ['700ld'], dispensers: 1, scenario: 'maintenance' },
  { hrs_id: 'SBXZH', name: 'Sandbox Zürich Altstetten', city: 'Zürich', country: 'CH', lat: 47.3914, lon: 8.4889, opening_hours: '24/7', heavy_duty: true, options: ['700ld', '350hd'], dispensers: 1, scenario: 'limited' },
  { hrs_id: 'SBXCP', name: 'Sandbox København Nordhavn', city: 'København', country: 'DK', lat: 55.7105, lon: 12.5952, opening_hours: '24/7', heavy_duty: false, options: ['700ld'], dispensers: 1, scenario: 'flaky' },
  { hrs_id: 'SBXLI', name: 'Sandbox Lisboa Oriente', city: 'Lisboa', country: 'PT', lat: 38.7678, lon: -9.0990, opening_hours: null, heavy_duty: false, options: ['700ld'], dispensers: 1, scenario: 'silent' },
];

/** A simulated availability reading, in the form a v1.1 availability signal is stored and published. */
export interface SimulatedReading {
  hrsId: string;
  measuredAt: Date;
  payload: {
    station: { maintenance: boolean; limitedly_available: boolean };
    fuelling_options: { fuelling_option: FuellingOption; available: boolean | null }[];
    source: 'sandbox';
  };
}

const MINUTE_MS = 60_000;

/** A small, well-mixed hash of a string and a number (FNV-1a, then a final avalanche): the same inputs, the same answer. */
function mix(text: string, n: number): number {
  let h = 0x811c9dc5 ^ n;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  h ^= h >>> 15;
  h = Math.imul(h, 0x2c1b3c6d);
  h ^= h >>> 12;
  return h >>> 0;
}

/**
 * The reading a sample station sends in the minute starting at `at` (rounded down to the minute), or
 * null when its scenario keeps it silent then. A pure function of the station and the minute, so every
 * instance, and every test, computes the same.
 */
export function simulatedReading(station: SandboxStation, at: Date): SimulatedReading | null {
  const minute = Math.floor(at.getTime() / MINUTE_MS);
  const ofHour = ((minute % 60) + 60) % 60;
  let maintenance = false;
  let limited = false;
  let available = (_option: FuellingOption): boolean | null => true;
  switch (station.scenario) {
    case 'silent':
      return null;
    case 'flaky':
      if (((minute % 90) + 90) % 90 >= 40) return null;
      break;
    case 'maintenance':
      maintenance = ofHour < 20;
      break;
    case 'limited':
      limited = ofHour >= 30 && ofHour < 45;
      break;
    case 'busy': {
      const stretch = Math.floor(minute / 10);
      available = (option) => mix(`${station.hrs_id}:${option}`, stretch) % 3 !== 0;
      break;
    }
    case 'partial':
      available = (option) => (option === '700hd' ? null : true);
      break;
    case 'steady':
      break;
  }
  return {
    hrsId: station.hrs_id,
    measuredAt: new Date(minute * MINUTE_MS),
    payload: {
      station: { maintenance, limitedly_available: limited },
      fuelling_options: station.options.map((option) => ({ fuelling_option: option, available: available(option) })),
      source: 'sandbox',
    },
  };
}

/** Every sample station's reading for the minute starting at `at` (silent ones left out). */
export function simulatedReadings(at: Date, stations: readonly SandboxStation[] = SANDBOX_STATIONS): SimulatedReading[] {
  return stations.flatMap((station) => {
    const reading = simulatedReading(station, at);
    return reading === null ? [] : [reading];
  });
}
