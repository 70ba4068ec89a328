import type { RouteDoc } from '../../../http/contract.js';
import { examplesOf, responseRef } from '../../../http/openapi.js';
import { COMMON, jsonExamples } from '../../export/docs.js';
import { legacyDoc, words, type ExportDialectDoc } from './dialects.js';

/**
 * The five-state summary's operations (../status.ts). Both begin alike, as every operation does (tag,
 * id, summary, description, parameters, answers); their words, bodies and errors differ, and the
 * answers they share (COMMON, the problem responses) are written once in ../../export/docs.ts.
 */

/** `GET {prefix}hrs/status`: every station's summary. */
export function listSummaryDoc(d: ExportDialectDoc): RouteDoc {
  return legacyDoc(d, {
    tags: ['Status'],
    operationId: 'listStatusSummaries',
    summary: `Five-state status of every station, per ${words(d)}`,
    description:
      `Every registered station's summary, sorted by \`hrs_id\`: one entry per ${words(d)} it provides, with its state and ` +
      'the reason (see "The five-state summary" above). Computed from what is in memory at the moment of the request, ' +
      'opening hours evaluated in each station\'s own time zone. Gzip-encoded when the client accepts it ' +
      '(`Accept-Encoding: gzip`; `Vary: Accept-Encoding`). Not conditional.',
    responses: {
      '200': {
        description: 'Every station\'s summary.',
        content: jsonExamples(examplesOf(d.bodies.StatusSummaryList)),
      },
      '400': responseRef('BadFilter'),
      ...COMMON,
    },
  });
}

/** `GET {prefix}hrs/:hrs_id/status`: one station's summary. */
export function summaryDoc(d: ExportDialectDoc): RouteDoc {
  return legacyDoc(d, {
    tags: ['Status'],
    operationId: 'getStatusSummary',
    summary: `Five-state status of one station, per ${words(d)}`,
    description:
      `One entry per ${words(d)} the station provides (with \`fuelling_option\`: only that one; an empty list when the ` +
      'station does not provide it), with its state and the reason. Not conditional.',
    responses: {
      '200': {
        description: 'The station\'s summary.',
        content: jsonExamples(examplesOf(d.bodies.StatusSummary)),
      },
      '400': responseRef('BadFilter'),
      '404': responseRef('StationNotFound'),
      ...COMMON,
    },
  });
}
