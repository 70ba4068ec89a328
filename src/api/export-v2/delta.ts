import { eventChanges, positionAfter, stationChanges, sweepEndedEvents, type ChangeHorizon, type DeltaPage } from '../../../db/queries/change-log.js';
import type { Sql } from '../../../db/connect.js';
import { parseInstant } from '../../http/dates.js';
import { HttpError, JSON_TYPE, type Reply } from '../../http/errors.js';
import type { Request } from '../../http/request.js';
import { positionOf, syncToken } from '../../domain/export-v2/delta.js';
import type { StationRecords } from '../export/records.js';
import { COMMA } from '../export/replies.js';
import { DEFAULT_LIMIT, MAX_LIMIT } from '../../domain/export-v2/stations.js';
import { GEO_PARAMETERS } from './geo.js';

/**
 * Export v2's delta (extension): `GET /v2/hrs?since=<sync_token>` or `?updated_since=<RFC 3339>` (the
 * stations whose record changed after that point, each once at its latest change: its record as it is
 * now, or its tombstone) and `GET /v2/hrs/events?since=|updated_since=` (every station's events, each
 * once at its latest change: created, changed, ended or deleted). Both read the change log
 * (db/queries/change-log.ts) in `seq` order, which is commit order: a page ends at its last change's
 * position and `next` goes on from there, so paging while changes arrive neither skips nor repeats one
 * (a station that changes again after its page comes again, at its new change). Every answer carries
 * `sync_token`: where the next sync starts. A point older than what the log still holds is a 410
 * `sync_expired` with the oldest `updated_since` accepted: a position or time before the newest change
 * pruned (DELETED_RETENTION_DAYS back), or a time before the log's start where the log was added to a
 * registry that already had stations. On an installation whose log came with it, any earlier time is
 * everything since (nothing existed before).
 */

/** Where a delta starts: a position (a sync token) or a time. */
export type DeltaStart = { position: number } | { after: Date };

/** The delta parameters of a request: undefined when it asks for none (the plain list). */
export function deltaStart(req: Request): { start: DeltaStart; limit: number } | undefined {
  const since = single(req.query, 'since');
  const updatedSince = single(req.query, 'updated_since');
  if (since === undefined && updatedSince === undefined) return undefined;
  if (since !== undefined && updatedSince !== undefined) {
    throw invalid('give either since (a sync_token) or updated_since (a time), not both: since is the token a previous answer carried.');
  }
  if (req.query.has('offset')) throw invalid('offset: the delta is paged by position, not offset: follow next (its since) instead.');
  const geo = GEO_PARAMETERS.find((name) => req.query.has(name));
  if (geo !== undefined) throw invalid(`${geo}: the delta lists every changed station; it takes no geo filter (filter the changes on your side).`);
  const limit = deltaLimit(req.query);
  if (since !== undefined) {
    const position = positionOf(since);
    if (position === undefined) throw invalid('since: not a sync_token of this platform (pass back the sync_token of a previous answer, unchanged).');
    return { start: { position }, limit };
  }
  const instant = parseInstant(updatedSince!);
  if (!instant.ok) throw invalid(`updated_since: ${instant.problem}`);
  return { start: { after: new Date(instant.ms) }, limit };
}

/** Reads one page of a delta from where it starts, refusing a start older than the log's horizon. */
async function readPage<C extends { seq: number }>(
  sql: Sql,
  start: DeltaStart,
  limit: number,
  read: (after: number, limit: number) => Promise<DeltaPage<C>>,
): Promise<DeltaPage<C>> {
  let position: number;
  if ('position' in start) {
    position = start.position;
  } else {
    const found = await positionAfter(sql, start.after);
    if (found.horizon.oldest !== null && start.after < found.horizon.oldest) throw expired(found.horizon);
    position = found.position;
  }
  const page = await read(position, limit);
  // In the page's own snapshot: pruning that passed the position meanwhile is a gap, never answered.
  if (position < page.horizon.prunedSeq) throw expired(page.horizon);
  if (position > page.head) throw invalid('since: this sync_token is ahead of the change log: it was not issued by this platform.');
  return page;
}

/** The answer's `next` and `sync_token`: the position after the page's last change, or the head read with it. */
function links<C extends { seq: number }>(page: DeltaPage<C>, base: string, limit: number): { next: string | null; token: string } {
  const last = page.changes.at(-1);
  if (page.more && last) {
    const token = syncToken(last.seq);
    return { next: `${base}?since=${token}&limit=${limit}`, token };
  }
  return { next: null, token: syncToken(page.head) };
}

