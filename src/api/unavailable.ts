import { isDatabaseUnavailable } from '../../db/connect.js';
import { HttpError } from '../http/errors.js';
import type { ErrorClassifier } from '../http/respond.js';

/** Seconds a client is asked to wait before trying again while a dependency is unavailable. */
export const RETRY_AFTER_SECONDS = 5;

/**
 * The platform's error classifier: PostgreSQL unreachable, shutting down, or too slow to answer
 * within DATABASE_TIMEOUT is a 503 with `Retry-After` (the request may succeed later), never a 500.
 * The detail names the dependency only, never the error's own text.
 */
export const classifyUnavailable: ErrorClassifier = (err) => {
  if (!isDatabaseUnavailable(err)) return undefined;
  return new HttpError(503, 'service_unavailable', 'The database is unavailable; try again later.', {
    headers: { 'Retry-After': String(RETRY_AFTER_SECONDS) },
  });
};
