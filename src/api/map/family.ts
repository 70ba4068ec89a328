import { PROBLEM_ERRORS } from '../../http/errors.js';
import type { Family } from '../../http/family.js';
import type { FamilyPolicy } from '../../http/policy.js';

/** The licence of what the public map publishes, as export v2's: CC BY 4.0, as a `Link` header (RFC 8288). */
export const MAP_LICENCE_LINK = '<https://creativecommons.org/licenses/by/4.0/>; rel="license"';

/** Open data for any origin: no credential is ever sent, so `*` and nothing varying by `Origin`. */
export const MAP_POLICY: FamilyPolicy = {
  headers: { Link: MAP_LICENCE_LINK },
  cors: {
    methods: ['GET', 'HEAD', 'OPTIONS'],
    allowHeaders: ['If-None-Match', 'If-Modified-Since'],
    exposeHeaders: ['ETag', 'Last-Modified', 'Link', 'RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset', 'Retry-After', 'X-Request-Id'],
    maxAgeSeconds: 86_400,
  },
};

/** The public map's family: `/map/…`, no credential, problem bodies, the licence and open CORS. */
export function mapFamily(): Family {
  return { name: 'map', prefix: '/map/', errors: PROBLEM_ERRORS, policy: MAP_POLICY };
}
