import { sessionRequestSchema, sessionSchema, sessionStateSchema, signInRequestSchema } from '../../../domain/portal/schemas.js';
import { LINK_GONE, SESSION_COOKIE, SIGN_IN_ANSWER, SIGN_IN_LINK_MS, signInThrottled, signInUnavailable } from '../session-words.js';
import type { RouteDoc } from '../../../http/contract.js';
import { examplesOf, headerRef, responseRef, schemaRef } from '../../../http/openapi.js';
import { BODY_ERRORS, invalidBody, json, parseErrorExample, problem, problemExample } from './shared.js';

/** Asking for a sign-in link, using it (the session opens), the session, signing out. */

/** The sign-in link's lifetime in minutes. */
const minutes = SIGN_IN_LINK_MS / 60_000;

/** `POST /portal/v1/sign-in`: public; the same 202 for any address. */
export function signInDoc(): RouteDoc {
  return {
    tags: ['Sign-in'],
    operationId: 'requestSignInLink',
    summary: 'Ask for a sign-in link by e-mail',
    description:
      'Needs no session. When an active account has the address (compared without case), a single-use link ' +
      `\`/portal/#sign-in=<token>\` is e-mailed to it, valid for ${minutes} minutes. The answer is the same 202, with the ` +
      'same words, whether or not an account has the address; it comes once the link is stored and its e-mail queued, and ' +
      'when either cannot be done (PostgreSQL or Redis unavailable) the answer is a 503 for any address and nothing is sent. ' +
      'Limited per address and per client (see "Signing in").',
    security: [],
    requestBody: {
      required: true,
      content: { 'application/json': { schema: schemaRef('SignInRequest'), examples: examplesOf(signInRequestSchema) } },
    },
    responses: {
      '202': {
        description: 'Accepted: a link is on its way if an active account has the address. Nothing tells which.',
        content: json('SignInAccepted', { accepted: { value: { detail: SIGN_IN_ANSWER } } }),
      },
      '400': problem('The body is not JSON, or not `{"email": …}` with an e-mail address.', {
        not_an_address: invalidBody(signInRequestSchema, { email: 'alice' }, 'Not an e-mail address'),
        unknown_field: invalidBody(signInRequestSchema, { email: 'alice@example.org', name: 'Alice' }, 'A field the request does not have'),
        ...parseErrorExample(),
      }),
      '403': responseRef('ForbiddenOrigin'),
      ...BODY_ERRORS,
      '429': problem(
        'Too many sign-in requests for this address or from this client; no e-mail is sent. Wait `Retry-After` seconds.',
        {
          address: problemExample(429, 'throttled', signInThrottled('for this address', 725), 'For this address'),
          client: problemExample(429, 'throttled', signInThrottled('from this client', 12), 'From this client'),
        },
        { 'Retry-After': headerRef('Retry-After') },
      ),
      '500': responseRef('InternalError'),
      '503': problem(
        'The link could not be stored (the database is unavailable) or its e-mail queued (Redis is unavailable); nothing was sent, ' +
          'whatever the address. Try again after `Retry-After` seconds.',
        {
          database: problemExample(503, 'service_unavailable', signInUnavailable('database').message, 'The database is unavailable'),
          mail: problemExample(503, 'mail_unavailable', signInUnavailable('mail').message, 'Redis is unavailable'),
        },
        { 'Retry-After': headerRef('Retry-After') },
      ),
    },
  };
}

const alice = { user: { id: 'alice', email: 'alice@example.org', name: null } };

/** `POST /portal/v1/session`: public; uses a sign-in link and opens a session. */
export function openSessionDoc(): RouteDoc {
  return {
    tags: ['Sign-in'],
    operationId: 'openSession',
    summary: 'Use a sign-in link: open a session',
    description:
      'Takes the token of an e-mailed sign-in link (what follows `#sign-in=`) and, when the link is unused and not past ' +
      `its ${minutes} minutes and its account active, spends the link and opens a session: the session cookie ` +
      `\`${SESSION_COOKIE}\` comes with the 201. A POST, never a GET, so that a mail scanner opening the link spends ` +
      'nothing (see "Signing in").',
    security: [],
    requestBody: {
      required: true,
      content: { 'application/json': { schema: schemaRef('SessionRequest'), examples: examplesOf(sessionRequestSchema) } },
    },
    responses: {
      '201': {
        description: 'Signed in: the account, and the session cookie.',
        headers: { 'Set-Cookie': headerRef('Set-Cookie-Session'), 'Cache-Control': headerRef('Cache-Control') },
        content: json('Session', examplesOf(sessionSchema, ['signed_in'])),
      },
      '400': problem('The body is not JSON, or not `{"token": …}` with a token of the right form.', {
        not_a_token: invalidBody(sessionRequestSchema, { token: 'abc' }, 'Not a link\'s token'),
        ...parseErrorExample(),
      }),
      '403': responseRef('ForbiddenOrigin'),
      '410': problem('The link was used already, has expired, or its account is deactivated: ask for a new one.', {
        link_gone: problemExample(410, 'link_gone', LINK_GONE.signIn),
      }),
      ...BODY_ERRORS,
      '500': responseRef('InternalError'),
    },
  };
}

/** `GET /portal/v1/session`: who is signed in. */
export function getSessionDoc(): RouteDoc {
  return {
    tags: ['Sign-in'],
    operationId: 'getSession',
    summary: 'The signed-in account',
    description:
      'The account of the session and its roles: 200 signed in, 401 not. (The page asks `GET /portal/v1/session/state` first, ' +
      'which answers 200 either way.) Counts as a use of the session.',
    responses: {
      '200': {
        description: 'Signed in as this account.',
        headers: { 'Cache-Control': headerRef('Cache-Control') },
        content: json('Session', { signed_in: { value: alice } }),
      },
      '401': responseRef('Unauthorized'),
      '429': responseRef('TooManyFailures'),
      '500': responseRef('InternalError'),
    },
  };
}

/** `DELETE /portal/v1/session`: signs out. */
export function closeSessionDoc(): RouteDoc {
  return {
    tags: ['Sign-in'],
    operationId: 'closeSession',
    summary: 'Sign out',
    description:
      'Ends the session on the service (the old cookie is refused from now on, wherever it is kept) and clears the ' +
      'cookie in the browser. Needs `Origin` (see "The Origin rule").',
    responses: {
      '204': {
        description: 'Signed out.',
        headers: { 'Set-Cookie': headerRef('Set-Cookie-Cleared') },
      },
      '401': responseRef('Unauthorized'),
      '403': responseRef('ForbiddenOrigin'),
      '429': responseRef('TooManyFailures'),
      '500': responseRef('InternalError'),
    },
  };
}

/** `GET /portal/v1/session/state`: public; whether a session is open, a 200 either way. */
export function sessionStateDoc(): RouteDoc {
  return {
    tags: ['Sign-in'],
    operationId: 'getSessionState',
    summary: 'Whether a session is open',
    description:
      'Needs no session: answers 200 whether or not the request carries the cookie of an open session, with the account ' +
      'and its roles when it does. What the page asks first, so that a visitor who is not signed in causes no refusal; ' +
      '`GET /portal/v1/session` keeps answering 401 without a session. Counts as a use of the session when there is one.',
    security: [],
    responses: {
      '200': {
        description: 'Signed in (with the account and its roles) or not.',
        headers: { 'Cache-Control': headerRef('Cache-Control') },
        content: json('SessionState', examplesOf(sessionStateSchema, ['signed_out', 'signed_in'])),
      },
      '500': responseRef('InternalError'),
    },
  };
}
