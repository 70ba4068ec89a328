import {
  createdTokenSchema,
  newTokenRequestSchema,
  revealRequestSchema,
  tokenAnswerSchema,
  tokenExpiryRequestSchema,
  tokenListSchema,
} from '../../../domain/portal/schemas.js';
import { checkExpiry, MAX_ACTIVE_PERSONAL_TOKENS, PERSONAL_TOKEN_EXPIRY, TOKEN_PREFIXES, tooManyTokensMessage } from '../../../domain/token-values.js';
import { TOKEN_RULE_MESSAGES } from '../../../registry/personal-tokens.js';
import { LINK_GONE } from '../session-words.js';
import type { RouteDoc } from '../../../http/contract.js';
import { examplesOf, headerRef, responseRef, schemaRef } from '../../../http/openapi.js';
import { originExamples } from './components.js';
import { BODY_ERRORS, invalidBody, json, parseErrorExample, problem, problemExample, SESSION_ERRORS } from './shared.js';

/** The signed-in account's tokens (list, create, re-date, revoke) and the reveal link. */

const { minDays, maxDays, defaultDays } = PERSONAL_TOKEN_EXPIRY;

/** The 400 of an expiry out of bounds, as the rule words it (for a request made on 1 March 2027 at noon). */
function expiryOutOfBounds() {
  const now = new Date('2027-03-01T12:00:00.000Z');
  const example = (expiresAt: string, summary: string) => problemExample(400, 'token_rule', checkExpiry(new Date(expiresAt), now)!, summary);
  return {
    too_late: example('2028-06-01T00:00:00.000Z', `More than ${maxDays} days ahead`),
    too_soon: example('2027-03-01T18:00:00.000Z', `Less than ${minDays} day ahead`),
  };
}

const tooMany = () => problemExample(409, 'token_rule', tooManyTokensMessage(MAX_ACTIVE_PERSONAL_TOKENS), `${MAX_ACTIVE_PERSONAL_TOKENS} active tokens already`);

/** `GET /portal/v1/tokens`: every token of the account, and the limits. */
export function listTokensDoc(): RouteDoc {
  return {
    tags: ['Tokens'],
    operationId: 'listTokens',
    summary: 'The account\'s tokens and the limits',
    description:
      'Every personal token of the signed-in account, newest first, revoked and expired ones too, each with its state ' +
      'and hint but never its value; and the limits the portal applies (`limits`).',
    responses: {
      '200': {
        description: 'The tokens and the limits.',
        headers: { 'Cache-Control': headerRef('Cache-Control') },
        content: json('TokenList', examplesOf(tokenListSchema, ['tokens'])),
      },
      ...SESSION_ERRORS,
    },
  };
}

/** `POST /portal/v1/tokens`: a new token, its value in the answer, once. */
export function createTokenDoc(): RouteDoc {
  return {
    tags: ['Tokens'],
    operationId: 'createToken',
    summary: 'Create a token: its value, shown once',
    description:
      `Makes a personal export v2 token and answers its value (\`${TOKEN_PREFIXES.export_v2}…\`) **this once**: keep it ` +
      'now, it cannot be shown again. The expiry is ' +
      `${minDays} to ${maxDays} days ahead, ${defaultDays} days when none is given. At most ${MAX_ACTIVE_PERSONAL_TOKENS} ` +
      'active tokens per account. The account\'s address is told by e-mail. Needs `Origin`.',
    requestBody: {
      required: true,
      content: { 'application/json': { schema: schemaRef('NewTokenRequest'), examples: examplesOf(newTokenRequestSchema, ['default_expiry', 'chosen_expiry']) } },
    },
    responses: {
      '201': {
        description: 'Created: the token and its value (only here, only now).',
        headers: { 'Cache-Control': headerRef('Cache-Control') },
        content: json('CreatedToken', examplesOf(createdTokenSchema, ['created'])),
      },
      '400': problem('The body is not JSON or does not fit `NewTokenRequest` (`invalid_body`), or the expiry is out of bounds (`token_rule`).', {
        empty_name: invalidBody(newTokenRequestSchema, { name: '  ' }, 'An empty name'),
        bad_date: invalidBody(newTokenRequestSchema, { name: 'laptop', expires_at: '1 March 2027' }, 'Not an ISO 8601 date and time'),
        ...expiryOutOfBounds(),
        ...parseErrorExample(),
      }),
      '403': responseRef('ForbiddenOrigin'),
      '409': problem(`The account has ${MAX_ACTIVE_PERSONAL_TOKENS} active tokens already: revoke one or let one expire first.`, {
        too_many: tooMany(),
      }),
      ...BODY_ERRORS,
      ...SESSION_ERRORS,
    },
  };
}

