import { z } from 'zod';
import { price } from '../export-v2/section-fields.js';
import { eventSchema } from '../export-v2/stations.js';
import { summaryReasonSchema, summaryStateSchema } from '../status/summary.js';
import { CURRENCIES, FUELLING_OPTIONS } from '../vocabulary.js';

/**
 * The public map's feed and station detail as zod schemas: what the export v2 document (which lists
 * the map's public operations) describes them with, and what its tests check real answers against.
 */

const text = z.string().nullable();

export const mapEntrySchema = z.strictObject({
  fuelling_option: z.enum(FUELLING_OPTIONS),
  status: summaryStateSchema,
  reason: summaryReasonSchema,
  datetime: z.iso.datetime({ offset: true }).nullable().meta({ description: 'The measurement time of the reading the entry was computed from; null when there is none.' }),
}).meta({ description: 'One fuelling option\'s five-state status, as `GET /v1.1/hrs/status` gives it (`fuel_type` named `fuelling_option`).' });

export const mapFeatureSchema = z.strictObject({
  type: z.literal('Feature'),
  id: z.string(),
  geometry: z.strictObject({
    type: z.literal('Point'),
    coordinates: z.tuple([z.number().min(-180).max(180), z.number().min(-90).max(90)]).meta({ description: '`[longitude, latitude]` (WGS 84, RFC 7946).' }),
  }),
  properties: z.strictObject({
    hrs_id: z.string(),
    name: z.string(),
    operator: text,
    street: text,
    postcode: text,
    city: text,
    country: text,
    heavy_duty: z.boolean(),
    time_zone: text,
    open_now: z.boolean().meta({ description: 'False when the station is outside its opening hours now (its options are then `CLOSED`).' }),
    fuelling_options: z.array(mapEntrySchema).meta({ description: 'Every option the station provides, in the order 700ld, 350ld, 700hd, 350hd.' }),
    modified_at: z.iso.datetime({ offset: true }).nullable().meta({ description: 'When the station\'s static data last changed.' }),
  }),
}).meta({ title: 'Map station', description: 'One station on the public map: a GeoJSON Feature with a Point.' });

export const mapFeatureCollectionSchema = z.strictObject({
  type: z.literal('FeatureCollection'),
  generated_at: z.iso.datetime({ offset: true }).meta({ description: 'When this body was made (it changes with its content only).' }),
  features: z.array(mapFeatureSchema).meta({ description: 'Every production station with coordinates, sorted by hrs_id.' }),
}).meta({ title: 'Map stations', description: 'An RFC 7946 FeatureCollection of every station on the public map.' });

const interval = z.strictObject({ from: z.string().regex(/^\d\d:\d\d$/), to: z.string().regex(/^\d\d:\d\d$/) });

/** One fuelling option on the station panel: the feed's entry, then what the option costs and holds. */
export const mapStationOptionSchema = mapEntrySchema
  .extend({
    gross_price: price('The VAT-inclusive price of the product the option\'s nozzles dispense; null when none is published.').nullable(),
    currency: z.enum(CURRENCIES).nullable().meta({ description: 'ISO 4217 currency of `gross_price`; null with no price.' }),
    price_datetime: z.iso.datetime({ offset: true }).nullable().meta({ description: 'When the price was measured; null with no price.' }),
    green_hydrogen_share: z.number().min(0).max(100).nullable().meta({ description: 'That product\'s share of renewable hydrogen in per cent; null until the operator declares it.' }),
    certification: z
      .strictObject({ nozzles: z.int().min(0), certified: z.int().min(0) })
      .nullable()
      .meta({ description: 'The nozzles offering this option and how many are certified (nozzle and dispenser both); null until the layout is confirmed.' }),
  })
  .meta({
    title: 'Map station option',
    description:
      'One fuelling option as a driver sees it: its five-state status exactly as the feed gives it, and the gross price and green ' +
      'hydrogen share of the product its nozzles dispense (of several, the one with the lowest published price; a product mapped ' +
      'to no nozzle counts for the options of its pressure stage that no mapped product serves).',
  });

/** An event on the station panel: what it is and when, without the record's id. */
const mapEventSchema = eventSchema.omit({ id: true }).meta({ title: 'Map station event' });

export const mapStationDetailSchema = z.strictObject({
  hrs_id: z.string(),
  feature: mapFeatureSchema,
  opening_hours: text,
  week: z.array(z.strictObject({ date: z.iso.date(), intervals: z.array(interval) })).meta({
    description: 'Seven days from today in the station\'s time zone: `[]` closed all day, `00:00`–`24:00` open all day.',
  }),
  fuelling_options: z.array(mapStationOptionSchema).meta({ description: 'Every option the station provides, in the feed\'s order.' }),
  certification: z
    .strictObject({ nozzles: z.int().min(0), certified: z.int().min(0) })
    .nullable()
    .meta({ description: 'How many nozzles the station has and how many are certified (nozzle and dispenser both); null until its layout is confirmed.' }),
  events: z.array(mapEventSchema).meta({ description: 'The station\'s events not over yet (an event without `ends_at` is ongoing), by start time.' }),
  photo: text.meta({ description: 'The photo\'s path on the map (`/map/v1/stations/{hrs_id}/photo`); null when there is none.' }),
}).meta({
  title: 'Map station detail',
  description:
    'What the map\'s station panel shows: a driver\'s view. The station\'s record (dispensers, nozzles, storages, products and ' +
    'their ids) and net prices are export v2\'s, for personal tokens.',
});
