import type { DocContext, DocDefinition } from '../../http/openapi.js';
import { headers, parameters, requestSchemas, responses, responseSchemas, securitySchemes } from './portal/components.js';
import { info, tags } from './portal/info.js';
import { closeSessionOperation, getSessionOperation, openSessionOperation, signInOperation } from './portal/session.js';
import { stationOperations } from './portal/stations.js';
import { originatorOperations } from './portal/originators.js';
import { historyOperations, historyParameters, historySchemas } from './portal/history.js';
import { changeExpiryOperation, createTokenOperation, listTokensOperation, revealOperation, revokeTokenOperation } from './portal/tokens.js';

/**
 * The portal document's definition (`/portal/v1/doc/`), put together from its parts under
 * src/api/docs/portal/: the JSON API of the API tokens page, its public operations (asking for a
 * sign-in link, using it, using a reveal link) and those needing the session cookie, and the operations
 * of operator staff (./portal/stations.ts) and originator managers (./portal/originators.ts). The page and its
 * files (`/portal/`, public routes outside `/portal/v1/`) are not operations. The schemas are those of
 * src/domain/portal/schemas.ts, which the API parses its requests with.
 */
export function portalDocument(context: DocContext): DocDefinition {
  return {
    family: 'portal',
    publicPrefix: '/portal/v1/',
    info: info(context),
    tags: tags(),
    securitySchemes: securitySchemes(context.config),
    requestSchemas: requestSchemas(),
    responseSchemas: { ...responseSchemas(), ...historySchemas() },
    parameters: { ...parameters(), ...historyParameters() },
    headers: headers(context.config),
    responses: responses(context.config),
    // The portal has no rate-limit headers: its limits (sign-in, failed authentications) show only in a 429.
    everyResponseHeaders: ['X-Request-Id'],
    afterAuthenticationHeaders: [],
    operations: [
      signInOperation(),
      openSessionOperation(),
      getSessionOperation(),
      closeSessionOperation(),
      listTokensOperation(),
      createTokenOperation(),
      changeExpiryOperation(),
      revokeTokenOperation(),
      revealOperation(),
      ...stationOperations(),
      ...originatorOperations(),
      ...historyOperations(),
    ],
  };
}
