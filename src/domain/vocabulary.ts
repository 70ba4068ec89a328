/**
 * The platform's vocabulary: every closed list a rule, a schema, the registry file format or a
 * document names. One definition each; the first migration seeds the same reference lists.
 */

/** The v1.1 / v2 fuelling options (pressure stage × vehicle class). */
export const FUELLING_OPTIONS = ['700ld', '350ld', '700hd', '350hd'] as const;
/** The EU vehicle categories a station serves (as `/v2/vehicle-type` lists them). */
export const VEHICLE_CATEGORIES = ['M1', 'M2', 'M3', 'N1', 'N2', 'N3'] as const;
export type FuellingOption = (typeof FUELLING_OPTIONS)[number];

/** The v1 fuel types. */
export const V1_FUEL_TYPES = ['700car', '350car', '350bus'] as const;
export type V1FuelType = (typeof V1_FUEL_TYPES)[number];

/** A nozzle's usage status in a usage signal. */
export const USAGE_STATUSES = ['free', 'in-use', 'reserved'] as const;
export type UsageStatus = (typeof USAGE_STATUSES)[number];

/** Currencies a price may be given in. */
export const CURRENCIES = ['EUR', 'CHF', 'GBP', 'DKK', 'SEK', 'NOK', 'PLN', 'CZK', 'HUF', 'RON'] as const;
export type Currency = (typeof CURRENCIES)[number];

/** Kinds of a station's events (maintenance windows, closures, …). */
export const EVENT_KINDS = ['maintenance', 'closure', 'limited-service', 'opening', 'other'] as const;
export type EventKind = (typeof EVENT_KINDS)[number];

/** An originator's `call_log_mode`: nothing, failed calls only (status >= 400), or every call. */
export const CALL_LOG_MODES = ['disabled', 'errors', 'always'] as const;
export type CallLogMode = (typeof CALL_LOG_MODES)[number];

/** Whether a call is recorded under an originator's call-log mode. */
export function shouldRecord(mode: CallLogMode, status: number): boolean {
  return mode === 'always' || (mode === 'errors' && status >= 400);
}

/** The state of an originator's assignment to a station for one signal type. */
export const ASSIGNMENT_STATES = ['live', 'testing', 'inactive'] as const;
export type AssignmentState = (typeof ASSIGNMENT_STATES)[number];

/** Token generations: which API family a token authenticates on. */
export const GENERATIONS = ['import_v1', 'import_v2', 'export_v1', 'export_v2'] as const;
export type Generation = (typeof GENERATIONS)[number];

/** A station's identifier (`hrs_id`): five capital letters. */
export const HRS_ID_PATTERN = /^[A-Z]{5}$/;
