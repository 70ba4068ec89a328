import { DatabaseTimeoutError, isDatabaseUnavailable } from '../../db/connect.js';
import { HttpError } from '../http/errors.js';
import type { ErrorClassifier } from '../http/respond.js';

/** Seconds a client is asked to wait before trying again while a dependency is unavailable. */
export const RETRY_AFTER_SECONDS = 5;

/**
 * The platform's error classifier: PostgreSQL unreachable, shutting down, or too slow to answer
 * within DATABASE_TIMEOUT is a 503 with `Retry-After` (the request may succeed later), never a 500.
 * The detail names the dependency only, never the error's own text; when a change was sent to
 * PostgreSQL (its COMMIT, or a statement that commits by itself) and not confirmed in time, it says
 * that the change may have been applied (db/deadline.ts); otherwise nothing of the request was.
 */
export const classifyUnavailable: ErrorClassifier = (err) => {
  if (!isDatabaseUnavailable(err)) return undefined;
  const detail =
    err instanceof DatabaseTimeoutError && err.mayHaveApplied
      ? 'The database did not confirm the change in time: it may have been applied. Check before sending it again, or try again later.'
      : 'The database is unavailable; try again later.';
  return new HttpError(503, 'service_unavailable', detail, { headers: { 'Retry-After': String(RETRY_AFTER_SECONDS) } });
};
