import { z } from 'zod';
import { EVENT_KINDS, FUELLING_OPTIONS } from '../vocabulary.js';
import { hrsIdSchema, instant } from './fields.js';

/**
 * Export v2's station records, reference lists and problem details, as zod schemas (the status bodies
 * are in ./schemas.ts, which exports these too). The record's head (and its examples' heads), its fuel
 * types with their dispenser counts and its photo link are export v1's and v1.1's too
 * (src/domain/export-v1/schemas.ts): one definition for all three generations.
 */

/** Export v2's pages (the station list, the delta feeds): `limit`'s default and its largest value. */
export const DEFAULT_LIMIT = 100;
export const MAX_LIMIT = 500;

/** 350 or 700 (bar); an integer in the document (a literal union alone would say `number`). */
const pressureStage = z.literal([350, 700]).meta({ type: 'integer' });

/** RFC 9457 problem details, as src/http/errors.ts writes them. */
export const problemSchema = z
  .strictObject({
    type: z.string().meta({ description: 'A URI reference naming the problem type; `about:blank`: the status code says it all.', examples: ['about:blank'] }),
    title: z.string().meta({ description: 'The HTTP status text.', examples: ['Not Found'] }),
    status: z.int().min(100).max(599).meta({ description: 'The HTTP status code.', examples: [404] }),
    detail: z.string().meta({ description: 'What went wrong, for a person to read.', examples: ['No station with hrs_id "OSLO1".'] }),
    code: z.string().regex(/^[a-z_]+$/).meta({
      description:
        'A stable, machine-readable error code: `not_authenticated`, `not_found`, `method_not_allowed`, `throttled`, ' +
        '`internal_error`, …',
      examples: ['not_found'],
    }),
  })
  .meta({
    title: 'Problem',
    description: 'An error (RFC 9457 problem details, `application/problem+json`) with a stable `code`.',
    examples: [{ type: 'about:blank', title: 'Not Found', status: 404, detail: 'No station with hrs_id "OSLO1".', code: 'not_found' }],
  });

export const fuelTypeSchema = z
  .strictObject({
    code: z.enum(FUELLING_OPTIONS).meta({ description: 'Fuelling-option identifier, as in `nozzles[].fuelling_options`.' }),
    description: z.string().meta({ examples: ['Hydrogen at 700 bar for light-duty vehicles'] }),
    pressure_stage: pressureStage.meta({ description: 'Nominal pressure in bar.' }),
    vehicle_class: z.enum(['light-duty', 'heavy-duty']),
  })
  .meta({ title: 'Fuelling option' });

export const fuelTypeListSchema = z
  .array(fuelTypeSchema)
  .meta({
    title: 'Fuelling options',
    description: 'The fuelling options, in their fixed order.',
    examples: [
      [
        { code: '700ld', description: 'Hydrogen at 700 bar for light-duty vehicles', pressure_stage: 700, vehicle_class: 'light-duty' },
        { code: '350hd', description: 'Hydrogen at 350 bar for heavy-duty vehicles', pressure_stage: 350, vehicle_class: 'heavy-duty' },
      ],
    ],
  });

export const vehicleTypeSchema = z
  .strictObject({
    code: z.string().regex(/^[MN][1-3]$/).meta({ description: 'EU vehicle category, as used in `vehicle_types` codes.', examples: ['M1'] }),
    name: z.string().meta({ examples: ['Passenger cars with at most eight seats besides the driver'] }),
  })
  .meta({ title: 'Vehicle category' });

/* Listed like the fuelling options above: another reference list, with its own entries. */
export const vehicleTypeListSchema = z
  .array(vehicleTypeSchema)
  .meta({
    title: 'Vehicle categories',
    description: 'EU vehicle categories M1–M3 and N1–N3, resolving the `vehicle_types` codes of the station details.',
    examples: [[{ code: 'M1', name: 'Passenger cars with at most eight seats besides the driver' }]],
  });

/* ---- Stations: the record with its layout, the paginated list, events ------------------------------- */

export const nozzleSchema = z.strictObject({
  external_id: z.string().meta({ description: 'The id status payloads and import signals use for this nozzle.', examples: ['N1'] }),
  connector_type: z.string().meta({ examples: ['H70'] }),
  vehicle_side: z.string().meta({ examples: ['left'] }),
  is_certified: z.boolean().meta({ description: 'The nozzle itself is certified.' }),
  is_effectively_certified: z.boolean().meta({ description: 'The nozzle and its dispenser are both certified.' }),
  fuelling_options: z.array(z.enum(FUELLING_OPTIONS)).meta({ description: 'Fuelling-option identifiers (see `/v2/fuel-type`).' }),
  protocol_configs: z.null().meta({ description: 'Always null; reserved for a future release; do not rely on its content.' }),
});

