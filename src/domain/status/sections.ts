import { CATEGORY, type Category, type PublishedReading } from '../categories/index.js';
import type { ConfirmedLayout } from '../stations.js';

/**
 * The published sections of the export v2 station status, built from a stored snapshot (the payload
 * as import v2 stores it) and the station's current confirmed layout: only entities the layout still
 * has are listed, and the hydrogen inventory (`remaining_kg`) never leaves the platform. Each
 * category's own section is built by its category (src/domain/categories/); the times are common.
 */


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
  return CATEGORY[category].build(reading.payload, layout, times);
}
