import type { Logger } from 'pino';
import type { Sql } from '../../db/connect.js';
import { settleUncheckedPhoto, uncheckedPhoto, uncheckedPhotoStations } from '../../db/queries/stations.js';
import { checkedPhoto, PhotoError } from './file/photo.js';

/**
 * Photos stored before they were decoded on the way in (migration 0011), or by an older version during
 * a rolling upgrade, are checked once, one at a time, when `hrs serve` starts: each is replaced by its
 * re-encoded form (./file/photo.ts), or removed when it is not an image the platform would take now
 * (a warning names the station and why). Until then export serves none of them. Returns the stations
 * whose photo changed; several instances starting together each settle a photo at most once.
 */
export async function recheckStoredPhotos(sql: Sql, log: Logger): Promise<string[]> {
  const changed: string[] = [];
  for (const hrsId of await uncheckedPhotoStations(sql)) {
    const stored = await uncheckedPhoto(sql, hrsId);
    if (!stored) continue;
    let photo: Awaited<ReturnType<typeof checkedPhoto>> | null;
    try {
      photo = await checkedPhoto(stored.bytes);
    } catch (err) {
      if (!(err instanceof PhotoError)) throw err;
      photo = null;
      log.warn({ hrs_id: hrsId, code: err.code, reason: err.message }, 'stored photo removed: it is not an image the platform takes');
    }
    if (await settleUncheckedPhoto(sql, hrsId, stored.sha256, photo)) changed.push(hrsId);
  }
  if (changed.length > 0) log.info({ stations: changed }, 'stored photos checked');
  return changed;
}
