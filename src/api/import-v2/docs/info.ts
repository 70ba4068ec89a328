import type { DocContext, DocDefinition } from '../../../http/openapi.js';
import { bearerScheme } from '../../docs/headers.js';

/** The import v2 document's info (its description is the guide a signal originator reads first), tags and security scheme. */

const SECURITY = 'importV2Token';

const OVERVIEW =
  'The import interface, version 2, through which signal originators (station monitoring systems) send ' +
  'transmissions (snapshots) per station and signal category. Acceptance does not by itself publish anything: ' +
  'publication depends on the originator\'s assignment for the station and signal type (`live`, `testing`, or not ' +
  'assigned), which the station operator controls.';

const AUTHENTICATION =
  '## Authentication\n\nEvery request carries `Authorization: Bearer <ACCESS_TOKEN>` with an import v2 token of the ' +
  'signal originator. Tokens of other generations (import v1, export) do not authenticate here. A missing or ' +
  'malformed header, an unknown, revoked or expired token, a deactivated originator and a token of another ' +
  'generation all get 401 with `{"detail": "..."}` saying which, and nothing is processed.';

/** The rate limit as configured, and the cadence an originator should keep. */
const rateLimitSection = (limit: number) =>
  `## Rate limit\n\n${limit} requests per minute per signal originator, across all import v2 endpoints together ` +
  '(every token of the originator spends the same budget; dry runs count; refused requests do not). Every ' +
  'response after authentication carries `RateLimit-Limit`, `RateLimit-Remaining` and `RateLimit-Reset`; over ' +
  'the limit the answer is 429 with `Retry-After`. Recommended cadence: availability and usage every minute even ' +
  'when unchanged; pricing on change plus a daily heartbeat; hydrogen storage on change or on the availability ' +
  'cadence. After an outage, send a fresh reading rather than replaying queued ones.';

const ERRORS =
  '## Errors\n\nErrors are JSON: `{"detail": "..."}`, or for validation failures an array aligned with the ' +
  'request (see `ValidationErrors`). An unknown path gets 404 (its `detail` says when the path exists with a ' +
  'trailing slash, and there is never a redirect); a known path with another method gets 405 with `Allow`; ' +
  '`OPTIONS` answers 204 with `Allow`; `HEAD` works wherever `GET` does. A 500 is an unexpected platform error: ' +
  'please report it with the response\'s `X-Request-Id`. A 503 from the infrastructure means temporary ' +
  'unavailability: retry with backoff.';

const VERSIONING =
  '## Versioning\n\nImport v2 lives under `/import/v2/...` with its own credential type. Import v1 ' +
  '(`/import/v1/...`) remains functional and is deprecated; its reference is at [/import/v1/doc/](/import/v1/doc/), ' +
  'import v1.1\'s at [/import/v1.1/doc/](/import/v1.1/doc/).';

/*
 * The info, the tags and the security scheme are declared as in every document (export v2, the legacy
 * import, the portal): the same fields, each document's own title, sections, names and words. The
 * scheme's form is shared (bearerScheme); a builder for the rest would take every value as an argument.
 */
export function info(context: DocContext): DocDefinition['info'] {
  return {
    title: 'HRS signal platform: Import API v2',
    version: context.version,
    summary: 'Signal originators send real-time station signals: availability, usage, hydrogen storage, pricing.',
    description: [OVERVIEW, AUTHENTICATION, rateLimitSection(context.config.importV2RateLimit), ERRORS, VERSIONING].join('\n\n'),
  };
}

export const tags = (): DocDefinition['tags'] => [
  { name: 'Signals', description: 'One endpoint per signal category; the body is a JSON array of transmissions.' },
  { name: 'Stations', description: 'The stations covered by the token.' },
];

export const securitySchemes = (): DocDefinition['securitySchemes'] => ({
  [SECURITY]: bearerScheme(
    'An import v2 token of the signal originator (created in the portal by originator managers, or issued during ' +
    'onboarding). Each API generation has its own credential: import v1 and export tokens are refused here.',
  ),
});
