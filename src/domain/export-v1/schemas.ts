import { z } from 'zod';
import {
  eventListSchema,
  eventSchema,
  EXAMPLE_HEADS,
  fuelTypeSchema,
  photoUrl,
  problemSchema,
  recordFuelTypes,
  recordHead,
  vehicleTypeListSchema,
  vehicleTypeSchema,
} from '../export-v2/stations.js';
import { stationSummarySchema, v1StationSummarySchema } from '../status/summary.js';
import { FUELLING_OPTIONS, V1_FUEL_TYPES } from '../vocabulary.js';

/**
 * The response bodies of export v1 and v1.1 (src/api/export-legacy/, src/api/reference.ts), as zod
 * schemas for their OpenAPI documents and the tests that check real responses against them. The
 * five-state summary's schemas are in src/domain/status/summary.ts; the events, vehicle categories and
 * problem details are export v2's, unchanged.
 */

export { eventListSchema, eventSchema, problemSchema, vehicleTypeListSchema, vehicleTypeSchema };

/* ---- Reference lists ---------------------------------------------------------------------------- */

/** A fuelling option as v1.1 lists it: v2's without `pressure_stage` and `vehicle_class`. */
export const v11FuelTypeSchema = fuelTypeSchema.pick({ code: true, description: true }).meta({ title: 'Fuelling option (v1.1)' });

export const v11FuelTypeListSchema = z.array(v11FuelTypeSchema).meta({
  title: 'Fuelling options (v1.1)',
  description: 'The four fuelling options, in their fixed order.',
  examples: [
    [
      { code: '700ld', description: 'Hydrogen at 700 bar for light-duty vehicles' },
      { code: '350hd', description: 'Hydrogen at 350 bar for heavy-duty vehicles' },
    ],
  ],
});

export const v1FuelTypeSchema = z
  .strictObject({
    code: z.enum(V1_FUEL_TYPES).meta({ description: 'v1 fuel-type code.' }),
    description: z.string().meta({ examples: ['Hydrogen at 700 bar for cars'] }),
  })
  .meta({ title: 'Fuel type (v1)' });

export const v1FuelTypeListSchema = z.array(v1FuelTypeSchema).meta({
  title: 'Fuel types (v1)',
  description: 'The three v1 fuel types (`700car`, `350car`, `350bus`), in their fixed order. There is none for heavy-duty 700 bar.',
  examples: [[{ code: '700car', description: 'Hydrogen at 700 bar for cars' }]],
});

/* ---- Station records ---------------------------------------------------------------------------- */

/** The AFIR detail fields the registry knows (src/registry/file/afir.ts); others pass as given. */
export const AFIR_DETAIL_FIELDS = [
  'address',
  'coordinates',
  'entrance_coordinates',
  'owner',
  'amenities',
  'access_restrictions',
  'payment_methods',
  'authorisation_methods',
  'contact',
  'nuts_region',
  'location_directions',
  'vehicle_types',
  'max_vehicle_mass',
  'max_vehicle_height',
  'max_vehicle_length',
  'max_vehicle_width',
  'parking_spaces',
  'parking_spaces_disabled',
  'service_support',
  'contact_phone_number',
  'cumulative_daily_hydrogen_capacity',
] as const;

export const v11StationRecordSchema = z
  .looseObject({
    ...recordHead,
    fuel_types: recordFuelTypes(
      FUELLING_OPTIONS,
      'The fuelling options the station provides (its confirmed layout\'s and its registered v1 fuel types), in the `/v1.1/fuel-type` order, with their dispenser count.',
    ),
    photo_url: photoUrl('/v1.1/'),
  })
  .meta({
    title: 'Station (v1.1)',
    description:
      'One station\'s record. Besides the fields listed, it carries the station\'s static (AFIR) details at the top level, ' +
      `as the operator gave them; every one is optional. Known fields: ${AFIR_DETAIL_FIELDS.map((f) => `\`${f}\``).join(', ')} ` +
      '(`vehicle_types` with codes of `/v1.1/vehicle-type`, `contact_phone_number` in E.164 form, `coordinates` as `{lat, lon}`); ' +
      'other fields pass unchanged. A detail named like a listed field is left out.',
    examples: [
      {
        ...EXAMPLE_HEADS.BERLA,
        city: 'Berlin',
        coordinates: { lat: 52.36, lon: 13.5 },
        vehicle_types: ['M1'],
        contact_phone_number: '+493012345678',
        fuel_types: [
          { fuel_type: '700ld', dispensers: 1 },
          { fuel_type: '350ld', dispensers: 1 },
        ],
        photo_url: 'https://hrs.example.org/v1.1/hrs/BERLA/photo',
      },
      {
        ...EXAMPLE_HEADS.HAMBG,
        fuel_types: [],
        photo_url: null,
      },
    ],
  });

export const v11StationListSchema = z.array(v11StationRecordSchema).meta({
  title: 'Stations (v1.1)',
  description: 'Every registered station\'s record, sorted by `hrs_id`; not paginated.',
  examples: [[(v11StationRecordSchema.meta()!.examples as unknown[])[1]]],
});

export const v1StationRecordSchema = z
  .strictObject({
    ...recordHead,
    fuel_types: recordFuelTypes(
      V1_FUEL_TYPES,
      'The fuel types the station provides, in v1 codes and the `/v1/fuel-type` order, with their dispenser count. ' +
        'Heavy-duty 700 bar (`700hd`) has no v1 code and is left out.',
    ),
    photo_url: photoUrl('/v1/'),
  })
  .meta({
    title: 'Station (v1)',
    description: 'One station\'s record in the frozen v1 contract: no AFIR details, v1 fuel-type codes.',
    examples: [
      {
        ...EXAMPLE_HEADS.BERLA,
        fuel_types: [
          { fuel_type: '700car', dispensers: 1 },
          { fuel_type: '350car', dispensers: 1 },
        ],
        photo_url: 'https://hrs.example.org/v1/hrs/BERLA/photo',
      },
    ],
  });

export const v1StationListSchema = z.array(v1StationRecordSchema).meta({
  title: 'Stations (v1)',
  description: 'Every registered station\'s record, sorted by `hrs_id`; not paginated.',
  examples: [[(v1StationRecordSchema.meta()!.examples as unknown[])[0]]],
});

/* ---- The five-state summary, as lists ---------------------------------------------------------------- */

export const v11SummaryListSchema = z.array(stationSummarySchema).meta({
  title: 'Status summaries',
  description: 'Every station\'s summary, sorted by `hrs_id` (with `fuelling_option`: only stations providing it, only that entry).',
  examples: [stationSummarySchema.meta()!.examples!],
});

export const v1SummaryListSchema = z.array(v1StationSummarySchema).meta({
  title: 'Status summaries (v1)',
  description: 'Every station\'s summary in v1 codes, sorted by `hrs_id` (with `fuelling_option`: only stations providing it, only that entry).',
  examples: [v1StationSummarySchema.meta()!.examples!],
});
