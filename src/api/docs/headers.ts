/**
 * Response headers both documents describe in the same words. Each is made afresh per document, so
 * one document's components never share an object with the other's.
 */

export const requestIdHeader = () => ({
  required: true,
  description: 'The request\'s id: the client\'s own `X-Request-Id` if it sent a sane one, else one the service made. Quote it when reporting a problem.',
  schema: { type: 'string', examples: ['3f2a-1b'] },
});

export const retryAfterHeader = () => ({
  required: true,
  description: 'Whole seconds to wait (at least 1); after waiting them a request passes.',
  schema: { type: 'integer', minimum: 1, examples: [12] },
});

/** A token's security scheme: a bearer token; `description` says which token serves and which are refused. */
export const bearerScheme = (description: string) => ({ type: 'http', scheme: 'bearer', description });

export const wwwAuthenticateHeader = () => ({
  required: true,
  description: 'The authentication scheme: `Bearer`.',
  schema: { type: 'string', const: 'Bearer' },
});

/**
 * The headers of an import document (v1, v1.1, v2): the request id, the `RateLimit-*` ones stating
 * the configured limit (`limitText` says what it counts), `Retry-After` and `WWW-Authenticate`.
 */
export function importHeaders(limit: number, limitText: string): Record<string, unknown> {
  return {
    'X-Request-Id': requestIdHeader(),
    'RateLimit-Limit': {
      description: `The limit: ${limitText} Absent when the rate limiter is unavailable (requests then pass unlimited).`,
      schema: { type: 'integer', minimum: 1, examples: [limit] },
    },
    'RateLimit-Remaining': {
      description: 'Requests still allowed now.',
      schema: { type: 'integer', minimum: 0, examples: [Math.max(0, limit - 1)] },
    },
    'RateLimit-Reset': {
      description:
        'Seconds until the oldest counted request leaves the window, i.e. until `RateLimit-Remaining` next grows (0 when nothing is counted).',
      schema: { type: 'integer', minimum: 0, examples: [60] },
    },
    'Retry-After': retryAfterHeader(),
    'WWW-Authenticate': wwwAuthenticateHeader(),
  };
}

/** A response of the import documents with a `{"detail": "..."}` body (the `Detail` schema) and its examples. */
export const detailResponse = (description: string, examples: Record<string, unknown>, headers?: Record<string, unknown>) => ({
  description,
  ...(headers ? { headers } : {}),
  content: { 'application/json': { schema: { $ref: '#/components/schemas/Detail' }, examples } },
});

/** One example of a `{"detail": "..."}` body. */
export const detail = (text: string, summary?: string) => ({ ...(summary ? { summary } : {}), value: { detail: text } });

/**
 * The headers every response of a deprecated generation (import v1, export v1) carries (RFC 9745):
 * `Deprecation` with the date, and the `Link` to the successor's reference.
 */
export function deprecationHeaders(deprecation: string, link: string, since: string): Record<string, unknown> {
  return {
    Deprecation: {
      required: true,
      description:
        `This API generation is deprecated (RFC 9745), since ${since.slice(0, 10)}, when its successor v1.1 was published: ` +
        'a structured-field date, `@` and the Unix time in seconds. It remains functional.',
      schema: { type: 'string', pattern: '^@-?[0-9]+$', const: deprecation },
    },
    Link: {
      required: true,
      description:
        'The successor\'s reference (`rel="deprecation successor-version"`, RFC 9745 and RFC 5829): where the deprecation is ' +
        'explained and what to move to.',
      schema: { type: 'string', const: link },
    },
  };
}
