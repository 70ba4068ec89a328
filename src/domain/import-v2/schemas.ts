import { z } from 'zod';
import { CURRENCIES, USAGE_STATUSES, type Category } from '../vocabulary.js';
import {
  AT_LEAST_ONE_STORAGE_VALUE,
  BEYOND_SCHEMA,
  DATETIME_PATTERN,
  EXACTLY_ONE_REFERENCE,
  KG_MAXIMUM,
  KG_PATTERN,
  PRICE_PATTERN,
  STATION_PATTERN,
  TEXT_PATTERN,
} from './formats.js';
import { LIMITS } from './limits.js';
import { codePoint, textFault } from '../text.js';

/**
 * The shapes of import v2 transmissions, with the API's field messages. They check types and presence
 * only; identifier resolution, time windows, decimal limits and cross-field rules are in rules.ts.
 *
 * The descriptions and examples (`.describe()`, `.meta()`) are metadata only: they never change what
 * validates. The OpenAPI document (src/http/openapi.ts) is generated from these same schemas.
 */

/** The JSON type of a value as the error messages name it. */
export function typeName(value: unknown): string {
  if (value === null) return 'NoneType';
  if (Array.isArray(value)) return 'list';
  if (typeof value === 'object') return 'dict';
  if (typeof value === 'string') return 'str';
  if (typeof value === 'boolean') return 'bool';
  if (typeof value === 'number') return Number.isInteger(value) ? 'int' : 'float';
  return typeof value;
}

const presence = (wrongType: (input: unknown) => string) => (issue: { input?: unknown }) => {
  if (issue.input === undefined) return 'This field is required.';
  if (issue.input === null) return 'This field may not be null.';
  return wrongType(issue.input);
};

/**
 * What PostgreSQL text and jsonb cannot hold and is not Unicode text: U+0000 and unpaired surrogates
 * (the platform's one text rule, src/domain/text.ts, in this API's words). Refused in every string of a
 * transmission, so that a dry run never promises what storing would refuse.
 */
export function unstorableProblem(value: string): string | undefined {
  const fault = textFault(value);
  if (!fault) return undefined;
  return fault.kind === 'nul' ? 'Null characters are not allowed.' : `Surrogate characters are not allowed: ${codePoint(fault.code)}.`;
}

const text = () =>
  z
    .string({ error: presence(() => 'Not a valid string.') })
    .min(1, 'This field may not be blank.')
    .max(200, 'Ensure this field has no more than 200 characters.')
    .meta({ pattern: TEXT_PATTERN })
    .superRefine((value, ctx) => {
      const problem = unstorableProblem(value);
      if (problem) ctx.addIssue({ code: 'custom', message: problem, input: value });
    });
const optionalText = () => text().nullish();
const bool = () => z.boolean({ error: presence(() => 'Must be a valid boolean.') });
/** A non-empty list of entries; longer than the limit, validate.ts refuses it before looking into it. */
const list = <T extends z.ZodType>(item: T) =>
  z
    .array(item, { error: presence((input) => `Expected a list of items but got type "${typeName(input)}".`) })
    .min(1, 'This list may not be empty.')
    .meta({ maxItems: LIMITS.entries });
const entry = <T extends z.ZodRawShape>(shape: T) =>
  z.object(shape, { error: presence((input) => `Invalid data. Expected a dictionary, but got ${typeName(input)}.`) });
const choice = <T extends readonly [string, ...string[]]>(values: T) =>
  z.enum(values, { error: presence((input) => `"${String(input)}" is not a valid choice.`) });
/** A decimal as a JSON string; its digits are checked by the rules. */
const decimalString = () =>
  z.string({ error: presence(() => 'A valid number is required. Send the decimal as a string, e.g. "12.345".') });

