
/**
 * What confirming a draft layout would change: per kind of part (dispensers, nozzles, storages,
 * products), the ids added and removed, and per changed part the fields that differ with their value
 * before and after. A pure function of the two layouts; a nozzle moved to another dispenser is a changed
 * `dispenser`, a reordering alone changes nothing that signals or exports depend on and is not reported.
 */

/** A layout as operators describe it (the registry file's and the portal's shape), external ids throughout. */
export interface LayoutFixture {
  dispensers: readonly {
    external_id: string;
    is_certified: boolean;
    nozzles: readonly { external_id: string; connector_type: string; vehicle_side: string; is_certified: boolean; fuelling_options: readonly string[] }[];
  }[];
  storages: readonly { external_id: string; nominal_capacity_kg: number; dispenser_external_ids: readonly string[] }[];
  products: readonly { external_id: string; pressure_stage: number; green_hydrogen_share: number | null; nozzle_external_ids: readonly string[] }[];
}

export interface FieldChange {
  field: string;
  before: unknown;
  after: unknown;
}

export interface PartDiff {
  added: string[];
  removed: string[];
  changed: { id: string; changes: FieldChange[] }[];
}

export interface LayoutDiff {
  /** True when nothing would change. */
  unchanged: boolean;
  dispensers: PartDiff;
  nozzles: PartDiff;
  storages: PartDiff;
  products: PartDiff;
}

type Flat = Map<string, Record<string, unknown>>;

const sorted = (list: readonly string[]) => [...list].sort();

function flatten(layout: LayoutFixture | null): Record<keyof Omit<LayoutDiff, 'unchanged'>, Flat> {
  const dispensers: Flat = new Map();
  const nozzles: Flat = new Map();
  const storages: Flat = new Map();
  const products: Flat = new Map();
  for (const d of layout?.dispensers ?? []) {
    dispensers.set(d.external_id, { is_certified: d.is_certified });
    for (const n of d.nozzles) {
      nozzles.set(n.external_id, {
        dispenser: d.external_id,
        connector_type: n.connector_type,
        vehicle_side: n.vehicle_side,
        is_certified: n.is_certified,
        fuelling_options: sorted(n.fuelling_options),
      });
    }
  }
  for (const s of layout?.storages ?? []) {
    storages.set(s.external_id, { nominal_capacity_kg: s.nominal_capacity_kg, dispenser_external_ids: sorted(s.dispenser_external_ids) });
  }
  for (const p of layout?.products ?? []) {
    products.set(p.external_id, {
      pressure_stage: p.pressure_stage,
      green_hydrogen_share: p.green_hydrogen_share,
      nozzle_external_ids: sorted(p.nozzle_external_ids),
    });
  }
  return { dispensers, nozzles, storages, products };
}

function diffParts(before: Flat, after: Flat): PartDiff {
  const added = [...after.keys()].filter((id) => !before.has(id)).sort();
  const removed = [...before.keys()].filter((id) => !after.has(id)).sort();
  const changed: PartDiff['changed'] = [];
  for (const [id, now] of after) {
    const then = before.get(id);
    if (!then) continue;
    const changes = Object.keys(now)
      .filter((field) => JSON.stringify(then[field]) !== JSON.stringify(now[field]))
      .map((field) => ({ field, before: then[field], after: now[field] }));
    if (changes.length > 0) changed.push({ id, changes });
  }
  changed.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  return { added, removed, changed };
}

/** The change from `before` (the confirmed layout, or null for none) to `after` (the draft). */
export function diffLayouts(before: LayoutFixture | null, after: LayoutFixture | null): LayoutDiff {
  const a = flatten(before);
  const b = flatten(after);
  const diff = {
    dispensers: diffParts(a.dispensers, b.dispensers),
    nozzles: diffParts(a.nozzles, b.nozzles),
    storages: diffParts(a.storages, b.storages),
    products: diffParts(a.products, b.products),
  };
  const unchanged = Object.values(diff).every((p) => p.added.length === 0 && p.removed.length === 0 && p.changed.length === 0);
  return { unchanged, ...diff };
}
