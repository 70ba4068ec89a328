/** Raised when PostgreSQL cannot be reached or used: at start, or when a write waited too long for it. */
export class DatabaseUnavailableError extends Error {
  readonly code = 'DATABASE_UNAVAILABLE';
}

/**
 * PostgreSQL did not finish within the pool's bound (DATABASE_TIMEOUT), measured by the platform
 * itself: the server may be frozen, slow or behind a network black hole. `mayHaveApplied` says
 * whether the work could still take effect: false when nothing of it can ever commit (it was never
 * sent, or its transaction's COMMIT was never sent and its connection was closed), true when a
 * change's COMMIT (or a single statement that changes data) had already been sent.
 */
export class DatabaseTimeoutError extends DatabaseUnavailableError {
  constructor(
    message: string,
    readonly mayHaveApplied: boolean,
  ) {
    super(message);
  }
}
