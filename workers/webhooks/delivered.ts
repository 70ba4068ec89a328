import { isDatabaseUnavailable, type Sql } from '../../db/connect.js';
import { recordDelivered, type Delivered } from '../../db/queries/webhook-delivery.js';

/**
 * Group commit of delivered attempts: a 2xx is recorded at once when no record is running, and those
 * that come while one runs are recorded together in the next statement (recordDelivered), so a worker
 * busy with many subscriptions commits once for many messages, not once for each (every commit a flush
 * of PostgreSQL's log). Each turn still ends only after the commit that holds its record. When a shared
 * statement fails, each is recorded in one of its own, so one subscription's record never fails
 * another's; when PostgreSQL is unavailable, all of them fail at once (their claims lapse, and the
 * messages are sent again: ./deliver.ts formNext).
 */
export class DeliveredRecorder {
  private queue: { item: Delivered; resolve: () => void; reject: (err: unknown) => void }[] = [];
  private running = false;

  constructor(
    private readonly sql: Sql,
    /** At most this many records a statement (a worker has no more turns than this at once). */
    private readonly maxBatch = 64,
  ) {}

  record(item: Delivered): Promise<void> {
    return new Promise((resolve, reject) => {
      this.queue.push({ item, resolve, reject });
      if (!this.running) void this.drain();
    });
  }

  private async drain(): Promise<void> {
    this.running = true;
    try {
      while (this.queue.length > 0) {
        const batch = this.queue.splice(0, this.maxBatch);
        try {
          await recordDelivered(this.sql, batch.map((b) => b.item));
          for (const b of batch) b.resolve();
        } catch (err) {
          if (batch.length === 1 || isDatabaseUnavailable(err)) for (const b of batch) b.reject(err);
          else await Promise.all(batch.map((b) => recordDelivered(this.sql, [b.item]).then(b.resolve, b.reject)));
        }
      }
    } finally {
      this.running = false;
    }
  }
}
