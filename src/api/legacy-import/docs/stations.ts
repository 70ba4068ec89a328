import { v11ActiveStationsSchema } from '../../../domain/import-v1/schemas.js';
import type { ReferenceData } from '../../../../db/queries/reference.js';
import type { RouteDoc } from '../../../http/contract.js';
import { examplesOf } from '../../../http/openapi.js';
import { activeStationsOperation, tokenErrorResponses } from '../../docs/import.js';
import type { DialectDoc } from './dialects.js';

/** The operations of the reference list and the active stations; the list's example is the one the service holds (read at start). */

/** `GET /import/v1/fuel-type`, `GET /import/v1.1/fuel-type`. */
export function fuelTypeDoc(d: DialectDoc, reference: ReferenceData): RouteDoc {
  const list = d.dialect === 'v1' ? reference.v1FuelTypes : reference.fuellingOptions;
  return {
    tags: ['Reference'],
    operationId: 'listFuelTypes',
    summary: d.dialect === 'v1' ? 'The v1 fuel types' : 'The fuelling options',
    description:
      `The authoritative list of the codes \`dispensers[].fuel_type\` accepts on import ${d.version}` +
      (d.dialect === 'v1'
        ? ': `700car`, `350car`, `350bus` (there is no v1 code for `700hd`).'
        : ': `700ld`, `350ld`, `700hd`, `350hd`, the codes of import v2 and export v2.') +
      ' The list is the same for every token; the options a given station provides are in its registration.',
    ...(d.deprecated ? { deprecated: true } : {}),
    responses: {
      '200': {
        description: 'Every code, in a fixed order.',
        content: {
          // The schema: the route's `response`.
          'application/json': {
            examples: { all: { value: list.map(({ code, description }) => ({ code, description })) } },
          },
        },
      },
      ...tokenErrorResponses(),
    },
  };
}

/** `GET /import/v1.1/active-stations`. */
export function activeStationsDoc(): RouteDoc {
  return activeStationsOperation(
    'The stations where the token\'s signal originator is Live (signals stored and published) or Testing (stored ' +
      'as the latest, not published) for import v1/v1.1, each list sorted by station id. Stations where it is ' +
      'Inactive are not listed. There is no trailing slash.',
    {
      description: 'The originator\'s stations by transmission state.',
      // The schema: the route's `response`.
      content: { 'application/json': { examples: examplesOf(v11ActiveStationsSchema) } },
    },
  );
}
