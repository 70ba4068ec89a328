import { V1_MESSAGES } from '../../../domain/import-v1/messages.js';
import {
  v11ActiveStationsSchema,
  v1FieldErrorsSchema,
  v1NonFieldErrorsSchema,
  V1_SCHEMAS,
  v1ValidationErrorListSchema,
} from '../../../domain/import-v1/schemas.js';
import { detailSchema } from '../../../domain/import-v2/schemas.js';
import { LIMITS } from '../../../domain/import-v2/limits.js';
import { decideToken, type TokenRecord } from '../../../domain/tokens.js';
import type { Generation } from '../../../domain/vocabulary.js';
import { DRF_ERRORS } from '../../../http/errors.js';
import { describeLimit, describeWait } from '../../../http/rate-limit-guard.js';
import { MESSAGES } from '../../auth.js';
import { IMPORT_V1_LIMIT } from '../declaration.js';
import { detail, detailResponse, importHeaders } from '../../docs/headers.js';
import { headerRef, schemaRef, type DocContext, type DocDefinition } from '../../../http/openapi.js';
import type { DialectDoc } from './dialects.js';
import { failedSignal, notProvidedErrors, OTHER_DIALECT_CODE, partialAcceptanceErrors } from './examples.js';

/** The import v1 / v1.1 documents' schemas, headers and shared responses. */

/** The request schemas: one signal and the request body, from src/domain/import-v1/schemas.ts. */
export const requestSchemas = (d: DialectDoc): DocDefinition['requestSchemas'] => ({
  Signal: V1_SCHEMAS[d.dialect].signal,
  SignalRequest: V1_SCHEMAS[d.dialect].request,
});

export function responseSchemas(d: DialectDoc): DocDefinition['responseSchemas'] {
  return {
    FuelTypeList: V1_SCHEMAS[d.dialect].fuelTypes,
    ...(d.declared.activeStations ? { ActiveStations: v11ActiveStationsSchema } : {}),
    SignalErrors: v1FieldErrorsSchema,
    ValidationErrors: v1ValidationErrorListSchema,
    NonFieldErrors: v1NonFieldErrorsSchema,
    Detail: detailSchema,
  };
}

/** The headers, the `RateLimit-*` ones stating the configured limit v1 and v1.1 share. */
export function headers(limit: number): DocDefinition['headers'] {
  const text = `${limit} request${limit === 1 ? '' : 's'} per 60 seconds per signal originator, one budget for import v1 and v1.1 together.`;
  return importHeaders(limit, text) as DocDefinition['headers'];
}


/** The shared responses: every refusal a request of the family can get. */
export function responses(d: DialectDoc, config: DocContext['config']): DocDefinition['responses'] {
  const { maxBodyBytes, importV1RateLimit: limit } = config;
  return {
    ValidationFailed: validationFailed(d),
    Unauthorized: unauthorized(d),
    PayloadTooLarge: detailResponse(
      `The body exceeds the limit of ${maxBodyBytes} bytes (checked before authentication when \`Content-Length\` says so); ` +
        'the connection is closed. Nothing was stored.',
      { too_large: detail(`Request body exceeds the limit of ${maxBodyBytes} bytes.`) },
    ),
    UnsupportedMediaType: detailResponse(
      'The `Content-Type` is missing or not JSON (`application/json` or `application/*+json`); nothing was stored.',
      {
        not_json: detail('Unsupported media type "text/plain" in request.'),
        missing: detail('Unsupported media type "" in request. Send "Content-Type: application/json".'),
      },
    ),
    TooManyRequests: detailResponse(
      'The originator\'s rate limit (shared by import v1 and v1.1) is exhausted; nothing was processed. Wait `Retry-After` seconds.',
      {
        throttled: detail(DRF_ERRORS.throttled(describeLimit({ ...IMPORT_V1_LIMIT, limit }, 'signal originator'), describeWait(12))),
      },
      { 'Retry-After': headerRef('Retry-After') },
    ),
    InternalError: detailResponse('Unexpected platform error; please report it with the `X-Request-Id`.', {
      internal: detail('Unexpected platform error; please report it.'),
    }),
  };
}

/**
 * 400: the per-signal errors aligned with the request (the signals that passed WERE stored), or what
 * is wrong with the body as a whole (nothing stored).
 */
