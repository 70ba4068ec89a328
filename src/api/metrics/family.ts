import { createHash, timingSafeEqual } from 'node:crypto';
import { bearerToken, type AuthScheme } from '../../http/auth.js';
import { PROBLEM_ERRORS, unauthorized } from '../../http/errors.js';
import type { Family } from '../../http/family.js';

/** Why a scrape is refused. */
export const METRICS_MESSAGES = {
  disabled: 'Metrics are disabled: set METRICS_TOKEN (for scrapers) or ADMIN_TOKEN.',
  unknown: 'Invalid token: /metrics takes METRICS_TOKEN or ADMIN_TOKEN.',
} as const;

export interface MetricsTokens {
  /** ADMIN_TOKEN: always accepted. */
  adminToken: string | undefined;
  /** METRICS_TOKEN: a separate token for scrapers, accepted when set. */
  metricsToken: string | undefined;
}

/**
 * The bearer tokens `/metrics` takes: ADMIN_TOKEN, and METRICS_TOKEN when set, each compared in
 * constant time; with neither set every scrape is refused, saying so.
 */
export function metricsAuth(tokens: MetricsTokens): AuthScheme {
  const accepted = [tokens.adminToken, tokens.metricsToken].filter((t): t is string => t !== undefined && t !== '').map(sha256);
  return (header) => {
    if (accepted.length === 0) throw unauthorized(METRICS_MESSAGES.disabled);
    const given = sha256(bearerToken(header));
    // Every accepted token is compared, so the time taken says nothing about which one matched.
    const matched = accepted.reduce((found, expected) => timingSafeEqual(given, expected) || found, false);
    if (!matched) throw unauthorized(METRICS_MESSAGES.unknown);
    return { kind: 'metrics' };
  };
}

/** `/metrics` in one place: its tokens (above), problem bodies, no CORS, licence or rate limit. */
export function metricsFamily(tokens: MetricsTokens): Family {
  return { name: 'metrics', prefix: '/metrics', auth: metricsAuth(tokens), errors: PROBLEM_ERRORS };
}

function sha256(value: string): Buffer {
  return createHash('sha256').update(value, 'utf8').digest();
}
