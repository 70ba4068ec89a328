import type { RouteDoc } from '../../../http/contract.js';
import { examplesOf, responseRef } from '../../../http/openapi.js';
import { forecastSchema } from '../../../domain/export-v2/forecast.js';
import { COMMON, jsonExamples } from '../../export/docs.js';

/** The forecast extension (beyond the specification): a station's availability forecast for the next hours. */
export function forecastDoc(): RouteDoc {
  return {
    tags: ['History'],
    operationId: 'getStationForecast',
    summary: 'The probability each fuelling option is available in each of the next 12 hours (extension)',
    description:
      'Extension beyond the specification. Learned per fuelling option from the station\'s own published status history (up to 84 days): ' +
      'the rate of each weekday and hour of the station\'s local week, weighted to recent weeks, blended with the present five-state value ' +
      'as far as the history says states last. An hour the opening hours close is `closed` (probability 0), not unlikely. An option with ' +
      'fewer than 168 known hours, or less than 14 days of them, has no forecast (`forecast` null, `reason` `insufficient_history`). ' +
      'The first hour is the present one. Not conditional (it moves with the live status and the clock); `Cache-Control: max-age=60`. ' +
      'The method, its back-test against two baselines and its limits: docs/forecast.md.',
    responses: {
      '200': { description: 'The forecast.', headers: { 'Cache-Control': { description: '`max-age=60`.', schema: { type: 'string' } } }, content: jsonExamples(examplesOf(forecastSchema)) },
      '404': responseRef('StationNotFound'),
      '503': responseRef('HistoryNotPublished'),
      ...COMMON,
    },
  };
}
