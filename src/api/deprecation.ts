import type { FamilyPolicy } from '../http/policy.js';

/**
 * Generation v1 (import v1, export v1) is deprecated: "v1 remains functional and is deprecated" (spec,
 * Versioning). Every response of a deprecated family says so (RFC 9745): `Deprecation` with the date,
 * and a `Link` to the successor's reference, `rel="deprecation"` (where the deprecation is explained) and
 * `rel="successor-version"`.
 *
 * The spec gives no date for the deprecation itself, only that v1.1 was released with service version
 * 1.7.0 on 17 June 2026: v1 is deprecated since its successor was published, at 00:00 UTC that day.
 */
export const V1_DEPRECATED_AT = '2026-06-17T00:00:00Z';

/** `@<unix seconds>`: an RFC 9651 structured-field date, as RFC 9745 has it. */
export const deprecationValue = (at: string): string => `@${Math.floor(Date.parse(at) / 1000)}`;

/** The `Link` of a deprecated family to its successor's reference page. */
export const deprecationLink = (successorReference: string): string =>
  `<${successorReference}>; rel="deprecation successor-version"; type="text/html"`;

/** The policy of a family deprecated since `at`, whose successor's reference is at `successorReference` (`/v1.1/doc/`). */
export function deprecatedPolicy(successorReference: string, at: string = V1_DEPRECATED_AT): FamilyPolicy {
  return { headers: { Deprecation: deprecationValue(at), Link: deprecationLink(successorReference) } };
}
