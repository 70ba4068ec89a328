import {
  activeStationsResponseSchema,
  detailSchema,
  fieldErrorsSchema,
  nonFieldErrorsSchema,
  validationErrorListSchema,
} from '../../../domain/import-v2/schemas.js';
import { LIMIT_MESSAGES, LIMITS } from '../../../domain/import-v2/limits.js';
import { MESSAGES } from '../../auth.js';
import { detail, detailResponse, importHeaders } from '../../docs/headers.js';
import { headerRef, schemaRef, type DocContext, type DocDefinition } from '../../../http/openapi.js';

/** The import v2 document's response schemas, headers and shared responses. */

export const responseSchemas = (): DocDefinition['responseSchemas'] => ({
  ActiveStations: activeStationsResponseSchema,
  FieldErrors: fieldErrorsSchema,
  ValidationErrors: validationErrorListSchema,
  NonFieldErrors: nonFieldErrorsSchema,
  Detail: detailSchema,
});

/** The headers, the `RateLimit-*` ones stating the configured limit. */
export function headers(limit: number): DocDefinition['headers'] {
  return importHeaders(limit, `${limit} requests per 60 seconds per signal originator.`) as DocDefinition['headers'];
}


/** The shared responses: every refusal a signal or station request can get. */
export function responses(config: DocContext['config']): DocDefinition['responses'] {
  const { maxBodyBytes, importV2RateLimit: limit } = config;
  return {
    ValidationFailed: validationFailed(),
    Unauthorized: unauthorized(),
    PayloadTooLarge: detailResponse(
      `The body exceeds the limit of ${maxBodyBytes} bytes (checked before authentication when \`Content-Length\` says so); the connection is closed.`,
      { too_large: detail(`Request body exceeds the limit of ${maxBodyBytes} bytes.`) },
    ),
    UnsupportedMediaType: detailResponse('The `Content-Type` is missing or not JSON (`application/json` or `application/*+json`).', {
      not_json: detail('Unsupported media type "text/plain" in request.'),
      missing: detail('Unsupported media type "" in request. Send "Content-Type: application/json".'),
    }),
    TooManyRequests: detailResponse(
      'The originator\'s rate limit is exhausted; nothing was processed.',
      {
        throttled: detail(`Request was throttled: at most ${limit} requests per minute per signal originator. Expected available in 12 seconds.`),
      },
      { 'Retry-After': headerRef('Retry-After') },
    ),
    InternalError: detailResponse('Unexpected platform error; please report it with the `X-Request-Id`.', {
      internal: detail('Unexpected platform error; please report it.'),
    }),
  };
}

/** 400: the per-transmission errors aligned with the request, or what is wrong with the body as a whole. */
function validationFailed() {
  return {
    description:
      'At least one transmission failed validation, or the body is not a non-empty JSON array within the limits, or not ' +
      'JSON at all (malformed, a key twice in one object, nested too deep). ' +
      'Nothing of the request was stored.',
    content: {
      'application/json': {
        schema: { oneOf: [schemaRef('ValidationErrors'), schemaRef('NonFieldErrors'), schemaRef('Detail')] },
        examples: {
          validation: {
            summary: 'Aligned with the request: the first transmission passed, the second did not',
            value: [
              {},
              {
                datetime: ['The signal may not be older than 5 minutes.'],
                nozzles: [{}, { id: ['Unknown nozzle identifier: N9'] }],
              },
            ],
          },
          not_a_list: { summary: 'The body is not a JSON array', value: { non_field_errors: ['Expected a list of items but got type "dict".'] } },
          empty_list: { summary: 'The body is an empty array', value: { non_field_errors: ['This list may not be empty.'] } },
          too_many: {
            summary: `More than ${LIMITS.transmissions} transmissions: refused whole`,
            value: { non_field_errors: [LIMIT_MESSAGES.tooLong(LIMITS.transmissions)] },
          },
          duplicate_key: { summary: 'A key twice in one object', value: { detail: 'JSON parse error - duplicate key "dry_run" at $[0].' } },
          parse_error: {
            summary: 'The body is not JSON',
            value: { detail: 'JSON parse error - Unexpected token \'x\', "xyz" is not valid JSON' },
          },
        },
      },
    },
  };
}

/** 401, one example per reason the `detail` can give. */
function unauthorized() {
  return detailResponse(
    'Authentication failed; nothing was processed. The `detail` says why.',
    {
      missing: detail(MESSAGES.missing),
      malformed: detail(MESSAGES.malformed),
      unknown: detail(MESSAGES.unknown),
      revoked: detail(MESSAGES.revoked),
      expired: detail(MESSAGES.expired),
      wrong_generation: detail('This is an import v1/v1.1 token; import v2 accepts an import v2 token only.'),
    },
    { 'WWW-Authenticate': headerRef('WWW-Authenticate') },
  );
}
