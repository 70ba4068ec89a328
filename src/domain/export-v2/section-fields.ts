import { z } from 'zod';
import { instant } from './fields.js';

/**
 * The parts the export v2 status sections are made of: the times and freshness every section carries,
 * and the field builders each category's section schema (src/domain/categories/) is written with.
 */

export const sectionTimes = {
  datetime: instant('When the source measured the reading (ISO 8601, UTC). Use this for freshness.'),
  received_datetime: instant('When the platform ingested the reading (ISO 8601, UTC).'),
  freshness: z.enum(['fresh', 'stale']).meta({
    description:
      'Extension beyond the specification: `fresh` while the reading is younger than 5 minutes by its `datetime`, `stale` after ' +
      'that (pricing: after 25 hours, the daily heartbeat missed). Availability and usage fall back to null (unknown) 30 minutes ' +
      'after their `datetime`; hydrogen storage and pricing stay published, stale.',
    examples: ['fresh'],
  }),
};

export const entityId = (what: string, example: string) =>
  z.string().min(1).meta({ description: `The ${what}'s \`external_id\` in the station record.`, examples: [example] });

/** Prices as the platform stores them: a decimal string with exactly three decimals, up to 8 digits. */
export const price = (description: string) =>
  z
    .string()
    .regex(/^\d{1,5}\.\d{3}$/)
    .meta({ description: `${description} Decimal string per kg, three decimals.`, examples: ['13.850'] });

/** What every section is not when no reading may be published. */
export const NULL_WHEN = 'no live signal source publishes this type for the station, or no live reading has arrived yet';
/** The same for a category that falls back to unknown. */
export const NULL_WHEN_UNKNOWN = `${NULL_WHEN}, or the status fell back to unknown (30 minutes without a signal)`;
