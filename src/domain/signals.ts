import type { PublishedReading } from './categories/definition.js';
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
  /** The reading to hold as it is, when the signal has one (a stored reading, parsed when first read). */
  reading?: PublishedReading;
}

/**
 * A reading read back from storage, its payload kept as the JSON text PostgreSQL gave and parsed when
 * first read (then the text is let go). A start restores every station's readings, 400,000 at
 * 100,000 stations: most are read later, after the platform listens (the map's first settling, a
 * status), or not at all, so parsing them all first only delayed readiness and held their objects.
 */
export class StoredReading implements PublishedReading {
  #text: string | undefined;
  #payload: Record<string, unknown> | undefined;

  constructor(
    readonly datetime: number,
    readonly receivedAt: number,
    text: string,
  ) {
    this.#text = text;
  }

  get payload(): Record<string, unknown> {
    if (this.#payload === undefined) {
      this.#payload = JSON.parse(this.#text!) as Record<string, unknown>;
      this.#text = undefined;
    }
    return this.#payload;
  }

  /** Whether the payload was parsed (read) yet. */
  get parsed(): boolean {
    return this.#payload !== undefined;
  }
}

/** A published reading read back from storage, holding a StoredReading (its payload parsed when first read). */
export class StoredSignal implements PublishedSignal {
  constructor(
    readonly hrsId: string,
    readonly category: Category,
    readonly originatorId: string,
    readonly reading: StoredReading,
  ) {}

  get datetime(): number {
    return this.reading.datetime;
  }

  get receivedAt(): number {
    return this.reading.receivedAt;
  }

  get payload(): Record<string, unknown> {
    return this.reading.payload;
  }
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