/** `GET /v2/hrs?since=|updated_since=`: the stations' page, records kept encoded (../export/records.ts). */
export async function stationDeltaReply(sql: Sql, records: StationRecords, baseUrl: string, start: DeltaStart, limit: number): Promise<Reply> {
  const page = await readPage(sql, start, limit, (after, n) => stationChanges(sql, after, n));
  // A station listed as existing but gone by the time its record is read was removed after this page's
  // snapshot: its tombstone comes on a later page (its removal is a later change), so it is left out here.
  const present = page.changes.flatMap((c) => (c.change !== 'deleted' && c.modifiedUs !== null ? [{ hrsId: c.hrsId, modifiedUs: c.modifiedUs }] : []));
  const found = await records.aligned(present);
  const bodies = new Map(present.map((head, i) => [head.hrsId, found.bodies[i]]));
  const items = page.changes.flatMap((c): Buffer[] => {
    if (c.change === 'deleted') return [Buffer.from(JSON.stringify({ hrs_id: c.hrsId, deleted: true, deleted_at: c.at.toISOString() }))];
    const body = bodies.get(c.hrsId);
    return body ? [body] : [];
  });
  const { next, token } = links(page, `${baseUrl}/v2/hrs`, limit);
  const parts: Buffer[] = [Buffer.from(`{"next":${JSON.stringify(next)},"sync_token":"${token}","results":[`)];
  items.forEach((item, i) => {
    if (i > 0) parts.push(COMMA);
    parts.push(item);
  });
  parts.push(Buffer.from(']}'));
  return { status: 200, headers: { 'Content-Type': JSON_TYPE, 'Cache-Control': 'no-store' }, body: Buffer.concat(parts) };
}

/**
 * `GET /v2/hrs/events?since=|updated_since=`: the events' page. The `ended` rows of events whose end
 * has passed are written first (the sweep is idempotent), so an answer never misses an end that passed
 * before it was asked for.
 */
export async function eventDeltaReply(sql: Sql, baseUrl: string, retentionDays: number, req: Request): Promise<Reply> {
  const asked = deltaStart(req);
  if (!asked) throw invalid('give since (the sync_token of a previous answer) or updated_since (an RFC 3339 time): this is the events\' delta.');
  await sweepEndedEvents(sql, retentionDays);
  const page = await readPage(sql, asked.start, asked.limit, (after, n) => eventChanges(sql, after, n));
  const results = page.changes.map((c) => ({ hrs_id: c.hrsId, change: c.change, changed_at: c.at.toISOString(), event: c.event }));
  const { next, token } = links(page, `${baseUrl}/v2/hrs/events`, asked.limit);
  return {
    status: 200,
    headers: { 'Content-Type': JSON_TYPE, 'Cache-Control': 'no-store' },
    body: JSON.stringify({ next, sync_token: token, results }),
  };
}

/** The 410 of a start older than the horizon, saying what bounds it: pruning, or where the log began. */
function expired(horizon: ChangeHorizon): HttpError {
  const oldest = (horizon.oldest ?? horizon.prunedAt ?? horizon.startedAt).toISOString();
  const why =
    horizon.prunedAt !== null && horizon.prunedAt.toISOString() === oldest
      ? `Changes up to ${oldest} have been pruned (station changes are kept DELETED_RETENTION_DAYS)`
      : `The change log began at ${oldest}, when this installation started recording changes; stations that existed before are not in it`;
  return new HttpError(
    410,
    'sync_expired',
    `${why}: the change log holds changes from ${oldest} on. Read the whole list again, then sync from its sync_token (or ask with updated_since from ${oldest} on).`,
    { extensions: { oldest_updated_since: oldest } },
  );
}

function deltaLimit(query: URLSearchParams): number {
  const text = single(query, 'limit');
  if (text === undefined) return DEFAULT_LIMIT;
  const limit = /^\d{1,4}$/.test(text) ? Number(text) : NaN;
  if (!(limit >= 1 && limit <= MAX_LIMIT)) throw invalid(`limit: must be a whole number from 1 to ${MAX_LIMIT}.`);
  return limit;
}

/** The parameter's one value; a repeated one is a 400. */
function single(query: URLSearchParams, name: string): string | undefined {
  const values = query.getAll(name);
  if (values.length > 1) throw invalid(`${name}: give it once (got ${values.length} values).`);
  return values[0];
}

const invalid = (detail: string) => new HttpError(400, 'invalid_parameter', detail);
