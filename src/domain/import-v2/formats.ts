/**
 * JSON Schema fragments the OpenAPI document carries beside the zod schemas' types (as `.meta()`, so
 * they never change what validates): what the rules of ./rules.ts check that JSON Schema can say too.
 * Each is at least as strict as its rule; tests check the document against the validator both ways.
 */

/** Any text field: no U+0000 and no unpaired surrogate (read with the `u` flag, as ECMA-262 patterns are). */
export { TEXT_PATTERN } from '../text.js';

/** A registered station id: five uppercase letters. */
export const STATION_PATTERN = '^[A-Z]{5}$';

/** ISO 8601 with a UTC offset, as parseMeasurementTime reads it (`Z`, `+01:00`, `+0100`; seconds and fraction optional). */
export const DATETIME_PATTERN =
  '^[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])[Tt]([01][0-9]|2[0-3]):[0-5][0-9](:[0-5][0-9](\\.[0-9]{1,9})?)?([Zz]|[+-]([01][0-9]|2[0-3]):?[0-5][0-9])$';

/** A price: up to 8 digits of which 3 decimals (leading zeros do not count), above zero, no sign. */
export const PRICE_PATTERN = '^(?=[0-9.]*[1-9])0*[0-9]{1,5}(\\.[0-9]{1,3})?$';

/** A remaining inventory written as a string: up to 8 digits of which 2 decimals, no sign. */
export const KG_PATTERN = '^0*[0-9]{1,6}(\\.[0-9]{1,2})?$';

/** The largest remaining inventory (6 whole digits, 2 decimals). */
export const KG_MAXIMUM = 999999.99;

/** Storage: at least one of `remaining_kg` / `low_h2_storage`, not null. */
export const AT_LEAST_ONE_STORAGE_VALUE = {
  anyOf: [
    { required: ['remaining_kg'], properties: { remaining_kg: { type: ['string', 'number'] } } },
    { required: ['low_h2_storage'], properties: { low_h2_storage: { type: 'boolean' } } },
  ],
};

/** Nozzle entry: exactly one of `id` / `dispenser_id` given as a string (the other left out or null). */
export const EXACTLY_ONE_REFERENCE = {
  oneOf: [
    { required: ['id'], properties: { id: { type: 'string' } } },
    { required: ['dispenser_id'], properties: { dispenser_id: { type: 'string' } } },
  ],
};

/** What the rules check that JSON Schema cannot express, for the transmission descriptions. */
export const BEYOND_SCHEMA =
  'Checked by the platform beyond this schema: the station and every id must be registered (the ids of the ' +
  'station\'s operator-confirmed layout); no entity twice in one transmission and no station twice in one request; ' +
  '`datetime` a real calendar date, at most 5 minutes old and 30 seconds ahead; no string may contain U+0000 or an unpaired surrogate.';
