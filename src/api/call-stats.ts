import type { Sql } from '../../db/connect.js';
import { addCallCounts, type CallCount } from '../../db/queries/call-stats.js';
import { firstError, type Rejection } from '../domain/rejections.js';
import type { Logger } from 'pino';
import type { Family, Observer } from '../http/family.js';
import { principalOf } from './auth.js';
import { callNotesOf } from './call-log.js';

/**
 * Every import call of an originator counted, whatever its call-log mode keeps: in memory per
 * originator and hour, added to PostgreSQL every few seconds by one statement (`flush`), so the import
 * path does no SQL of its own for it; instances add up. Refused calls also go to the admins' live feed.
 */

const HOUR_MS = 3_600_000;

export class CallCounter {
  private counts = new Map<string, CallCount>();

  count(originator: string, at: number, rejected: boolean): void {
    const hour = Math.floor(at / HOUR_MS) * HOUR_MS;
    const key = `${originator}\u0000${hour}`;
    let entry = this.counts.get(key);
    if (!entry) {
      entry = { originator, hour, calls: 0, rejected: 0, lastCallAt: at, lastRejectedAt: null };
      this.counts.set(key, entry);
    }
    entry.calls++;
    entry.lastCallAt = Math.max(entry.lastCallAt, at);
    if (rejected) {
      entry.rejected++;
      entry.lastRejectedAt = Math.max(entry.lastRejectedAt ?? 0, at);
    }
  }

  /** Adds what was counted since the last flush; on failure the counts are kept for the next one. */
  async flush(sql: Sql): Promise<void> {
    if (this.counts.size === 0) return;
    const taken = this.counts;
    this.counts = new Map();
    try {
      await addCallCounts(sql, [...taken.values()]);
    } catch (err) {
      for (const [key, entry] of taken) {
        const now = this.counts.get(key);
        if (!now) this.counts.set(key, entry);
        else {
          now.calls += entry.calls;
          now.rejected += entry.rejected;
          now.lastCallAt = Math.max(now.lastCallAt, entry.lastCallAt);
          now.lastRejectedAt = entry.lastRejectedAt === null ? now.lastRejectedAt : Math.max(now.lastRejectedAt ?? 0, entry.lastRejectedAt);
        }
      }
      throw err;
    }
  }

  get pending(): number {
    return this.counts.size;
  }
}

/** The import families' observer: counts every originator's call, and tells `rejected` of each refused one. */
export function importCallObserver(counter: CallCounter, rejected: (rejection: Rejection) => void): Observer {
  return (req, reply) => {
    const principal = principalOf(req);
    if (principal?.kind !== 'originator') return;
    const refused = reply.status >= 400;
    counter.count(principal.id, req.receivedAt.getTime(), refused);
    if (!refused) return;
    rejected({
      originator_id: principal.id,
      endpoint: `${req.method} ${req.path}`,
      status: reply.status,
      hrs_ids: callNotesOf(req)?.stationIds ?? [],
      error: firstError(reply.body),
      at: req.receivedAt.toISOString(),
    });
  };
}

/** How often the counts are added to PostgreSQL. */
const FLUSH_MS = 5000;

export interface ImportCallWatch {
  readonly counter: CallCounter;
  /** Adds what is counted now (tests; the timer does it every few seconds). */
  flush(): Promise<void>;
  /** Stops the timer and adds the last counts (the ordered shutdown). */
  close(): Promise<void>;
}

/**
 * Watches the import families' calls: counts them (added to PostgreSQL every 5 s and at close) and
 * hands the refused ones, a batch per event-loop turn, to `rejected` (the admins' feed on every instance).
 */
export function watchImportCalls(
  server: { observe(family: Family, observer: Observer): unknown },
  families: readonly Family[],
  deps: { sql: Sql; log: Logger; rejected: (rejections: Rejection[]) => void },
): ImportCallWatch {
  const counter = new CallCounter();
  let batch: Rejection[] = [];
  const observer = importCallObserver(counter, (rejection) => {
    if (batch.length === 0) {
      setImmediate(() => {
        const out = batch;
        batch = [];
        deps.rejected(out);
      });
    }
    batch.push(rejection);
  });
  for (const family of families) server.observe(family, observer);
  const flush = () => counter.flush(deps.sql);
  const timer = setInterval(() => flush().catch((err: unknown) => deps.log.warn({ err }, 'adding the import call counts failed; kept for the next try')), FLUSH_MS);
  timer.unref();
  return {
    counter,
    flush,
    async close() {
      clearInterval(timer);
      await flush().catch((err: unknown) => deps.log.warn({ err }, 'the last import call counts were not added'));
    },
  };
}
