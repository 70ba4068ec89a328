import type { Category } from './categories/index.js';
import type { ConfirmedLayout, ExportListVersion, StationEntry } from './station-entry.js';
import type { AssignmentState, CallLogMode } from './vocabulary.js';

/**
 * The stations as the rules see them: read models the registry cache fills (src/registry/) and the
 * port through which rules, machines and the push layer look them up. The read models are declared
 * in ./station-entry.ts, below the signal categories that the ports here name, and handed on here.
 */

export type { ConfirmedLayout, ExportListVersion, StationEntry };

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
