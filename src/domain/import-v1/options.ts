import type { StationEntry } from '../stations.js';
import { FUELLING_OPTIONS, V1_FUEL_TYPES, type FuellingOption, type V1FuelType } from '../vocabulary.js';
import { V1_MESSAGES } from './messages.js';

/**
 * Fuelling options as the legacy import APIs name them. Dialect `v1` (`/import/v1/`) names them by
 * the v1 fuel types, dialect `v1.1` (`/import/v1.1/`) by the canonical codes of v1.1 and v2. The
 * mapping between the two is fixed; `700hd` has no v1 code, so v1 cannot carry it.
 */

export const DIALECTS = ['v1', 'v1.1'] as const;
export type Dialect = (typeof DIALECTS)[number];

/** The codes a signal of each dialect may send as `fuel_type`. */
export const DIALECT_CODES: Record<Dialect, readonly [string, ...string[]]> = {
  v1: V1_FUEL_TYPES,
  'v1.1': FUELLING_OPTIONS,
};

/** v1 fuel type → canonical fuelling option. */
export const V1_TO_CANONICAL: ReadonlyMap<string, FuellingOption> = new Map<V1FuelType, FuellingOption>([
  ['700car', '700ld'],
  ['350car', '350ld'],
  ['350bus', '350hd'],
]);

/** Canonical fuelling option → its v1 fuel type, for the options that have one. */
export const CANONICAL_TO_V1: ReadonlyMap<string, V1FuelType> = new Map([...V1_TO_CANONICAL].map(([v1, option]) => [option, v1 as V1FuelType]));

/** The canonical fuelling option a code of the dialect stands for; undefined for a code outside it. */
export function toCanonical(dialect: Dialect, code: string): FuellingOption | undefined {
  if (!DIALECT_CODES[dialect].includes(code)) return undefined;
  return dialect === 'v1' ? V1_TO_CANONICAL.get(code) : (code as FuellingOption);
}

/**
 * The fuelling options a station provides, canonical, in the order `700ld, 350ld, 700hd, 350hd`:
 * those of the nozzles of its confirmed layout and those of its registered v1 fuel types.
 */
export function providedOptions(station: StationEntry): FuellingOption[] {
  const provided = new Set<string>();
  for (const nozzle of station.layout?.nozzles.values() ?? []) for (const option of nozzle.fuellingOptions) provided.add(option);
  for (const fuelType of station.v1FuelTypes ?? []) {
    const option = V1_TO_CANONICAL.get(fuelType);
    if (option !== undefined) provided.add(option);
  }
  return FUELLING_OPTIONS.filter((option) => provided.has(option));
}

/**
 * Where a station's v1 fuel types and the fuelling options of its confirmed layout disagree, one
 * sentence each: every v1 fuel type must stand for an option the layout provides, and every layout
 * option that has a v1 code (all but `700hd`) must be among the v1 fuel types. When either side is
 * empty there is nothing to compare. `layout` is the layout the sentences name (the layout editor
 * checks a draft).
 */
export function layoutContradictions(layoutOptions: readonly string[], v1FuelTypes: readonly string[], layout: 'confirmed' | 'draft' = 'confirmed'): string[] {
  if (layoutOptions.length === 0 || v1FuelTypes.length === 0) return [];
  const problems: string[] = [];
  const known = V1_FUEL_TYPES.filter((fuelType) => v1FuelTypes.includes(fuelType));
  const unknown = [...new Set(v1FuelTypes.filter((fuelType) => !V1_TO_CANONICAL.has(fuelType)))];
  for (const fuelType of known) {
    const option = V1_TO_CANONICAL.get(fuelType)!;
    if (!layoutOptions.includes(option)) problems.push(V1_MESSAGES.v1FuelTypeWithoutNozzle(fuelType, option, layout));
  }
  for (const fuelType of unknown) problems.push(V1_MESSAGES.unknownV1FuelType(fuelType));
  for (const option of FUELLING_OPTIONS) {
    const fuelType = CANONICAL_TO_V1.get(option);
    if (fuelType !== undefined && layoutOptions.includes(option) && !v1FuelTypes.includes(fuelType)) {
      problems.push(V1_MESSAGES.missingV1FuelType(option, fuelType, layout));
    }
  }
  return problems;
}
