import { z } from 'zod';
import { byCategory } from '../categories/index.js';

/*
 * Response bodies of import v2. The handlers build these directly; the schemas describe them for the
 * OpenAPI document, and the tests check real responses against them so the two cannot drift apart.
 * Each category's transmission schema is with its category (src/domain/categories/).
 */


const stationIds = (what: string) =>
  z.array(z.string().regex(/^[A-Z]{5}$/)).meta({ description: `Station ids, sorted, ${what}.`, examples: [['BERLA', 'HAMBG']] });
const assignmentStates = z
  .strictObject({
    live: stationIds('where this originator is live: its signals are published'),
    testing: stationIds('where this originator is testing: its signals are validated end to end, not published'),
  })
  .meta({ description: 'The stations of one signal type by assignment state.' });

export const activeStationsResponseSchema = z
  .strictObject({
    stations: z.strictObject(byCategory(() => assignmentStates)),
  })
  .meta({
    title: 'Active stations',
    description: 'The stations covered by the token\'s signal originator, per signal type, with `live` and `testing` station ids.',
    examples: [
      {
        stations: {
          ...byCategory(() => ({ live: [] as string[], testing: [] as string[] })),
          availability: { live: ['BERLA'], testing: [] },
          usage: { live: ['HAMBG'], testing: [] },
          pricing: { live: [], testing: ['BERLA'] },
        },
      },
    ],
  });

/** The errors of one value: field → messages, a nested object's errors, or a list's entries' errors (aligned). */
export interface FieldErrors {
  [field: string]: string[] | FieldErrors | FieldErrors[];
}

/**
 * The schema of an error body (./errors.ts builds them), recursive, with its document `meta`: import v1's
 * signal errors are the same tree, described in their own words (../import-v1/schemas.ts).
 */
export function fieldErrorsSchemaOf(meta: z.GlobalMeta): z.ZodType<FieldErrors> {
  const schema: z.ZodType<FieldErrors> = z.lazy(() => z.record(z.string(), z.union([z.array(z.string()), schema, z.array(schema)]))).meta(meta);
  return schema;
}

export const fieldErrorsSchema = fieldErrorsSchemaOf({
  title: 'Field errors',
  description:
    'The errors of one value: each failed field maps to an array of messages; a nested object (`station`) to its own ' +
    'field errors; a list of entries (`nozzles`, `storages`, `products`) to an array aligned with the entries, `{}` for ' +
    'entries that passed. Rules about the whole value go under `non_field_errors`. `{}` means the value passed.',
  examples: [
    {},
    { datetime: ['The signal may not be older than 5 minutes.'] },
    { nozzles: [{}, { id: ['Unknown nozzle identifier: N9'] }], station: { maintenance: ['This field is required.'] } },
  ],
});

export const nonFieldErrorsSchema = z
  .strictObject({ non_field_errors: z.array(z.string()).min(1) })
  .meta({
    title: 'Non-field errors',
    description: 'The request body as a whole is wrong: not a JSON array, an empty one, or one longer than the limit.',
    examples: [{ non_field_errors: ['Expected a list of items but got type "dict".'] }],
  });

export const validationErrorListSchema = z
  .array(fieldErrorsSchema)
  .min(1)
  .meta({
    title: 'Validation errors',
    description:
      'One entry per transmission of the request, in order: `{}` for a transmission that passed, its field errors ' +
      'otherwise. One failed transmission rejects the whole request; nothing of it is stored.',
    examples: [
      [
        {},
        {
          hrs: ['Unknown station identifier: OSLO1'],
          nozzles: [{ non_field_errors: ['Provide exactly one of "id" or "dispenser_id".'] }],
        },
      ],
    ],
  });

export const detailSchema = z
  .strictObject({ detail: z.string().meta({ description: 'What went wrong, for a person to read.' }) })
  .meta({
    title: 'Error detail',
    description: 'An error that is about the request as a whole (authentication, rate limit, malformed JSON, media type, size).',
    examples: [{ detail: 'Authentication credentials were not provided.' }],
  });
