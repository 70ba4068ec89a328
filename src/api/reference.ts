import type { z } from 'zod';
import type { ReferenceData } from '../../db/queries/reference.js';
import type { Generation } from '../domain/vocabulary.js';
import { json, type ErrorStyle, type Reply } from '../http/errors.js';
import type { Family, Guard } from '../http/family.js';
import type { FamilyPolicy } from '../http/policy.js';
import type { HttpServer } from '../http/server.js';
import { tokenAuth, type TokenFinder } from './auth.js';
import type { FamilyDocument } from '../http/openapi.js';
import type { RouteDoc } from '../http/contract.js';

/**
 * The reference lists every generation publishes, as replies made once at start (the lists change
 * only with a migration): v1 fuel types, the v1.1/v2 fuelling options, EU vehicle categories. Each
 * family's folder registers the ones it serves.
 */

/** `[{code, description}]` of the v1 fuel types (`700car`, `350car`, `350bus`). */
export const v1FuelTypes = (reference: ReferenceData): Reply =>
  json(200, reference.v1FuelTypes.map(({ code, description }) => ({ code, description })));

/** `[{code, description}]` of the four fuelling options (v1.1). */
export const fuellingOptions = (reference: ReferenceData): Reply =>
  json(200, reference.fuellingOptions.map(({ code, description }) => ({ code, description })));

/** The fuelling options with `pressure_stage` and `vehicle_class` (v2). */
export const fuellingOptionsV2 = (reference: ReferenceData): Reply => json(200, reference.fuellingOptions.map((o) => ({ ...o })));

/** `[{code, name}]` of the EU vehicle categories M1–M3, N1–N3. */
export const vehicleTypes = (reference: ReferenceData): Reply =>
  json(200, reference.vehicleCategories.map(({ code, name }) => ({ code, name })));

/** A reference list as its route serves it: the reply, its body's schema, and the route's operation in its family's document. */
export interface ReferenceList {
  reply: Reply;
  schema: z.ZodType;
  doc: RouteDoc;
}

/**
 * A family that so far serves reference lists only (the legacy generations), as its folder declares
 * it: what its routes and its document both read, in a module that imports neither.
 */
export interface ReferenceDeclaration {
  name: string;
  prefix: string;
  /** How refusals name the family (`import v1`) and the one token generation it accepts. */
  label: string;
  accepts: Generation;
  /** Whether the shared sandbox token authenticates here too (export v1.1). */
  sandbox?: boolean;
  errors: ErrorStyle;
  /** Headers on every response of the family (a deprecated generation's `Deprecation` and `Link`). */
  policy?: FamilyPolicy;
}

/** A reference-only family as it is served: its declaration, its lists and its document. */
export interface ReferenceFamily extends ReferenceDeclaration {
  /** Path → the list it serves, as made once from the reference data. */
  lists: (reference: ReferenceData) => Record<string, ReferenceList>;
  document: FamilyDocument;
}

/** Builds a reference-only family and registers its lists as GET routes. */
export function referenceApi(
  server: HttpServer,
  declared: ReferenceFamily,
  deps: { tokens: TokenFinder; reference: ReferenceData; guards?: Guard[] },
): Family {
  const { name, prefix, label, accepts, sandbox, errors, policy, document } = declared;
  const family: Family = { name, prefix, auth: tokenAuth(deps.tokens, { label, accepts, sandbox }), errors, policy, guards: deps.guards, document };
  for (const [path, { reply, schema, doc }] of Object.entries(declared.lists(deps.reference))) {
    server.route({ family, method: 'GET', path, response: { 200: schema }, doc, handler: () => reply });
  }
  return family;
}