function validationFailed(d: DialectDoc) {
  return {
    description:
      'At least one signal failed validation: the body is an array aligned with the request, `{}` for each signal ' +
      'that passed (**it was stored**, and published when Live), the errors of each one that did not (nothing of it ' +
      `was stored; a fuelling option its station does not provide is one: \`${V1_MESSAGES.notProvided('<fuel_type>')}\`). Or the body as a ` +
      `whole is wrong (not a JSON array, more than ${LIMITS.transmissions} signals, not JSON at all, a key twice in one ` +
      'object, nested too deep): then nothing was stored.',
    content: {
      'application/json': {
        schema: { oneOf: [schemaRef('ValidationErrors'), schemaRef('NonFieldErrors'), schemaRef('Detail')] },
        examples: {
          partial: {
            summary: 'Partial acceptance: the first and third signals were stored, the second was refused',
            description: `The second signal named a code outside the ${d.version} vocabulary (\`${OTHER_DIALECT_CODE[d.dialect]}\`, say).`,
            value: [{}, { dispensers: [{}, { fuel_type: [V1_MESSAGES.invalidFuellingOption] }] }, {}],
          },
          partial_acceptance: {
            summary: 'The answer to the `partial_acceptance` request example: the first and third signals were stored',
            value: partialAcceptanceErrors(d.dialect),
          },
          option_not_provided: {
            summary: 'The answer to the `option_not_provided` request example: the signal was refused, nothing of it stored',
            value: notProvidedErrors(d.dialect),
          },
          several_fields: {
            summary: 'Several problems in one signal, nested under `dispensers` where they belong',
            value: [failedSignal(d.dialect)],
          },
          stale: { summary: 'A signal older than 5 minutes', value: [{ datetime: [V1_MESSAGES.tooOld] }] },
          not_an_object: { summary: 'A signal that is not a JSON object', value: [{}, { non_field_errors: [V1_MESSAGES.notAnObject('x')] }] },
          not_a_list: {
            summary: 'The body is not a JSON array: nothing stored',
            value: { non_field_errors: [V1_MESSAGES.notAList({})] },
          },
          too_many: {
            summary: `More than ${LIMITS.transmissions} signals: refused whole, nothing stored`,
            value: { non_field_errors: [V1_MESSAGES.tooLong(LIMITS.transmissions)] },
          },
          duplicate_key: {
            summary: 'A key twice in one object: nothing stored',
            value: { detail: 'JSON parse error - duplicate key "hrs" at $[0].' },
          },
          parse_error: {
            summary: 'The body is not JSON: nothing stored',
            value: { detail: 'JSON parse error - Unexpected token \'x\', "xyz" is not valid JSON' },
          },
        },
      },
    },
  };
}

/** A token of another kind, as the rule of src/domain/tokens.ts words its refusal here. */
function refusal(d: DialectDoc, generation: Generation): string {
  const token: TokenRecord = {
    id: 'example',
    generation,
    originatorId: 'example',
    userId: null,
    name: 'example',
    expiresAt: null,
    revokedAt: null,
    ownerDeactivated: false,
  };
  const decision = decideToken(token, { label: d.declared.label, accepts: d.declared.accepts }, 0);
  if (decision.ok) throw new Error(`OpenAPI: a ${generation} token would authenticate on ${d.declared.label}`);
  return decision.reason;
}

/** 401, one example per reason the `detail` can give. */
function unauthorized(d: DialectDoc) {
  return detailResponse(
    'Authentication failed; nothing was processed. The `detail` says why. Only import v1/v1.1 tokens authenticate here.',
    {
      missing: detail(MESSAGES.missing),
      malformed: detail(MESSAGES.malformed),
      unknown: detail(MESSAGES.unknown),
      revoked: detail(MESSAGES.revoked),
      expired: detail(MESSAGES.expired),
      deactivated: detail(MESSAGES.deactivated),
      import_v2_token: detail(refusal(d, 'import_v2'), 'An import v2 token'),
      export_token: detail(refusal(d, 'export_v1'), 'An export v1/v1.1 token'),
      personal_token: detail(refusal(d, 'export_v2'), 'A personal export v2 token'),
    },
    { 'WWW-Authenticate': headerRef('WWW-Authenticate') },
  );
}
