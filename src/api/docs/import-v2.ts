import { z } from 'zod';
import {
  activeStationsResponseSchema,
  availabilitySchema,
  detailSchema,
  fieldErrorsSchema,
  nonFieldErrorsSchema,
  pricingSchema,
  storageSchema,
  usageSchema,
  validationErrorListSchema,
} from '../../domain/import-v2/schemas.js';
import type { Category } from '../../domain/vocabulary.js';
import { MESSAGES } from '../auth.js';
import { examplesOf, headerRef, responseRef, schemaRef, type DocContext, type DocDefinition, type OperationDoc } from './openapi.js';

const SECURITY = 'importV2Token';

/** Per category: the transmission schema, its component names, and what the endpoint's text says. */
const CATEGORIES: Record<
  Category,
  { schema: z.ZodType; name: string; operationId: string; summary: string; rules: string; examples: [string, string][] }
> = {
  availability: {
    schema: availabilitySchema,
    name: 'AvailabilityTransmission',
    operationId: 'postAvailability',
    summary: 'Send availability signals',
    examples: [['by_nozzle', 'Per nozzle']],
    rules:
      '- Each nozzle entry carries exactly one of `id` (a nozzle) or `dispenser_id` (every nozzle of that dispenser); ' +
      'both kinds may be mixed if they do not overlap.\n' +
      '- The platform derives the per-fuelling-option status from the nozzles and the layout; a transmission from which ' +
      'no fuelling option can be derived is rejected.\n' +
      '- `station.maintenance: true` or `station.limitedly_available: true` override the per-nozzle picture downstream.',
  },
  usage: {
    schema: usageSchema,
    name: 'UsageTransmission',
    operationId: 'postUsage',
    summary: 'Send usage signals',
    examples: [
      ['by_nozzle', 'Per nozzle'],
      ['by_dispenser', 'Dispenser shorthand: the state of each of its nozzles'],
    ],
    rules:
      '- Each nozzle entry carries exactly one of `id` or `dispenser_id`, as for availability.\n' +
      '- `usage_status` is `free`, `in-use` or `reserved`; blocked sibling nozzles of a dispenser that cannot serve two ' +
      'vehicles at once are reported as `in-use`.',
  },
  'hydrogen-storage': {
    schema: storageSchema,
    name: 'HydrogenStorageTransmission',
    operationId: 'postHydrogenStorage',
    summary: 'Send hydrogen storage signals',
    examples: [
      ['inventory', 'The inventory in kg (the platform derives the flag)'],
      ['flag_only', 'The low-storage flag only'],
    ],
    rules:
      '- Each storage entry carries at least one of `remaining_kg` and `low_h2_storage`.\n' +
      '- The threshold is 100 kg per storage (exactly 100 kg is not low); a `remaining_kg` and a `low_h2_storage` that ' +
      'contradict each other at the threshold are rejected.\n' +
      '- `remaining_kg` is confidential: data users only see the derived flag.',
  },
  pricing: {
    schema: pricingSchema,
    name: 'PricingTransmission',
    operationId: 'postPricing',
    summary: 'Send pricing signals',
    examples: [['prices', 'Gross and net prices of two products']],
    rules:
      '- `id` is a product the station has registered (the `products` of the export station record); one price per ' +
      'station and product.\n' +
      '- Prices are JSON strings, up to 8 digits with 3 decimals, above zero; `net_price` must not exceed `gross_price`.\n' +
      '- All products of one transmission use the same currency (default `EUR`).\n' +
      '- Prices of products the operator removes stop being published at once.',
  },
};

