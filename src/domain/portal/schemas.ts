import { z } from 'zod';
import {
  MAX_ACTIVE_PERSONAL_TOKENS,
  newTokenValue,
  PERSONAL_TOKEN_EXPIRY,
  TOKEN_BODY_LENGTH,
  TOKEN_CHECKSUM_LENGTH,
  TOKEN_PREFIXES,
  TOKEN_RANDOM_BYTES,
  tokenHint,
} from '../token-values.js';
import { BLANK_NAME, boundedDateTime, boundedString, emailAddress, storedName } from '../text.js';

/**
 * The bodies of the portal's JSON API (`/portal/v1/`, src/api/portal/index.ts): the requests, which the
 * API parses with these schemas (their messages are the API's), and the responses, which the handlers
 * build and these schemas describe. The OpenAPI document (src/api/portal/docs/) is generated from
 * them, and the tests check real responses against them. Response objects are strict: a field the code
 * adds without documenting it fails those tests. Descriptions and examples are metadata only: they never
 * change what validates.
 */

/** A secret of an e-mailed link (sign-in or reveal) or of a session: 32 random bytes, base64url (43 characters). */
export const LINK_SECRET_PATTERN = /^[\w-]{43}$/;

/** A secret of that form for examples: never a real one. */
export const EXAMPLE_SECRET = 'q3Jd0vXkZr8mWb2Yt5LpN7aHc4UeS1fGx6iKo9RwE-s';
/** A well-formed value (its checksum right) made from fixed bytes: an example, never a real token. */
const EXAMPLE_VALUE = newTokenValue('export_v2', () => Uint8Array.from({ length: TOKEN_RANDOM_BYTES }, (_, i) => (i * 37 + 11) % 256));
const instantExample = '2027-03-01T12:00:00.000Z';

const secret = (message: string) => boundedString(43, message).regex(LINK_SECRET_PATTERN, message);
const expiresAt = () => boundedDateTime('must be a date and time in ISO 8601, e.g. 2027-03-01T12:00:00Z');

// Requests ------------------------------------------------------------------------------------------

export const signInRequestSchema = z
  .strictObject({
    email: emailAddress().meta({ description: 'The account\'s e-mail address (compared without case).', examples: ['alice@example.org'] }),
  })
  .meta({ title: 'Sign-in request', description: 'The address a sign-in link is to be sent to.', examples: [{ email: 'alice@example.org' }] });

export const sessionRequestSchema = z
  .strictObject({
    token: secret('must be the sign-in link\'s token').meta({
      description: 'The secret of the e-mailed sign-in link: what follows `#sign-in=` in `/portal/#sign-in=<token>`.',
      examples: [EXAMPLE_SECRET],
    }),
  })
  .meta({ title: 'Session request', description: 'Uses a sign-in link to open a session.', examples: [{ token: EXAMPLE_SECRET }] });

/* Alike by shape to the session request: another link's secret, under its own field name (`secret`, not `token`) and words; a builder would take all of them as arguments. */
export const revealRequestSchema = z
  .strictObject({
    secret: secret('must be the link\'s secret').meta({
      description: 'The secret of the e-mailed reveal link: what follows `#reveal=` in `/portal/#reveal=<secret>`.',
      examples: [EXAMPLE_SECRET],
    }),
  })
  .meta({ title: 'Reveal request', description: 'Uses a reveal link: the token an admin issued is made and its value shown.', examples: [{ secret: EXAMPLE_SECRET }] });

const { minDays, maxDays, defaultDays } = PERSONAL_TOKEN_EXPIRY;
const expiryRule = `at least ${minDays} day and at most ${maxDays} days from now (days of 24 hours, both ends allowed)`;

export const newTokenRequestSchema = z
  .strictObject({
    name: storedName(boundedString(100).trim().min(1, BLANK_NAME))
      .meta({ description: 'What the token is for, 1 to 100 characters (surrounding spaces are dropped).', examples: ['laptop'] }),
    expires_at: expiresAt()
      .optional()
      .meta({ description: `When the token stops working: ${expiryRule}. Left out: ${defaultDays} days from now.`, examples: [instantExample] }),
  })
  .meta({
    title: 'New token request',
    description: 'A new personal token: its name and, optionally, its expiry.',
    examples: [{ name: 'laptop' }, { name: 'nightly export', expires_at: instantExample }],
  });

export const tokenExpiryRequestSchema = z
  .strictObject({
    expires_at: expiresAt().meta({ description: `The new expiry: ${expiryRule}.`, examples: [instantExample] }),
  })
  .meta({ title: 'Expiry change request', description: 'A new expiry for an active token.', examples: [{ expires_at: instantExample }] });

// Responses -----------------------------------------------------------------------------------------

const instant = (description: string) => z.iso.datetime({ offset: true }).meta({ description, examples: [instantExample] });
const instantOrNull = (description: string) => z.iso.datetime({ offset: true }).nullable().meta({ description });

