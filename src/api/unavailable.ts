import { DatabaseTimeoutError, isDatabaseUnavailable } from '../../db/connect.js';
import { HttpError } from '../http/errors.js';
import type { ErrorClassifier } from '../http/respond.js';
import { redisUnanswered } from '../infra/redis-outage.js';

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

/** What a request could not queue while Redis did not answer, as its 503 says it (code and detail). */
const NOT_QUEUED = {
  mail: { code: 'mail_unavailable', detail: 'The e-mail could not be queued (Redis is unavailable); nothing was sent: try again shortly.' },
  'sign-in mail': {
    code: 'mail_unavailable',
    detail: 'The sign-in e-mail could not be queued (Redis is unavailable); nothing was sent: try again in a few seconds.',
  },
  job: { code: 'queue_unavailable', detail: 'The job could not be queued (Redis is unavailable): try again shortly.' },
} as const;

export type Unqueued = keyof typeof NOT_QUEUED;

/**
 * The 503 of a request whose mail or job could not be queued because Redis did not answer: nothing was
 * sent, and it may be asked again shortly (`Retry-After`). The one answer for a Redis that does not
 * answer; which errors say so is decided in one place too (`redisUnanswered`, used by `queued`).
 */
export function notQueued(what: Unqueued): HttpError {
  const { code, detail } = NOT_QUEUED[what];
  return new HttpError(503, code, detail, { headers: { 'Retry-After': String(RETRY_AFTER_SECONDS) } });
}

/** The work's outcome; when it failed because Redis did not answer (`redisUnanswered`), the 503 saying what was not queued. */
export async function queued<T>(what: Unqueued, work: Promise<T>): Promise<T> {
  try {
    return await work;
  } catch (err) {
    throw redisUnanswered(err) ? notQueued(what) : err;
  }
}
