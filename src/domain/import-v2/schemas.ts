import { z } from 'zod';

/**
 * The shapes of import v2 transmissions, with the API's field messages. They check types and presence
 * only; identifier resolution, time windows, decimal limits and cross-field rules are in rules.ts.
 */

export const CATEGORIES = ['availability', 'usage', 'hydrogen-storage', 'pricing'] as const;
export type Category = (typeof CATEGORIES)[number];

export const USAGE_STATUSES = ['free', 'in-use', 'reserved'] as const;
export const CURRENCIES = ['EUR', 'CHF', 'GBP', 'DKK', 'SEK', 'NOK', 'PLN', 'CZK', 'HUF', 'RON'] as const;

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

const text = () =>
  z
    .string({ error: presence(() => 'Not a valid string.') })
    .min(1, 'This field may not be blank.')
    .max(200, 'Ensure this field has no more than 200 characters.');
const optionalText = () => text().nullish();
const bool = () => z.boolean({ error: presence(() => 'Must be a valid boolean.') });
const list = <T extends z.ZodType>(item: T) =>
  z
    .array(item, { error: presence((input) => `Expected a list of items but got type "${typeName(input)}".`) })
    .min(1, 'This list may not be empty.');
const entry = <T extends z.ZodRawShape>(shape: T) =>
  z.object(shape, { error: presence((input) => `Invalid data. Expected a dictionary, but got ${typeName(input)}.`) });
const choice = <T extends readonly [string, ...string[]]>(values: T) =>
  z.enum(values, { error: presence((input) => `"${String(input)}" is not a valid choice.`) });
/** A decimal as a JSON string; its digits are checked by the rules. */
const decimalString = () =>
  z.string({ error: presence(() => 'A valid number is required. Send the decimal as a string, e.g. "12.345".') });

export const envelopeShape = {
  hrs: text().describe('Station id (five uppercase letters) of a station registered on the platform.'),
  datetime: text().describe('Measurement time, ISO 8601 with a UTC offset; at most 5 minutes old and 30 seconds ahead.'),
  transmission_id: optionalText().describe('Free-form run identifier, stored for log correlation only.'),
  dry_run: bool().optional().describe('Validate end to end without storing or publishing. Default false.'),
};

const nozzleReference = {
  id: optionalText().describe('Registered nozzle identifier. Exactly one of id / dispenser_id.'),
  dispenser_id: optionalText().describe('Registered dispenser identifier: the entry applies to each of its nozzles.'),
};

export const availabilitySchema = entry({
  ...envelopeShape,
  nozzles: list(entry({ ...nozzleReference, available: bool() })),
  station: entry({ maintenance: bool(), limitedly_available: bool() }),
});

export const usageSchema = entry({
  ...envelopeShape,
  nozzles: list(entry({ ...nozzleReference, usage_status: choice(USAGE_STATUSES) })),
});

export const storageSchema = entry({
  ...envelopeShape,
  storages: list(
    entry({
      id: text(),
      remaining_kg: z
        .union([z.string(), z.number()], { error: presence(() => 'A valid number is required.') })
        .nullish()
        .describe('Usable inventory in kg: decimal string or number, up to 8 digits with 2 decimals, not negative.'),
      low_h2_storage: bool().nullish().describe('True when the inventory is below 100 kg.'),
    }),
  ),
});

export const pricingSchema = entry({
  ...envelopeShape,
  products: list(
    entry({
      id: text(),
      gross_price: decimalString().describe('Price per kg including VAT: up to 8 digits with 3 decimals, above zero.'),
      net_price: decimalString().nullish().describe('Price per kg before VAT; not above gross_price.'),
      currency: choice(CURRENCIES).nullish().describe('ISO 4217; default EUR. One currency per transmission.'),
    }),
  ),
});

export const SCHEMAS = {
  availability: availabilitySchema,
  usage: usageSchema,
  'hydrogen-storage': storageSchema,
  pricing: pricingSchema,
} as const;

export type AvailabilityInput = z.infer<typeof availabilitySchema>;
export type UsageInput = z.infer<typeof usageSchema>;
export type StorageInput = z.infer<typeof storageSchema>;
export type PricingInput = z.infer<typeof pricingSchema>;
