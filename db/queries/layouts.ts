import { createHash } from 'node:crypto';
import type { Tx } from '../connect.js';

/** A layout as operators describe it (fixture files, later the portal): external ids throughout. */
export interface LayoutInput {
  dispensers: {
    external_id: string;
    is_certified: boolean;
    nozzles: {
      external_id: string;
      connector_type: string;
      vehicle_side: string;
      is_certified: boolean;
      fuelling_options: string[];
    }[];
  }[];
  storages: { external_id: string; nominal_capacity_kg: number; dispenser_external_ids: string[] }[];
  products: {
    external_id: string;
    pressure_stage: number;
    green_hydrogen_share: number | null;
    nozzle_external_ids: string[];
  }[];
}

export type LayoutKind = 'confirmed' | 'draft';

/** SHA-256 of the layout's canonical JSON (keys in a fixed order), to tell changed from unchanged. */
export function layoutHash(layout: LayoutInput): Buffer {
  const canonical = {
    dispensers: layout.dispensers.map((d) => ({
      external_id: d.external_id,
      is_certified: d.is_certified,
      nozzles: d.nozzles.map((n) => ({
        external_id: n.external_id,
        connector_type: n.connector_type,
        vehicle_side: n.vehicle_side,
        is_certified: n.is_certified,
        fuelling_options: n.fuelling_options,
      })),
    })),
    storages: layout.storages.map((s) => ({
      external_id: s.external_id,
      nominal_capacity_kg: s.nominal_capacity_kg,
      dispenser_external_ids: s.dispenser_external_ids,
    })),
    products: layout.products.map((p) => ({
      external_id: p.external_id,
      pressure_stage: p.pressure_stage,
      green_hydrogen_share: p.green_hydrogen_share,
      nozzle_external_ids: p.nozzle_external_ids,
    })),
  };
  return createHash('sha256').update(JSON.stringify(canonical)).digest();
}

export interface StoredLayoutHead {
  kind: LayoutKind;
  version: number;
  content_hash: Buffer;
}

export async function layoutHeads(tx: Tx, hrsId: string): Promise<Map<LayoutKind, StoredLayoutHead>> {
  const rows = await tx<StoredLayoutHead[]>`
    SELECT kind, version, content_hash FROM layouts WHERE hrs_id = ${hrsId}`;
  return new Map(rows.map((row) => [row.kind, row]));
}

export async function deleteLayout(tx: Tx, hrsId: string, kind: LayoutKind): Promise<boolean> {
  const rows = await tx`DELETE FROM layouts WHERE hrs_id = ${hrsId} AND kind = ${kind} RETURNING id`;
  return rows.length > 0;
}

/** Writes a whole layout (replacing the station's layout of that kind) in the caller's transaction. */
export async function writeLayout(tx: Tx, hrsId: string, kind: LayoutKind, version: number, layout: LayoutInput): Promise<void> {
  await deleteLayout(tx, hrsId, kind);
  const [head] = await tx<{ id: string }[]>`
    INSERT INTO layouts (hrs_id, kind, version, content_hash, confirmed_at)
    VALUES (${hrsId}, ${kind}, ${version}, ${layoutHash(layout)},
            ${kind === 'confirmed' ? tx`clock_timestamp()` : null})
    RETURNING id`;
  const layoutId = head!.id;

  const dispenserIds = await insertReturningIds(
    tx,
    'dispensers',
    layout.dispensers.map((d, position) => ({ layout_id: layoutId, external_id: d.external_id, is_certified: d.is_certified, position })),
  );
  const nozzleRows = layout.dispensers.flatMap((d) =>
    d.nozzles.map((n) => ({
      layout_id: layoutId,
      dispenser_id: dispenserIds.get(d.external_id)!,
      external_id: n.external_id,
      connector_type: n.connector_type,
      vehicle_side: n.vehicle_side,
      is_certified: n.is_certified,
    })),
  );
  const nozzleIds = await insertReturningIds(tx, 'nozzles', nozzleRows.map((row, position) => ({ ...row, position })));
  await insertRows(
    tx,
    'nozzle_fuelling_options',
    layout.dispensers.flatMap((d) =>
      d.nozzles.flatMap((n) =>
        n.fuelling_options.map((option, position) => ({ nozzle_id: nozzleIds.get(n.external_id)!, fuelling_option: option, position })),
      ),
    ),
  );

  const storageIds = await insertReturningIds(
    tx,
    'storages',
    layout.storages.map((s, position) => ({ layout_id: layoutId, external_id: s.external_id, nominal_capacity_kg: s.nominal_capacity_kg, position })),
  );
  await insertRows(
    tx,
    'storage_dispensers',
    layout.storages.flatMap((s) =>
      s.dispenser_external_ids.map((ref, position) => ({ storage_id: storageIds.get(s.external_id)!, dispenser_id: dispenserIds.get(ref)!, position })),
    ),
  );

  const productIds = await insertReturningIds(
    tx,
    'products',
    layout.products.map((p, position) => ({
      layout_id: layoutId,
      external_id: p.external_id,
      pressure_stage: p.pressure_stage,
      green_hydrogen_share: p.green_hydrogen_share,
      position,
    })),
  );
  await insertRows(
    tx,
    'product_nozzles',
    layout.products.flatMap((p) =>
      p.nozzle_external_ids.map((ref, position) => ({ product_id: productIds.get(p.external_id)!, nozzle_id: nozzleIds.get(ref)!, position })),
    ),
  );
}

type Row = Record<string, string | number | boolean | null>;

async function insertRows(tx: Tx, table: string, rows: Row[]): Promise<void> {
  if (rows.length === 0) return;
  await tx`INSERT INTO ${tx(table)} ${tx(rows)}`;
}

/** Inserts rows carrying `external_id` and maps each external id to its new row id. */
async function insertReturningIds(tx: Tx, table: string, rows: Row[]): Promise<Map<string, string>> {
  if (rows.length === 0) return new Map();
  const inserted = await tx<{ id: string; external_id: string }[]>`
    INSERT INTO ${tx(table)} ${tx(rows)} RETURNING id, external_id`;
  return new Map(inserted.map((row) => [row.external_id, row.id]));
}
