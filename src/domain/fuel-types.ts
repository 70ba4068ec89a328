import { CANONICAL_TO_V1, V1_TO_CANONICAL } from './import-v1/options.js';
import { FUELLING_OPTIONS, type FuellingOption } from './vocabulary.js';

/**
 * The AFIR "fuel types with dispenser count" of a station record: every fuelling option the station
 * provides (its confirmed layout's nozzles and its registered v1 fuel types), in the fuel-type list's
 * order, with how many dispensers of the confirmed layout offer it (null without a confirmed layout,
 * 0 for an option only the v1 registration names).
 */

export interface FuelTypeCount {
  fuel_type: string;
  dispensers: number | null;
}

interface LayoutDispenser {
  nozzles: { fuelling_options: string[] }[];
}

/** In v1.1 codes (`700ld`, …): what export v1.1 and v2 records carry. */
export function fuelTypeCounts(dispensers: readonly LayoutDispenser[] | null, v1FuelTypes: readonly string[]): FuelTypeCount[] {
  const provided = new Set<string>(v1FuelTypes.flatMap((t) => (V1_TO_CANONICAL.has(t) ? [V1_TO_CANONICAL.get(t)!] : [])));
  for (const d of dispensers ?? []) for (const n of d.nozzles) for (const o of n.fuelling_options) provided.add(o);
  return FUELLING_OPTIONS.filter((o) => provided.has(o)).map((option) => ({
    fuel_type: option,
    dispensers: dispensers === null ? null : dispensers.filter((d) => d.nozzles.some((n) => n.fuelling_options.includes(option))).length,
  }));
}

/** In v1 codes (`700car`, `350car`, `350bus`; `700hd` has none and is left out): export v1's records. */
export function v1FuelTypeCounts(counts: readonly FuelTypeCount[]): FuelTypeCount[] {
  return counts.flatMap((c) => {
    const code = CANONICAL_TO_V1.get(c.fuel_type as FuellingOption);
    return code === undefined ? [] : [{ fuel_type: code, dispensers: c.dispensers }];
  });
}
