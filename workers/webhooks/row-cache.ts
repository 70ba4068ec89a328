import type { Sql } from '../../db/connect.js';
import { changeRowsBySeq, type ClaimedRow, type ClaimedSubscription } from '../../db/queries/webhook-delivery.js';
import { writtenChange, type WrittenChange } from '../../src/domain/webhooks/messages.js';

/**
 * The log rows a worker has read, by seq, shared by every subscription that wants them: with a hundred
 * subscriptions to every station each row is read from PostgreSQL once, not a hundred times, and its
 * change written as JSON once (src/domain/webhooks/messages.ts `writtenChange`: only that and what the
 * filters read are kept, not the parsed row). A log row never changes once written, so a kept one is
 * never stale; beyond `max` the oldest read are let go.
 */
export class LogRowCache {
  private readonly rows = new Map<string, WrittenChange>();

  constructor(
    private readonly sql: Sql,
    /** The platform's public URL, for station records' URLs (WEBHOOK_BASE_URL's, as the messages carry it). */
    private readonly baseUrl: string,
    private readonly max = 20_000,
  ) {}

  /**
   * The claimed subscriptions with their rows, in their seqs' order, the missing ones read in one
   * statement. A seq the log no longer holds (pruned since the claim) ends its subscription's list
   * there: what it wants after it is read by its next claim.
   */
  async attach(claimed: readonly ClaimedRow[]): Promise<ClaimedSubscription[]> {
    const missing = new Set<string>();
    for (const sub of claimed) for (const seq of sub.change_seqs) if (!this.rows.has(seq)) missing.add(seq);
    if (missing.size > 0) for (const row of await changeRowsBySeq(this.sql, [...missing])) this.rows.set(row.seq, writtenChange(row, this.baseUrl));
    const attached = claimed.map(({ change_seqs, ...sub }) => {
      const changes: WrittenChange[] = [];
      for (const seq of change_seqs) {
        const row = this.rows.get(seq);
        if (!row) break;
        changes.push(row);
      }
      return { ...sub, changes };
    });
    for (const seq of this.rows.keys()) {
      if (this.rows.size <= this.max) break;
      this.rows.delete(seq);
    }
    return attached;
  }

  /** How many rows are kept (for the tests). */
  get size(): number {
    return this.rows.size;
  }
}
