import { z } from 'zod';
import { CATEGORIES, SECTION_KEY_LIST, bySectionKey } from '../../domain/categories/index.js';
import { summaryReasonSchema, summaryStateSchema } from '../../domain/status/summary.js';

/**
 * The portal's history answers (src/api/portal/history.ts) as strict zod schemas: the OpenAPI
 * document is generated from them and tests check real answers against them. A station's reliability
 * is the export extension's own schema (src/domain/export-v2/history.ts).
 */

const instant = () => z.iso.datetime({ offset: true });
const at = '2027-03-01T12:00:00.000Z';

const stationZone = () =>
  z
    .string()
    .nullable()
    .meta({ description: 'The station\'s time zone (IANA: the record\'s, else the one at its coordinates), in which the page shows the times; null when it has none (UTC).' });

export const stationSignalsSchema = z
  .strictObject({
    hrs_id: z.string(),
    time_zone: stationZone(),
    signals: z.array(
      z.strictObject({
        category: z.enum(CATEGORIES),
        originator: z.string(),
        assignment: z.enum(['live', 'testing', 'unassigned']).meta({ description: 'The originator\'s assignment when the transmission arrived.' }),
        datetime: instant().meta({ description: 'When the source measured it.' }),
        received_datetime: instant().meta({ description: 'When the platform received it.' }),
      }),
    ),
  })
  .meta({
    title: 'Last signals',
    description: 'The last transmission of each originator per signal category at the station, live, testing or unassigned, newest first per category.',
    examples: [{ hrs_id: 'BERLA', time_zone: 'Europe/Berlin', signals: [{ category: 'availability', originator: 'mon-1', assignment: 'live', datetime: at, received_datetime: '2027-03-01T12:00:00.350Z' }] }],
  });

const freshnessEntry = z.strictObject({ state: z.enum(['fresh', 'stale', 'unknown']), from: instant(), to: instant() });
const optionEntry = z.strictObject({ state: summaryStateSchema, reason: summaryReasonSchema, from: instant(), to: instant() });

export const timelineSchema = z
  .strictObject({
    period: z.enum(['24h', '7d']),
    hrs_id: z.string(),
    time_zone: stationZone(),
    from: instant(),
    to: instant().meta({ description: 'Where the history is materialised to: about a minute ago.' }),
    categories: z
      .strictObject(bySectionKey(() => z.array(freshnessEntry)))
      .meta({ description: 'Per signal category, its freshness intervals (an `unknown` one of availability or usage is a gap); time not covered had no signal yet.' }),
    fuelling_options: z
      .strictObject({ '700ld': z.array(optionEntry).optional(), '350ld': z.array(optionEntry).optional(), '700hd': z.array(optionEntry).optional(), '350hd': z.array(optionEntry).optional() })
      .meta({ description: 'Per fuelling option, the five-state summary\'s intervals.' }),
    rejected_calls: z
      .array(z.strictObject({ time: instant(), originator: z.string(), endpoint: z.string(), status: z.int() }))
      .meta({ description: 'Import calls that failed and named the station, as the originators\' call-log modes kept them (at most 500).' }),
  })
  .meta({
    title: 'Timeline',
    description: 'A station\'s status history over the last 24 hours or 7 days.',
    examples: [
      {
        period: '24h',
        hrs_id: 'BERLA',
        time_zone: 'Europe/Berlin',
        from: '2027-02-28T12:00:00.000Z',
        to: at,
        categories: {
          ...bySectionKey(() => []),
          availability: [{ state: 'fresh', from: '2027-02-28T12:00:00.000Z', to: at }],
        },
        fuelling_options: { '700ld': [{ state: 'AVAILABLE', reason: 'reported_available', from: '2027-02-28T12:00:00.000Z', to: at }] },
        rejected_calls: [{ time: '2027-03-01T09:12:00.000Z', originator: 'mon-1', endpoint: 'POST /import/v2/signal/availability/', status: 400 }],
      },
    ],
  });

const share = () => z.number().min(0).max(1).nullable();

export const originatorReliabilitySchema = z
  .strictObject({
    originator: z.string(),
    period: z.enum(['24h', '7d', '30d']),
    from: instant(),
    to: instant(),
    last_signal_received: instant().nullable().meta({ description: 'When its last transmission (any station, any state) arrived.' }),
    calls: z
      .strictObject({
        total: z.int().min(0).meta({ description: 'Import calls in the period (whole hours), whatever the call-log mode keeps.' }),
        rejected: z.int().min(0).meta({ description: 'Of them, answered 400 or above.' }),
        error_rate: share().meta({ description: 'rejected / total; null without calls.' }),
      })
      .meta({ description: 'The call-log error rate.' }),
    categories: z.record(
      z.enum(SECTION_KEY_LIST),
      z.strictObject({
        stations: z.int().min(0).meta({ description: 'Stations it published this category for in the period.' }),
        readings: z.int().min(0),
        gaps: z.int().min(0).meta({ description: 'Gaps of more than 30 minutes begun in the period.' }),
        shares: z
          .strictObject({ fresh: share(), stale: share(), unknown: share() })
          .meta({ description: 'Shares of the time its readings were published, over all its stations; null without any.' }),
      }),
    ),
  })
  .meta({
    title: 'Originator reliability',
    description: 'How an originator\'s published readings fared over the period, over every station it reports on.',
    examples: [
      {
        originator: 'mon-1',
        period: '24h',
        from: '2027-02-28T12:00:00.000Z',
        to: at,
        last_signal_received: at,
        calls: { total: 34488, rejected: 12, error_rate: 0.0003 },
        categories: {
          ...bySectionKey(() => ({ stations: 0, readings: 0, gaps: 0, shares: { fresh: null, stale: null, unknown: null } })),
          availability: { stations: 12, readings: 17208, gaps: 1, shares: { fresh: 0.991, stale: 0.006, unknown: 0.003 } },
          usage: { stations: 12, readings: 17280, gaps: 0, shares: { fresh: 1, stale: 0, unknown: 0 } },
          pricing: { stations: 12, readings: 12, gaps: 0, shares: { fresh: 0.0035, stale: 0.9965, unknown: 0 } },
        },
      },
    ],
  });
