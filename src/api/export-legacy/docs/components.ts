import { z } from 'zod';
import {
  eventListSchema,
  eventSchema,
  problemSchema,
  v11FuelTypeListSchema,
  v11FuelTypeSchema,
  v1FuelTypeListSchema,
  v1FuelTypeSchema,
  vehicleTypeListSchema,
  vehicleTypeSchema,
} from '../../../domain/export-v1/schemas.js';
import { DIALECT_CODES } from '../../../domain/import-v1/options.js';
import {
  summaryEntrySchema,
  summaryReasonSchema,
  summaryStateSchema,
  v1SummaryEntrySchema,
} from '../../../domain/status/summary.js';
import { decideToken, type TokenRecord } from '../../../domain/tokens.js';
import type { Generation } from '../../../domain/vocabulary.js';
import { SANDBOX_TOKEN } from '../../../domain/sandbox.js';
import { PROBLEM_ERRORS } from '../../../http/errors.js';
import { describeLimit, describeWait } from '../../../http/rate-limit-guard.js';
import { EXPORT_V1_LIMIT, SANDBOX_LIMIT, SANDBOX_PER } from '../../export-legacy/family.js';
import { bearerScheme, importHeaders } from '../../docs/headers.js';
import { headerRef, type DocContext, type DocDefinition } from '../../../http/openapi.js';
import { queryParameter } from '../../../http/parameters.js';
import { words, type ExportDialectDoc } from './dialects.js';
import { internalErrorResponse, lastModifiedHeader, notModifiedResponse, problem, problemBody, stationNotFoundResponse, stationParameters, unauthorizedExamples } from '../../export/docs.js';

/** The export v1 / v1.1 documents' components: the security scheme, schemas, parameters, headers and shared responses. */

export const SECURITY = 'exportV1Token';

export const securitySchemes = (d: ExportDialectDoc): DocDefinition['securitySchemes'] => ({
  [SECURITY]: bearerScheme(
    'An export v1/v1.1 token: one token works on both `/v1/` and `/v1.1/`. Personal export v2 tokens and import tokens are refused (401).' +
    (d.declared.sandbox ? ` The shared sandbox token \`${SANDBOX_TOKEN}\` works here too, on the sandbox's sample stations only.` : ''),
  ),
});

/** Every response body, under the name the operations refer to it by (the dialect's own codes): its routes' bodies first. */
export function responseSchemas(d: ExportDialectDoc): DocDefinition['responseSchemas'] {
  const shared = {
    SummaryState: summaryStateSchema,
    SummaryReason: summaryReasonSchema,
    EventList: eventListSchema,
    Event: eventSchema,
    Problem: problemSchema,
  };
  if (d.dialect === 'v1') {
    return { ...d.bodies, FuelTypeStatus: v1SummaryEntrySchema, FuelTypeList: v1FuelTypeListSchema, FuelType: v1FuelTypeSchema, ...shared };
  }
  return {
    ...d.bodies,
    FuelTypeStatus: summaryEntrySchema,
    FuelTypeList: v11FuelTypeListSchema,
    FuelType: v11FuelTypeSchema,
    VehicleTypeList: vehicleTypeListSchema,
    VehicleType: vehicleTypeSchema,
    ...shared,
  };
}

/** The request headers operations refer to: `If-Modified-Since` (the path and query parameters are the routes' schemas'). */
export const parameters = (): NonNullable<DocDefinition['parameters']> => stationParameters();

