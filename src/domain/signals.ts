import type { Category } from './categories/index.js';

/**
 * Committed signals as the rest of the platform hears of them: published (live) readings, which
 * replace a station's published snapshot, and receipts of transmissions stored but not published.
 */

/** A published (live) reading as the import path commits it and instances announce it to each other. */
export interface PublishedSignal {
  hrsId: string;
  category: Category;
  originatorId: string;
  /** Epoch milliseconds. */
  datetime: number;
  receivedAt: number;
  payload: Record<string, unknown>;
  /** The payload as JSON and the times as ISO 8601, when the import path has them already (announcing uses them). */
  text?: { payload: string; measuredAt: string; receivedAt: string };
}

/**
 * A transmission that was stored but not published: its originator is not (or not live) assigned to
 * the station for that signal type. Admins see these in the live feed to follow an originator's
 * commissioning; values are never part of a receipt (they may be confidential).
 */
export interface Receipt {
  originator_id: string;
  hrs_id: string;
  /** The signal type, as in the import path: `availability`, `usage`, `hydrogen-storage`, `pricing`. */
  category: Category;
  /** `testing`: assigned for testing; `unassigned`: no assignment for that station and type. */
  assignment: 'testing' | 'unassigned';
  /** Measurement and receipt times, ISO 8601 UTC. */
  datetime: string;
  received_datetime: string;
  /** The legacy import generation that sent it; absent for import v2. */
  source?: 'import_v1' | 'import_v1.1';
}
