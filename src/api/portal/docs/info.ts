import { TOKEN_PREFIXES, MAX_ACTIVE_PERSONAL_TOKENS, PERSONAL_TOKEN_EXPIRY, TOKEN_BODY_LENGTH, TOKEN_CHECKSUM_LENGTH } from '../../../domain/token-values.js';
import { describeLimit } from '../../../http/rate-limit-guard.js';
import { AUTH_FAILURE_LIMIT } from '../../auth.js';
import { SESSION_COOKIE, SIGN_IN_LINK_MS, SIGN_IN_PER_ADDRESS, SIGN_IN_PER_CLIENT } from '../session-words.js';
import type { DocContext, DocDefinition } from '../../../http/openapi.js';
import { duration } from './components.js';

/** The portal document's info (its description explains signing in, sessions, the Origin rule, tokens and reveal links) and tags. */

/** The reference of export v2, where the tokens are used (src/api/docs/routes.ts serves it there). */
const EXPORT_V2_REFERENCE = '/v2/doc/';

const OVERVIEW =
  'The JSON API of the portal, which the API tokens page (`/portal/`) is built on: a portal account signs in with a ' +
  'link sent to its e-mail address, then lists, creates, re-dates and revokes its **personal export v2 tokens**, and ' +
  'uses the links by which an admin hands it a token. Everything is JSON under `/portal/v1/`, meant for the page on the ' +
  'same origin; a script can use it the same way (keep the cookie, send `Origin`). The page itself and its files are ' +
  'not part of this API.';

function signingIn(): string {
  const minutes = SIGN_IN_LINK_MS / 60_000;
  const window = (limit: { windowSeconds: number }) => duration(limit.windowSeconds * 1000);
  return (
    '## Signing in\n\n' +
    '1. `POST /portal/v1/sign-in` with `{"email": "…"}`. The answer is **always the same 202** with the same words, ' +
    'given before the address is even looked up: it never tells whether an account has the address. When an active ' +
    'account has it, an e-mail goes to the address with a link `/portal/#sign-in=<token>` on this service. The link ' +
    `works **once**, for **${minutes} minutes**.\n` +
    '2. Opening the link shows the portal page, which asks for a press of its sign-in button; that sends ' +
    '`POST /portal/v1/session` with `{"token": "<token>"}`. The answer, 201, names the account and sets the session ' +
    `cookie \`${SESSION_COOKIE}\`. A link used already, or past its ${minutes} minutes, gets 410: ask for a new one.\n\n` +
    '**Why a GET does not sign in.** Mail scanners and link previews open the links in e-mails by themselves. If opening ' +
    'the link used it, a scanner would spend it (or be signed in). The token is in the fragment (`#…`), which a GET ' +
    'never sends to the service; only the POST the page makes uses it. Every link and session secret is stored as its ' +
    'SHA-256 only.\n\n' +
    `**Rate limits.** Sign-in requests are limited to ${SIGN_IN_PER_ADDRESS.limit} per address and ` +
    `${SIGN_IN_PER_CLIENT.limit} per client (its IP address) per ${window(SIGN_IN_PER_ADDRESS)}; past either, 429 with ` +
    '`Retry-After` (the seconds until a request passes again), and no e-mail is sent.'
  );
}

function sessions(config: DocContext['config']): string {
  return (
    '## Sessions\n\n' +
    `The session lives on the service; the browser holds its secret in the cookie \`${SESSION_COOKIE}\` (\`HttpOnly\`, ` +
    '`SameSite=Strict`, `Path=/portal/`, `Secure` when the service is reached over HTTPS), which it sends with every ' +
    `request under \`/portal/\`. A session ends after **${duration(config.portalSessionIdleMs)} unused** (idle timeout), ` +
    `**${duration(config.portalSessionMaxMs)} after sign-in** however busy (absolute timeout, the cookie's \`Max-Age\`), ` +
    'at sign-out (`DELETE /portal/v1/session`), and at once when an admin deactivates the account. After that every ' +
    'request needing a session gets 401: sign in again. (These timeouts are the configuration of this service, ' +
    '`PORTAL_SESSION_IDLE` and `PORTAL_SESSION_MAX`.)\n\n' +
    `Failed authentications are limited per client address on all of the platform's APIs together (` +
    `${describeLimit(AUTH_FAILURE_LIMIT, undefined, 'failed authentication')}); past that, requests needing a session ` +
    'without a valid session get 429 with `Retry-After` instead of 401 for a while; a valid cookie always passes.'
  );
}

