import { z } from 'zod';
import { LIMITS } from '../import-v2/limits.js';
import { availabilitySchema } from '../categories/availability.js';
import { envelopeShape } from '../import-v2/fields.js';
import { fieldErrorsSchemaOf, type FieldErrors } from '../import-v2/schemas.js';
import { V1_MESSAGES } from './messages.js';
import { DIALECT_CODES, type Dialect } from './options.js';

/**
 * The shapes of legacy import v1 / v1.1 signals, with the API's field messages. They check types and
 * presence only; the station, the time window, repeated and unprovided fuelling options are checked
 * by ./rules.ts. The fields a v1 signal shares with an import v2 transmission are import v2's own
 * schemas (so the same text, boolean and date-time rules and messages apply), described for v1.
 *
 * Fields a signal carries beyond those below are ignored, as the legacy API always ignored them (no
 * error, not stored): the objects are not strict.
 *
 * Descriptions and examples (`.describe()`, `.meta()`) are metadata only: they never change what
 * validates. They are written for an OpenAPI 3.1 document generated from these schemas.
 */

const presence = (wrongType: (input: unknown) => string) => (issue: { input?: unknown }) => {
  if (issue.input === undefined) return V1_MESSAGES.required;
  if (issue.input === null) return V1_MESSAGES.notNull;
  return wrongType(issue.input);
};

const object = <T extends z.ZodRawShape>(shape: T) => z.object(shape, { error: presence(V1_MESSAGES.notAnObject) });

const stationFlags = availabilitySchema.shape.station.shape;
/** Import v2's boolean (`dry_run` without its `null` and default), as bare as it is built. */
const bool = envelopeShape.dry_run.unwrap().unwrap();

/** What the rules of ./rules.ts check that JSON Schema cannot express, for the signal descriptions. */
const BEYOND_SCHEMA =
  'Checked by the platform beyond this schema: the station must be registered; each fuelling option at most once ' +
  'per signal and only options the station provides; `datetime` a real calendar date, at most 5 minutes old and ' +
  '30 seconds ahead; no string may contain U+0000 or an unpaired surrogate.';

const CODES_TEXT: Record<Dialect, string> = {
  v1: '`700car` (700 bar, cars), `350car` (350 bar, cars) or `350bus` (350 bar, buses). The v1.1 codes are refused here.',
  'v1.1':
    '`700ld` (700 bar, light duty), `350ld` (350 bar, light duty), `700hd` (700 bar, heavy duty) or `350hd` ' +
    '(350 bar, heavy duty). The v1 codes are refused here.',
};

function dispenserSchema(dialect: Dialect) {
  return object({
    fuel_type: z
      .enum(DIALECT_CODES[dialect], { error: presence(() => V1_MESSAGES.invalidFuellingOption) })
      .meta({ description: `The fuelling option: ${CODES_TEXT[dialect]} Anything else gives \`${V1_MESSAGES.invalidFuellingOption}\`.` }),
    available: bool.nullish().meta({
      description: 'Whether the fuelling option can be used now. `null` or left out: unknown.',
    }),
  }).meta({ description: 'One fuelling option of the station.' });
}

/** One signal per dialect, alike by design: the same reading in each dialect's own fuel-type codes (v1.1 also with a `transmission_id`). */
const EXAMPLES: Record<Dialect, Record<string, unknown>[]> = {
  v1: [
    {
      hrs: 'BERLA',
      datetime: '2026-11-22T10:00:00+01:00',
      dispensers: [
        { fuel_type: '700car', available: true },
        { fuel_type: '350car', available: false },
      ],
      maintenance: false,
      limitedly_available: false,
    },
  ],
  'v1.1': [
    {
      hrs: 'BERLA',
      datetime: '2026-11-22T10:00:00+01:00',
      dispensers: [
        { fuel_type: '700ld', available: true },
        { fuel_type: '350ld', available: null },
      ],
      maintenance: false,
      limitedly_available: false,
      transmission_id: 'run-42',
    },
  ],
};

function signalSchema(dialect: Dialect) {
  return object({
    hrs: envelopeShape.hrs.meta({ description: 'Station id: five uppercase letters, of a station registered on the platform.' }),
    datetime: envelopeShape.datetime,
    dispensers: z
      .array(dispenserSchema(dialect), { error: presence(V1_MESSAGES.notAList) })
      .meta({
        maxItems: LIMITS.entries,
        description:
          'One entry per fuelling option the station provides, each option at most once. Every option should be in every ' +
          'signal: an option left out (or sent with `available: null`) becomes unknown. May be empty.',
      }),
    maintenance: stationFlags.maintenance.meta({
      description: 'The station is in maintenance: treated as out of service regardless of the fuelling-option flags. No default.',
    }),
    limitedly_available: stationFlags.limitedly_available.meta({
      description: 'The station is limitedly available: overrides the per-fuelling-option picture downstream. No default.',
    }),
    transmission_id: envelopeShape.transmission_id.meta({
      description: 'Free-form run identifier, stored for log correlation only. Not needed when `hrs` is given; may be left out.',
    }),
  }).meta({
    title: dialect === 'v1' ? 'Import v1 signal' : 'Import v1.1 signal',
    description:
      `Availability of one station by fuelling option (${dialect === 'v1' ? 'v1 fuel types' : 'v1.1 fuelling options'}) ` +
      'with the whole-station flags. Other fields are ignored. ' + BEYOND_SCHEMA,
    examples: EXAMPLES[dialect],
  });
}

