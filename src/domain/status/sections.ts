import type { ConfirmedLayout } from '../stations.js';
import type { Category } from '../vocabulary.js';

/**
 * The published sections of the export v2 station status, built from a stored snapshot (the payload
 * as import v2 stores it) and the station's current confirmed layout: only entities the layout still
 * has are listed, and the hydrogen inventory (`remaining_kg`) never leaves the platform.
 */

/** The status object's key for each import category. */
export const SECTION_KEYS = {
  availability: 'availability',
  usage: 'usage',
  'hydrogen-storage': 'hydrogen_storage',
  pricing: 'pricing',
} as const satisfies Record<Category, string>;

export type SectionKey = (typeof SECTION_KEYS)[Category];

export interface PublishedReading {
  /** Measurement time and receipt time, epoch milliseconds. */
  datetime: number;
  receivedAt: number;
  payload: Record<string, unknown>;
}

type Entry = Record<string, unknown>;
const list = (payload: Record<string, unknown>, field: string): Entry[] =>
  Array.isArray(payload[field]) ? (payload[field] as Entry[]) : [];

/**
 * The section for one category, or null when nothing of it may be published (a pricing section
 * whose priced products are all unregistered).
 */
export function buildSection(
  category: Category,
  reading: PublishedReading,
  layout: ConfirmedLayout | null,
  freshness?: 'fresh' | 'stale',
): Record<string, unknown> | null {
  const times: Record<string, unknown> = {
    datetime: new Date(reading.datetime).toISOString(),
    received_datetime: new Date(reading.receivedAt).toISOString(),
  };
  // The live status says how fresh the reading is (an extension beyond the spec); a history reading does not.
  if (freshness !== undefined) times.freshness = freshness;
  const payload = reading.payload;
  switch (category) {
    case 'availability': {
      const station = (payload.station ?? {}) as Entry;
      const section: Record<string, unknown> = {
        ...times,
        station: { maintenance: station.maintenance === true, limitedly_available: station.limitedly_available === true },
        nozzles: list(payload, 'nozzles')
          .filter((n) => layout?.nozzles.has(String(n.id)) === true)
          .map((n) => ({ id: n.id, available: n.available === true })),
      };
      // A legacy (v1, v1.1) reading reports per fuelling option, in canonical codes.
      if (Array.isArray(payload.fuelling_options)) {
        section.fuelling_options = list(payload, 'fuelling_options').map((o) => ({
          fuelling_option: o.fuelling_option,
          available: typeof o.available === 'boolean' ? o.available : null,
        }));
      }
      return section;
    }
    case 'usage':
      return {
        ...times,
        nozzles: list(payload, 'nozzles')
          .filter((n) => layout?.nozzles.has(String(n.id)) === true)
          .map((n) => ({ id: n.id, usage_status: n.usage_status })),
      };
    case 'hydrogen-storage':
      return {
        ...times,
        storages: list(payload, 'storages')
          .filter((s) => layout?.storages.has(String(s.id)) === true)
          .map((s) => ({ id: s.id, low_h2_storage: lowStorage(s) })),
      };
    case 'pricing': {
      const products = list(payload, 'products')
        .filter((p) => layout?.products.has(String(p.id)) === true)
        .map((p) => ({ id: p.id, gross_price: p.gross_price, net_price: p.net_price ?? null, currency: p.currency }));
      return products.length === 0 ? null : { ...times, products };
    }
  }
}

/** Stored as sent or derived at receipt; derived here from the number for snapshots that lack the flag. */
export function lowStorage(storage: Entry): boolean {
  if (typeof storage.low_h2_storage === 'boolean') return storage.low_h2_storage;
  return storage.remaining_kg !== null && storage.remaining_kg !== undefined && Number(storage.remaining_kg) < 100;
}
