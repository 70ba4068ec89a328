import { z } from 'zod';
import { CATEGORIES } from '../../../domain/categories/index.js';
import { pathParameter, queryParameter, type ParameterMeta } from '../../../http/parameters.js';
import {
  createdTokenSchema,
  newTokenRequestSchema,
  personalTokenSchema,
  portalProblemSchema,
  portalUserSchema,
  revealRequestSchema,
  sessionRequestSchema,
  sessionSchema,
  sessionStateSchema,
  signInAcceptedSchema,
  signInRequestSchema,
  tokenAnswerSchema,
  tokenExpiryRequestSchema,
  tokenLimitsSchema,
  tokenListSchema,
} from '../../../domain/portal/schemas.js';
import { describeLimit, describeWait } from '../../../http/rate-limit-guard.js';
import { PROBLEM_ERRORS } from '../../../http/errors.js';
import { tooLarge } from '../../../http/request.js';
import { AUTH_FAILURE_LIMIT } from '../../auth.js';
import { NOT_SIGNED_IN, originRefusal, SESSION_COOKIE, sessionCookie } from '../session-words.js';
import { TOKEN_RULE_MESSAGES } from '../../../registry/personal-tokens.js';
import { requestIdHeader, retryAfterHeader } from '../../docs/headers.js';
import { assignmentRequestSchema, broadcastSchema, confirmSchema, draftLayoutSchema, endEventSchema, eventPatchSchema, newEventSchema, newImportTokenSchema, stationPutSchema } from '../bodies.js';
import {
  assignmentAnswerSchema,
  assignmentsSchema,
  auditEntrySchema,
  auditPageSchema,
  broadcastAnswerSchema,
  callLogPageSchema,
  confirmedSchema,
  createdImportTokenSchema,
  diffAnswerSchema,
  draftSavedSchema,
  eventListSchema,
  eventViewSchema,
  importTokenAnswerSchema,
  importTokenListSchema,
  importTokenSchema,
  layoutDiffSchema,
  layoutsSchema,
  originatorListSchema,
  originatorViewSchema,
  photoAnswerSchema,
  photoInfoSchema,
  rolesSchema,
  stationListSchema,
  driversWaitingSchema,
  stationRecordViewSchema,
  storedLayoutSchema,
} from '../views.js';
import { headerRef, type DocContext, type DocDefinition } from '../../../http/openapi.js';
import { EXAMPLE_ORIGIN, EXAMPLE_SECRET, problem, problemExample, problemOf, SECURITY } from './shared.js';

/** The portal document's components: the cookie scheme, the schemas, the token id, headers and shared responses. */

export const securitySchemes = (config: DocContext['config']): DocDefinition['securitySchemes'] => ({
  [SECURITY]: {
    type: 'apiKey',
    in: 'cookie',
    name: SESSION_COOKIE,
    description:
      `The session cookie \`${SESSION_COOKIE}\`, set by \`POST /portal/v1/session\` when a sign-in link is used (see ` +
      '"Signing in"): `HttpOnly`, `SameSite=Strict`, `Path=/portal/`, `Secure` when the service is reached over HTTPS. ' +
      `The session ends after ${duration(config.portalSessionIdleMs)} unused, ${duration(config.portalSessionMaxMs)} after ` +
      'sign-in at the latest, at sign-out and when the account is deactivated. Every request that changes something must ' +
      'also carry the service\'s own `Origin`.',
  },
});

export const requestSchemas = (): DocDefinition['requestSchemas'] => ({
  SignInRequest: signInRequestSchema,
  SessionRequest: sessionRequestSchema,
  NewTokenRequest: newTokenRequestSchema,
  TokenExpiryRequest: tokenExpiryRequestSchema,
  RevealRequest: revealRequestSchema,
  StationRecord: stationPutSchema,
  DraftLayout: draftLayoutSchema,
  ConfirmRequest: confirmSchema,
  NewEvent: newEventSchema,
  EventPatch: eventPatchSchema,
  EndEvent: endEventSchema,
  Broadcast: broadcastSchema,
  AssignmentRequest: assignmentRequestSchema,
  NewImportToken: newImportTokenSchema,
});

