import { z } from 'zod';
import { reliabilitySchema } from '../../../domain/export-v2/history.js';
import { forecastSchema } from '../../../domain/export-v2/forecast.js';
import { queryParameter } from '../../../http/parameters.js';
import { originatorReliabilitySchema, stationSignalsSchema, timelineSchema } from '../history-views.js';
import type { RouteDoc } from '../../../http/contract.js';
import { headerRef } from '../../../http/openapi.js';
import { noStation, registryOperation } from './registry-shared.js';
import { problem, problemExample, problemOf } from './shared.js';
import { notPublished } from '../../history.js';

/**
 * Signals, timeline and reliability (src/api/portal/history.ts): operator staff for their stations,
 * originator managers for the stations their originator reports on and for the originator.
 */

export const historySchemas = () => ({
  StationSignals: stationSignalsSchema,
  Timeline: timelineSchema,
  Reliability: reliabilitySchema,
  OriginatorReliability: originatorReliabilitySchema,
  Forecast: forecastSchema,
});

/** The timeline's query: `period`, the last 24 hours or 7 days (../history.ts checks it). */
export const timelineQuery = () =>
  z.object({
    period: queryParameter({
      component: 'timeline_period',
      description: 'The last `24h` (default) or `7d`, up to where the history is materialised (about a minute ago).',
      values: z.enum(['24h', '7d']).default('24h'),
    }),
  });

/** The reliability figures' query: `period`, the last 24 hours, 7 days or 30 days (../history.ts checks it). */
export const figuresQuery = () =>
  z.object({
    period: queryParameter({
      component: 'figures_period',
      description: 'The last `24h` (default), `7d` or `30d`, up to the end of the last hour published (materialised and rolled up).',
      values: z.enum(['24h', '7d', '30d']).default('24h'),
    }),
  });

const badPeriod = (allowed: string) =>
  problem('`period` is not one of those allowed, or another parameter was given.', {
    bad_period: problemExample(400, 'invalid_query', `period: must be one of ${allowed}`, 'A period not offered'),
  });
const notYet = () =>
  problem('Nothing of the history is materialised (timeline) or rolled up (figures) yet: a platform whose history jobs have not run yet. Try again after `Retry-After` seconds.', {
    not_published: { value: problemOf(notPublished()) },
  }, { 'Retry-After': headerRef('Retry-After') });
const notReported = () =>
  problem('The originator does not exist, or has no assignment at this station.', {
    not_reported: problemExample(404, 'not_found', 'Originator "mon-1" does not report on a station "BERLX".'),
  });

type Scope = { role: 'station' | 'originator'; missing: () => unknown; who: string; id: string };

const SCOPES: Scope[] = [
  { role: 'station', missing: noStation, who: 'Operator staff', id: '' },
  {
    role: 'originator',
    missing: notReported,
    who: 'Originator managers, for a station their originator reports on',
    id: 'Reported',
  },
];

/** The operations by id: each scope's three, and the originator's reliability. */
export function historyDocs(): Record<string, RouteDoc> {
  const ops = SCOPES.flatMap((scope) => [
    registryOperation({
      method: 'GET', tag: 'History', id: `station${scope.id}Signals`, role: scope.role,
      summary: 'The last signal received per category',
      description: `${scope.who}: the last transmission of each originator per signal category, whatever its assignment state.`,
      ok: { status: '200', description: 'The last signals.', schema: 'StationSignals', zod: stationSignalsSchema },
      more: { '404': scope.missing() },
    }),
    registryOperation({
      method: 'GET', tag: 'History', id: `station${scope.id}Timeline`, role: scope.role,
      summary: 'The station\'s timeline over 24 hours or 7 days',
      description: `${scope.who}: freshness intervals per category (gaps are the unknown ones), the five-state summary per fuelling option, and the rejected calls that named the station.`,
      ok: { status: '200', description: 'The timeline.', schema: 'Timeline', zod: timelineSchema },
      more: { '400': badPeriod('24h, 7d'), '404': scope.missing(), '503': notYet() },
    }),
    registryOperation({
      method: 'GET', tag: 'History', id: `station${scope.id}Reliability`, role: scope.role,
      summary: 'The station\'s reliability over 24 hours, 7 days or 30 days',
      description: `${scope.who}: the figures export v2 publishes too (its history extension), up to the end of the last hour published (materialised and rolled up).`,
      ok: { status: '200', description: 'The figures.', schema: 'Reliability', zod: reliabilitySchema },
      more: { '400': badPeriod('24h, 7d, 30d'), '404': scope.missing(), '503': notYet() },
    }),
  ]);
  ops.push(
    registryOperation({
      method: 'GET', tag: 'History', id: 'stationForecast', role: 'station',
      summary: 'The station\'s availability forecast for the next 12 hours',
      description:
        'Operator staff: the body of export v2\'s `GET /v2/hrs/{hrs_id}/forecast` and the public map\'s (one set of learned models serves ' +
        'all three): per fuelling option the five-state value now and, for each of the next 12 hours (the present one first), the ' +
        'probability that it is available with its word, or `forecast` null with `reason` `insufficient_history` for an option with ' +
        'less than two weeks of known status. Before the first hour of history is published: 503.',
      ok: { status: '200', description: 'The forecast.', schema: 'Forecast', zod: forecastSchema },
      more: { '404': noStation(), '503': notYet() },
    }),
    registryOperation({
      method: 'GET', tag: 'History', id: 'originatorReliability', role: 'originator',
      summary: 'The originator\'s reliability',
      description: 'When its last transmission arrived, and per category how its published readings fared over every station it reports on, up to the end of the last hour published.',
      ok: { status: '200', description: 'The figures.', schema: 'OriginatorReliability', zod: originatorReliabilitySchema },
      more: { '400': badPeriod('24h, 7d, 30d'), '503': notYet() },
    }),
  );
  return Object.fromEntries(ops.map((op) => [op.operationId, op]));
}
