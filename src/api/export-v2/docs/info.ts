import type { DocContext, DocDefinition } from '../../../http/openapi.js';
import { pushDescription } from './push.js';
import { rateLimits } from './components.js';
import { HISTORY_DESCRIPTION } from './history.js';
import { GEO_DESCRIPTION } from './geo.js';
import { DATEX2_DESCRIPTION } from '../../datex2/docs.js';
import { webhooksDescription } from './webhooks.js';

/** The export v2 document's info (its description is the guide a data user reads first) and tags. */

const OVERVIEW =
  'The export interface, version 2: the station list, one station with its static details and layout ' +
  '(dispensers, nozzles, storages, products), the real-time status (availability, usage, hydrogen storage, ' +
  'pricing) of one or all stations, station events, a station photo, fuelling options and vehicle categories. ' +
  'All endpoints are `GET` (`HEAD` works wherever `GET` does) and answer JSON, except the photo and the DATEX II ' +
  'publications (XML, under `/datex2/v3/`).';

/** Licence, authentication and rate limits (as configured). */
function accessSections(config: DocContext['config']): string[] {
  const { perMinute, sustained } = rateLimits(config);
  return [
    '## Licence\n\nExported data is licensed [CC BY 4.0](https://creativecommons.org/licenses/by/4.0/). Every ' +
      'response says so in a `Link: <https://creativecommons.org/licenses/by/4.0/>; rel="license"` header.',
    '## Authentication\n\nEvery request carries `Authorization: Bearer <ACCESS_TOKEN>` with a **personal** export v2 ' +
      'token, tied to a portal account: create one on the API tokens page of your account (up to five active), or ' +
      'request one from the platform contact. Export v1/v1.1 tokens and the shared sandbox token do not authenticate ' +
      'here (the 401 says so). A missing or malformed header, an unknown, revoked or expired token and a deactivated ' +
      'account get 401, and nothing is processed.',
    `## Rate limits\n\n${perMinute} requests per minute (burst) and ${sustained} (sustained) per user: all personal ` +
      'tokens of a user share the budget. Every response after authentication carries `RateLimit-Limit`, ' +
      '`RateLimit-Remaining` and `RateLimit-Reset` (of the tightest limit); over a limit the answer is 429 with ' +
      '`Retry-After`.',
  ];
}

/** Conditional requests, browsers (CORS) and errors. */
const HTTP_SECTIONS = [
  '## Conditional requests\n\n`GET /v2/hrs` and `GET /v2/hrs/{hrs_id}` return `Last-Modified`; sending it back as ' +
    '`If-Modified-Since` yields 304 with an empty body when nothing changed. The timestamp tracks changes to ' +
    'exported static content (station fields, layout, events), not real-time signals. The status endpoints are ' +
    'not conditional. There is no `ETag` support.',
  '## Browsers\n\nResponses carry `Access-Control-Allow-Origin: *` and expose the headers above to scripts; CORS ' +
    'preflights are answered without a token.',
  '## Errors\n\nErrors are RFC 9457 problem details (`application/problem+json`: `type`, `title`, `status`, ' +
    '`detail`) with a stable `code`. An unknown path gets 404 (its `detail` says when the path exists without a ' +
    'trailing slash; there is never a redirect); a known path with another method gets 405 with `Allow`. A 500 is ' +
    'an unexpected platform error: please report it with the response\'s `X-Request-Id`. A 503 from the ' +
    'infrastructure means temporary unavailability: retry with backoff.',
];

const VERSIONING =
  '## Versioning\n\nExport v2 lives under `/v2/...` with its own (personal) credential type. The v1.1 ' +
  'per-fuelling-option status summary stays on v1.1. The DATEX II representation (v3.7, AFIR) lives under ' +
  '`/datex2/v3/...` (see "DATEX II publications").';

export function info(context: DocContext): DocDefinition['info'] {
  return {
    title: 'HRS signal platform: Export API v2',
    version: context.version,
    summary: 'Data users read stations, their layout and real-time status, events, photos and reference lists.',
    description: [OVERVIEW, ...accessSections(context.config), ...HTTP_SECTIONS, pushDescription(context.config), HISTORY_DESCRIPTION, GEO_DESCRIPTION, webhooksDescription(context.config), DATEX2_DESCRIPTION, VERSIONING].join('\n\n'),
    license: { name: 'CC BY 4.0 (exported data)', identifier: 'CC-BY-4.0' },
  };
}

/** Declared as every document's tags are (the portal's: ../../portal/docs/info.ts), with the names this document's operations use. */
export const tags = (): DocDefinition['tags'] => [
  { name: 'Stations', description: 'Static station data and layout, events and photos.' },
  { name: 'Status', description: 'Real-time status per signal type, served from memory.' },
  { name: 'History', description: 'Extension beyond the specification: a station\'s reliability and status history, by the hour.' },
  { name: 'Reference', description: 'Reference lists resolving codes used elsewhere.' },
  { name: 'DATEX II', description: 'The network in DATEX II v3.7 (AFIR) for National Access Points: the table and the status publication, XML.' },
  { name: 'Public map', description: 'The public map\'s feed: every station with its live five-state status as GeoJSON, a station\'s panel, and a stream of changes. No credential; limited per client address.' },
];
