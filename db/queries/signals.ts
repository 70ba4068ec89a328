import type { Sql } from '../connect.js';

export type AssignmentAtReceipt = 'live' | 'testing' | 'unassigned';

export interface StoredTransmission {
  originatorId: string;
  hrsId: string;
  category: string;
  state: AssignmentAtReceipt;
  measuredAt: Date;
  receivedAt: Date;
  transmissionId: string | null;
  payload: Record<string, unknown>;
}

const columns = (rows: StoredTransmission[]) => ({
  originators: rows.map((r) => r.originatorId),
  stations: rows.map((r) => r.hrsId),
  categories: rows.map((r) => r.category),
  states: rows.map((r) => r.state),
  measured: rows.map((r) => r.measuredAt.toISOString()),
  received: rows.map((r) => r.receivedAt.toISOString()),
  ids: rows.map((r) => r.transmissionId),
  payloads: rows.map((r) => JSON.stringify(r.payload)),
});

/**
 * Stores accepted transmissions in one transaction: the latest per originator, station and category
 * for all; for live ones also the published snapshot (replacing the previous one entirely, unless the
 * stored one was measured later: a late reading never overwrites a newer one) and a history row.
 * Resolves only after COMMIT.
 */
export async function storeTransmissions(sql: Sql, rows: StoredTransmission[]): Promise<void> {
  if (rows.length === 0) return;
  // Rows of several requests may name the same key: one statement may touch a row only once.
  const all = columns(lastPerKey(rows, (r) => `${r.originatorId}\u0000${r.hrsId}\u0000${r.category}`, () => true));
  const liveRows = rows.filter((r) => r.state === 'live');
  const newest = columns(lastPerKey(liveRows, (r) => `${r.hrsId}\u0000${r.category}`, (a, b) => b.measuredAt >= a.measuredAt));
  const live = columns(liveRows);
  await sql.begin(async (tx) => {
    await tx`
      INSERT INTO signal_latest (originator_id, hrs_id, category, assignment_state, measured_at, received_at, transmission_id, payload)
      SELECT o, h, c, s, m, r, i, p::jsonb
      FROM unnest(${all.originators}::text[], ${all.stations}::text[], ${all.categories}::text[], ${all.states}::text[],
                  ${all.measured}::timestamptz[], ${all.received}::timestamptz[], ${all.ids}::text[], ${all.payloads}::text[])
        AS u(o, h, c, s, m, r, i, p)
      ON CONFLICT (originator_id, hrs_id, category) DO UPDATE SET
        assignment_state = EXCLUDED.assignment_state, measured_at = EXCLUDED.measured_at, received_at = EXCLUDED.received_at,
        transmission_id = EXCLUDED.transmission_id, payload = EXCLUDED.payload`;
    if (live.stations.length === 0) return;
    await tx`
      INSERT INTO published_signals (hrs_id, category, originator_id, measured_at, received_at, transmission_id, payload)
      SELECT h, c, o, m, r, i, p::jsonb
      FROM unnest(${newest.stations}::text[], ${newest.categories}::text[], ${newest.originators}::text[],
                  ${newest.measured}::timestamptz[], ${newest.received}::timestamptz[], ${newest.ids}::text[], ${newest.payloads}::text[])
        AS u(h, c, o, m, r, i, p)
      ON CONFLICT (hrs_id, category) DO UPDATE SET
        originator_id = EXCLUDED.originator_id, measured_at = EXCLUDED.measured_at, received_at = EXCLUDED.received_at,
        transmission_id = EXCLUDED.transmission_id, payload = EXCLUDED.payload
      WHERE EXCLUDED.measured_at >= published_signals.measured_at`;
    await tx`
      INSERT INTO signal_history (hrs_id, category, originator_id, measured_at, received_at, transmission_id, payload)
      SELECT h, c, o, m, r, i, p::jsonb
      FROM unnest(${live.stations}::text[], ${live.categories}::text[], ${live.originators}::text[],
                  ${live.measured}::timestamptz[], ${live.received}::timestamptz[], ${live.ids}::text[], ${live.payloads}::text[])
        AS u(h, c, o, m, r, i, p)`;
  });
}

/** One row per key: a later row replaces an earlier one when `replaces(earlier, later)` holds. */
function lastPerKey<T>(rows: T[], key: (row: T) => string, replaces: (earlier: T, later: T) => boolean): T[] {
  const kept = new Map<string, T>();
  for (const row of rows) {
    const k = key(row);
    const earlier = kept.get(k);
    if (earlier === undefined || replaces(earlier, row)) kept.set(k, row);
  }
  return [...kept.values()];
}

interface Pending {
  rows: StoredTransmission[];
  resolve: () => void;
  reject: (err: unknown) => void;
}

/**
 * Group commit: the writes of requests that arrive while a transaction is running are stored together
 * in the next one, so PostgreSQL commits once for many requests. Each request still resolves only after
 * the COMMIT that holds its rows. When a shared transaction fails, each request is retried in a
 * transaction of its own, so one request's failure never fails another's.
 */
export class SignalWriter {
  private queue: Pending[] = [];
  private busy = false;

  constructor(
    private readonly sql: Sql,
    private readonly maxRowsPerCommit = 2000,
  ) {}

  write(rows: StoredTransmission[]): Promise<void> {
    if (rows.length === 0) return Promise.resolve();
    return new Promise((resolve, reject) => {
      this.queue.push({ rows, resolve, reject });
      if (!this.busy) void this.drain();
    });
  }

  private async drain(): Promise<void> {
    this.busy = true;
    try {
      while (this.queue.length > 0) {
        const batch = this.take();
        try {
          await storeTransmissions(this.sql, batch.flatMap((p) => p.rows));
          for (const p of batch) p.resolve();
        } catch (err) {
          if (batch.length === 1) batch[0]!.reject(err);
          else await Promise.all(batch.map((p) => storeTransmissions(this.sql, p.rows).then(p.resolve, p.reject)));
        }
      }
    } finally {
      this.busy = false;
    }
  }

  private take(): Pending[] {
    let rows = 0;
    let count = 0;
    while (count < this.queue.length && (count === 0 || rows + this.queue[count]!.rows.length <= this.maxRowsPerCommit)) {
      rows += this.queue[count]!.rows.length;
      count++;
    }
    return this.queue.splice(0, count);
  }
}
