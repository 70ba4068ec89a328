import type { Category } from './categories/index.js';
import type { AssignmentState, CallLogMode } from './vocabulary.js';

/**
 * The stations as the rules see them: read models the registry cache fills (src/registry/) and the
 * port through which rules, machines and the push layer look them up.
 */

/** A station's operator-confirmed layout as signals resolve against it. */
export interface ConfirmedLayout {
  /** nozzle external id → its dispenser and fuelling options */
  nozzles: Map<string, { dispenser: string; fuellingOptions: string[] }>;
  /** dispenser external id → its nozzles, in layout order */
  dispensers: Map<string, string[]>;
  storages: Set<string>;
  products: Set<string>;
}

export interface StationEntry {
  hrsId: string;
  name: string;
  heavyDuty: boolean;
  /** null until the operator has confirmed a layout; drafts are never here. */
  layout: ConfirmedLayout | null;
  /**
   * The station's registered v1 fuel types (`700car`, `350car`, `350bus`), which import v1 / v1.1
   * signals are checked against beside the confirmed layout. Left out: none registered.
   */
  v1FuelTypes?: readonly string[];
  /** The station's opening hours (OpenStreetMap syntax), null when not given; see opening-hours.ts. */
  openingHours?: string | null;
  /** The IANA time zone its opening hours are read in (named in the registry or found at its coordinates); null when unknown. */
  timeZone?: string | null;
  /** The country whose public holidays `PH` in its opening hours means (ISO 3166-1 alpha-2, lowercase); null when unknown. */
  holidayCountry?: string | null;
  /** One of the export v1.1 sandbox's sample stations: shown to the sandbox token only (see sandbox.ts). */
  sandbox?: boolean;
}

/** Finding a station (with its confirmed layout) by `hrs_id`: all validation needs. */
export interface StationLookup {
  station(hrsId: string): StationEntry | undefined;
}

/** Every registered station, and what may be published of it. */
export interface StationDirectory extends StationLookup {
  stationIds(): Iterable<string>;
  /** Whether some originator is live for this station and signal type (so its signals are published). */
  hasLiveSource(hrsId: string, category: Category): boolean;
}

/** How an originator's transmissions are routed and its calls logged. */
export interface OriginatorLookup {
  /** The state for a v2 signal type, or (`'v1'`) the legacy transmission state: live, testing or inactive. */
  assignment(originatorId: string, hrsId: string, signalType: Category | 'v1'): AssignmentState | undefined;
  callLogMode(originatorId: string): CallLogMode;
}
