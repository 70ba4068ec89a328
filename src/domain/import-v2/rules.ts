import type { ConfirmedLayout, StationEntry } from '../station-entry.js';
import { CURRENCIES } from '../vocabulary.js';
import { decimalProblem, formatUnits, numberAsDecimal, toUnits } from '../decimal.js';
import { shownValue } from '../text.js';
import type { ErrorTree } from './errors.js';

/**
 * The semantic rules of import v2, run on the transmission as sent: each rule looks only at values of
 * the right type, so every failing rule is reported even when other fields are malformed.
 */

export const MAX_AGE_MS = 5 * 60 * 1000;
export const MAX_AHEAD_MS = 30 * 1000;
export const LOW_STORAGE_THRESHOLD_KG = 100;

export const MESSAGES = {
  unknownStation: (id: string) => `Unknown station identifier: ${id}`,
  duplicateStation: (id: string) => `Duplicate station in batch: ${id}`,
  datetimeFormat: 'Datetime has wrong format. Use ISO 8601 with a UTC offset, e.g. 2026-11-22T10:00:00+01:00.',
  tooOld: 'The signal may not be older than 5 minutes.',
  future: 'The signal may not be from the future.',
  exactlyOne: 'Provide exactly one of "id" or "dispenser_id".',
  atLeastOne: 'Provide at least one of "remaining_kg" or "low_h2_storage".',
  unknown: (kind: 'nozzle' | 'dispenser' | 'storage' | 'product', id: string) => `Unknown ${kind} identifier: ${id}`,
  duplicate: (kind: 'nozzle' | 'storage' | 'product', id: string) => `Duplicate ${kind} reference: ${id}`,
  noFuellingOption: 'No fuelling option could be derived from the station layout; check the station registration.',
  notNegative: 'Ensure this value is greater than or equal to 0.',
  aboveZero: 'Ensure this value is greater than 0.',
  inconsistentStorage: (id: string, kg: string) =>
    `Inconsistent low_h2_storage for storage ${id}: remaining_kg ${kg} is ${Number(kg) < LOW_STORAGE_THRESHOLD_KG ? 'below' : 'not below'} the ${LOW_STORAGE_THRESHOLD_KG} kg threshold.`,
  inconsistentPrice: (id: string) => `Inconsistent price for product ${id}: net_price must not exceed gross_price.`,
  mixedCurrencies: (currencies: string[]) => `Mixed currencies in one transmission: ${currencies.join(', ')}.`,
} as const;

/**
 * An ISO 8601 date-time with a UTC offset, as an instant; undefined when malformed or impossible.
 * Read as `YYYY-MM-DDTHH:MM[:SS[.fraction of 1 to 9 digits]]` then `Z` or `±HH[:]MM` (`T` and `Z` in
 * either case; DATETIME_PATTERN in ./formats.ts says the same to JSON Schema), character by character,
 * making nothing but the instant; fractions beyond the millisecond are cut.
 */
export function parseMeasurementTime(text: string): Date | undefined {
  const n = text.length;
  if (n < 17 || n > 35) return undefined;
  const year = digitsAt(text, 0, 4), month = digitsAt(text, 5, 2), day = digitsAt(text, 8, 2);
  const hour = digitsAt(text, 11, 2), minute = digitsAt(text, 14, 2);
  if (year < 0 || month < 0 || day < 0 || hour < 0 || minute < 0) return undefined;
  if (text.charCodeAt(4) !== DASH || text.charCodeAt(7) !== DASH || (text.charCodeAt(10) | LOWER) !== LOWER_T || text.charCodeAt(13) !== COLON) return undefined;
  let at = 16;
  let second = 0;
  let millis = 0;
  if (text.charCodeAt(at) === COLON) {
    second = digitsAt(text, at + 1, 2);
    if (second < 0) return undefined;
    at += 3;
    if (text.charCodeAt(at) === DOT) {
      const first = ++at;
      while (at < n && isDigit(text.charCodeAt(at))) at++;
      const count = at - first;
      if (count < 1 || count > 9) return undefined;
      // The first three digits of the fraction (".5" is 500 ms, ".1239" 123 ms).
      for (let k = 0; k < 3; k++) millis = millis * 10 + (k < count ? text.charCodeAt(first + k) - ZERO : 0);
    }
  }
  let offsetMinutes = 0;
  const zone = text.charCodeAt(at);
  if ((zone | LOWER) === LOWER_Z) {
    if (at + 1 !== n) return undefined;
  } else if (zone === PLUS || zone === DASH) {
    const offsetHours = digitsAt(text, at + 1, 2);
    at += 3;
    if (text.charCodeAt(at) === COLON) at++;
    const offsetMins = digitsAt(text, at, 2);
    if (offsetHours < 0 || offsetMins < 0 || at + 2 !== n) return undefined;
    if (offsetHours > 23 || offsetMins > 59) return undefined;
    offsetMinutes = (zone === DASH ? -1 : 1) * (offsetHours * 60 + offsetMins);
  } else return undefined;
  if (month < 1 || month > 12 || day < 1 || hour > 23 || minute > 59 || second > 59) return undefined;
  if (day > daysIn(year, month)) return undefined;
  const instant = new Date(Date.UTC(year, month - 1, day, hour, minute, second, millis) - offsetMinutes * 60_000);
  return Number.isNaN(instant.getTime()) ? undefined : instant;
}

