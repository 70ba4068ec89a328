import { z } from 'zod';
import { summaryReasonSchema, summaryStateSchema } from '../status/summary.js';
import { ALL, CATEGORIES, bySectionKey, inWords, turnsUnknown } from '../categories/index.js';
import { FUELLING_OPTIONS } from '../vocabulary.js';
import { hrsIdSchema } from './schemas.js';

/**
 * The export v2 extension beyond the specification: a station's reliability figures and status history
 * (`GET /v2/hrs/{hrs_id}/reliability`, `GET /v2/hrs/{hrs_id}/history`). The schemas are the answers'
 * definition, checked in tests and turned into the OpenAPI document.
 */

const EXTENSION = 'Extension beyond the specification.';
const instant = (description: string) => z.iso.datetime({ offset: true }).meta({ description, examples: ['2026-11-24T10:00:00.000Z'] });
const share = (description: string) => z.number().min(0).max(1).meta({ description, examples: [0.9875] });
const seconds = (description: string) => z.int().min(0).meta({ description, examples: [3600] });

export const periodSchema = z.enum(['24h', '7d', '30d']).meta({ description: 'The period the figures cover, ending at `to`.' });

const turning = inWords(CATEGORIES.filter(turnsUnknown));
const GAPS =
  `${turning.charAt(0).toUpperCase()}${turning.slice(1)} only (they turn unknown after 30 minutes without a signal); ` +
  `null for ${inWords(CATEGORIES.filter((c) => !turnsUnknown(c)))}.`;

const gapsSchema = z
  .strictObject({
    count: z.int().min(0).meta({ description: 'Gaps (more than 30 minutes without a signal) that overlap the period.' }),
    total_seconds: seconds('Their length within the period, each counted from the last signal before it.'),
    longest_seconds: seconds('The longest of them within the period.'),
    ongoing: z.boolean().meta({ description: 'Whether a gap lasts at the end of the period.' }),
  })
  .nullable()
  .meta({ description: GAPS });

const categoryFiguresSchema = z
  .strictObject({
    last_signal: z
      .strictObject({ datetime: instant('When the source measured it.'), received_datetime: instant('When the platform received it.') })
      .nullable()
      .meta({ description: 'The last live signal received before `to`; null when there is none in the history kept.' }),
    readings: z.int().min(0).meta({ description: 'Live signals received in the period.' }),
    shares: z
      .strictObject({
        fresh: share('Share of the period the published reading was fresh.'),
        stale: share('Share of the period it was stale (older than 5 minutes by its `datetime`).'),
        unknown: share('Share of the period the status was unknown: 30 minutes without a signal, or no signal yet.'),
      })
      .meta({ description: 'Shares of the whole period; they add up to 1 (up to rounding to four decimals).' }),
    seconds: z
      .strictObject({ fresh: seconds('Seconds fresh.'), stale: seconds('Seconds stale.'), unknown: seconds('Seconds unknown.') })
      .meta({ description: 'The same in seconds.' }),
    gaps: gapsSchema,
  })
  .meta({ description: 'The figures of one signal category.' });

const optionFiguresSchema = z
  .strictObject({
    fuelling_option: z.enum(FUELLING_OPTIONS).meta({ description: 'The fuelling option (canonical code).' }),
    opening_seconds: seconds('The period minus the time the station was outside its opening hours.'),
    available_share_of_opening_hours: share('The share of the opening hours the option was `AVAILABLE` in the five-state summary.')
      .nullable()
      .meta({ description: 'The share of the opening hours the option was `AVAILABLE`; null when the station was never open in the period.' }),
    seconds: z
      .strictObject({
        AVAILABLE: seconds('Seconds available.'),
        LIMITEDLY_AVAILABLE: seconds('Seconds limitedly available.'),
        UNAVAILABLE: seconds('Seconds unavailable.'),
        UNKNOWN: seconds('Seconds unknown within the opening hours, time without any signal included.'),
        CLOSED: seconds('Seconds outside the opening hours.'),
      })
      .meta({ description: 'Seconds of the period in each state of the five-state summary.' }),
  })
  .meta({ description: 'The five-state summary figures of one fuelling option the station provides.' });

/** The figures of a category without a signal over a day (the example's categories not named in it). */
const NO_SIGNAL = {
  last_signal: null,
  readings: 0,
  shares: { fresh: 0, stale: 0, unknown: 1 },
  seconds: { fresh: 0, stale: 0, unknown: 86400 },
  gaps: null,
};