export const envelopeShape = {
  hrs: text().meta({
    description: 'Station id (five uppercase letters) of a station registered on the platform.',
    examples: ['BERLA'],
    pattern: STATION_PATTERN,
  }),
  datetime: text().meta({
    description:
      'Measurement time, ISO 8601 with a UTC offset (`Z`, `+01:00` or `+0100`; seconds and fractions optional). ' +
      'A real calendar date, at most 5 minutes old and at most 30 seconds ahead of the platform clock.',
    examples: ['2026-11-22T10:00:00+01:00'],
    pattern: DATETIME_PATTERN,
  }),
  transmission_id: optionalText().meta({
    description: 'Free-form run identifier, stored for log correlation only.',
    examples: ['run-2026-11-22T09:00Z-0042'],
  }),
  dry_run: bool()
    .nullish()
    .meta({
      description:
        'Validate end to end (authentication, schema, identifier resolution, value ranges) without storing or ' +
        'publishing. Applies to this transmission only; a batch may mix real and dry-run transmissions. ' +
        'Dry runs count against the rate limit. `null` or left out: `false`.',
      default: false,
    }),
};

const nozzleReference = {
  id: optionalText().meta({
    description: 'Registered nozzle identifier (the `external_id` of a nozzle of the confirmed layout). Exactly one of `id` / `dispenser_id`.',
    examples: ['N1'],
  }),
  dispenser_id: optionalText().meta({
    description:
      'Registered dispenser identifier: the entry applies to each of its nozzles. Exactly one of `id` / `dispenser_id`; ' +
      'entries of both kinds may be mixed if they do not overlap.',
    examples: ['D1'],
  }),
};

export const availabilitySchema = entry({
  ...envelopeShape,
  nozzles: list(
    entry({
      ...nozzleReference,
      available: bool().meta({ description: 'Whether the nozzle (or every nozzle of the dispenser) can fuel now. `null` is rejected.' }),
    }).meta({ description: 'One nozzle, or one dispenser standing for each of its nozzles.', ...EXACTLY_ONE_REFERENCE }),
  ).meta({ description: 'Non-empty. Nozzles left out have no reported state afterwards (the transmission is a full snapshot).' }),
  station: entry({
    maintenance: bool().meta({
      description: 'The station is in maintenance: treated as out of service regardless of the nozzle flags.',
    }),
    limitedly_available: bool().meta({ description: 'The station is limitedly available: overrides the per-nozzle picture downstream.' }),
  }).meta({ description: 'Whole-station flags.' }),
}).meta({
  title: 'Availability transmission',
  description:
    'Availability of one station: per nozzle (or per dispenser) whether it can fuel, and the whole-station flags. ' +
    'The platform derives the per-fuelling-option status from the nozzles and the layout; a transmission from which ' +
    'no fuelling option can be derived is rejected. ' + BEYOND_SCHEMA,
  examples: [
    {
      hrs: 'BERLA',
      datetime: '2026-11-22T10:00:00+01:00',
      nozzles: [
        { id: 'N1', available: true },
        { id: 'N2', available: false },
      ],
      station: { maintenance: false, limitedly_available: false },
    },
  ],
});

export const usageSchema = entry({
  ...envelopeShape,
  nozzles: list(
    entry({
      ...nozzleReference,
      usage_status: choice(USAGE_STATUSES).meta({
        description:
          '`free`: idle, ready; `in-use`: dispensing; `reserved`: reserved for a known incoming vehicle. ' +
          'When a multi-nozzle dispenser cannot serve two vehicles at once, the blocked sibling nozzles are reported as `in-use`.',
      }),
    }).meta({ description: 'One nozzle, or one dispenser standing for each of its nozzles.', ...EXACTLY_ONE_REFERENCE }),
  ).meta({ description: 'Non-empty. Each transmission replaces the previous usage state of the station.' }),
}).meta({
  title: 'Usage transmission',
  description: `Usage of the nozzles of one station (no \`station\` object). ${BEYOND_SCHEMA}`,
  examples: [
    {
      hrs: 'BERLA',
      datetime: '2026-11-22T10:00:00+01:00',
      transmission_id: 'run-42',
      nozzles: [
        { id: 'N1', usage_status: 'in-use' },
        { id: 'N2', usage_status: 'free' },
      ],
    },
    { hrs: 'BERLA', datetime: '2026-11-22T09:00:00Z', nozzles: [{ dispenser_id: 'D1', usage_status: 'reserved' }] },
  ],
});

