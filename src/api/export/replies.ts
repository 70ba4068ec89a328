import type { Sql } from '../../../db/connect.js';
import { currentEvents, stationHead, stationPhoto } from '../../../db/queries/stations.js';
import { httpDate, ifModifiedSince } from '../../http/dates.js';
import { JSON_TYPE, json, notFound, type Reply } from '../../http/errors.js';
import type { Request } from '../../http/request.js';
import { audienceOf } from '../auth.js';
import type { StationRecords } from './records.js';

/**
 * The answers every export generation gives the same way: a station record, its events and its photo,
 * and the conditional requests on station data (`Last-Modified`, `If-Modified-Since`).
 */

/** `GET {prefix}hrs/{hrs_id}`: one record, conditional on its version (`now`: the platform's clock). */
export async function stationRecordReply(sql: Sql, records: StationRecords, req: Request, now: () => Date): Promise<Reply> {
  const hrsId = req.params.hrs_id!;
  const since = ifModifiedSince(req, now().getTime());
  const head = await stationHead(sql, hrsId, audienceOf(req) === 'sandbox');
  if (!head) throw unknownStation(hrsId);
  if (since !== undefined && notModifiedSince(head.modifiedUs, since)) return notModified(head.modifiedUs);
  const found = await records.get([head]);
  // Removed between the two reads.
  if (found.bodies.length === 0) throw unknownStation(hrsId);
  return { status: 200, headers: conditionalHeaders(found.newestUs), body: found.bodies[0] };
}

/** `GET {prefix}hrs/{hrs_id}/events`: ongoing and upcoming events, sorted by start. */
export async function eventsReply(sql: Sql, req: Request): Promise<Reply> {
  const hrsId = req.params.hrs_id!;
  const events = await currentEvents(sql, hrsId, new Date(), audienceOf(req) === 'sandbox');
  if (!events) throw unknownStation(hrsId);
  return json(
    200,
    events.map((e) => ({
      id: e.id,
      kind: e.kind,
      starts_at: e.starts_at.toISOString(),
      ends_at: e.ends_at?.toISOString() ?? null,
      description: e.description,
    })),
  );
}

/** `GET {prefix}hrs/{hrs_id}/photo`: the image bytes as loaded. */
export async function photoReply(sql: Sql, req: Request): Promise<Reply> {
  const hrsId = req.params.hrs_id!;
  const photo = await stationPhoto(sql, hrsId, audienceOf(req) === 'sandbox');
  if (photo === undefined) throw unknownStation(hrsId);
  if (photo === null) throw notFound(`Station "${hrsId}" has no photo.`);
  // uWS writes Content-Length from the body (HEAD: from its byte length).
  return { status: 200, headers: { 'Content-Type': photo.mediaType, 'X-Content-Type-Options': 'nosniff' }, body: photo.bytes };
}

export const COMMA = Buffer.from(',');

export const unknownStation = (hrsId: string) => notFound(`No station with hrs_id "${hrsId}".`);

/* ---- Conditional requests ------------------------------------------------------------------------- */

const secondsOf = (us: number) => Math.floor(us / 1_000_000);

export function conditionalHeaders(modifiedUs: number): Record<string, string> {
  // no-cache: a browser revalidates every time rather than guessing a freshness from Last-Modified.
  return { 'Content-Type': JSON_TYPE, 'Last-Modified': httpDate(secondsOf(modifiedUs)), 'Cache-Control': 'no-cache' };
}

export function notModified(modifiedUs: number): Reply {
  return { status: 304, headers: { 'Last-Modified': httpDate(secondsOf(modifiedUs)), 'Cache-Control': 'no-cache' } };
}

/** HTTP-dates have whole seconds: unchanged when the newest change lies within the given second or before. */
export function notModifiedSince(modifiedUs: number, sinceSeconds: number): boolean {
  return secondsOf(modifiedUs) <= sinceSeconds;
}