const COMMON_RULES =
  '**The request.** A JSON array of transmissions, at most one per station. The whole request is validated before ' +
  'anything is stored: if any transmission fails, the answer is 400 with an array aligned with the request and ' +
  'nothing of the request is applied, valid transmissions included. Every problem of every transmission is reported.\n\n' +
  '**Snapshots.** Each transmission is a full snapshot of its category for its station: it replaces the previous ' +
  'state, and entities it leaves out have no reported state afterwards.\n\n' +
  '**Identifiers** resolve against the station\'s operator-confirmed layout only (an unknown id is a 400 naming it; ' +
  'draft layout is invisible to the API).\n\n' +
  '**Time window.** `datetime` may be at most 5 minutes old and at most 30 seconds ahead.\n\n' +
  '**Dry runs.** `dry_run: true` validates a transmission end to end without storing or publishing it; a 204 means ' +
  'it would have been accepted. Dry runs count against the rate limit.\n\n' +
  '**Publication** depends on the originator\'s assignment for the station and signal type: `live` signals are ' +
  'published, `testing` ones are validated end to end and not published, signals where the originator is not ' +
  'assigned are accepted for debugging and not published.\n\n' +
  'The trailing slash of the path is required.';

function requestName(name: string): string {
  return name.replace(/Transmission$/, 'Request');
}

/** The request examples of a category: each transmission example as a one-station request, and a dry run. */
function requestExamples(schema: z.ZodType, names: [string, string][]): Record<string, { summary: string; value: unknown }> {
  const examples = Object.values(examplesOf(schema)) as { value: Record<string, unknown> }[];
  if (examples.length !== names.length) throw new Error(`OpenAPI: ${examples.length} examples, ${names.length} names`);
  const out: Record<string, { summary: string; value: unknown }> = {};
  examples.forEach(({ value }, i) => (out[names[i]![0]] = { summary: names[i]![1], value: [value] }));
  out.dry_run = { summary: 'A dry run: validated end to end, neither stored nor published', value: [{ ...examples[0]!.value, dry_run: true }] };
  return out;
}

