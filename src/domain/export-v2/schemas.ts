import { z } from 'zod';
import { bySectionKey, type CategoryDefinition } from '../categories/index.js';
import { hrsIdSchema } from './fields.js';

/**
 * The response bodies of export v2, as zod schemas. The handlers serialise what they hold directly;
 * these schemas describe those bodies for the OpenAPI document (src/http/openapi.ts generates the
 * document's JSON Schemas from them), and the tests check real responses against them, so the document
 * and the code cannot drift apart. Objects are strict: a field the code adds without documenting it
 * fails those tests. Each category's status section is with its category (src/domain/categories/).
 */

/** The station records, reference lists and problem details (./stations.ts), exported from here as before the split. */
export { hrsIdSchema };
export * from './stations.js';
export * from './delta.js';
import { distanceKm } from './stations.js';
import { REASON_STATES, summaryReasonSchema, summaryStateSchema } from '../status/summary.js';
import { FUELLING_OPTIONS } from '../vocabulary.js';

const section = (definition: CategoryDefinition) =>
  definition.section.schema.nullable().meta({ description: `Null when ${definition.section.nullWhen}. Treat it as optional.` });

/** One fuelling option's verdict (src/domain/status/verdict.ts): the export v1.1 summary's entry, in export v2's words. */
export const optionVerdictSchema = z
  .strictObject({
    fuelling_option: z.enum(FUELLING_OPTIONS).meta({ description: 'The fuelling option (`GET /v2/fuel-type`).' }),
    status: summaryStateSchema,
    reason: summaryReasonSchema,
    datetime: z.iso.datetime({ offset: true }).nullable().meta({
      description:
        'When the source measured the availability reading the verdict was computed from (ISO 8601, UTC); null when there is none. ' +
        'Given for `CLOSED` and for `UNKNOWN`/`no_signal` too: then it tells how long the station has been silent.',
    }),
    freshness: z.enum(['fresh', 'stale', 'unknown']).nullable().meta({
      description:
        'How fresh that reading is (`unknown`: more than 30 minutes old, so the verdict is `UNKNOWN`/`no_signal` unless the station is closed); null when no reading may be published.',
    }),
  })
  .refine((entry) => REASON_STATES[entry.reason] === entry.status, { message: 'reason and status disagree', path: ['reason'] })
  .meta({
    title: 'Fuelling-option verdict',
    description:
      'Whether the fuelling option can be used now, and why: the same five states and reasons as the export v1.1 summary, the public map and webhooks, computed from the live availability reading, its freshness, the station\'s opening hours and its confirmed layout.',
  });

/** A station with nothing published. */
const NOTHING = { hrs_id: 'HAMBG', fuelling_options: [{ fuelling_option: '700ld', status: 'UNKNOWN', reason: 'no_signal', datetime: null, freshness: null }], ...bySectionKey(() => null) };

export const stationStatusSchema = z
  .strictObject({
    distance_km: distanceKm.optional(),
    hrs_id: hrsIdSchema,
    fuelling_options: z.array(optionVerdictSchema).meta({
      description:
        'The verdict per fuelling option the station provides, in the order `700ld`, `350ld`, `700hd`, `350hd`: "can I fuel 700 bar here now?" without re-implementing opening hours, freshness and partial snapshots. An addition to the spec\'s status object.',
    }),
    ...bySectionKey(section),
  })
  .meta({
    title: 'Station status',
    description:
      'The real-time status of one station: the verdict per fuelling option, and four sections, each an object or null; all four can be null.',
    examples: [
      {
        hrs_id: 'BERLA',
        fuelling_options: [
          { fuelling_option: '700ld', status: 'AVAILABLE', reason: 'reported_available', datetime: '2026-11-22T10:00:00.000Z', freshness: 'fresh' },
          { fuelling_option: '350ld', status: 'UNAVAILABLE', reason: 'reported_unavailable', datetime: '2026-11-22T10:00:00.000Z', freshness: 'fresh' },
        ],
        ...bySectionKey((d) => d.section.example),
      },
      NOTHING,
    ],
  });

export const stationStatusListSchema = z
  .strictObject({
    stations: z.array(stationStatusSchema).meta({
      description: 'Every registered station, sorted by `hrs_id` (with `bbox`: those in the box; with `near`: those in the circle, by `distance_km`, then `hrs_id`).',
    }),
  })
  .meta({
    title: 'Station status list',
    description:
      'Every station\'s status in one answer, under `stations`, as the specification defines it. Unlike the station list ' +
      '(`GET /v2/hrs`: `count`, `next`, `previous`, `results`), it is not paged: status objects are small and served ' +
      'from memory, so a poller gets the whole picture at one instant (about 1 MB for 1,000 stations, gzip about a tenth).',
    examples: [{ stations: [NOTHING] }],
  });