/** `PATCH /portal/v1/tokens/:id`: a new expiry for an active token. */
export function changeExpiryDoc(): RouteDoc {
  return {
    tags: ['Tokens'],
    operationId: 'changeTokenExpiry',
    summary: 'Move an active token\'s expiry',
    description:
      `Sets a new expiry, ${minDays} to ${maxDays} days ahead of now, on an active token of the account; the expiry ` +
      'reminders follow it. An expired or revoked token cannot be renewed (409): create a new one. Needs `Origin`.',
    requestBody: {
      required: true,
      content: { 'application/json': { schema: schemaRef('TokenExpiryRequest'), examples: examplesOf(tokenExpiryRequestSchema, ['new_expiry']) } },
    },
    responses: {
      '200': { description: 'The token with its new expiry.', content: json('TokenResult', examplesOf(tokenAnswerSchema, ['changed'])) },
      '400': problem('The body is not JSON or does not fit `TokenExpiryRequest` (`invalid_body`), or the expiry is out of bounds (`token_rule`).', {
        no_expiry: invalidBody(tokenExpiryRequestSchema, {}, 'No expiry'),
        ...expiryOutOfBounds(),
        ...parseErrorExample(),
      }),
      '403': responseRef('ForbiddenOrigin'),
      '404': problem(
        'No token of the signed-in account has this `id` (another account\'s tokens are not found either). The `code` is ' +
          '`not_found` for an `id` that is not decimal digits, `token_rule` for one that is.',
        {
          not_found: problemExample(404, 'not_found', TOKEN_RULE_MESSAGES.noSuchToken, 'An id that is not decimal digits'),
          no_such_token: problemExample(404, 'token_rule', TOKEN_RULE_MESSAGES.noSuchToken, 'No token of the account with this id'),
        },
      ),
      '409': problem('The token is revoked or has expired: it cannot be changed.', {
        revoked: problemExample(409, 'token_rule', TOKEN_RULE_MESSAGES.revoked, 'A revoked token'),
        expired: problemExample(409, 'token_rule', TOKEN_RULE_MESSAGES.expired, 'An expired token'),
      }),
      ...BODY_ERRORS,
      ...SESSION_ERRORS,
    },
  };
}

/** `POST /portal/v1/tokens/:id/revoke`: revoked at once, everywhere. */
export function revokeTokenDoc(): RouteDoc {
  const revoked = structuredClone(examplesOf(tokenAnswerSchema, ['revoked'])) as Record<string, { value: { token: Record<string, unknown> } }>;
  for (const example of Object.values(revoked)) Object.assign(example.value.token, { revoked_at: '2026-12-03T08:00:00.000Z', state: 'revoked' });
  return {
    tags: ['Tokens'],
    operationId: 'revokeToken',
    summary: 'Revoke a token',
    description:
      'Revokes a token of the account: refused at once on every instance of the service, and the account\'s address ' +
      'is told by e-mail. A token revoked already is answered the same way, unchanged. No body. Needs `Origin`.',
    responses: {
      '200': { description: 'The token, revoked.', content: json('TokenResult', revoked) },
      '403': responseRef('ForbiddenOrigin'),
      '404': responseRef('TokenNotFound'),
      ...SESSION_ERRORS,
    },
  };
}

/** `POST /portal/v1/reveal`: public; the token an admin issued is made, its value shown once. */
export function revealDoc(): RouteDoc {
  const shown = structuredClone(examplesOf(createdTokenSchema, ['revealed'])) as Record<string, { value: { token: Record<string, unknown> } }>;
  for (const example of Object.values(shown)) example.value.token.name = 'research';
  return {
    tags: ['Reveal'],
    operationId: 'revealIssuedToken',
    summary: 'Use a reveal link: the issued token, its value shown once',
    description:
      'Takes the secret of a reveal link (what follows `#reveal=`) that an admin had sent for a token issued to the ' +
      'address, and makes that token now, with the name and expiry the admin chose; its value is in the 201, **once**. ' +
      'Needs no session: the link is the credential. Needs `Origin` (see "Reveal links").',
    security: [],
    requestBody: {
      required: true,
      content: { 'application/json': { schema: schemaRef('RevealRequest'), examples: examplesOf(revealRequestSchema) } },
    },
    responses: {
      '201': {
        description: 'The token, made now, and its value (only here, only now).',
        headers: { 'Cache-Control': headerRef('Cache-Control') },
        content: json('CreatedToken', shown),
      },
      '400': problem('The body is not JSON, or not `{"secret": …}` with a secret of the right form.', {
        not_a_secret: invalidBody(revealRequestSchema, { secret: 'abc' }, 'Not a link\'s secret'),
        ...parseErrorExample(),
      }),
      '403': problem(
        'The request\'s `Origin` is not the service\'s own (`forbidden_origin`, see "The Origin rule"), or the account ' +
          'has been deactivated since the token was issued (`token_rule`).',
        {
          ...originExamples(),
          deactivated: problemExample(403, 'token_rule', TOKEN_RULE_MESSAGES.deactivated, 'A deactivated account'),
        },
      ),
      '409': problem(
        `The account has ${MAX_ACTIVE_PERSONAL_TOKENS} active tokens already. The link is not spent: it works once one ` +
          'is revoked or expired, until the link expires.',
        { too_many: tooMany() },
      ),
      '410': problem('The link was used already or has expired: ask the platform contact for a new one.', {
        link_gone: problemExample(410, 'link_gone', LINK_GONE.reveal),
      }),
      ...BODY_ERRORS,
      '500': responseRef('InternalError'),
    },
  };
}
