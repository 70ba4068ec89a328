import { z } from 'zod';
import { hrsIdSchema } from './fields.js';
import { listSyncToken, stationRecordSchema } from './stations.js';
import { stationStatusSchema } from './schemas.js';

/**
 * The GeoJSON (RFC 7946) answers of export v2's geo extension, as zod schemas for the document:
 * `GET /v2/hrs` and `GET /v2/hrs/status` with `Accept: application/geo+json` answer a
 * FeatureCollection, one Feature per station with coordinates (`id` its hrs_id, a Point geometry,
 * the record or status entry as its properties). The list's paging members travel as foreign members
 * of the collection (RFC 7946 §6.1).
 */

const pointSchema = z
  .strictObject({
    type: z.literal('Point'),
    coordinates: z
      .tuple([z.number().min(-180).max(180), z.number().min(-90).max(90)])
      .meta({ description: '`[longitude, latitude]`, WGS 84 degrees, as the registry gives them (RFC 7946 §3.1.1).' }),
  })
  .meta({ description: 'Where the station stands.' });

/** A Feature whose properties are the JSON answer's object (by reference: the schema itself, not a copy). */
const featureOf = (properties: z.ZodType) =>
  z.strictObject({
    type: z.literal('Feature'),
    id: hrsIdSchema,
    geometry: pointSchema,
    properties,
  });

export const stationFeatureSchema = featureOf(stationRecordSchema).meta({
  title: 'Station feature',
  description: 'One station as a GeoJSON Feature: `id` its hrs_id, `properties` its record as the JSON answer gives it.',
});

export const statusFeatureSchema = featureOf(stationStatusSchema).meta({
  title: 'Station status feature',
  description: 'One station\'s status as a GeoJSON Feature: `id` its hrs_id, `properties` its status object as the JSON answer gives it.',
});

const POINT = { type: 'Point', coordinates: [13.5033, 52.3667] };
const BERLA_RECORD = {
  hrs_id: 'BERLA',
  name: 'Berlin Airport',
  operator: { id: 'h2-demo', name: 'H2 Demo GmbH' },
  heavy_duty: false,
  opening_hours: '24/7',
  fuel_types: [],
  photo_url: null,
  dispensers: null,
  storages: null,
  products: null,
};

export const stationFeatureCollectionSchema = z
  .strictObject({
    type: z.literal('FeatureCollection'),
    count: z.int().min(0).meta({ description: 'As in the JSON answer: how many stations the list (or its filter) has, those without coordinates included.' }),
    next: z.url().nullable().meta({ description: 'The next page, or null on the last one.' }),
    previous: z.url().nullable().meta({ description: 'The previous page, or null on the first one.' }),
    sync_token: listSyncToken,
    features: z.array(stationFeatureSchema).meta({ description: 'The page\'s stations that have coordinates, in the JSON answer\'s order.' }),
  })
  .meta({
    title: 'Station feature collection',
    description:
      'Extension beyond the specification: one page of the station list as GeoJSON, with `count`, `next` and `previous` ' +
      'as foreign members. A station without coordinates is left out of `features` (a page may then hold fewer than `limit`).',
    examples: [
      {
        type: 'FeatureCollection',
        count: 1,
        next: null,
        previous: null,
        sync_token: 'aHJzLXN5bmM6MTo0ODIxMw',
        features: [{ type: 'Feature', id: 'BERLA', geometry: POINT, properties: { distance_km: 12.345, ...BERLA_RECORD } }],
      },
    ],
  });

export const statusFeatureCollectionSchema = z
  .strictObject({
    type: z.literal('FeatureCollection'),
    features: z.array(statusFeatureSchema).meta({ description: 'The stations that have coordinates, in the JSON answer\'s order.' }),
  })
  .meta({
    title: 'Station status feature collection',
    description: 'Extension beyond the specification: the status list as GeoJSON. A station without coordinates is left out.',
    examples: [
      {
        type: 'FeatureCollection',
        features: [
          {
            type: 'Feature',
            id: 'BERLA',
            geometry: POINT,
            properties: {
              hrs_id: 'BERLA',
              fuelling_options: [{ fuelling_option: '700ld', status: 'UNKNOWN', reason: 'no_signal', datetime: null, freshness: null }],
              availability: null,
              usage: null,
              hydrogen_storage: null,
              pricing: null,
            },
          },
        ],
      },
    ],
  });