const ZERO = 0x30, DASH = 0x2d, PLUS = 0x2b, COLON = 0x3a, DOT = 0x2e;
/** A letter's bit of lower case: `c | LOWER` is `t` for both `T` and `t`. */
const LOWER = 0x20, LOWER_T = 0x74, LOWER_Z = 0x7a;
const isDigit = (c: number) => c >= ZERO && c <= ZERO + 9;

/** The number written by the `width` ASCII digits at `at`; -1 when any of them is not a digit (or missing). */
function digitsAt(text: string, at: number, width: number): number {
  let value = 0;
  for (let i = at; i < at + width; i++) {
    const c = text.charCodeAt(i); // NaN past the end: not a digit
    if (!isDigit(c)) return -1;
    value = value * 10 + (c - ZERO);
  }
  return value;
}

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
/** Days in a month (1-12) of the proleptic Gregorian calendar. */
function daysIn(year: number, month: number): number {
  if (month !== 2) return DAYS_IN_MONTH[month - 1]!;
  return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28;
}

export type Raw = Record<string, unknown>;
const isObject = (v: unknown): v is Raw => v !== null && typeof v === 'object' && !Array.isArray(v);
const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);
const entries = (raw: Raw, field: string): Raw[] =>
  Array.isArray(raw[field]) ? (raw[field] as unknown[]).map((e) => (isObject(e) ? e : {})) : [];

/** Envelope: station known and not repeated, measurement time within the window. */
export function checkEnvelope(raw: Raw, errors: ErrorTree, station: StationEntry | undefined, seen: Set<string>, now: Date): Date | undefined {
  const hrs = str(raw.hrs);
  if (hrs !== undefined) {
    if (!station) errors.add(['hrs'], MESSAGES.unknownStation(hrs));
    if (seen.has(hrs)) errors.add(['hrs'], MESSAGES.duplicateStation(hrs));
    seen.add(hrs);
  }
  const text = str(raw.datetime);
  if (text === undefined) return undefined;
  const at = parseMeasurementTime(text);
  if (!at) {
    errors.add(['datetime'], MESSAGES.datetimeFormat);
    return undefined;
  }
  if (now.getTime() - at.getTime() > MAX_AGE_MS) errors.add(['datetime'], MESSAGES.tooOld);
  if (at.getTime() - now.getTime() > MAX_AHEAD_MS) errors.add(['datetime'], MESSAGES.future);
  return at;
}

/**
 * Nozzle entries (availability, usage): exactly one of id / dispenser_id, each resolved against the
 * confirmed layout, no nozzle covered twice. Returns entry index → the nozzles it covers.
 */
export function resolveNozzles(raw: Raw, errors: ErrorTree, station: StationEntry | undefined): Map<number, string[]> {
  const covered = new Map<number, string[]>();
  const seen = new Set<string>();
  const layout: ConfirmedLayout | null | undefined = station?.layout;
  entries(raw, 'nozzles').forEach((entry, index) => {
    const id = entry.id ?? null;
    const dispenser = entry.dispenser_id ?? null;
    if ((id === null) === (dispenser === null)) {
      errors.add(['nozzles', index], MESSAGES.exactlyOne);
      return;
    }
    const field = id !== null ? 'id' : 'dispenser_id';
    const ref = str(id ?? dispenser);
    if (ref === undefined) return; // a type error, already reported
    let nozzles: string[] | undefined;
    if (field === 'id') nozzles = layout?.nozzles.has(ref) ? [ref] : undefined;
    else nozzles = layout?.dispensers.get(ref);
    if (station && !nozzles) errors.add(['nozzles', index, field], MESSAGES.unknown(field === 'id' ? 'nozzle' : 'dispenser', ref));
    for (const nozzle of nozzles ?? (field === 'id' ? [ref] : [])) {
      if (seen.has(nozzle)) errors.add(['nozzles', index, field], MESSAGES.duplicate('nozzle', nozzle));
      seen.add(nozzle);
    }
    if (nozzles) covered.set(index, nozzles);
  });
  return covered;
}