export const reliabilitySchema = z
  .strictObject({
    hrs_id: hrsIdSchema,
    period: periodSchema,
    from: instant('Start of the period: `to` minus the period.'),
    to: instant('End of the period: the end of the last hour of the history published (materialised and rolled up).'),
    categories: z
      .strictObject(bySectionKey(() => categoryFiguresSchema))
      .meta({ description: 'Per signal category.' }),
    fuelling_options: z.array(optionFiguresSchema).meta({ description: 'Per fuelling option the station provides, in the order 700ld, 350ld, 700hd, 350hd.' }),
  })
  .meta({
    description: `${EXTENSION} A station's reliability over the last 24 hours, 7 days or 30 days, computed from its status history by the hour.`,
    // One entry per signal category, alike by shape: each category's own figures for the same day.
    examples: [
      {
        hrs_id: 'BERLA',
        period: '24h',
        from: '2026-11-23T10:00:00.000Z',
        to: '2026-11-24T10:00:00.000Z',
        categories: {
          ...bySectionKey(() => NO_SIGNAL),
          availability: {
            last_signal: { datetime: '2026-11-24T09:59:12.000Z', received_datetime: '2026-11-24T09:59:13.204Z' },
            readings: 1431,
            shares: { fresh: 0.9812, stale: 0.0049, unknown: 0.0139 },
            seconds: { fresh: 84776, stale: 423, unknown: 1201 },
            gaps: { count: 1, total_seconds: 3001, longest_seconds: 3001, ongoing: false },
          },
          usage: {
            last_signal: { datetime: '2026-11-24T09:59:12.000Z', received_datetime: '2026-11-24T09:59:13.311Z' },
            readings: 1440,
            shares: { fresh: 1, stale: 0, unknown: 0 },
            seconds: { fresh: 86400, stale: 0, unknown: 0 },
            gaps: { count: 0, total_seconds: 0, longest_seconds: 0, ongoing: false },
          },
          pricing: {
            last_signal: { datetime: '2026-11-24T06:00:00.000Z', received_datetime: '2026-11-24T06:00:01.020Z' },
            readings: 1,
            shares: { fresh: 0.0035, stale: 0.9965, unknown: 0 },
            seconds: { fresh: 300, stale: 86100, unknown: 0 },
            gaps: null,
          },
        },
        fuelling_options: [
          {
            fuelling_option: '700ld',
            opening_seconds: 86400,
            available_share_of_opening_hours: 0.9655,
            seconds: { AVAILABLE: 83421, LIMITEDLY_AVAILABLE: 0, UNAVAILABLE: 1778, UNKNOWN: 1201, CLOSED: 0 },
          },
        ],
      },
    ],
  });

const freshnessIntervalSchema = z
  .strictObject({
    freshness: z.enum(['fresh', 'stale', 'unknown']).meta({ description: 'The freshness of the published reading.' }),
    from: instant('Start (inclusive), clipped to the page.'),
    to: instant('End (exclusive), clipped to the page.'),
  })
  .meta({ description: 'An interval of one freshness.' });

const optionIntervalSchema = z
  .strictObject({
    status: summaryStateSchema,
    reason: summaryReasonSchema,
    from: instant('Start (inclusive), clipped to the page.'),
    to: instant('End (exclusive), clipped to the page.'),
  })
  .meta({ description: 'An interval of one state of the five-state summary.' });

export const historyPageSchema = z
  .strictObject({
    hrs_id: hrsIdSchema,
    category: z.enum(CATEGORIES).meta({ description: 'The signal category, as in import v2 paths.' }),
    from: instant('Start of the page (inclusive).'),
    to: instant('End of the page (exclusive): at most 7 days after `from`, and never after the end of the last hour of the history published.'),
    intervals: z.array(freshnessIntervalSchema).meta({ description: 'The freshness of the category over the page; a time not covered had no signal yet.' }),
    fuelling_options: z
      .array(
        z
          .strictObject({
            fuelling_option: z.enum(FUELLING_OPTIONS).meta({ description: 'The fuelling option (canonical code).' }),
            intervals: z.array(optionIntervalSchema).meta({ description: 'Its five-state summary over the page.' }),
          })
          .meta({ description: 'One fuelling option.' }),
      )
      .nullable()
      .meta({ description: 'Availability only: the five-state summary per fuelling option over the page; null for the other categories.' }),
    readings: z
      .array(
        z.union(ALL.map((d) => d.section.schema.omit({ freshness: true }))),
      )
      .meta({ description: 'The live signals measured in the page, oldest first, each as the status section it published (entities of the current confirmed layout), without `freshness`.' }),
    next: z.url().nullable().meta({ description: 'The following page (the same length, or from the last reading listed when the page was cut at 10,000 readings); null at the end.' }),
    previous: z.url().nullable().meta({ description: 'The page before (the same length); null when it would lie wholly before the history kept.' }),
  })
  .meta({
    description: `${EXTENSION} A page of a station's status history in one signal category: its freshness intervals, its five-state summary per fuelling option (availability) and its readings.`,
    examples: [
      {
        hrs_id: 'BERLA',
        category: 'availability',
        from: '2026-11-24T08:00:00.000Z',
        to: '2026-11-24T09:00:00.000Z',
        intervals: [
          { freshness: 'fresh', from: '2026-11-24T08:00:00.000Z', to: '2026-11-24T08:20:00.000Z' },
          { freshness: 'stale', from: '2026-11-24T08:20:00.000Z', to: '2026-11-24T08:45:00.000Z' },
          { freshness: 'unknown', from: '2026-11-24T08:45:00.000Z', to: '2026-11-24T09:00:00.000Z' },
        ],
        fuelling_options: [
          {
            fuelling_option: '700ld',
            intervals: [
              { status: 'AVAILABLE', reason: 'reported_available', from: '2026-11-24T08:00:00.000Z', to: '2026-11-24T08:45:00.000Z' },
              { status: 'UNKNOWN', reason: 'no_signal', from: '2026-11-24T08:45:00.000Z', to: '2026-11-24T09:00:00.000Z' },
            ],
          },
        ],
        readings: [
          {
            datetime: '2026-11-24T08:15:00.000Z',
            received_datetime: '2026-11-24T08:15:00.420Z',
            station: { maintenance: false, limitedly_available: false },
            nozzles: [{ id: 'N1', available: true }],
          },
        ],
        next: 'https://hrs.example.org/v2/hrs/BERLA/history?category=availability&from=2026-11-24T09%3A00%3A00.000Z&to=2026-11-24T10%3A00%3A00.000Z',
        previous: 'https://hrs.example.org/v2/hrs/BERLA/history?category=availability&from=2026-11-24T07%3A00%3A00.000Z&to=2026-11-24T08%3A00%3A00.000Z',
      },
    ],
  });
