/**
 * The platform's clock for the times it publishes as versions and dates: the `Last-Modified` of
 * station records, the map's feed and the DATEX II publications. Production runs on the system clock;
 * a clock that runs ahead of it (a test's, stepped) moves those times without waiting for a new second.
 */
export interface Clock {
  /** The time now. */
  now(): Date;
  /**
   * How far this clock runs ahead of the system clock, in milliseconds (0 for the system clock). Times
   * PostgreSQL takes (`clock_timestamp()`) are shifted by it, so they agree with `now()`.
   */
  aheadMs(): number;
}

/** The system clock. */
export const systemClock: Clock = {
  now: () => new Date(),
  aheadMs: () => 0,
};

/** A clock that runs with the system clock, ahead of it by however far it was stepped (never back). */
export class SteppedClock implements Clock {
  private ahead = 0;

  now(): Date {
    return new Date(Date.now() + this.ahead);
  }

  aheadMs(): number {
    return this.ahead;
  }

  /** Steps the clock forward by `ms` milliseconds. */
  advance(ms: number): void {
    if (!(ms >= 0)) throw new RangeError(`a clock steps forward only (${ms} ms)`);
    this.ahead += ms;
  }
}
