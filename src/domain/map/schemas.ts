import { z } from 'zod';
import { CATEGORY } from '../categories/index.js';
import { eventListSchema, stationRecordSchema } from '../export-v2/stations.js';
import { summaryReasonSchema, summaryStateSchema } from '../status/summary.js';
import { FUELLING_OPTIONS } from '../vocabulary.js';

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

export const mapStationDetailSchema = z.strictObject({
  hrs_id: z.string(),
  feature: mapFeatureSchema,
  record: stationRecordSchema,
  opening_hours: text,
  week: z.array(z.strictObject({ date: z.iso.date(), intervals: z.array(interval) })).meta({
    description: 'Seven days from today in the station\'s time zone: `[]` closed all day, `00:00`–`24:00` open all day.',
  }),
  events: eventListSchema,
  prices: CATEGORY.pricing.section.schema.nullable().meta({ description: 'The pricing section of `GET /v2/hrs/{hrs_id}/status`; null when none is published.' }),
  photo: text.meta({ description: 'The photo\'s path on the map (`/map/v1/stations/{hrs_id}/photo`); null when there is none.' }),
}).meta({ title: 'Map station detail', description: 'What the map\'s station panel shows.' });