function requestSchema(dialect: Dialect, signal: z.ZodType) {
  return z
    .array(signal)
    .max(LIMITS.transmissions)
    .meta({
      title: dialect === 'v1' ? 'Import v1 request' : 'Import v1.1 request',
      description:
        `A JSON array of signals, at most ${LIMITS.transmissions}; it may be empty, and may hold several signals for one station ` +
        '(applied in order). Each signal is validated on its own, in order: the valid ones are stored even when others ' +
        'fail and the response is 400.',
      examples: [EXAMPLES[dialect]],
    });
}

export const v1SignalSchema = signalSchema('v1');
export const v11SignalSchema = signalSchema('v1.1');
export const v1RequestSchema = requestSchema('v1', v1SignalSchema);
export const v11RequestSchema = requestSchema('v1.1', v11SignalSchema);

/*
 * The other answers of import v1 / v1.1, described for the OpenAPI documents.
 */

const FUEL_TYPE_DESCRIPTIONS: Record<Dialect, [string, string][]> = {
  v1: [
    ['700car', 'Hydrogen at 700 bar for passenger cars'],
    ['350car', 'Hydrogen at 350 bar for passenger cars'],
  ],
  'v1.1': [
    ['700ld', 'Hydrogen at 700 bar for light-duty vehicles'],
    ['700hd', 'Hydrogen at 700 bar for heavy-duty vehicles'],
  ],
};

/** `GET /import/v1/fuel-type`, `GET /import/v1.1/fuel-type`: the codes a signal of the dialect may send. */
function fuelTypeListSchema(dialect: Dialect) {
  const entry = z
    .strictObject({
      code: z.enum(DIALECT_CODES[dialect]).meta({ description: `The code, as \`dispensers[].fuel_type\` sends it: ${CODES_TEXT[dialect]}` }),
      description: z.string().meta({ description: 'What the code stands for, for a person to read.' }),
    })
    .meta({ title: dialect === 'v1' ? 'v1 fuel type' : 'v1.1 fuelling option' });
  return z.array(entry).meta({
    title: dialect === 'v1' ? 'v1 fuel types' : 'v1.1 fuelling options',
    description: `Every code \`dispensers[].fuel_type\` accepts on import ${dialect}, in a fixed order: the authoritative list.`,
    examples: [FUEL_TYPE_DESCRIPTIONS[dialect].map(([code, description]) => ({ code, description }))],
  });
}

export const v1FuelTypeListSchema = fuelTypeListSchema('v1');
export const v11FuelTypeListSchema = fuelTypeListSchema('v1.1');

const stationIds = (what: string) =>
  z.array(z.string().regex(/^[A-Z]{5}$/)).meta({ description: `Station ids, sorted, ${what}.`, examples: [['BERLA', 'HAMBG']] });

/** `GET /import/v1.1/active-stations`: the stations of the token's originator by transmission state. */
export const v11ActiveStationsSchema = z
  .strictObject({
    live: stationIds('where the originator\'s transmission state is Live: its signals are stored and published'),
    testing: stationIds('where the originator\'s transmission state is Testing: its signals are stored as the latest, not published'),
  })
  .meta({
    title: 'Active stations',
    description:
      'The stations the token\'s signal originator reports on through import v1 / v1.1, by transmission state. Stations ' +
      'where it is Inactive (or not assigned) are not listed: signals for them are kept for debugging only.',
    examples: [{ live: ['BERLA'], testing: ['TRUCK'] }],
  });

/** Per dialect: the schema of one signal, of a request body (an array of them), and of the fuel-type list. */
export const V1_SCHEMAS = {
  v1: { signal: v1SignalSchema, request: v1RequestSchema, fuelTypes: v1FuelTypeListSchema },
  'v1.1': { signal: v11SignalSchema, request: v11RequestSchema, fuelTypes: v11FuelTypeListSchema },
} as const;

/*
 * The 400 bodies of import v1 / v1.1, described for the OpenAPI document.
 */

/** The errors of one signal: field → messages; `dispensers` → an array aligned with its entries. */
export type V1FieldErrors = FieldErrors;

export const v1FieldErrorsSchema = fieldErrorsSchemaOf({
  title: 'Signal errors',
  description:
    'The errors of one signal: each failed field maps to an array of messages; `dispensers` to an array aligned with ' +
    'its entries, `{}` for entries that passed. Problems with the signal as a whole go under `non_field_errors`. ' +
    '`{}` means the signal passed and was accepted.',
  examples: [
    {},
    { datetime: [V1_MESSAGES.tooOld] },
    { dispensers: [{}, { fuel_type: [V1_MESSAGES.invalidFuellingOption] }] },
    { hrs: [V1_MESSAGES.unknownStation('OSLOA')], maintenance: [V1_MESSAGES.required] },
  ],
});

export const v1ValidationErrorListSchema = z
  .array(v1FieldErrorsSchema)
  .min(1)
  .meta({
    title: 'Signal errors, per signal',
    description:
      'One entry per signal of the request, in order: `{}` for a signal that passed (it was stored), its errors ' +
      'otherwise. Unlike import v2, the signals that passed are stored although the response is 400.',
    examples: [
      [
        {},
        { dispensers: [{}, { fuel_type: [V1_MESSAGES.duplicateFuellingOption('350car')] }] },
        {},
      ],
    ],
  });

export const v1NonFieldErrorsSchema = z
  .strictObject({ non_field_errors: z.array(z.string()).min(1) })
  .meta({
    title: 'Request errors',
    description: `The body as a whole is wrong: not a JSON array, or longer than ${LIMITS.transmissions} signals. Nothing was stored.`,
    examples: [{ non_field_errors: [V1_MESSAGES.notAList({})] }],
  });

export type V1SignalInput = z.infer<typeof v1SignalSchema>;
export type V11SignalInput = z.infer<typeof v11SignalSchema>;
