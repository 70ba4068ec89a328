import type { z } from 'zod';
import type { ErrorTree } from '../import-v2/errors.js';
import type { Raw } from '../import-v2/rules.js';
import type { ConfirmedLayout, StationEntry } from '../station-entry.js';

/**
 * What the platform knows of one signal category. Each category is one value of this shape in its own
 * file beside this one; index.ts lists them, and everything else reads them from there.
 */

/** The freshness deadlines of the platform's settings (`STATUS_STALE_AFTER` and its siblings). */
export interface FreshnessSettings {
  staleAfterMs: number;
  unknownAfterMs: number;
  pricingStaleAfterMs: number;
}

/** When a published reading turns stale and unknown, counted from its `datetime`. */
export interface FreshnessPolicy {
  /** Milliseconds after `datetime` at which the reading turns stale. */
  staleAfterMs: number;
  /** Milliseconds after `datetime` at which it turns unknown; null: it never does. */
  unknownAfterMs: number | null;
}

/** Which of the settings give a category's deadlines; `unknown: null` keeps it published, stale, for ever. */
export interface FreshnessRule {
  stale: 'staleAfterMs' | 'pricingStaleAfterMs';
  unknown: 'unknownAfterMs' | null;
}

/** A stored reading as the status publishes it. */
export interface PublishedReading {
  /** Measurement time and receipt time, epoch milliseconds. */
  datetime: number;
  receivedAt: number;
  payload: Record<string, unknown>;
}

/** What every import v2 transmission carries, whatever its category. */
export interface TransmissionEnvelope {
  hrs: string;
  transmission_id?: string | null;
  dry_run?: boolean | null;
}

/** What the import v2 document says of a category's endpoint. */
export interface CategoryDocs {
  /** The transmission schema's component name. */
  component: string;
  operationId: string;
  summary: string;
  /** The category's own rules, after the rules every category shares. */
  rules: string;
  /** Names and summaries for the transmission schema's examples, in their order. */
  examples: [string, string][];
}

export interface CategoryDefinition<Name extends string = string, Key extends string = string> {
  /**
   * The name on the wire where a signal type is named: the import v2 path (`/import/v2/signal/<name>/`),
   * the export v2 history's `category`, the portal's assignment `signal_type`, the stored `category`
   * and `signal_type` columns (their CHECK lists, db/migrations/), the admins' receipts.
   */
  readonly name: Name;
  /**
   * The key where a station's categories are listed side by side: the export v2 status object and its
   * push messages, the admins' live feed, the reliability figures and the portal's timeline.
   */
  readonly sectionKey: Key;
  /** The category in running text (the portal's timeline, the dashboard): 'Hydrogen storage'. */
  readonly label: string;
  readonly freshness: FreshnessRule;
  /** The import v2 transmission: types and presence, with the API's field messages. */
  readonly transmission: z.ZodType<TransmissionEnvelope>;
  /**
   * The import v2 rules beyond the schema (identifiers against the confirmed layout, cross-field rules),
   * adding to `errors`; returns the snapshot as stored and published. `data` is the parsed transmission,
   * undefined when the schema refused it.
   */
  readonly check: (input: Raw, errors: ErrorTree, station: StationEntry | undefined, data: unknown) => Record<string, unknown>;
  /** The export v2 status section. */
  readonly section: {
    schema: z.ZodObject;
    /** The schema's component name in the export v2 document. */
    component: string;
    /** When the status object holds null instead, in the document's words. */
    nullWhen: string;
    /** A section as published, for the documents' examples. */
    example: Record<string, unknown>;
  };
  /**
   * The published section from a stored snapshot and the station's confirmed layout (only entities the
   * layout still has), after `times`; null when nothing of it may be published.
   */
  readonly build: (payload: Record<string, unknown>, layout: ConfirmedLayout | null, times: Record<string, unknown>) => Record<string, unknown> | null;
  readonly docs: CategoryDocs;
}

type Entry = Record<string, unknown>;

/** A snapshot's list of entries (`nozzles`, `storages`, `products`); none when absent. */
export const entriesOf = (payload: Record<string, unknown>, field: string): Entry[] =>
  Array.isArray(payload[field]) ? (payload[field] as Entry[]) : [];
