import type { FamilyDocument } from '../../../http/openapi.js';
import { headers, requestSchemas, responses, responseSchemas, securitySchemes } from './components.js';
import { info, tags } from './info.js';
import { historySchemas } from './history.js';
import { webhookRequestSchemas, webhookSchemas } from './webhooks.js';

/**
 * The portal document (`/portal/v1/doc/`), as the family value declares it (../family.ts): the JSON
 * API of the API tokens page, its public operations (asking for a sign-in link, using it, using a
 * reveal link) and those needing the session cookie, and the operations of operator staff and
 * originator managers. Its operations are the routes' own `doc` (../index.ts, ../stations.ts,
 * ../originators.ts, ../history.ts, ../webhooks.ts; their parts in this folder). The page and its files (`/portal/`,
 * public routes outside `/portal/v1/`) are not operations. The schemas are those of
 * src/domain/portal/schemas.ts and ../bodies.ts, which the API parses its requests with.
 */
export const PORTAL_DOCUMENT: FamilyDocument = {
  path: '/portal/v1/doc',
  title: 'HRS signal platform: Portal API',
  listed: 'Portal API (behind the API tokens page)',
  define: (context) => ({
    family: 'portal',
    publicPrefix: '/portal/v1/',
    info: info(context),
    tags: tags(),
    securitySchemes: securitySchemes(context.config),
    requestSchemas: { ...requestSchemas(), ...webhookRequestSchemas() },
    responseSchemas: { ...responseSchemas(), ...historySchemas(), ...webhookSchemas() },
    headers: headers(context.config),
    responses: responses(context.config),
    // The portal has no rate-limit headers: its limits (sign-in, failed authentications) show only in a 429.
    everyResponseHeaders: ['X-Request-Id'],
    afterAuthenticationHeaders: [],
  }),
};
