import type { Tx } from '../../db/connect.js';
import { deleteLayout, layoutHash, layoutHeads, writeLayout, type LayoutInput, type LayoutKind } from '../../db/queries/layouts.js';
import {
  deleteStationEventsExcept,
  replaceStationV1FuelTypes,
  stationV1FuelTypes,
  upsertStationEvent,
  type StationEventFields,
} from '../../db/queries/registry-file.js';

/**
 * The writes a station's parts go through, whoever makes them: the registry file (`hrs load`,
 * ./file/load.ts) and the portal (./editor.ts). Each runs in the caller's transaction and says whether
 * anything changed, so the caller moves the station's `static_modified_at` once.
 */

/** The station's v1 fuel types become exactly these; true when they differed. */
export async function replaceV1FuelTypes(tx: Tx, hrsId: string, fuelTypes: readonly string[]): Promise<boolean> {
  const current = await stationV1FuelTypes(tx, hrsId);
  const wanted = [...fuelTypes].sort();
  if (current.join() === wanted.join()) return false;
  await replaceStationV1FuelTypes(tx, hrsId, wanted);
  return true;
}

/** The station's events become exactly these; true when something changed. */
export async function replaceEvents(tx: Tx, hrsId: string, events: readonly StationEventFields[]): Promise<boolean> {
  let changed = false;
  for (const e of events) {
    if (await upsertStationEvent(tx, hrsId, e)) changed = true;
  }
  const removed = await deleteStationEventsExcept(tx, hrsId, events.map((e) => e.id));
  return changed || removed > 0;
}

/**
 * Writes the station's layout of this kind when it differs from the stored one (null removes it); true
 * when something changed. A confirmed layout's version counts confirmations; a draft carries the
 * version its confirmation would get.
 */
export async function replaceLayout(tx: Tx, hrsId: string, kind: LayoutKind, layout: LayoutInput | null): Promise<boolean> {
  const heads = await layoutHeads(tx, hrsId);
  const current = heads.get(kind);
  if (layout === null) return current ? deleteLayout(tx, hrsId, kind) : false;
  if (current && current.content_hash.equals(layoutHash(layout))) return false;
  const confirmedVersion = heads.get('confirmed')?.version ?? 0;
  const version = kind === 'confirmed' ? (current?.version ?? 0) + 1 : confirmedVersion + 1;
  await writeLayout(tx, hrsId, kind, version, layout);
  return true;
}