const ORIGIN_RULE =
  '## The Origin rule\n\n' +
  'Every request that changes something (`POST`, `PATCH`, `DELETE`: signing in, using a link, signing out, creating, ' +
  're-dating and revoking tokens) must carry an `Origin` header naming this service\'s own origin (that of its ' +
  '`BASE_URL`). Anything else, no `Origin` included, gets 403 `forbidden_origin` and nothing is changed. Browsers send ' +
  '`Origin` by themselves, so the page needs nothing; together with `SameSite=Strict` this keeps another site\'s page ' +
  'from acting with the cookie. A script must send it, e.g. `curl -H "Origin: https://hrs.example" …`. `GET` needs none.';

function tokens(config: DocContext['config']): string {
  const [first, second] = config.tokenReminderOffsetsMs;
  const { minDays, maxDays, defaultDays } = PERSONAL_TOKEN_EXPIRY;
  const prefix = TOKEN_PREFIXES.export_v2;
  return (
    '## API tokens\n\n' +
    `A personal token authenticates on **export v2** as \`Authorization: Bearer ${prefix}…\` ` +
    `([its reference](${EXPORT_V2_REFERENCE})). Its value is \`${prefix}\`, ${TOKEN_BODY_LENGTH} base62 characters and ` +
    `a ${TOKEN_CHECKSUM_LENGTH}-character checksum, so a secret scanner can recognise one. It is **shown once**, in the ` +
    '201 that made it (`Cache-Control: no-store`); the platform keeps only its SHA-256 and a hint (the last four ' +
    'characters), so a lost value cannot be shown again: revoke the token and create another.\n\n' +
    `- At most **${MAX_ACTIVE_PERSONAL_TOKENS} active tokens** per account (neither revoked nor expired); one more gets 409.\n` +
    `- An expiry **${minDays} to ${maxDays} days** from now (days of 24 hours, both ends allowed); **${defaultDays} days** ` +
    'when none is given. An active token\'s expiry can be moved within the same bounds; an expired or revoked one ' +
    'cannot be renewed.\n' +
    '- Revoking takes effect at once, on every instance of the service. Revoked and expired tokens stay in the list.\n' +
    '- The account\'s address gets an e-mail when a token is created or revoked, and reminders ' +
    `${duration(first)} and ${duration(second)} before a token expires.\n\n` +
    '`GET /portal/v1/tokens` states these limits in `limits`.'
  );
}

function revealLinks(config: DocContext['config']): string {
  return (
    '## Reveal links\n\n' +
    'An admin can issue a personal token for an e-mail address (through the admin API, not part of this document; an ' +
    'account is made for an address without one). The token is not made then: the address gets a link ' +
    `\`/portal/#reveal=<secret>\`, valid for **${duration(config.revealLinkTtlMs)}** (this service's \`REVEAL_LINK_TTL\`). ` +
    'The page asks for a press of a button, then sends `POST /portal/v1/reveal` with `{"secret": "<secret>"}`: the token ' +
    'is made at that moment and its value shown, **once**, in the 201, so nobody, not the admin either, has seen it ' +
    'before. No session is needed (the link is the credential). The link works once; used again, or expired, it gets ' +
    `410. The token counts towards the ${MAX_ACTIVE_PERSONAL_TOKENS} active ones: with ${MAX_ACTIVE_PERSONAL_TOKENS} ` +
    'already, the answer is 409 and the link stays usable until it expires.'
  );
}

