import { z } from 'zod';
import { hrsIdSchema, instant } from './fields.js';
import { eventSchema, stationPageSchema, stationRecordSchema } from './stations.js';

/**
 * Export v2's delta (an extension beyond the specification): the bodies of `GET /v2/hrs?since=` /
 * `?updated_since=` and `GET /v2/hrs/events?since=` / `?updated_since=`, and the sync token every
 * answer of the list carries. A sync token is a position in the platform's change log (a sequence in
 * commit order, db/migrations/0014_change_log.sql), opaque to clients: base64url of `hrs-sync:1:<seq>`.
 */

const TOKEN_PREFIX = 'hrs-sync:1:';

/** The sync token of a position in the change log. */
export function syncToken(position: number): string {
  // The last one made is kept: every list answer carries the token of the change log's head, which moves
  // only with a change.
  if (position !== lastToken.position) lastToken = { position, token: Buffer.from(`${TOKEN_PREFIX}${position}`, 'utf8').toString('base64url') };
  return lastToken.token;
}

let lastToken = { position: Number.NaN, token: '' };

/** The position a sync token names; undefined when it is not one this platform issues. */
export function positionOf(token: string): number | undefined {
  if (!/^[A-Za-z0-9_-]{1,64}$/.test(token)) return undefined;
  const text = Buffer.from(token, 'base64url').toString('utf8');
  const m = /^hrs-sync:1:(0|[1-9]\d{0,15})$/.exec(text);
  if (!m) return undefined;
  const position = Number(m[1]);
  return Number.isSafeInteger(position) ? position : undefined;
}

const EXAMPLE_TOKEN = syncToken(48213);
const EXAMPLE_NEXT = `https://hrs.example.org/v2/hrs?since=${syncToken(48230)}&limit=2`;

export const syncTokenSchema = z.string().regex(/^[A-Za-z0-9_-]+$/).meta({
  description:
    'Extension: an opaque position in the platform\'s change log. Pass it back as `since` to receive every change after it ' +
    '(the delta); unlike a time, it cannot lose a change to clock skew.',
  examples: [EXAMPLE_TOKEN],
});

export const stationTombstoneSchema = z
  .strictObject({
    hrs_id: hrsIdSchema,
    deleted: z.literal(true),
    deleted_at: instant('When the station was removed (or stopped being published).'),
  })
  .meta({
    title: 'Station tombstone',
    description: 'Extension: a station that was removed, as the delta lists it (kept for DELETED_RETENTION_DAYS, at least 30 days).',
    examples: [{ hrs_id: 'HAMBG', deleted: true, deleted_at: '2026-11-22T10:00:00.000Z' }],
  });

const nextDelta = z.url().nullable().meta({
  description: 'The next page (its `since` is the position after this page\'s last change), or null when this page reaches the newest change.',
});

export const stationDeltaSchema = z
  .strictObject({
    next: nextDelta,
    sync_token: syncTokenSchema.meta({ description: 'Where the next sync starts: `next`\'s position, or on the last page the newest position read.' }),
    results: z.array(z.union([stationRecordSchema, stationTombstoneSchema])).meta({
      description: 'The stations whose record changed after the position, each once, as it is now (a removed one as its tombstone), in the order of their latest change.',
    }),
  })
  .meta({
    title: 'Station delta',
    description: 'Extension: the stations changed after a position (`since`) or a time (`updated_since`), a page at a time.',
    examples: [{ next: EXAMPLE_NEXT, sync_token: syncToken(48230), results: [{ hrs_id: 'HAMBG', deleted: true, deleted_at: '2026-11-22T10:00:00.000Z' }] }],
  });

/** What `GET /v2/hrs` answers: the list's page, or with `since` / `updated_since` the delta. */
export const stationListAnswerSchema = z.union([stationPageSchema, stationDeltaSchema]).meta({
  title: 'Station list or delta',
  description: 'A page of the list (`count`, `next`, `previous`, `results`), or with `since` or `updated_since` a page of the delta (extension).',
});

const deletedEvent = z.strictObject({ id: z.string().meta({ examples: ['ev-1'] }) }).meta({ description: 'A deleted event: its id only.' });

export const eventChangeSchema = z
  .strictObject({
    hrs_id: hrsIdSchema,
    change: z.enum(['created', 'changed', 'ended', 'deleted']).meta({
      description: 'The event\'s latest change: `ended` once its `ends_at` passed, `deleted` when it was removed (with its station, too).',
    }),
    changed_at: instant('When that change was recorded.'),
    event: z.union([eventSchema, deletedEvent]).meta({ description: 'The event as it is after the change; a deleted one as `{"id"}`.' }),
  })
  .meta({
    title: 'Event change',
    examples: [
      {
        hrs_id: 'BERLA',
        change: 'ended',
        changed_at: '2026-12-01T12:00:20.000Z',
        event: { id: 'ev-1', kind: 'maintenance', starts_at: '2026-12-01T08:00:00.000Z', ends_at: '2026-12-01T12:00:00.000Z', description: 'Compressor service' },
      },
    ],
  });

export const eventDeltaSchema = z
  .strictObject({
    next: nextDelta,
    sync_token: syncTokenSchema.meta({ description: 'Where the next sync starts: `next`\'s position, or on the last page the newest position read.' }),
    results: z.array(eventChangeSchema).meta({ description: 'The events changed after the position, each once at its latest change, in the order of those changes.' }),
  })
  .meta({
    title: 'Event delta',
    description: 'Extension: the events of every station changed after a position (`since`) or a time (`updated_since`), a page at a time.',
    examples: [{ next: null, sync_token: EXAMPLE_TOKEN, results: [{ hrs_id: 'BERLA', change: 'deleted', changed_at: '2026-12-01T12:00:20.000Z', event: { id: 'ev-1' } }] }],
  });

/** The 410 of a delta from before what the log still holds: RFC 9457 problem details with `oldest_updated_since`. */
export const syncExpiredSchema = z
  .strictObject({
    type: z.string(),
    title: z.string(),
    status: z.literal(410),
    detail: z.string(),
    code: z.literal('sync_expired'),
    oldest_updated_since: instant('The oldest `updated_since` the delta accepts now: resynchronise (read the whole list), or ask from this time on.'),
  })
  .meta({
    title: 'Sync expired',
    description: 'Extension: the position or time asked from is older than what the change log still holds; changes since may have been lost.',
    examples: [
      {
        type: 'about:blank',
        title: 'Gone',
        status: 410,
        detail:
          'Changes up to 2026-10-23T10:00:00.000Z have been pruned (station changes are kept DELETED_RETENTION_DAYS): the change log holds changes from 2026-10-23T10:00:00.000Z on. Read the whole list again, then sync from its sync_token (or ask with updated_since from 2026-10-23T10:00:00.000Z on).',
        code: 'sync_expired',
        oldest_updated_since: '2026-10-23T10:00:00.000Z',
      },
    ],
  });
