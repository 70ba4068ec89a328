import { z } from 'zod';
import { FORECAST_HOURS } from '../forecast/model.js';
import { summaryStateSchema } from '../status/summary.js';
import { FUELLING_OPTIONS } from '../vocabulary.js';
import { hrsIdSchema } from './fields.js';

/**
 * The export v2 extension beyond the specification: a station's availability forecast
 * (`GET /v2/hrs/{hrs_id}/forecast`). The schema is the answer's definition, checked in tests and turned
 * into the OpenAPI document.
 */

const instant = (description: string) => z.iso.datetime({ offset: true }).meta({ description, examples: ['2026-12-07T09:00:00.000Z'] });

export const LIKELIHOOD_WORDS = {
  very_likely: 'a probability of 0.9 or more',
  likely: 'from 0.7 to below 0.9',
  uncertain: 'from 0.4 to below 0.7',
  unlikely: 'from 0.15 to below 0.4',
  very_unlikely: 'below 0.15',
  closed: 'the opening hours have the station closed for the whole hour',
} as const;

export const likelihoodSchema = z.enum(Object.keys(LIKELIHOOD_WORDS) as [keyof typeof LIKELIHOOD_WORDS, ...(keyof typeof LIKELIHOOD_WORDS)[]]).meta({
  description: `A word for the probability, for reading at a glance: ${Object.entries(LIKELIHOOD_WORDS)
    .map(([word, meaning]) => `\`${word}\`: ${meaning}`)
    .join('; ')}.`,
});

const hourSchema = z
  .strictObject({
    from: instant('Start of the hour.'),
    to: instant('End of the hour.'),
    probability: z.number().min(0).max(1).meta({ description: 'The probability that the option is available (AVAILABLE or LIMITEDLY_AVAILABLE) in the hour, rounded to 0.01; 0 when closed.', examples: [0.93] }),
    likelihood: likelihoodSchema,
  })
  .meta({ description: 'One hour of the forecast.' });

const optionForecastSchema = z
  .strictObject({
    fuelling_option: z.enum(FUELLING_OPTIONS).meta({ description: 'The fuelling option (canonical code).' }),
    status: summaryStateSchema,
    forecast: z
      .array(hourSchema)
      .length(FORECAST_HOURS)
      .nullable()
      .meta({ description: `The ${FORECAST_HOURS} hours from the present one (the first starts at the start of the present hour); null when the option's history is too short to learn from (\`reason\`).` }),
    reason: z.enum(['insufficient_history']).nullable().meta({
      description: '`insufficient_history` when there is no forecast: fewer than 168 hours of known status, or less than 14 days between the first and the last; null otherwise.',
    }),
    history: z
      .strictObject({
        known_hours: z.int().min(0).meta({ description: 'Hours the model learned from (at least half of each known: available, limited or unavailable, within the opening hours).' }),
        from: instant('Start of the first of them.').nullable(),
        to: instant('End of the last of them.').nullable(),
      })
      .meta({ description: 'What the forecast was learned from.' }),
  })
  .meta({ description: 'The forecast of one fuelling option the station provides.' });

export const forecastSchema = z
  .strictObject({
    hrs_id: hrsIdSchema,
    time_zone: z.string().nullable().meta({ description: 'The station\'s IANA time zone, whose weekdays and hours the model learns by; null: none registered (UTC is used).' }),
    generated_at: instant('When the forecast was made (the present it starts from).'),
    history_until: instant('The end of the history learned from: the end of the last hour published.'),
    fuelling_options: z.array(optionForecastSchema).meta({ description: 'Per fuelling option the station provides, in the order 700ld, 350ld, 700hd, 350hd.' }),
  })
  .meta({
    description:
      'Extension beyond the specification. The probability that each fuelling option is available in each of the next hours, learned from ' +
      'the station\'s own status history (docs/forecast.md): the rate of each weekday and hour, weighted to recent weeks, blended with how ' +
      'long the present state tends to last.',
    examples: [
      {
        hrs_id: 'BERLA',
        time_zone: 'Europe/Berlin',
        generated_at: '2026-12-07T08:10:00.000Z',
        history_until: '2026-12-07T08:00:00.000Z',
        fuelling_options: [
          {
            fuelling_option: '700ld',
            status: 'UNAVAILABLE',
            forecast: Array.from({ length: FORECAST_HOURS }, (_, k) => {
              const from = Date.UTC(2026, 11, 7, 8 + k);
              const probability = [0.12, 0.41, 0.63, 0.78, 0.86, 0.9, 0.91, 0.92, 0.9, 0.88, 0.92, 0.93][k]!;
              const likelihood = probability >= 0.9 ? 'very_likely' : probability >= 0.7 ? 'likely' : probability >= 0.4 ? 'uncertain' : probability >= 0.15 ? 'unlikely' : 'very_unlikely';
              return { from: new Date(from).toISOString(), to: new Date(from + 3_600_000).toISOString(), probability, likelihood };
            }),
            reason: null,
            history: { known_hours: 1934, from: '2026-09-14T08:00:00.000Z', to: '2026-12-07T08:00:00.000Z' },
          },
          {
            fuelling_option: '350ld',
            status: 'AVAILABLE',
            forecast: null,
            reason: 'insufficient_history',
            history: { known_hours: 40, from: '2026-12-05T16:00:00.000Z', to: '2026-12-07T08:00:00.000Z' },
          },
        ],
      },
    ],
  });
