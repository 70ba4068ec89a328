import { z } from 'zod';
import { DEFINITIONS } from '../../src/domain/categories/index.js';
import { V1_SCHEMAS } from '../../src/domain/import-v1/schemas.js';
import { newWebhookSchema, webhookPatchSchema } from '../../src/domain/webhooks/schemas.js';
import type { AnyRoute } from '../../src/http/contract.js';
import { alertFormSchema } from '../../src/api/alerts/index.js';
import { exampleOf, textFields, valueAt, withValueAt, type TextField } from './schema-fields.js';

/**
 * Every text input of every route, as requests that put a long value in one field at a time: each
 * field of each route's body schema (its example as the rest of the body, so that the checks of the
 * object around the field run too), and each query parameter. The list is made from the routes' own
 * contracts, so that a field or a route added later is covered without being named here. The routes
 * that read their body themselves (`body: true`) are named with the schema they read it with; a new
 * one fails `rawBodySchema` until it is added.
 */

/** The schema each route that reads its own body parses it with (the photo takes bytes, not text). */
export function rawBodySchema(route: Pick<AnyRoute, 'method' | 'path'>): z.ZodType | 'bytes' | undefined {
  const key = `${route.method} ${route.path}`;
  const category = DEFINITIONS.find((d) => key === `POST /import/v2/signal/${d.name}/`);
  if (category) return z.array(category.transmission).meta({ examples: [[exampleOf(category.transmission)]] });
  if (key === 'POST /import/v1/hrs-availability') return V1_SCHEMAS.v1.request;
  if (key === 'POST /import/v1.1/hrs-availability') return V1_SCHEMAS['v1.1'].request;
  if (key === 'POST /portal/v1/webhooks') return newWebhookSchema;
  if (key === 'PATCH /portal/v1/webhooks/:id') return webhookPatchSchema;
  if (key === 'PUT /portal/v1/stations/:hrs_id/photo') return 'bytes';
  if (['POST /map/alerts/confirm', 'POST /map/alerts/renew', 'POST /map/alerts/unsubscribe'].includes(key)) return alertFormSchema;
  return undefined;
}

export interface InputTarget {
  route: AnyRoute;
  /** `body field.path`, `query name`: what is long. */
  what: string;
  /** The query string (without `?`), or the JSON body. */
  query?: string;
  body?: string;
}

/** `length` characters made of the field's example (or `x`): the kind of text the field takes, repeated. */
export function longValue(example: unknown, length: number): string {
  const unit = typeof example === 'string' && example.length > 0 ? example : 'x';
  return unit.repeat(Math.ceil(length / unit.length)).slice(0, length);
}

/**
 * The requests of one route: one per text field of its body and one per query parameter. The rest of
 * each body is the schema's example, or `current` (what the resource is now, for a PUT or PATCH whose
 * schema has none), so that the checks of the object around the field run too.
 */
export function targetsOf(route: AnyRoute, sizes: { body: number; query: number }, current?: unknown): InputTarget[] {
  const targets: InputTarget[] = [];
  const bodySchema = route.body instanceof z.ZodType ? route.body : route.body === true ? rawBodySchema(route) : undefined;
  if (route.body === true && bodySchema === undefined) throw new Error(`${route.method} ${route.path} reads its body itself: name its schema in rawBodySchema`);
  if (bodySchema instanceof z.ZodType) {
    const base = exampleOf(bodySchema) ?? current ?? {};
    for (const field of textFields(bodySchema)) {
      const value = longValue(valueAt(base, field.path) ?? exampleOf(field.schema), sizes.body);
      targets.push({ route, what: `body ${fieldLabel(field)}`, body: JSON.stringify(withValueAt(base, field.path, value)) });
    }
  }
  const catchall = route.query && (route.query.def as { catchall?: unknown }).catchall !== undefined;
  for (const name of route.query ? [...Object.keys(route.query.shape), ...(catchall ? ['any_name'] : [])] : []) {
    targets.push({ route, what: `query ${name}`, query: `${encodeURIComponent(name)}=${longValue(undefined, sizes.query)}` });
  }
  return targets;
}

const fieldLabel = (field: TextField) => field.path.join('.') || '(the body)';
