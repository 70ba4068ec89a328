import { z } from 'zod';
import { CURRENCIES, USAGE_STATUSES } from '../vocabulary.js';
import { hrsIdSchema, instant } from './fields.js';

/**
 * The response bodies of export v2, as zod schemas. The handlers serialise what they hold directly;
 * these schemas describe those bodies for the OpenAPI document (src/http/openapi.ts generates the
 * document's JSON Schemas from them), and the tests check real responses against them, so the document
 * and the code cannot drift apart. Objects are strict: a field the code adds without documenting it
 * fails those tests.
 */

/** The station records, reference lists and problem details (./stations.ts), exported from here as before the split. */
export { hrsIdSchema };
export * from './stations.js';

const sectionTimes = {
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

const entityId = (what: string, example: string) =>
  z.string().min(1).meta({ description: `The ${what}'s \`external_id\` in the station record.`, examples: [example] });

/** Prices as the platform stores them: a decimal string with exactly three decimals, up to 8 digits. */
const price = (description: string) =>
  z
    .string()
    .regex(/^\d{1,5}\.\d{3}$/)
    .meta({ description: `${description} Decimal string per kg, three decimals.`, examples: ['13.850'] });

export const availabilitySectionSchema = z
  .strictObject({
    ...sectionTimes,
    station: z
      .strictObject({
        maintenance: z.boolean().meta({ description: 'In maintenance: out of service whatever the nozzle flags say.' }),
        limitedly_available: z.boolean().meta({ description: 'Limitedly available: overrides the per-nozzle picture.' }),
      })
      .meta({ description: 'Whole-station flags; `true` in either overrides the per-nozzle picture.' }),
    nozzles: z.array(
      z.strictObject({
        id: entityId('nozzle', 'N1'),
        available: z.boolean(),
      }),
    ),
    fuelling_options: z
      .array(
        z.strictObject({
          fuelling_option: z.enum(['700ld', '350ld', '700hd', '350hd']),
          available: z.boolean().nullable().meta({ description: '`null`: the reading did not say (unknown).' }),
        }),
      )
      .optional()
      .meta({
        description:
          'Present only when the reading came from the legacy import (v1 or v1.1), which reports per fuelling option: then `nozzles` is empty (per-nozzle availability cannot be derived from per-option data) and this lists every option the station provides.',
      }),
  })
  .meta({
    title: 'Availability section',
    description:
      'The last live availability reading, from import v2 or the legacy import, whichever is newest by `datetime`; nozzles no longer in the confirmed layout are left out.',
  });

export const usageSectionSchema = z
  .strictObject({
    ...sectionTimes,
    nozzles: z.array(
      z.strictObject({
        id: entityId('nozzle', 'N1'),
        usage_status: z.enum(USAGE_STATUSES).meta({
          description: '`free`: idle, ready; `in-use`: dispensing (or blocked by a sibling nozzle); `reserved`: reserved for a known incoming vehicle.',
        }),
      }),
    ),
  })
  .meta({ title: 'Usage section', description: 'The last live usage reading.' });

export const hydrogenStorageSectionSchema = z
  .strictObject({
    ...sectionTimes,
    storages: z.array(
      z.strictObject({
        id: entityId('storage', 'S1'),
        low_h2_storage: z.boolean().meta({ description: 'Inventory below 100 kg (exactly 100 kg is not low). The inventory itself is confidential.' }),
      }),
    ),
  })
  .meta({ title: 'Hydrogen storage section', description: 'The last live hydrogen storage reading: flags only, no numeric inventory.' });

export const pricingSectionSchema = z
  .strictObject({
    ...sectionTimes,
    products: z
      .array(
        z.strictObject({
          id: entityId('product', 'P700'),
          gross_price: price('VAT-inclusive retail price.'),
          net_price: price('Pre-VAT price; null when the source did not send one.').nullable(),
          currency: z.enum(CURRENCIES).meta({ description: 'ISO 4217 currency.' }),
        }),
      )
      .min(1),
  })
  .meta({
    title: 'Pricing section',
    description: 'The last live prices, for products currently registered only (the section is null when none of them is).',
  });

const section = <T extends z.ZodType>(schema: T, when: string) =>
  schema.nullable().meta({ description: `Null when ${when}. Treat it as optional.` });

const NULL_WHEN = 'no live signal source publishes this type for the station, or no live reading has arrived yet';

export const stationStatusSchema = z
  .strictObject({
    hrs_id: hrsIdSchema,
    availability: section(availabilitySectionSchema, `${NULL_WHEN}, or the status fell back to unknown (30 minutes without a signal)`),
    usage: section(usageSectionSchema, `${NULL_WHEN}, or the status fell back to unknown (30 minutes without a signal)`),
    hydrogen_storage: section(hydrogenStorageSectionSchema, NULL_WHEN),
    pricing: section(pricingSectionSchema, `${NULL_WHEN}, or none of the priced products is registered any more`),
  })
  .meta({
    title: 'Station status',
    description: 'The real-time status of one station: four sections, each an object or null; all four can be null.',
    examples: [
      {
        hrs_id: 'BERLA',
        availability: {
          datetime: '2026-11-22T10:00:00.000Z',
          received_datetime: '2026-11-22T10:00:01.214Z',
          freshness: 'fresh',
          station: { maintenance: false, limitedly_available: false },
          nozzles: [
            { id: 'N1', available: true },
            { id: 'N2', available: false },
          ],
        },
        usage: {
          datetime: '2026-11-22T10:00:00.000Z',
          received_datetime: '2026-11-22T10:00:01.180Z',
          freshness: 'fresh',
          nozzles: [
            { id: 'N1', usage_status: 'in-use' },
            { id: 'N2', usage_status: 'free' },
          ],
        },
        hydrogen_storage: {
          datetime: '2026-11-22T09:58:00.000Z',
          received_datetime: '2026-11-22T09:58:00.950Z',
          freshness: 'fresh',
          storages: [{ id: 'S1', low_h2_storage: false }],
        },
        pricing: {
          datetime: '2026-11-22T06:00:00.000Z',
          received_datetime: '2026-11-22T06:00:00.402Z',
          freshness: 'stale',
          products: [
            { id: 'P700', gross_price: '13.850', net_price: null, currency: 'EUR' },
            { id: 'P350', gross_price: '11.500', net_price: '9.664', currency: 'EUR' },
          ],
        },
      },
      { hrs_id: 'HAMBG', availability: null, usage: null, hydrogen_storage: null, pricing: null },
    ],
  });

export const stationStatusListSchema = z
  .strictObject({
    stations: z.array(stationStatusSchema).meta({ description: 'Every registered station, sorted by `hrs_id`.' }),
  })
  .meta({
    title: 'Station status list',
    examples: [{ stations: [{ hrs_id: 'HAMBG', availability: null, usage: null, hydrogen_storage: null, pricing: null }] }],
  });