export const storageSchema = entry({
  ...envelopeShape,
  storages: list(
    entry({
      id: text().meta({ description: 'Registered storage identifier.', examples: ['S1'] }),
      remaining_kg: z
        .union([z.string(), z.number()], { error: presence(() => 'A valid number is required.') })
        .nullish()
        .meta({
          description:
            'Current usable inventory in kg: a decimal string or a number, up to 8 digits with 2 decimals, not negative. ' +
            'Confidential: stored, never exported; data users see only the derived `low_h2_storage`.',
          examples: ['240.50', 87],
          pattern: KG_PATTERN,
          minimum: 0,
          maximum: KG_MAXIMUM,
          multipleOf: 0.01,
        }),
      low_h2_storage: bool()
        .nullish()
        .meta({
          description:
            'True when the inventory is below the threshold (100 kg per storage; exactly 100 kg is not low). ' +
            'Derived from `remaining_kg` when omitted; when both are sent they must agree.',
        }),
    }).meta({ description: 'One storage: at least one of `remaining_kg` / `low_h2_storage`.', ...AT_LEAST_ONE_STORAGE_VALUE }),
  ).meta({ description: 'Non-empty.' }),
}).meta({
  title: 'Hydrogen storage transmission',
  description:
    'Hydrogen storage of one station, per registered storage. A `remaining_kg` and a `low_h2_storage` that contradict ' +
    'each other at the 100 kg threshold are rejected. ' + BEYOND_SCHEMA,
  examples: [
    {
      hrs: 'BERLA',
      datetime: '2026-11-22T10:00:00+01:00',
      storages: [{ id: 'S1', remaining_kg: '240.50' }],
    },
    { hrs: 'BERLA', datetime: '2026-11-22T09:00:00Z', storages: [{ id: 'S1', low_h2_storage: true }] },
  ],
});

export const pricingSchema = entry({
  ...envelopeShape,
  products: list(
    entry({
      id: text().meta({
        description: 'Registered product identifier (see `products` in the export station record). Duplicates are rejected.',
        examples: ['P700'],
      }),
      gross_price: decimalString().meta({
        description: 'VAT-inclusive retail price per kg, as a JSON string: up to 8 digits with 3 decimals, above zero.',
        examples: ['13.850'],
        pattern: PRICE_PATTERN,
      }),
      net_price: decimalString()
        .nullish()
        .meta({
          description: 'Pre-VAT price per kg (professional consumers), as a JSON string; same format, above zero, not above `gross_price`.',
          examples: ['11.639'],
          pattern: PRICE_PATTERN,
        }),
      currency: choice(CURRENCIES)
        .nullish()
        .meta({
          description: 'ISO 4217 currency; `EUR` when left out or `null`. All products of one transmission use the same currency.',
          default: 'EUR',
        }),
    }).meta({ description: 'The price of one product (one price per station and product, not per nozzle).' }),
  ).meta({ description: 'Non-empty.' }),
}).meta({
  title: 'Pricing transmission',
  description:
    'Prices of the registered products of one station. A zero price is never valid; `net_price` must not exceed ' +
    '`gross_price`; all products use one currency (mixed currencies are rejected). ' + BEYOND_SCHEMA,
  examples: [
    {
      hrs: 'BERLA',
      datetime: '2026-11-22T10:00:00+01:00',
      products: [
        { id: 'P700', gross_price: '13.850', net_price: '11.639', currency: 'EUR' },
        { id: 'P350', gross_price: '11.500' },
      ],
    },
  ],
});

export const SCHEMAS = {
  availability: availabilitySchema,
  usage: usageSchema,
  'hydrogen-storage': storageSchema,
  pricing: pricingSchema,
} as const;

/*
 * Response bodies of import v2. The handlers build these directly; the schemas describe them for the
 * OpenAPI document, and the tests check real responses against them so the two cannot drift apart.
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
    stations: z.strictObject({
      availability: assignmentStates,
      usage: assignmentStates,
      'hydrogen-storage': assignmentStates,
      pricing: assignmentStates,
    }),
  })
  .meta({
    title: 'Active stations',
    description: 'The stations covered by the token\'s signal originator, per signal type, with `live` and `testing` station ids.',
    examples: [
      {
        stations: {
          availability: { live: ['BERLA'], testing: [] },
          usage: { live: ['HAMBG'], testing: [] },
          'hydrogen-storage': { live: [], testing: [] },
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

export type AvailabilityInput = z.infer<typeof availabilitySchema>;
export type UsageInput = z.infer<typeof usageSchema>;
export type StorageInput = z.infer<typeof storageSchema>;
export type PricingInput = z.infer<typeof pricingSchema>;