/** Availability: the fuelling options the referenced nozzles offer; none is a rejection. */
export function deriveFuellingOptions(raw: Raw, errors: ErrorTree, station: StationEntry | undefined, covered: Map<number, string[]>): string[] {
  const layout = station?.layout;
  const list = entries(raw, 'nozzles');
  if (!layout || list.length === 0 || covered.size !== list.length) return [];
  const options = new Set<string>();
  for (const nozzles of covered.values()) for (const n of nozzles) for (const o of layout.nozzles.get(n)?.fuellingOptions ?? []) options.add(o);
  if (options.size === 0) errors.add([], MESSAGES.noFuellingOption);
  return [...options];
}

/** Plain id entries (storages, products): resolved, not repeated. */
export function resolveIds(raw: Raw, errors: ErrorTree, station: StationEntry | undefined, field: 'storages' | 'products'): void {
  const kind = field === 'storages' ? 'storage' : 'product';
  const known = field === 'storages' ? station?.layout?.storages : station?.layout?.products;
  const seen = new Set<string>();
  entries(raw, field).forEach((entry, index) => {
    const id = str(entry.id);
    if (id === undefined) return;
    if (station && !known?.has(id)) errors.add([field, index, 'id'], MESSAGES.unknown(kind, id));
    if (seen.has(id)) errors.add([field, index, 'id'], MESSAGES.duplicate(kind, id));
    seen.add(id);
  });
}

/** A decimal field: the canonical text, or undefined with the problem reported. */
function decimalField(value: unknown, path: (string | number)[], errors: ErrorTree, places: number, min: 'zero' | 'positive'): string | undefined {
  const text = typeof value === 'number' ? numberAsDecimal(value) : typeof value === 'string' ? value : undefined;
  if (text === undefined) {
    if (typeof value === 'number') errors.add(path, 'A valid number is required.');
    return undefined;
  }
  const problem = decimalProblem(text, { maxDigits: 8, decimalPlaces: places });
  if (problem) {
    errors.add(path, problem);
    return undefined;
  }
  const units = toUnits(text, places);
  if (min === 'zero' && units < 0n) errors.add(path, MESSAGES.notNegative);
  else if (min === 'positive' && units <= 0n) errors.add(path, MESSAGES.aboveZero);
  else return formatUnits(units, places);
  return undefined;
}

/** Storage entries: at least one of the two values, non-negative kg, no contradiction at 100 kg. */
export function checkStorages(raw: Raw, errors: ErrorTree): { id: string; remaining_kg: string | null; low_h2_storage: boolean }[] {
  return entries(raw, 'storages').map((entry, index) => {
    const given = entry.remaining_kg ?? null;
    const flag = typeof entry.low_h2_storage === 'boolean' ? entry.low_h2_storage : null;
    if (given === null && (entry.low_h2_storage ?? null) === null) errors.add(['storages', index], MESSAGES.atLeastOne);
    const kg = given === null ? null : decimalField(given, ['storages', index, 'remaining_kg'], errors, 2, 'zero') ?? null;
    const low = kg === null ? null : toUnits(kg, 2) < BigInt(LOW_STORAGE_THRESHOLD_KG * 100);
    if (low !== null && flag !== null && low !== flag) {
      errors.add(['storages', index, 'low_h2_storage'], MESSAGES.inconsistentStorage(shownValue(entry.id), kg!));
    }
    return { id: shownValue(entry.id), remaining_kg: kg, low_h2_storage: (low ?? flag) === true };
  });
}

/** Product entries: prices above zero within 8 digits / 3 decimals, net not above gross, one currency. */
export function checkProducts(raw: Raw, errors: ErrorTree): { id: string; gross_price: string; net_price: string | null; currency: string }[] {
  const list = entries(raw, 'products');
  const currencies: string[] = [];
  const products = list.map((entry, index) => {
    const gross = typeof entry.gross_price === 'string' ? decimalField(entry.gross_price, ['products', index, 'gross_price'], errors, 3, 'positive') : undefined;
    const net =
      typeof entry.net_price === 'string' ? decimalField(entry.net_price, ['products', index, 'net_price'], errors, 3, 'positive') : undefined;
    if (gross !== undefined && net !== undefined && toUnits(net, 3) > toUnits(gross, 3)) {
      errors.add(['products', index, 'net_price'], MESSAGES.inconsistentPrice(shownValue(entry.id)));
    }
    const currency = typeof entry.currency === 'string' ? entry.currency : 'EUR';
    if ((CURRENCIES as readonly string[]).includes(currency) && !currencies.includes(currency)) currencies.push(currency);
    return { id: shownValue(entry.id), gross_price: gross ?? '', net_price: net ?? null, currency };
  });
  if (currencies.length > 1) errors.add([], MESSAGES.mixedCurrencies(currencies));
  return products;
}
