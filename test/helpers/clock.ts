import type { Clock } from '../../src/config/clock.js';

/** A clock that runs with the system clock, ahead of it by however far it was stepped (never back). */
export class SteppedClock implements Clock {
  private ahead = 0;

  now(): Date {
    return new Date(Date.now() + this.ahead);
  }

  aheadMs(): number {
    return this.ahead;
  }

  nowMs(): number {
    return Date.now() + this.ahead;
  }

  /** Steps the clock forward by `ms` milliseconds. */
  advance(ms: number): void {
    if (!(ms >= 0)) throw new RangeError(`a clock steps forward only (${ms} ms)`);
    this.ahead += ms;
  }
}