export function importV2Document(context: DocContext): DocDefinition {
  const limit = context.config.importV2RateLimit;
  const requestSchemas: Record<string, z.ZodType> = {};
  const signalOperations: OperationDoc[] = [];
  for (const [category, c] of Object.entries(CATEGORIES) as [Category, (typeof CATEGORIES)[Category]][]) {
    const request = requestName(c.name);
    requestSchemas[c.name] = c.schema;
    requestSchemas[request] = requestArray(c.schema, c.name);
    signalOperations.push({
      method: 'POST',
      path: `/import/v2/signal/${category}/`,
      operation: {
        tags: ['Signals'],
        operationId: c.operationId,
        summary: c.summary,
        description: `${COMMON_RULES}\n\n**${category}:**\n\n${c.rules}`,
        requestBody: {
          required: true,
          description: `A JSON array of ${category} transmissions, at most one per station.`,
          content: { 'application/json': { schema: schemaRef(request), examples: requestExamples(c.schema, c.examples) } },
        },
        responses: {
          '204': { description: 'Every transmission accepted (or, for dry runs, validated). Never a 200 with a body.' },
          '400': responseRef('ValidationFailed'),
          '401': responseRef('Unauthorized'),
          '413': responseRef('PayloadTooLarge'),
          '415': responseRef('UnsupportedMediaType'),
          '429': responseRef('TooManyRequests'),
          '500': responseRef('InternalError'),
        },
      },
    });
  }

  return {
    family: 'import_v2',
    info: {
      title: 'HRS signal platform: Import API v2',
      version: context.version,
      summary: 'Signal originators send real-time station signals: availability, usage, hydrogen storage, pricing.',
      description: [
        'The import interface, version 2, through which signal originators (station monitoring systems) send ' +
          'transmissions (snapshots) per station and signal category. Acceptance does not by itself publish anything: ' +
          'publication depends on the originator\'s assignment for the station and signal type (`live`, `testing`, or not ' +
          'assigned), which the station operator controls.',
        '## Authentication\n\nEvery request carries `Authorization: Bearer <ACCESS_TOKEN>` with an import v2 token of the ' +
          'signal originator. Tokens of other generations (import v1, export) do not authenticate here. A missing or ' +
          'malformed header, an unknown, revoked or expired token, a deactivated originator and a token of another ' +
          'generation all get 401 with `{"detail": "..."}` saying which, and nothing is processed.',
        `## Rate limit\n\n${limit} requests per minute per signal originator, across all import v2 endpoints together ` +
          '(every token of the originator spends the same budget; dry runs count; refused requests do not). Every ' +
          'response after authentication carries `RateLimit-Limit`, `RateLimit-Remaining` and `RateLimit-Reset`; over ' +
          'the limit the answer is 429 with `Retry-After`. Recommended cadence: availability and usage every minute even ' +
          'when unchanged; pricing on change plus a daily heartbeat; hydrogen storage on change or on the availability ' +
          'cadence. After an outage, send a fresh reading rather than replaying queued ones.',
        '## Errors\n\nErrors are JSON: `{"detail": "..."}`, or for validation failures an array aligned with the ' +
          'request (see `ValidationErrors`). An unknown path gets 404 (its `detail` says when the path exists with a ' +
          'trailing slash, and there is never a redirect); a known path with another method gets 405 with `Allow`; ' +
          '`OPTIONS` answers 204 with `Allow`; `HEAD` works wherever `GET` does. A 500 is an unexpected platform error: ' +
          'please report it with the response\'s `X-Request-Id`. A 503 from the infrastructure means temporary ' +
          'unavailability: retry with backoff.',
        '## Versioning\n\nImport v2 lives under `/import/v2/...` with its own credential type. Import v1 ' +
          '(`/import/v1/...`) remains functional and is deprecated.',
      ].join('\n\n'),
    },
    tags: [
      { name: 'Signals', description: 'One endpoint per signal category; the body is a JSON array of transmissions.' },
      { name: 'Stations', description: 'The stations covered by the token.' },
    ],
    securitySchemes: {
      [SECURITY]: {
        type: 'http',
        scheme: 'bearer',
        description:
          'An import v2 token of the signal originator (created in the portal by originator managers, or issued during ' +
          'onboarding). Each API generation has its own credential: import v1 and export tokens are refused here.',
      },
    },
    requestSchemas,
    responseSchemas: {
      ActiveStations: activeStationsResponseSchema,
      FieldErrors: fieldErrorsSchema,
      ValidationErrors: validationErrorListSchema,
      NonFieldErrors: nonFieldErrorsSchema,
      Detail: detailSchema,
    },
    headers: {
      'X-Request-Id': {
        required: true,
        description: 'The request\'s id: the client\'s own `X-Request-Id` if it sent a sane one, else one the service made. Quote it when reporting a problem.',
        schema: { type: 'string', examples: ['3f2a-1b'] },
      },
      'RateLimit-Limit': {
        description: `The limit: ${limit} requests per 60 seconds per signal originator. Absent when the rate limiter is unavailable (requests then pass unlimited).`,
        schema: { type: 'integer', minimum: 1, examples: [limit] },
      },
      'RateLimit-Remaining': {
        description: 'Requests still allowed now.',
        schema: { type: 'integer', minimum: 0, examples: [limit - 1] },
      },
      'RateLimit-Reset': {
        description:
          'Seconds until the oldest counted request leaves the window, i.e. until `RateLimit-Remaining` next grows (0 when nothing is counted).',
        schema: { type: 'integer', minimum: 0, examples: [60] },
      },
      'Retry-After': {
        required: true,
        description: 'Whole seconds to wait (at least 1); after waiting them a request passes.',
        schema: { type: 'integer', minimum: 1, examples: [12] },
      },
      'WWW-Authenticate': { required: true, description: 'The authentication scheme: `Bearer`.', schema: { type: 'string', const: 'Bearer' } },
    },
    responses: {
      ValidationFailed: {
        description:
          'At least one transmission failed validation, or the body is not a non-empty JSON array, or not JSON at all. ' +
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
              parse_error: {
                summary: 'The body is not JSON',
                value: { detail: 'JSON parse error - Unexpected token \'x\', "xyz" is not valid JSON' },
              },
            },
          },
        },
      },
      Unauthorized: {
        description: 'Authentication failed; nothing was processed. The `detail` says why.',
        headers: { 'WWW-Authenticate': headerRef('WWW-Authenticate') },
        content: {
          'application/json': {
            schema: schemaRef('Detail'),
            examples: {
              missing: { value: { detail: MESSAGES.missing } },
              malformed: { value: { detail: MESSAGES.malformed } },
              unknown: { value: { detail: MESSAGES.unknown } },
              revoked: { value: { detail: MESSAGES.revoked } },
              expired: { value: { detail: MESSAGES.expired } },
              wrong_generation: { value: { detail: 'This is an import v1/v1.1 token; import v2 accepts an import v2 token only.' } },
            },
          },
        },
      },
      PayloadTooLarge: {
        description: `The body exceeds the limit of ${context.config.maxBodyBytes} bytes (checked before authentication when \`Content-Length\` says so); the connection is closed.`,
        content: {
          'application/json': {
            schema: schemaRef('Detail'),
            examples: { too_large: { value: { detail: `Request body exceeds the limit of ${context.config.maxBodyBytes} bytes.` } } },
          },
        },
      },
      UnsupportedMediaType: {
        description: 'The `Content-Type` is not JSON (`application/json` or `application/*+json`).',
        content: {
          'application/json': {
            schema: schemaRef('Detail'),
            examples: { not_json: { value: { detail: 'Unsupported media type "text/plain" in request.' } } },
          },
        },
      },
      TooManyRequests: {
        description: 'The originator\'s rate limit is exhausted; nothing was processed.',
        headers: { 'Retry-After': headerRef('Retry-After') },
        content: {
          'application/json': {
            schema: schemaRef('Detail'),
            examples: {
              throttled: {
                value: {
                  detail: `Request was throttled: at most ${limit} requests per minute per signal originator. Expected available in 12 seconds.`,
                },
              },
            },
          },
        },
      },
      InternalError: {
        description: 'Unexpected platform error; please report it with the `X-Request-Id`.',
        content: {
          'application/json': {
            schema: schemaRef('Detail'),
            examples: { internal: { value: { detail: 'Unexpected platform error; please report it.' } } },
          },
        },
      },
    },
    everyResponseHeaders: ['X-Request-Id'],
    afterAuthenticationHeaders: ['RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset'],
    operations: [
      ...signalOperations,
      {
        method: 'GET',
        path: '/import/v2/active-stations/',
        operation: {
          tags: ['Stations'],
          operationId: 'getActiveStations',
          summary: 'List the stations the token covers',
          description:
            'The stations the token\'s signal originator is assigned to, per signal type, with `live` (published) and ' +
            '`testing` (validated, not published) station ids. The trailing slash of the path is required.',
          responses: {
            '200': {
              description: 'The originator\'s stations per signal type and assignment state.',
              content: { 'application/json': { schema: schemaRef('ActiveStations'), examples: examplesOf(activeStationsResponseSchema) } },
            },
            '401': responseRef('Unauthorized'),
            '429': responseRef('TooManyRequests'),
            '500': responseRef('InternalError'),
          },
        },
      },
    ],
  };
}

/** The request body of a category: a non-empty array of its transmissions (metadata only; validate.ts checks the array). */
function requestArray(schema: z.ZodType, name: string): z.ZodType {
  const title = name.replace(/([a-z])([A-Z])/g, '$1 $2').replace(/ Transmission$/, ' request');
  return z.array(schema).min(1).meta({ title, description: 'A non-empty JSON array of transmissions, at most one per station.' });
}
