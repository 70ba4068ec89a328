import { CANONICAL_TO_V1, layoutContradictions } from '../import-v1/options.js';
import { V1_FUEL_TYPES } from '../vocabulary.js';
import type { LayoutFixture } from '../layout-diff.js';

/**
 * A draft layout against the station's v1 fuel types, as the layout editor shows it before a
 * confirmation. The rule (the legacy import's, src/domain/import-v1/options.ts) ties the two both ways:
 * every v1 fuel type stands for a fuelling option some nozzle of the confirmed layout offers, and every
 * option of the layout that has a v1 code (all but `700hd`) is among the v1 fuel types; when either side
 * is empty there is nothing to compare. A draft that adds a nozzle with a new option, or removes the last
 * nozzle offering one, can therefore only be confirmed together with new v1 fuel types: this says which
 * (`agreeing`), so that the confirmation carries them in the same transaction.
 */

export interface FuelTypesCheck {
  /** The station's v1 fuel types now. */
  current: string[];
  /** Where the draft and the current v1 fuel types disagree, one sentence each; empty when they agree. */
  contradictions: string[];
  /** The v1 fuel types that agree with the draft (the fuelling options its nozzles offer, as v1 codes); null when the current ones do. */
  agreeing: string[] | null;
  /** What `agreeing` adds to the current v1 fuel types. */
  add: string[];
  /** What `agreeing` removes from them. */
  remove: string[];
}

/** The fuelling options the layout's nozzles offer. */
export function layoutOptions(layout: LayoutFixture | null): string[] {
  return (layout?.dispensers ?? []).flatMap((d) => d.nozzles.flatMap((n) => [...n.fuelling_options]));
}

/** The draft `layout` (what confirming it would make the confirmed layout) against the v1 fuel types `current`. */
export function checkFuelTypesAgainst(layout: LayoutFixture | null, current: readonly string[]): FuelTypesCheck {
  const options = layoutOptions(layout);
  const contradictions = layoutContradictions(options, current, 'draft');
  const now = V1_FUEL_TYPES.filter((f) => current.includes(f));
  if (contradictions.length === 0) return { current: [...now], contradictions, agreeing: null, add: [], remove: [] };
  const offered = new Set(options.map((o) => CANONICAL_TO_V1.get(o)).filter((f) => f !== undefined));
  const agreeing = V1_FUEL_TYPES.filter((f) => offered.has(f));
  return {
    current: [...now],
    contradictions,
    agreeing,
    add: agreeing.filter((f) => !now.includes(f)),
    remove: current.filter((f) => !(agreeing as readonly string[]).includes(f)),
  };
}