export const signInAcceptedSchema = z
  .strictObject({
    detail: z.string().meta({ description: 'What happens now, for a person to read: the same words whatever the address.' }),
  })
  .meta({
    title: 'Sign-in requested',
    description: 'The answer to every well-formed sign-in request: it never says whether the address has an account.',
  });

export const portalUserSchema = z
  .strictObject({
    id: z.string().meta({ description: 'The account\'s id (often its address in lower case).', examples: ['alice'] }),
    email: z.string().meta({ description: 'The account\'s e-mail address, where its links and token e-mails go.', examples: ['alice@example.org'] }),
    name: z.string().nullable().meta({ description: 'The account holder\'s name; null when none was given.', examples: ['Alice Example'] }),
  })
  .meta({ title: 'Account', description: 'The signed-in account.', examples: [{ id: 'alice', email: 'alice@example.org', name: null }] });

export const namedSchema = z.strictObject({ id: z.string(), name: z.string() }).meta({ title: 'Named', description: 'An operator or originator: its id and name.' });

export const rolesSchema = z
  .strictObject({
    admin: z.boolean().meta({ description: 'The admin role: every operator\'s and originator\'s requests.' }),
    operators: z.array(namedSchema).meta({ description: 'The operators whose staff the account is.' }),
    originators: z.array(namedSchema).meta({ description: 'The originators the account manages.' }),
  })
  .meta({
    title: 'Roles',
    description: 'What the account may do beyond its own tokens; set by admins (`PUT /admin/v1/users/{id}/roles`).',
    examples: [{ admin: false, operators: [{ id: 'h2-demo', name: 'H2 Demo GmbH' }], originators: [] }],
  });

export const sessionSchema = z
  .strictObject({
    user: portalUserSchema,
    roles: rolesSchema.optional().meta({ description: 'The account\'s roles (`GET` only; opening a session answers the account alone).' }),
  })
  .meta({
    title: 'Session',
    description: 'The account the session belongs to and, on `GET`, its roles.',
    examples: [{ user: { id: 'alice', email: 'alice@example.org', name: null } }, { user: { id: 'staff', email: 'staff@h2-demo.example', name: null }, roles: { admin: false, operators: [{ id: 'h2-demo', name: 'H2 Demo GmbH' }], originators: [] } }],
  });

/** `GET /portal/v1/session/state`: whether a session is open, as a 200 either way (the page's first question). */
export const sessionStateSchema = z
  .strictObject({
    signed_in: z.boolean().meta({ description: 'Whether the request carries the cookie of an open session.' }),
    user: portalUserSchema.optional().meta({ description: 'The account, when signed in.' }),
    roles: rolesSchema.optional().meta({ description: 'The account\'s roles, when signed in.' }),
  })
  .meta({
    title: 'SessionState',
    description: 'Whether a session is open and, when it is, its account and roles (`GET /portal/v1/session` as a 200 for anyone).',
    examples: [{ signed_in: false }, { signed_in: true, user: { id: 'alice', email: 'alice@example.org', name: null }, roles: { admin: false, operators: [], originators: [] } }],
  });

export const TOKEN_STATES = ['active', 'expired', 'revoked'] as const;

const tokenExample = {
  id: '42',
  name: 'laptop',
  hint: tokenHint(EXAMPLE_VALUE),
  created_at: '2026-12-01T09:30:00.000Z',
  expires_at: '2027-03-01T09:30:00.000Z',
  last_used_at: '2026-12-02T07:15:12.000Z',
  revoked_at: null,
  state: 'active' as const,
};

export const personalTokenSchema = z
  .strictObject({
    id: z.string().regex(/^\d{1,18}$/).meta({ description: 'The token\'s id (decimal digits), as `/portal/v1/tokens/{id}` takes it.', examples: ['42'] }),
    name: z.string().meta({ description: 'What the token is for, as its owner or an admin named it.', examples: ['laptop'] }),
    hint: z
      .string()
      .nullable()
      .meta({
        description:
          `The value's last four characters, to tell tokens apart (\`…${tokenHint(EXAMPLE_VALUE)}\`); null for a token loaded ` +
          'from a registry file. The value itself is never listed.',
        examples: [tokenHint(EXAMPLE_VALUE)],
      }),
    created_at: instant('When the token was made (ISO 8601, UTC).'),
    expires_at: instantOrNull('When the token stops working (ISO 8601, UTC); null: it never expires (only tokens loaded from a registry file).'),
    last_used_at: instantOrNull('When the token last authenticated a request (recorded in batches: it may lag by some seconds); null: never used.'),
    revoked_at: instantOrNull('When the token was revoked (by its owner or an admin); null: not revoked.'),
    state: z.enum(TOKEN_STATES).meta({
      description: '`revoked` when revoked; else `expired` once `expires_at` has passed; else `active` (it authenticates on export v2).',
    }),
  })
  .meta({
    title: 'Personal token',
    description: 'A personal export v2 token as the portal shows it: never its value or its hash.',
    examples: [tokenExample],
  });

