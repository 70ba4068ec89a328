import { eventDeltaSchema, stationDeltaSchema, stationListAnswerSchema, stationTombstoneSchema, eventChangeSchema, syncExpiredSchema } from '../../../domain/export-v2/delta.js';
import type { DocContext } from '../../../http/openapi.js';
import type { RouteDoc } from '../../../http/contract.js';
import { z } from 'zod';
import { examplesOf, responseRef, schemaRef } from '../../../http/openapi.js';
import { queryParameter } from '../../../http/parameters.js';
import { COMMON, jsonExamples, problemBody } from '../../export/docs.js';

/**
 * The delta extension (beyond the specification) in the export v2 document: `since` and
 * `updated_since` on `GET /v2/hrs`, `GET /v2/hrs/events`, the envelope with `sync_token`, the
 * tombstone, the 410. Its place in the guide is deltaDescription; the list's operation takes
 * deltaParameterRefs and the `SyncExpired` response.
 */

export function deltaDescription(config: DocContext['config']): string {
  const days = config.deletedRetentionDays;
  return (
    '## Extension: delta sync\n\nAdditive: without `since` or `updated_since` every answer is as before, with one more ' +
    'member, `sync_token`.\n\n' +
    '- **`GET /v2/hrs?since=<sync_token>`** (or **`?updated_since=<RFC 3339>`**, e.g. `2026-11-24T08:00:00Z`): only the ' +
    'stations whose record changed after that point, each **once, at its latest change**: its record as it is now, or, ' +
    'for a removed station, its tombstone `{"hrs_id": "HAMBG", "deleted": true, "deleted_at": "…"}`. In the order of ' +
    'those changes, `limit` (1 to 500, default 100) at a time: `{"next", "sync_token", "results"}`.\n' +
    '- **`GET /v2/hrs/events?since=|updated_since=`**: the events of every station changed after that point, each once ' +
    'at its latest change, `change` `created`, `changed`, `ended` (its `ends_at` passed) or `deleted` (removed, also with ' +
    'its station; the event is then `{"id"}`), with `changed_at`. Same paging, token and rules.\n' +
    '- **`sync_token`** is on every answer of both, and on every page of the plain list: an opaque position in the ' +
    'platform\'s change log, which records changes in commit order. Pass it back unchanged as `since`. On a delta page ' +
    'it is the position after the page\'s last change (also in `next`); on the last page (`next` null) the newest ' +
    'position read. On the plain list it is the position read before the page: read the whole list, then sync from ' +
    'the first page\'s token, and every change made since or during the read comes (some perhaps twice; applying a ' +
    'station\'s current record twice is harmless).\n' +
    '- **Guarantees.** Following `next` never skips nor repeats a change while changes keep arriving (a cursor over ' +
    'the change sequence, not an offset); a station that changes again after its page comes again, at its new change. ' +
    'Prefer `since` to `updated_since`: a time taken from your own clock loses the changes your clock is ahead of; ' +
    'the token cannot. `updated_since` compares with the time the platform recorded each change.\n' +
    `- **Retention.** Tombstones and changes are kept ${days} days (\`DELETED_RETENTION_DAYS\`). A \`since\` or ` +
    '`updated_since` from before the newest change pruned is a **410** `sync_expired` whose `oldest_updated_since` is ' +
    'the oldest time accepted: read the whole list again and sync from its token. Until something is pruned, any ' +
    '`updated_since` is answered with everything since (an installation\'s log holds every change from its first ' +
    'station on); only where the log was added to a registry that already had stations is a time before the log began ' +
    'a 410 too, and its `detail` says which of the two it is.\n' +
    '- **Refused (400 `invalid_parameter`)**: a malformed time or a token this platform did not issue, `since` with ' +
    '`updated_since`, either with `offset`, `bbox`, `near` or `radius_km`, a parameter given twice. The delta is JSON ' +
    'only and not conditional (`Cache-Control: no-store`).'
  );
}

/** The delta's query parameters, which both lists take (their handlers check them). */
export const deltaQueryFields = () => ({
  since: queryParameter({
    component: 'since',
    description: 'Extension (delta sync): a `sync_token` of a previous answer: only what changed after it. Not with `updated_since`, `offset` or a geo filter.',
    values: z.string().regex(/^[A-Za-z0-9_-]+$/),
  }),
  updated_since: queryParameter({
    component: 'updated_since',
    description:
      'Extension (delta sync): an RFC 3339 date-time with an offset (`2026-11-24T08:00:00Z`): only what changed after it, ' +
      'by the platform\'s clock. Prefer `since`. Not with `since`, `offset` or a geo filter.',
    values: z.iso.datetime({ offset: true }),
  }),
});

/** The delta's schemas, for the document's components. */
export const deltaSchemas = () => ({
  StationListAnswer: stationListAnswerSchema,
  StationDelta: stationDeltaSchema,
  StationTombstone: stationTombstoneSchema,
  EventDelta: eventDeltaSchema,
  EventChange: eventChangeSchema,
  SyncExpired: syncExpiredSchema,
});

/** The delta's 400s, as examples of a bad-parameter response. */
export const deltaProblemExamples = () => ({
  bad_time: { value: problemBody(400, 'Bad Request', 'invalid_parameter', 'updated_since: must be an ISO 8601 date-time with an offset, e.g. 2026-11-24T08:00:00Z') },
  bad_token: { value: problemBody(400, 'Bad Request', 'invalid_parameter', 'since: not a sync_token of this platform (pass back the sync_token of a previous answer, unchanged).') },
  since_and_time: {
    value: problemBody(400, 'Bad Request', 'invalid_parameter', 'give either since (a sync_token) or updated_since (a time), not both: since is the token a previous answer carried.'),
  },
  with_offset: { value: problemBody(400, 'Bad Request', 'invalid_parameter', 'offset: the delta is paged by position, not offset: follow next (its since) instead.') },
});

/** The shared 410 response. */
export const deltaResponses = () => ({
  SyncExpired: {
    description: 'Extension: `since` or `updated_since` is older than what the change log still holds; `oldest_updated_since` is the oldest time accepted.',
    content: { 'application/problem+json': { schema: schemaRef('SyncExpired'), examples: examplesOf(syncExpiredSchema) } },
  },
});

/** `GET /v2/hrs/events`: the events' delta. */
export function eventDeltaDoc(): RouteDoc {
  return {
    tags: ['Stations'],
    operationId: 'eventDelta',
    summary: 'Events changed since a point (extension: delta sync)',
    description:
      'Extension beyond the specification (see "Extension: delta sync"): the events of every station created, changed, ended ' +
      'or deleted after `since` (a `sync_token`) or `updated_since` (a time); one of them is required. Each event once, at its ' +
      'latest change, in the order of those changes; follow `next` until it is null, then keep `sync_token` for the next sync.',
    responses: {
      '200': { description: 'One page of the events\' delta.', content: jsonExamples(examplesOf(eventDeltaSchema)) },
      '400': responseRef('BadRequest'),
      '410': responseRef('SyncExpired'),
      ...COMMON,
    },
  };
}