export const dispenserSchema = z.strictObject({
  external_id: z.string().meta({ description: 'The id import signals use for this dispenser (`dispenser_id`).', examples: ['D1'] }),
  is_certified: z.boolean().meta({ description: 'The dispenser is certified.' }),
  nozzles: z.array(nozzleSchema),
});

export const storageSchema = z.strictObject({
  external_id: z.string().meta({ description: 'The id status payloads and import signals use for this storage.', examples: ['S1'] }),
  nominal_capacity_kg: z.number().min(0).meta({ examples: [500] }),
  dispenser_external_ids: z.array(z.string()).meta({ description: 'The dispensers this storage feeds.' }),
});

export const productSchema = z.strictObject({
  external_id: z.string().meta({ description: 'The id prices are sent and published for.', examples: ['P700'] }),
  pressure_stage: pressureStage.meta({ description: 'Pressure stage in bar: 350 or 700.' }),
  green_hydrogen_share: z
    .number()
    .min(0)
    .max(100)
    .nullable()
    .meta({ description: 'Percentage of renewable hydrogen; null until the operator declares it.' }),
  nozzle_external_ids: z.array(z.string()).meta({ description: 'The nozzles dispensing this product; may be empty when unmapped.' }),
});

export const eventSchema = z
  .strictObject({
    id: z.string().meta({ examples: ['ev-1'] }),
    kind: z.enum(EVENT_KINDS),
    starts_at: instant('Start (ISO 8601).'),
    ends_at: instant('End (ISO 8601); null: open-ended.').nullable(),
    description: z.string().meta({ examples: ['Compressor service'] }),
  })
  .meta({ title: 'Station event' });

const NOT_CONFIRMED = 'null until the operator has registered and confirmed the layout';

/**
 * The fields every station record starts with, in every generation (v1, v1.1 and v2). Export v2 words
 * `opening_hours` more briefly than the legacy documents (it does not speak of the status summary), so
 * its record replaces that one field's description, keeping its place.
 */
export const recordHead = {
  hrs_id: hrsIdSchema,
  name: z.string().min(1).meta({ examples: ['Berlin Airport'] }),
  operator: z
    .strictObject({
      id: z.string().meta({ examples: ['h2-demo'] }),
      name: z.string().meta({ examples: ['H2 Demo GmbH'] }),
    })
    .meta({ description: 'The station operator.' }),
  heavy_duty: z.boolean().meta({ description: 'Whether the station serves heavy-duty vehicles.' }),
  opening_hours: z
    .string()
    .nullable()
    .meta({
      description:
        'Opening hours as the operator states them (evaluated in the station\'s own time zone for the status summary); null when not given.',
      examples: ['24/7'],
    }),
};

/** How the example records of every generation start: the two example stations' heads. */
export const EXAMPLE_HEADS = {
  BERLA: { hrs_id: 'BERLA', name: 'Berlin Airport', operator: { id: 'h2-demo', name: 'H2 Demo GmbH' }, heavy_duty: false, opening_hours: '24/7' },
  HAMBG: { hrs_id: 'HAMBG', name: 'Hamburg Port', operator: { id: 'h2-demo', name: 'H2 Demo GmbH' }, heavy_duty: true, opening_hours: null },
};

/** A fuel type's dispenser count in a record's `fuel_types`. */
const dispenserCount = z
  .number()
  .int()
  .min(0)
  .nullable()
  .meta({ description: 'Dispensers of the confirmed layout offering it; null without a confirmed layout.' });

/** A record's `fuel_types`: the generation's fuel-type `codes`, each with its dispenser count. */
export const recordFuelTypes = <const T extends readonly [string, ...string[]]>(codes: T, description: string) =>
  z.array(z.strictObject({ fuel_type: z.enum(codes), dispensers: dispenserCount })).meta({ description });

/** A record's `photo_url`, naming the photo route under the generation's `prefix`. */
export const photoUrl = (prefix: string) =>
  z.url().nullable().meta({ description: `Where the station photo is (\`GET ${prefix}hrs/{hrs_id}/photo\`); null when the station has none.` });

/**
 * The great-circle distance from a geo query's point (the geo extension, src/domain/geo.ts): first in
 * each record or status entry of an answer to `near`, in no other.
 */
export const distanceKm = z.number().min(0).max(1000).meta({
  description:
    'Extension beyond the specification: only in answers to `near=lat,lon&radius_km=R`, the great-circle distance in ' +
    'kilometres (3 decimals) from that point; the list is sorted by it.',
  examples: [12.345],
});

/**
 * The station record, as src/api/export-v2/stations.ts serves it: the registry's own fields, the
 * station's v1.1 static (AFIR) details spread at the top level as the operator gave them (so the object
 * admits further fields), `photo_url`, and the three layout sections.
 */