export const tokenLimitsSchema = z
  .strictObject({
    max_active: z.literal(MAX_ACTIVE_PERSONAL_TOKENS).meta({ description: 'How many active tokens an account may hold at once.' }),
    min_days: z.literal(minDays).meta({ description: 'The earliest expiry allowed, in days (of 24 hours) from now.' }),
    max_days: z.literal(maxDays).meta({ description: 'The latest expiry allowed, in days (of 24 hours) from now.' }),
    default_days: z.literal(defaultDays).meta({ description: 'The expiry of a token created without one, in days from now.' }),
  })
  .meta({
    title: 'Token limits',
    description: 'The rules the portal applies to personal tokens.',
    examples: [{ max_active: MAX_ACTIVE_PERSONAL_TOKENS, min_days: minDays, max_days: maxDays, default_days: defaultDays }],
  });

export const tokenListSchema = z
  .strictObject({
    tokens: z.array(personalTokenSchema).meta({ description: 'Every personal token of the account, revoked and expired ones too, newest first.' }),
    limits: tokenLimitsSchema,
  })
  .meta({
    title: 'Token list',
    description: 'The account\'s personal tokens and the rules for them.',
    examples: [
      {
        tokens: [tokenExample, {
            ...tokenExample,
            id: '17',
            name: 'old script',
            hint: 'Qz9x',
            created_at: '2026-09-14T10:00:00.000Z',
            expires_at: '2026-12-13T10:00:00.000Z',
            last_used_at: null,
            revoked_at: '2026-11-20T16:02:45.000Z',
            state: 'revoked',
          }],
        limits: { max_active: MAX_ACTIVE_PERSONAL_TOKENS, min_days: minDays, max_days: maxDays, default_days: defaultDays },
      },
    ],
  });

/** A personal token's value: `hrs_pat_`, 43 base62 characters of random, a 6-character checksum. */
export const PERSONAL_TOKEN_VALUE_PATTERN = new RegExp(`^${TOKEN_PREFIXES.export_v2}[0-9A-Za-z]{${TOKEN_BODY_LENGTH + TOKEN_CHECKSUM_LENGTH}}$`);

export const createdTokenSchema = z
  .strictObject({
    token: personalTokenSchema,
    value: z
      .string()
      .regex(PERSONAL_TOKEN_VALUE_PATTERN)
      .meta({
        description:
          `The token's value, **shown this once**: \`${TOKEN_PREFIXES.export_v2}\`, ${TOKEN_BODY_LENGTH} base62 characters and a ` +
          `${TOKEN_CHECKSUM_LENGTH}-character checksum. Only its hash is stored: a lost value cannot be shown again (revoke the ` +
          'token and create another). Send it as `Authorization: Bearer <value>` to export v2.',
        examples: [EXAMPLE_VALUE],
      }),
  })
  .meta({
    title: 'Created token',
    description: 'A token just made, with its value.',
    examples: [{ token: { ...tokenExample, last_used_at: null }, value: EXAMPLE_VALUE }],
  });

export const tokenAnswerSchema = z
  .strictObject({ token: personalTokenSchema })
  .meta({ title: 'Token', description: 'The token as it is now.', examples: [{ token: tokenExample }] });

/** RFC 9457 problem details, as src/http/errors.ts writes them for the portal. */
export const portalProblemSchema = z
  .strictObject({
    type: z.string().meta({ description: 'A URI reference naming the problem type; `about:blank`: the status code says it all.', examples: ['about:blank'] }),
    title: z.string().meta({ description: 'The HTTP status text.', examples: ['Gone'] }),
    status: z.int().min(100).max(599).meta({ description: 'The HTTP status code.', examples: [410] }),
    detail: z.string().meta({ description: 'What went wrong, for a person to read (the portal page shows it as it is).' }),
    code: z.string().regex(/^[a-z_]+$/).meta({
      description:
        'A stable, machine-readable error code: `invalid_body`, `parse_error`, `not_authenticated`, `forbidden_origin`, ' +
        '`not_found`, `token_rule`, `link_gone`, `throttled`, `payload_too_large`, `unsupported_media_type`, `internal_error`, ' +
        '`invalid_field`, `url_refused`, `webhook_limit`, `webhooks_not_configured`, …',
      examples: ['link_gone'],
    }),
    errors: z.record(z.string(), z.string()).optional().meta({
      description:
        'With `invalid_field` and `url_refused` (webhooks): what is wrong with each field, by its top-level name (`(body)` for the ' +
        'body as a whole), so a form can show each message beside its field.',
      examples: [{ kinds: 'must name at least one kind' }],
    }),
  })
  .meta({
    title: 'Problem',
    description: 'An error (RFC 9457 problem details, `application/problem+json`) with a stable `code`.',
    examples: [
      {
        type: 'about:blank',
        title: 'Gone',
        status: 410,
        detail: 'This sign-in link was used already or has expired: ask for a new one.',
        code: 'link_gone',
      },
    ],
  });

export type PortalUser = z.output<typeof portalUserSchema>;
export type PersonalTokenView = z.output<typeof personalTokenSchema>;
export type TokenLimits = z.output<typeof tokenLimitsSchema>;