/** The query of the status summaries: `fuelling_option`, in the dialect's codes (the handler checks it). */
export function summaryQuery(d: ExportDialectDoc) {
  const codes = DIALECT_CODES[d.dialect];
  return z.object({
    fuelling_option: queryParameter({
      component: 'fuelling_option',
      description:
        `Only this ${words(d)} (${codes.map((c) => `\`${c}\``).join(', ')}), given once. ` +
        'The list then leaves out stations that do not provide it. Any other value, or the parameter twice, gets 400.',
      values: z.enum([...codes] as [string, ...string[]]),
      example: codes[0],
    }),
  });
}

export const headers = (config: DocContext['config']): DocDefinition['headers'] => ({
  ...importHeaders(
    config.exportV1RateLimit,
    `${config.exportV1RateLimit} requests per 60 seconds per export v1/v1.1 token, one budget for v1 and v1.1 together` +
      (config.sandbox ? `; on the shared sandbox token ${config.sandboxRateLimit} per 60 seconds per client address.` : '.'),
  ),
  'Last-Modified': lastModifiedHeader(),
});

/** A token of another kind, as the rule of src/domain/tokens.ts words its refusal here. */
function refusal(d: ExportDialectDoc, generation: Generation, sandbox = false): string {
  const token: TokenRecord = {
    sandbox,
    id: 'example',
    generation,
    originatorId: null,
    userId: null,
    name: 'example',
    expiresAt: null,
    revokedAt: null,
    ownerDeactivated: false,
  };
  const decision = decideToken(token, { label: d.declared.label, accepts: d.declared.accepts, sandbox: d.declared.sandbox }, 0);
  if (decision.ok) throw new Error(`OpenAPI: a ${generation} token would authenticate on ${d.declared.label}`);
  return decision.reason;
}

/** The shared responses: those of the operations (304, 400, 404) and those any authenticated request can get. */
export function responses(d: ExportDialectDoc, config: DocContext['config']): DocDefinition['responses'] {
  const codes = DIALECT_CODES[d.dialect];
  const unauthorized = (detail: string, summary?: string) => ({
    ...(summary ? { summary } : {}),
    value: problemBody(401, 'Unauthorized', 'not_authenticated', detail),
  });
  return {
    NotModified: notModifiedResponse(),
    BadFilter: problem('`fuelling_option` is not one of this version\'s codes, or is given twice; the `detail` names the allowed codes.', {
      unknown_code: {
        value: problemBody(400, 'Bad Request', 'invalid_parameter', `fuelling_option: must be one of ${codes.join(', ')} (got "${d.dialect === 'v1' ? '700ld' : '700car'}").`),
      },
      twice: { value: problemBody(400, 'Bad Request', 'invalid_parameter', 'fuelling_option: give it once.') },
    }),
    StationNotFound: stationNotFoundResponse(),
    Unauthorized: problem(
      'Authentication failed; nothing was processed. The `detail` says why. Only export v1/v1.1 tokens authenticate here.',
      {
        ...unauthorizedExamples(),
        personal_token: unauthorized(refusal(d, 'export_v2'), 'A personal export v2 token'),
        import_v1_token: unauthorized(refusal(d, 'import_v1'), 'An import v1/v1.1 token'),
        import_v2_token: unauthorized(refusal(d, 'import_v2'), 'An import v2 token'),
        ...(d.declared.sandbox ? {} : { sandbox_token: unauthorized(refusal(d, 'export_v1', true), 'The shared sandbox token (export v1.1 only)') }),
      },
      { 'WWW-Authenticate': headerRef('WWW-Authenticate') },
    ),
    TooManyRequests: problem(
      'A rate limit is exhausted; nothing was processed. Wait `Retry-After` seconds.',
      {
        token: {
          summary: 'An export v1/v1.1 token',
          value: problemBody(429, 'Too Many Requests', 'throttled', PROBLEM_ERRORS.throttled(describeLimit({ ...EXPORT_V1_LIMIT, limit: config.exportV1RateLimit }, 'token'), describeWait(12))),
        },
        ...(d.declared.sandbox && config.sandbox
          ? {
              sandbox: {
                summary: 'The shared sandbox token',
                value: problemBody(429, 'Too Many Requests', 'throttled', PROBLEM_ERRORS.throttled(describeLimit({ ...SANDBOX_LIMIT, limit: config.sandboxRateLimit }, SANDBOX_PER), describeWait(12))),
              },
            }
          : {}),
      },
      { 'Retry-After': headerRef('Retry-After') },
    ),
    InternalError: internalErrorResponse(),
  };
}