export const responseSchemas = (): DocDefinition['responseSchemas'] => ({
  SignInAccepted: signInAcceptedSchema,
  Session: sessionSchema,
  SessionState: sessionStateSchema,
  Account: portalUserSchema,
  TokenList: tokenListSchema,
  TokenLimits: tokenLimitsSchema,
  PersonalToken: personalTokenSchema,
  CreatedToken: createdTokenSchema,
  TokenResult: tokenAnswerSchema,
  Problem: portalProblemSchema,
  Roles: rolesSchema,
  StationList: stationListSchema,
  DriversWaiting: driversWaitingSchema,
  StationRecordView: stationRecordViewSchema,
  Photo: photoInfoSchema,
  StoredLayout: storedLayoutSchema,
  Layouts: layoutsSchema,
  LayoutDiff: layoutDiffSchema,
  DraftSaved: draftSavedSchema,
  DiffAnswer: diffAnswerSchema,
  Confirmed: confirmedSchema,
  Event: eventViewSchema,
  EventList: eventListSchema,
  BroadcastAnswer: broadcastAnswerSchema,
  PhotoAnswer: photoAnswerSchema,
  Assignments: assignmentsSchema,
  AssignmentAnswer: assignmentAnswerSchema,
  AuditEntry: auditEntrySchema,
  AuditPage: auditPageSchema,
  OriginatorList: originatorListSchema,
  OriginatorView: originatorViewSchema,
  ImportToken: importTokenSchema,
  ImportTokenList: importTokenListSchema,
  CreatedImportToken: createdImportTokenSchema,
  ImportTokenAnswer: importTokenAnswerSchema,
  CallLogPage: callLogPageSchema,
});

/**
 * The path parameters of the portal's registry routes by name: a route's `params` are those its path
 * names (`pathParams`). The handlers check them (404 for no such station, 403 without the membership).
 */
export const PORTAL_PATH: Readonly<Record<string, z.ZodType>> = {
  hrs_id: pathParameter({ component: 'hrs_id', description: 'The station\'s id (five capital letters).', example: 'BERAP' }),
  operator_id: pathParameter({ component: 'operator_id', description: 'The operator\'s id.', example: 'h2-demo' }),
  originator_id: pathParameter({ component: 'originator_id', description: 'The originator\'s id.', example: 'mon-1' }),
  event_id: pathParameter({ component: 'event_id', description: 'The event\'s id, as the event list gives it.', example: 'ev-1' }),
  signal_type: pathParameter({
    component: 'signal_type',
    description: 'The signal type, or `v1` for the legacy transmission state.',
    values: z.enum([...CATEGORIES, 'v1']),
    example: 'pricing',
  }),
  token_id: pathParameter({ component: 'token_id', description: 'The import token\'s `id`, as the list gives it.', values: z.string().regex(/^\d{1,18}$/), example: '42' }),
};

/** The `id` of a personal token in its path, as the route's schema checks it (`TOKEN_ID` of ../index.ts). */
export const tokenIdMeta = (): ParameterMeta => ({
  component: 'id',
  description: 'The token\'s `id`, as the list gives it. Another account\'s token, or one that does not exist, is 404.',
  example: '42',
});

/** A page of a list (the audit trails, the call logs): `limit` and `cursor` (../../accounts/pages.ts reads them). */
export const pageQueryFields = () => ({
  limit: queryParameter({ component: 'limit', description: 'Entries per page, 1 to 500 (100 when left out).', values: z.int().min(1).max(500).default(100) }),
  cursor: queryParameter({ component: 'cursor', description: 'Where the page starts: opaque, taken from the `next` link of the page before.', values: z.string() }),
});

/** The query of an originator's call logs: a page, and the API it is of. */
export const callLogQuery = () =>
  z.object({
    ...pageQueryFields(),
    family: queryParameter({
      component: 'family',
      description: 'Only the calls of one API: `import_v1`, `import_v1.1` or `import_v2`.',
      values: z.enum(['import_v1', 'import_v1.1', 'import_v2']),
    }),
  });

/** The query of a station's photo: `v`, the page's cache-buster. */
export const photoQuery = () =>
  z.object({
    v: queryParameter({
      component: 'v',
      description: 'Ignored: the page adds the photo\'s digest (`photo.sha256` of the station) so that a browser fetches a changed photo anew.',
      values: z.string(),
    }),
  });

/** `30 minutes`, `12 hours`, `7 days`: a configured duration in words. */
export function duration(ms: number): string {
  const seconds = Math.round(ms / 1000);
  const units: [number, string][] = [
    [86_400, 'day'],
    [3600, 'hour'],
    [60, 'minute'],
    [1, 'second'],
  ];
  const [size, unit] = units.find(([size]) => seconds % size === 0 && seconds >= size) ?? [1, 'second'];
  const count = seconds / size;
  return `${count} ${unit}${count === 1 ? '' : 's'}`;
}

