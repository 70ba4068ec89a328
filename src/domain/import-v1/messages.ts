import { LIMIT_MESSAGES } from '../import-v2/limits.js';
import { MESSAGES } from '../import-v2/rules.js';
import { typeName } from '../import-v2/fields.js';
import { V1_FUEL_TYPES } from '../vocabulary.js';

/**
 * Every message the legacy import v1 / v1.1 validation gives, and the registry's layout checks for
 * v1 fuel types, in one place so that documents can quote them. The messages a v1 signal shares
 * with import v2 are v2's own (the same functions and words): a client sees one wording for one
 * problem on every import API.
 */
export const V1_MESSAGES = {
  /** A `fuel_type` outside the dialect's vocabulary, the other dialect's codes included. */
  invalidFuellingOption: 'Invalid fuelling option',
  /** The same fuelling option twice in one signal (under the later entry's `fuel_type`). */
  duplicateFuellingOption: (code: string) => `Duplicate fuelling option: ${code}`,
  /** A fuelling option the station does not provide (under the entry's `fuel_type`): the signal is refused. */
  notProvided: (code: string) => `Fuelling option not provided by this station: ${code}`,

  // Shared with import v2.
  unknownStation: MESSAGES.unknownStation,
  datetimeFormat: MESSAGES.datetimeFormat,
  tooOld: MESSAGES.tooOld,
  future: MESSAGES.future,
  required: 'This field is required.',
  notNull: 'This field may not be null.',
  notABoolean: 'Must be a valid boolean.',
  notAString: 'Not a valid string.',
  blank: 'This field may not be blank.',
  textTooLong: 'Ensure this field has no more than 200 characters.',
  nullCharacter: 'Null characters are not allowed.',
  /** The request body, or `dispensers`, is not a JSON array. */
  notAList: (value: unknown) => `Expected a list of items but got type "${typeName(value)}".`,
  /** A signal, or a `dispensers` entry, is not a JSON object. */
  notAnObject: (value: unknown) => `Invalid data. Expected a dictionary, but got ${typeName(value)}.`,
  /** Too many signals in one request, or too many `dispensers` entries in one signal. */
  tooLong: LIMIT_MESSAGES.tooLong,
  /** A signal not looked at because the request already has too many errors. */
  notValidated: LIMIT_MESSAGES.notValidated,

  // The registry: a station's v1 fuel types against its confirmed layout.
  // `layout` names the layout compared: the confirmed one, or (in the layout editor) the draft.
  v1FuelTypeWithoutNozzle: (fuelType: string, option: string, layout = 'confirmed') =>
    `v1 fuel type ${fuelType} has no nozzle with fuelling option ${option} on the ${layout} layout`,
  missingV1FuelType: (option: string, fuelType: string, layout = 'confirmed') =>
    `fuelling option ${option} on the ${layout} layout is missing from the v1 fuel types (${fuelType})`,
  unknownV1FuelType: (fuelType: string) => `v1 fuel type ${fuelType} is not one of ${V1_FUEL_TYPES.join(', ')}`,
} as const;
