/**
 * The platform's clock for the times it publishes as versions and dates (the `Last-Modified` of
 * station records, the map's feed and the DATEX II publications), the time `If-Modified-Since` is held
 * to, and the expiry of portal sign-in links and sessions. Production runs on the system clock; a clock
 * that runs ahead of it moves those times without waiting for them.
 */
export interface Clock {
  /** The time now. */
  now(): Date;
  /**
   * How far this clock runs ahead of the system clock, in milliseconds (0 for the system clock). Times
   * PostgreSQL takes (`clock_timestamp()`) are shifted by it, so they agree with `now()`.
   */
  aheadMs(): number;
  /** The time now in epoch milliseconds, without a Date (`now().getTime()` when a clock has no quicker way). */
  nowMs?(): number;
}

/** The system clock. */
export const systemClock: Clock = {
  now: () => new Date(),
  aheadMs: () => 0,
  nowMs: Date.now,
};
