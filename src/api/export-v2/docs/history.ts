import { z } from 'zod';
import { CATEGORIES } from '../../../domain/categories/index.js';
import { queryParameter } from '../../../http/parameters.js';
import { historyPageSchema, reliabilitySchema } from '../../../domain/export-v2/history.js';
import { INSTANT_RANGE } from '../../../http/dates.js';
import type { RouteDoc } from '../../../http/contract.js';
import { examplesOf, headerRef, parameterRef, responseRef } from '../../../http/openapi.js';
import { COMMON, conditionalResponses, problem, problemBody } from '../../export/docs.js';

/**
 * The history extension (beyond the specification): a station's reliability and its status history.
 * Both answer from the history up to the end of the last hour rolled up, under a `Last-Modified` that
 * moves whenever what is published changes.
 */

export const HISTORY_DESCRIPTION =
  '## Extensions beyond the specification\n\nAdditive: a client written to the specification reads every answer as ' +
  'before.\n\n- **Freshness.** Every status section (polled and streamed) carries `freshness`: `fresh` while its ' +
  'reading is younger than 5 minutes by its `datetime`, `stale` after that (pricing: after 25 hours), so a stale reading ' +
  'no longer looks like a fresh one. Availability and usage still turn null (unknown) after 30 minutes; the stream sends ' +
  'the section again when it turns stale.\n- **Status history and reliability.** ' +
  '`GET /v2/hrs/{hrs_id}/reliability` gives a station\'s reliability over the last 24 hours, 7 days or 30 days ' +
  '(per signal category the share of time fresh, stale and unknown, the gaps of more than 30 minutes without a ' +
  'signal, the readings received; per fuelling option the share of its opening hours it was `AVAILABLE` in the ' +
  'five-state summary), and `GET /v2/hrs/{hrs_id}/history` pages through its status history in one category (the ' +
  'freshness intervals, the five-state summary per fuelling option for availability, and the readings as they were ' +
  'published), at most 7 days a page. Both use the same tokens and rate limits as every other path. The history is ' +
  'published by the hour: an hour is published once it has been materialised and rolled up (usually a minute or two ' +
  'after its end), never before, and both answer up to the end of the last hour published (`to`). Their ' +
  '`Last-Modified` is when what is published last changed (an hour published, history past its retention deleted, ' +
  'the station\'s registry entry changed), so `If-Modified-Since` gets a 304 exactly while the figures and pages a ' +
  'client holds are still those published. Until the platform\'s first hour is published both answer 503 with ' +
  '`Retry-After`. History is kept for 400 days by default.';

/** The reliability's query: `period` (the handler checks it). */
export const reliabilityQuery = () =>
  z.object({
    period: queryParameter({
      component: 'period',
      description: 'The period the figures cover, ending at the end of the last complete hour: `24h` (default), `7d` or `30d`.',
      values: z.enum(['24h', '7d', '30d']).default('24h'),
    }),
  });

/** The history page's query: `category`, `from` and `to` (the handler checks them). */
export const historyQuery = () =>
  z.object({
    category: queryParameter({
      component: 'category',
      description: 'The signal category, as in the import v2 paths; `availability` by default.',
      values: z.enum(CATEGORIES).default('availability'),
    }),
    from: queryParameter({
      component: 'from',
      description:
        'Start of the page (inclusive): a date-time in ISO 8601 (RFC 3339) with an offset or `Z`, seconds and fraction optional ' +
        `(\`2026-11-24T08:00:00Z\`, \`2026-11-24T09:00+01:00\`), from ${INSTANT_RANGE}; a date the calendar does not have ` +
        '(30 February, 29 February outside leap years, month 13), hour 24, a leap second or an offset beyond ±23:59 is a 400. ' +
        'By default 24 hours before the end of the last hour published.',
      values: z.iso.datetime({ offset: true }),
      example: '2026-11-24T08:00:00Z',
    }),
    to: queryParameter({
      component: 'to',
      description:
        'End of the page (exclusive), written as `from` is, at most 7 days after `from`; by default 7 days after it. Cut at the ' +
        'end of the last hour published.',
      values: z.iso.datetime({ offset: true }),
      example: '2026-11-24T09:00:00Z',
    }),
  });

export const historyResponses = () => ({
  BadHistoryParameter: problem('A query parameter is malformed, unknown, given twice, or the page is longer than 7 days or lies after the history published.', {
    bad_period: { value: problemBody(400, 'Bad Request', 'invalid_parameter', 'period: must be one of 24h, 7d, 30d.') },
    bad_category: { value: problemBody(400, 'Bad Request', 'invalid_parameter', `category: must be one of ${CATEGORIES.join(', ')}.`) },
    too_long: { value: problemBody(400, 'Bad Request', 'invalid_parameter', 'to: a page covers at most 7 days after from.') },
    no_such_date: { value: problemBody(400, 'Bad Request', 'invalid_parameter', 'from: 2026-02-30 is not a date (February 2026 has 28 days).') },
    out_of_range: { value: problemBody(400, 'Bad Request', 'invalid_parameter', `from: out of range: accepted from ${INSTANT_RANGE}.`) },
  }),
  HistoryNotPublished: problem(
    'No hour of the status history is published yet (a platform whose history jobs have not run yet); try again after `Retry-After` seconds.',
    {
      not_published: {
        value: problemBody(
          503,
          'Service Unavailable',
          'service_unavailable',
          'The status history is not published yet: the history jobs have not run on it. The history worker publishes each hour within minutes of its end (`hrs history run` does it at once); try again later.',
        ),
      },
    },
    { 'Retry-After': headerRef('Retry-After') },
  ),
});

/** What both history operations refuse alike: a bad parameter, an unknown station, no hour published yet. */
const historyErrors = () => ({
  '400': responseRef('BadHistoryParameter'),
  '404': responseRef('StationNotFound'),
  '503': responseRef('HistoryNotPublished'),
  ...COMMON,
});

export function reliabilityDoc(): RouteDoc {
  return {
    tags: ['History'],
    operationId: 'getStationReliability',
    summary: 'A station\'s reliability over 24 hours, 7 days or 30 days (extension)',
    description:
      'Extension beyond the specification. Computed from the station\'s status history by the hour, up to the end of ' +
      'the last hour published (`to`: materialised and rolled up). Time before a station\'s first signal counts as unknown. ' +
      'Conditional: supports `If-Modified-Since` (`Last-Modified`: when what is published last changed).',
    parameters: [parameterRef('If-Modified-Since')],
    responses: {
      ...conditionalResponses('The figures.', examplesOf(reliabilitySchema)),
      ...historyErrors(),
    },
  };
}

export function historyDoc(): RouteDoc {
  return {
    tags: ['History'],
    operationId: 'getStationHistory',
    summary: 'A page of a station\'s status history in one category (extension)',
    description:
      'Extension beyond the specification. The freshness intervals of the category, for availability the five-state ' +
      'summary per fuelling option, and the live readings measured in the page (at most 10,000; `next` continues a ' +
      'busier page) and received before the end of the history published (a reading received later joins the page ' +
      'with the next hour published). A page covers at most 7 days and ends no later than the end of the last hour ' +
      'published; follow `next` and `previous` rather than computing them. Conditional: supports `If-Modified-Since` ' +
      '(`Last-Modified`: when what is published last changed).',
    parameters: [parameterRef('If-Modified-Since')],
    responses: {
      ...conditionalResponses('The page.', examplesOf(historyPageSchema)),
      ...historyErrors(),
    },
  };
}