const ROLES =
  '## Operator staff, originator managers, admins\n\n' +
  'An account may also be **staff of operators** (their stations\' records, draft layouts and their confirmation, events ' +
  'and the maintenance broadcast, photos, assignments, the audit trail), **manager of originators** (their import ' +
  'tokens, the stations they report on, their call logs) and an **admin** (everything either may, for every operator ' +
  'and originator). Admins set the roles (`PUT /admin/v1/users/{id}/roles`, or a registry file); `GET /portal/v1/session` ' +
  'shows them. Every request is checked against them as they are at that moment: one for another operator\'s station or ' +
  'another originator gets 403 with a `detail` naming the membership that is missing; a station that does not exist is ' +
  '404 for everyone. Station records, layouts and events are checked by the same schemas as registry files (`hrs ' +
  'load`), with the same messages. A change is in effect on every instance of the service when its answer arrives, and ' +
  'is written to the audit trail (who, when, what, before and after).\n\n' +
  '**Pages.** Lists that grow (audit trails, call logs) come a page at a time, newest first: `limit` (1 to 500, 100 by ' +
  'default) and `cursor`; each answer carries `next`, the path of the following page, or `null` on the last.\n\n' +
  '**The photo** is uploaded as the request body itself (the image\'s bytes; JPEG, PNG or WebP, told from the bytes, at ' +
  'most 5 MiB and 40 megapixels); it is decoded and stored re-encoded, without metadata.';

const ERRORS =
  '## Errors\n\n' +
  'Errors are RFC 9457 problem details (`application/problem+json`: `type`, `title`, `status`, `detail`) with a ' +
  'stable `code`; the `detail` is meant to be shown to the person as it is. A body that is not JSON gets 400 ' +
  '`parse_error`, one that does not fit the request\'s schema (unknown fields included) 400 `invalid_body` naming each ' +
  'field (the webhook operations: 400 `invalid_field`, with an `errors` member mapping each field to its message). No string or key of a body may hold U+0000 or an unpaired surrogate (`name: must not contain the NUL ' +
  'character (U+0000)`), and names and ids may not be made only of spaces or control characters (`name: must not be ' +
  'blank (only spaces or control characters)`); such a body changes nothing. An unknown path gets 404; a known path with another method gets 405 with `Allow`; `HEAD` works wherever ' +
  '`GET` does. A 500 is an unexpected platform error: please report it with the response\'s `X-Request-Id`. A 503 ' +
  'means the database is unavailable for the moment, or that the request could not be answered within the portal\'s ' +
  'deadline (`PORTAL_REQUEST_TIMEOUT`, whatever it waited on; a change\'s 503 then says it may still be applied): retry ' +
  'after `Retry-After`.';

const TRYING =
  '## Trying it out here\n\n' +
  'This reference is served under `/portal/`, so the requests it sends carry the session cookie of the portal page: ' +
  'sign in on [the API tokens page](/portal/) first. (A page cannot set an `HttpOnly` cookie itself, so the ' +
  '"Authorize" dialog does not sign in.)';

export function info(context: DocContext): DocDefinition['info'] {
  return {
    title: 'HRS signal platform: Portal API',
    version: context.version,
    summary: 'Token owners manage their personal export v2 tokens; operator staff their stations, layouts, events, photos and assignments; originator managers their import tokens and call logs.',
    description: [OVERVIEW, signingIn(), sessions(context.config), ORIGIN_RULE, tokens(context.config), revealLinks(context.config), ROLES, ERRORS, TRYING].join('\n\n'),
  };
}

export const tags = (): DocDefinition['tags'] => [
  { name: 'Sign-in', description: 'Asking for a sign-in link, using it, the session and signing out.' },
  { name: 'Tokens', description: 'The signed-in account\'s personal export v2 tokens.' },
  { name: 'Webhooks', description: 'The signed-in account\'s webhook subscriptions: changes POSTed to its own endpoint, signed.' },
  { name: 'Reveal', description: 'Using a link by which an admin hands over a token.' },
  { name: 'Stations', description: 'Operator staff: their stations\' records.' },
  { name: 'Layouts', description: 'Operator staff: the draft layout, its diff and its confirmation.' },
  { name: 'Events', description: 'Operator staff: station events and the maintenance broadcast.' },
  { name: 'Photo', description: 'Operator staff: the station photo.' },
  { name: 'Assignments', description: 'Operator staff: which originator is live or testing for what.' },
  { name: 'Audit', description: 'Operator staff: the changes made to their stations.' },
  { name: 'Originators', description: 'Originator managers: import tokens, stations reported on, call logs.' },
  { name: 'History', description: 'Operator staff and originator managers: last signals, timelines and reliability; operator staff: the availability forecast.' },
];
