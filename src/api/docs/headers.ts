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

export const wwwAuthenticateHeader = () => ({
  required: true,
  description: 'The authentication scheme: `Bearer`.',
  schema: { type: 'string', const: 'Bearer' },
});