export const stationRecordSchema = z
  .looseObject({
    distance_km: distanceKm.optional(),
    ...recordHead,
    opening_hours: z.string().nullable().meta({ description: 'Opening hours as the operator states them; null when not given.', examples: ['24/7'] }),
    fuel_types: recordFuelTypes(
      FUELLING_OPTIONS,
      'The fuelling options the station provides (its confirmed layout\'s and its registered v1 fuel types), in the `/v2/fuel-type` order, with their dispenser count: the AFIR fuel types, as export v1.1 gives them.',
    ),
    photo_url: photoUrl('/v2/'),
    dispensers: z.array(dispenserSchema).nullable().meta({ description: `The dispensers with their nozzles; ${NOT_CONFIRMED}.` }),
    storages: z
      .array(storageSchema)
      .nullable()
      .meta({ description: `The storages; ${NOT_CONFIRMED}. An empty array after confirmation is a real statement: zero storages.` }),
    products: z
      .array(productSchema)
      .nullable()
      .meta({ description: `The products (what prices apply to); ${NOT_CONFIRMED}. May be empty after confirmation.` }),
  })
  .meta({
    title: 'Station',
    description:
      'One station: its static details and its operator-confirmed layout. Besides the fields listed, the record ' +
      'carries the station\'s v1.1 static (AFIR) details at the top level, unchanged (e.g. `city`, `vehicle_types` ' +
      'with codes of `/v2/vehicle-type`); a detail named like a listed field is left out. The nozzle, storage and ' +
      'product `external_id` values are the ids used in status payloads.',
    examples: [
      {
        ...EXAMPLE_HEADS.BERLA,
        city: 'Berlin',
        vehicle_types: ['M1'],
        fuel_types: [{ fuel_type: '700ld', dispensers: 1 }],
        photo_url: 'https://hrs.example.org/v2/hrs/BERLA/photo',
        dispensers: [
          {
            external_id: 'D1',
            is_certified: true,
            nozzles: [
              {
                external_id: 'N1',
                connector_type: 'H70',
                vehicle_side: 'left',
                is_certified: true,
                is_effectively_certified: true,
                fuelling_options: ['700ld'],
                protocol_configs: null,
              },
            ],
          },
        ],
        storages: [{ external_id: 'S1', nominal_capacity_kg: 500, dispenser_external_ids: ['D1'] }],
        products: [{ external_id: 'P700', pressure_stage: 700, green_hydrogen_share: null, nozzle_external_ids: ['N1'] }],
      },
      {
        ...EXAMPLE_HEADS.HAMBG,
        fuel_types: [],
        photo_url: null,
        dispensers: null,
        storages: null,
        products: null,
      },
    ],
  });

/**
 * The list's sync token (extension, ./delta.ts): the change log's position read before the page, so
 * that a client that reads the whole list and then syncs from its first page's token misses nothing.
 */
export const listSyncToken = z.string().regex(/^[A-Za-z0-9_-]+$/).meta({
  description:
    'Extension (delta sync): an opaque position in the change log, read before this page. Read the whole list, then pass the ' +
    'first page\'s `sync_token` as `since` to receive every change made since (changes during the read included).',
  examples: ['aHJzLXN5bmM6MTo0ODIxMw'],
});

export const stationPageSchema = z
  .strictObject({
    count: z.int().min(0).meta({ description: 'How many stations there are in all (with `bbox` or `near`: how many it finds).' }),
    next: z.url().nullable().meta({ description: 'The next page, or null on the last one.' }),
    previous: z.url().nullable().meta({ description: 'The previous page, or null on the first one.' }),
    sync_token: listSyncToken,
    results: z.array(stationRecordSchema).meta({
      description: 'The page\'s stations, sorted by `hrs_id` (with `near`: by `distance_km`, then `hrs_id`).',
    }),
  })
  .meta({
    title: 'Station page',
    description: 'One page of the station list. Follow `next` until it is null to obtain the full list.',
    examples: [
      {
        count: 2,
        next: 'https://hrs.example.org/v2/hrs?limit=1&offset=1',
        previous: null,
        sync_token: 'aHJzLXN5bmM6MTo0ODIxMw',
        results: [
          {
            ...EXAMPLE_HEADS.BERLA,
            fuel_types: [],
            photo_url: null,
            dispensers: [],
            storages: [],
            products: [],
          },
        ],
      },
    ],
  });

export const eventListSchema = z.array(eventSchema).meta({
  title: 'Station events',
  description: 'The station\'s events not over yet (an event without `ends_at` is ongoing), by start time.',
  examples: [
    [
      { id: 'ev-1', kind: 'maintenance', starts_at: '2026-12-01T08:00:00.000Z', ends_at: '2026-12-01T12:00:00.000Z', description: 'Compressor service' },
      { id: 'ev-2', kind: 'limited-service', starts_at: '2026-12-05T00:00:00.000Z', ends_at: null, description: '' },
    ],
  ],
});
