import { IMPORT_TOKEN_DEFAULT_DAYS, MAX_ACTIVE_IMPORT_TOKENS } from '../../../registry/editor.js';
import { newImportTokenSchema } from '../bodies.js';
import { callLogPageSchema, createdImportTokenSchema, importTokenAnswerSchema, importTokenListSchema, originatorListSchema, originatorViewSchema } from '../views.js';
import { badPage, notFound, registryOperation } from './registry-shared.js';
import { invalidBody, problem, problemExample } from './shared.js';

/**
 * Originator managers' operations: the originators, their import tokens, their call logs. Written as
 * operator staff's (./stations.ts), one registryOperation call each, alike in form and each with its
 * own path, role and words; what they share (noOriginator, badPage) is written once.
 */

const noOriginator = () => notFound('No originator has this id.', 'No originator "mon-9".');

export function originatorDocs() {
  return {
    listOriginators: registryOperation({
      method: 'GET', tag: 'Originators', id: 'listOriginators', role: 'originator',
      summary: 'The account\'s originators',
      description: 'The originators the account manages (every one for an admin).',
      ok: { status: '200', description: 'The originators.', schema: 'OriginatorList', zod: originatorListSchema },
    }),
    getOriginator: registryOperation({
      method: 'GET', tag: 'Originators', id: 'getOriginator', role: 'originator',
      summary: 'An originator and the stations it reports on',
      description: 'Its call-log mode, and per station its state for each signal type (`v1`: the legacy transmission state).',
      ok: { status: '200', description: 'The originator.', schema: 'OriginatorView', zod: originatorViewSchema },
      more: { '404': noOriginator() },
    }),
    listImportTokens: registryOperation({
      method: 'GET', tag: 'Originators', id: 'listImportTokens', role: 'originator',
      summary: 'The originator\'s import tokens',
      description: 'Every import token of the originator (v2 and v1/v1.1), newest first, with its hint and state but never its value; and the limits.',
      ok: { status: '200', description: 'The tokens and the limits.', schema: 'ImportTokenList', zod: importTokenListSchema },
      more: { '404': noOriginator() },
    }),
    createImportToken: registryOperation({
      method: 'POST', tag: 'Originators', id: 'createImportToken', role: 'originator',
      summary: 'Create an import token: its value, shown once',
      description:
        `An \`import_v2\` (\`hrs_imp2_…\`) or \`import_v1\` (\`hrs_imp1_…\`, import v1 and v1.1) token; the value is answered **this once** and ` +
        `stored as its SHA-256. The expiry is 1 to 366 days ahead, ${IMPORT_TOKEN_DEFAULT_DAYS} days when none is given; at most ` +
        `${MAX_ACTIVE_IMPORT_TOKENS} are active per originator.`,
      body: {
        schema: 'NewImportToken', zod: newImportTokenSchema,
        invalid: { generation: invalidBody(newImportTokenSchema, { generation: 'export_v2', name: 'prod' }, 'Not an import generation') },
      },
      ok: { status: '201', description: 'The token and its value (only here, only now).', schema: 'CreatedImportToken', zod: createdImportTokenSchema, headers: { 'Cache-Control': { $ref: '#/components/headers/Cache-Control' } } },
      more: {
        '404': noOriginator(),
        '409': problem('The originator has the most active import tokens it may have.', {
          too_many: problemExample(409, 'token_limit', `The originator "mon-1" has ${MAX_ACTIVE_IMPORT_TOKENS} active import tokens; at most ${MAX_ACTIVE_IMPORT_TOKENS} are allowed. Revoke one first.`),
        }),
      },
    }),
    revokeImportToken: registryOperation({
      method: 'POST', tag: 'Originators', id: 'revokeImportToken', role: 'originator',
      summary: 'Revoke an import token',
      description: 'Revokes it for good, refused at once on every instance; revoking it again changes nothing.',
      ok: { status: '200', description: 'The token, revoked.', schema: 'ImportTokenAnswer', zod: importTokenAnswerSchema },
      more: { '404': notFound('The originator has no import token with this id.', 'The originator "mon-1" has no import token 42.') },
    }),
    originatorCallLogs: registryOperation({
      method: 'GET', tag: 'Originators', id: 'originatorCallLogs', role: 'originator',
      summary: 'The originator\'s API call log',
      description: 'Its calls as its call-log mode kept them (request, status, response and error details of failed ones), newest first, a page at a time.',
      ok: { status: '200', description: 'A page of calls.', schema: 'CallLogPage', zod: callLogPageSchema },
      more: { '400': problem('A query parameter is not valid.', badPage()), '404': noOriginator() },
    }),
  };
}
