import type { Sql, Tx } from '../connect.js';
import type { Clock } from '../../src/config/clock.js';

/**
 * PostgreSQL's time of the statement (`clock_timestamp()`) on the platform's clock: shifted by how far
 * that clock runs ahead of the system clock (not at all in production), for the times written as
 * versions (`static_modified_at`), so they follow a stepped clock as the platform's own times do.
 */
export function clockNow(db: Sql | Tx, clock: Clock) {
  return db`(clock_timestamp() + ${clock.aheadMs()}::double precision * interval '1 millisecond')`;
}
