import { z } from 'zod';
import { DATETIME_PATTERN, STATION_PATTERN, TEXT_PATTERN } from './formats.js';
import { LIMITS } from './limits.js';
import { boundedString, codePoint, shownValue, textFault } from '../text.js';

/**
 * The parts import v2 transmissions are made of, with the API's field messages: the envelope every
 * transmission carries and the field builders each category's schema (src/domain/categories/) is
 * written with. They check types and presence only; identifier resolution, time windows, decimal
 * limits and cross-field rules are in rules.ts.
 *
 * The descriptions and examples (`.describe()`, `.meta()`) are metadata only: they never change what
 * validates. The OpenAPI document is generated from the schemas made of them.
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

export const presence = (wrongType: (input: unknown) => string) => (issue: { input?: unknown }) => {
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

/** The longest text field of a transmission. */
const TEXT_MAX_LENGTH = 200;
/** The longest decimal string read (a decimal has at most 8 digits; leading zeros are not counted, but not endless). */
const DECIMAL_MAX_LENGTH = 100;

/** The `hrs` a transmission names, when it is text within the text limit (what the call log records). */
export function stationNamed(raw: unknown): string | undefined {
  const hrs = raw !== null && typeof raw === 'object' ? (raw as { hrs?: unknown }).hrs : undefined;
  return typeof hrs === 'string' && hrs.length <= TEXT_MAX_LENGTH ? hrs : undefined;
}

export const text = () =>
  boundedString(TEXT_MAX_LENGTH, `Ensure this field has no more than ${TEXT_MAX_LENGTH} characters.`, { error: presence(() => 'Not a valid string.') })
    .min(1, 'This field may not be blank.')
    .meta({ pattern: TEXT_PATTERN })
    .superRefine((value, ctx) => {
      const problem = unstorableProblem(value);
      if (problem) ctx.addIssue({ code: 'custom', message: problem, input: value });
    });
export const optionalText = () => text().nullish();
export const bool = () => z.boolean({ error: presence(() => 'Must be a valid boolean.') });
/** A non-empty list of entries; longer than the limit, validate.ts refuses it before looking into it. */
export const list = <T extends z.ZodType>(item: T) =>
  z
    .array(item, { error: presence((input) => `Expected a list of items but got type "${typeName(input)}".`) })
    .min(1, 'This list may not be empty.')
    .meta({ maxItems: LIMITS.entries });
export const entry = <T extends z.ZodRawShape>(shape: T) =>
  z.object(shape, { error: presence((input) => `Invalid data. Expected a dictionary, but got ${typeName(input)}.`) });
export const choice = <T extends readonly [string, ...string[]]>(values: T) =>
  z.enum(values, { error: presence((input) => `"${shownValue(input)}" is not a valid choice.`) });
/** A decimal as a JSON string; its digits are checked by the rules. */
export const decimalString = () =>
  boundedString(DECIMAL_MAX_LENGTH, `Ensure this field has no more than ${DECIMAL_MAX_LENGTH} characters.`, {
    error: presence(() => 'A valid number is required. Send the decimal as a string, e.g. "12.345".'),
  });

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

export const nozzleReference = {
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