export function headers(config: DocContext['config']): DocDefinition['headers'] {
  const maxAge = Math.floor(config.portalSessionMaxMs / 1000);
  return {
    'X-Request-Id': requestIdHeader(),
    'Cache-Control': {
      required: true,
      description: 'The answer holds a secret or what only the account may see: no cache may keep it.',
      schema: { type: 'string', const: 'no-store' },
    },
    'Set-Cookie-Session': {
      required: true,
      description:
        `Opens the session: \`${SESSION_COOKIE}=<secret>\` (43 base64url characters), \`Path=/portal/\`, \`HttpOnly\` (no ` +
        'script can read it), `SameSite=Strict` (no other site\'s page sends it), `Max-Age` the absolute timeout in ' +
        'seconds, and `Secure` when the service is reached over HTTPS. The platform stores only its SHA-256.',
      schema: {
        type: 'string',
        pattern: `^${SESSION_COOKIE}=[\\w-]{43}; Path=/portal/; HttpOnly; SameSite=Strict; Max-Age=\\d+(; Secure)?$`,
        examples: [sessionCookie(EXAMPLE_ORIGIN, EXAMPLE_SECRET, maxAge), sessionCookie('http://localhost:8080', EXAMPLE_SECRET, maxAge)],
      },
    },
    'Set-Cookie-Cleared': {
      required: true,
      description: 'Clears the session cookie in the browser (empty value, `Max-Age=0`).',
      schema: {
        type: 'string',
        pattern: `^${SESSION_COOKIE}=; Path=/portal/; HttpOnly; SameSite=Strict; Max-Age=0(; Secure)?$`,
        examples: [sessionCookie(EXAMPLE_ORIGIN)],
      },
    },
    'Retry-After': retryAfterHeader(),
    'WWW-Authenticate': {
      required: true,
      description:
        'Sent with every 401 of the platform: `Bearer`. The portal itself authenticates by its session cookie, not by an ' +
        '`Authorization` header.',
      schema: { type: 'string', const: 'Bearer' },
    },
  };
}

/** The 403s of the Origin rule, the service being at the examples' origin. */
export const originExamples = () => ({
  no_origin: problemExample(403, 'forbidden_origin', originRefusal(undefined, EXAMPLE_ORIGIN), 'No Origin header'),
  foreign_origin: problemExample(403, 'forbidden_origin', originRefusal('https://elsewhere.example', EXAMPLE_ORIGIN), 'Another site\'s page'),
});

/** The responses several operations give: 401, 403 (Origin), 404 (token), 413, 415, 429 (failed authentications), 500. */
export function responses(config: DocContext['config']): DocDefinition['responses'] {
  const failures = describeLimit(AUTH_FAILURE_LIMIT, 'client address', 'failed authentication');
  return {
    Unauthorized: problem(
      'No session: no cookie, or its session has ended (idle too long, past its maximum, signed out, or the account ' +
        'deactivated). Sign in again with a link.',
      { not_signed_in: problemExample(401, 'not_authenticated', NOT_SIGNED_IN) },
      { 'WWW-Authenticate': headerRef('WWW-Authenticate') },
    ),
    ForbiddenOrigin: problem(
      'The request changes something and its `Origin` is not the service\'s own (or it has none): refused, and nothing ' +
        'is changed. Browsers send `Origin` by themselves; a script must add it.',
      originExamples(),
    ),
    TokenNotFound: problem('No token of the signed-in account has this `id` (another account\'s tokens are not found either).', {
      not_found: problemExample(404, 'not_found', TOKEN_RULE_MESSAGES.noSuchToken),
    }),
    PayloadTooLarge: problem(`The body is longer than ${config.maxBodyBytes} bytes; the connection is closed.`, {
      too_large: { value: problemOf(tooLarge(config.maxBodyBytes)) },
    }),
    UnsupportedMediaType: problem('The body\'s `Content-Type` is not JSON (`application/json`; a body without one is read as JSON).', {
      not_json: problemExample(415, 'unsupported_media_type', 'Unsupported media type "text/plain" in request.'),
    }),
    TooManyFailures: problem(
      `Too many failed authentications from this client address (${failures}, on any of the platform's APIs): a ` +
        'request whose session is not valid gets 429 instead of 401 for a while (a valid session always passes). Wait `Retry-After` seconds.',
      { failures: problemExample(429, 'throttled', PROBLEM_ERRORS.throttled(failures, describeWait(12))) },
      { 'Retry-After': headerRef('Retry-After') },
    ),
    InternalError: problem('Unexpected platform error; please report it with the `X-Request-Id`.', {
      internal: problemExample(500, 'internal_error', 'Unexpected platform error; please report it.'),
    }),
  };
}
