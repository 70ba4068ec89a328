import { DatabaseTimeoutError, isDatabaseUnavailable, timeoutOf, type Sql, type Tx } from '../connect.js';
import { statementsBy } from '../deadline.js';
import { StoredReading, StoredSignal, type PublishedSignal } from '../../src/domain/signals.js';
import type { Category } from '../../src/domain/categories/index.js';

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
  /**
   * The payload as JSON and the times in ISO 8601, once made (see `serialised`): storing and
   * announcing a reading both need them.
   */
  text?: SerialisedReading;
}

/** A reading's payload as JSON and its measurement and receipt times as ISO 8601. */
export interface SerialisedReading {
  payload: string;
  measuredAt: string;
  receivedAt: string;
}

/** A row's payload and times as text, made once per row (the receipt time once per request). */
export function serialised(row: StoredTransmission): SerialisedReading {
  return (row.text ??= { payload: JSON.stringify(row.payload), measuredAt: row.measuredAt.toISOString(), receivedAt: iso(row.receivedAt) });
}

/** `toISOString` of the last Date asked for, kept: the rows of a request share their receipt time. */
let isoOf: { at: Date; text: string } | undefined;
function iso(at: Date): string {
  if (isoOf?.at !== at) isoOf = { at, text: at.toISOString() };
  return isoOf.text;
}

/**
 * The rows as one JSON document, so the whole batch is one parameter parsed by PostgreSQL once. Built
 * from each row's serialised payload (`serialised`, shared with the announcement) and its
 * JSON-escaped strings; the times are ISO 8601.
 */
function document(rows: StoredTransmission[]): string {
  let out = '[';
  for (let i = 0; i < rows.length; i++) {
    const r = rows[i]!;
    const text = serialised(r);
    out +=
      `${i === 0 ? '' : ','}{"o":${JSON.stringify(r.originatorId)},"h":${JSON.stringify(r.hrsId)},"c":${JSON.stringify(r.category)},` +
      `"s":${JSON.stringify(r.state)},"m":"${text.measuredAt}","r":"${text.receivedAt}",` +
      `"i":${r.transmissionId === null ? 'null' : JSON.stringify(r.transmissionId)},"p":${text.payload}}`;
  }
  return `${out}]`;
}

/**
 * Stores accepted transmissions in one statement (so one round trip and one atomic commit): the latest
 * per originator, station and category for all (the last of the batch wins); for live ones also the
 * published snapshot, replacing the previous one entirely unless the stored one was measured later (a
 * late reading never overwrites a newer one), and a history row. Rows are locked in key order, so
 * concurrent batches cannot deadlock. Keys are compared bytewise (COLLATE "C") where the statement
 * sorts them: the order only has to be the same for everyone. Resolves only after COMMIT.
 */
export async function storeTransmissions(sql: Sql | Tx, rows: StoredTransmission[]): Promise<void> {
  if (rows.length === 0) return;
  await sql`
    WITH input AS (
      SELECT o COLLATE "C" AS o, h COLLATE "C" AS h, c COLLATE "C" AS c, s, m, r, i, p, n
      -- The document goes as text (a jsonb parameter would be JSON-encoded a second time by the client).
      FROM ROWS FROM (jsonb_to_recordset(${document(rows)}::text::jsonb)
        AS (o text, h text, c text, s text, m timestamptz, r timestamptz, i text, p jsonb)) WITH ORDINALITY AS u(o, h, c, s, m, r, i, p, n)
    ), latest AS (
      INSERT INTO signal_latest (originator_id, hrs_id, category, assignment_state, measured_at, received_at, transmission_id, payload)
      SELECT DISTINCT ON (o, h, c) o, h, c, s, m, r, i, p FROM input ORDER BY o, h, c, n DESC
      ON CONFLICT (originator_id, hrs_id, category) DO UPDATE SET
        assignment_state = EXCLUDED.assignment_state, measured_at = EXCLUDED.measured_at, received_at = EXCLUDED.received_at,
        transmission_id = EXCLUDED.transmission_id, payload = EXCLUDED.payload
    ), published AS (
      INSERT INTO published_signals (hrs_id, category, originator_id, measured_at, received_at, transmission_id, payload)
      SELECT DISTINCT ON (h, c) h, c, o, m, r, i, p FROM input WHERE s = 'live' ORDER BY h, c, m DESC, n DESC
      ON CONFLICT (hrs_id, category) DO UPDATE SET
        originator_id = EXCLUDED.originator_id, measured_at = EXCLUDED.measured_at, received_at = EXCLUDED.received_at,
        transmission_id = EXCLUDED.transmission_id, payload = EXCLUDED.payload
      WHERE EXCLUDED.measured_at >= published_signals.measured_at
    )
    INSERT INTO signal_history (hrs_id, category, originator_id, measured_at, received_at, transmission_id, payload)
    SELECT h, c, o, m, r, i, p FROM input WHERE s = 'live' ORDER BY n`;
}

interface Pending {
  rows: StoredTransmission[];
  /** When it was queued (performance.now()). */
  at: number;
  resolve: () => void;
  reject: (err: unknown) => void;
  /** Fails it, unsent, when it is still queued at the pool's bound. */
  timer?: NodeJS.Timeout;
}

/**
 * Group commit: the writes of requests that arrive while statements are running are stored together
 * in the next one, so PostgreSQL commits once for many requests (a few statements run at once, each on
 * its own pooled connection). Each request still resolves only after
 * the COMMIT that holds its rows. When a shared transaction fails, each request is retried in a
 * transaction of its own, so one request's failure never fails another's; but when PostgreSQL is
 * unavailable every request of the batch fails at once (a retry would only wait again).
 *
 * On a pool with a bound (`timeoutOf`, DATABASE_TIMEOUT), every request is answered within it from
 * when it was queued: one still queued at its bound fails unsent, and a batch is stored in a
 * transaction that must be done by its oldest request's bound (db/deadline.ts: its COMMIT is sent
 * only before that deadline, and a transaction that missed it is rolled back). So a request answered
 * with an error never has its rows committed later, unless the error says they may have been (the
 * deadline passed after COMMIT was sent).
 */
export class SignalWriter {
  private queue: Pending[] = [];
  private running = 0;

  /**
   * `hooks.onCommit`: told of every shared commit that succeeded, its rows and seconds (metrics; must
   * not throw). `commits`: how many statements may be in flight at once, each on its own connection.
   */
  constructor(
    private readonly sql: Sql,
    private readonly hooks: { onCommit?(rows: number, seconds: number): void } = {},
    private readonly maxRowsPerCommit = 2000,
    private readonly commits = 2,
  ) {}

  write(rows: StoredTransmission[]): Promise<void> {
    if (rows.length === 0) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const pending: Pending = { rows, at: performance.now(), resolve, reject };
      const bound = timeoutOf(this.sql);
      if (bound !== undefined) pending.timer = setTimeout(() => this.expire(pending, bound), bound);
      this.queue.push(pending);
      if (this.running < this.commits) void this.drain();
    });
  }

  private async drain(): Promise<void> {
    this.running++;
    try {
      while (this.queue.length > 0) {
        const batch = this.take();
        if (batch.length === 0) continue;
        try {
          const rows = batch.flatMap((p) => p.rows);
          const started = performance.now();
          await this.store(rows, batch[0]!.at);
          this.hooks.onCommit?.(rows.length, (performance.now() - started) / 1000);
          for (const p of batch) p.resolve();
        } catch (err) {
          if (batch.length === 1 || isDatabaseUnavailable(err)) for (const p of batch) p.reject(err);
          else await Promise.all(batch.map((p) => this.store(p.rows, p.at).then(p.resolve, p.reject)));
        }
      }
    } finally {
      this.running--;
    }
  }

  /**
   * The rows in one statement, which on a bounded pool must be answered by `queuedAt` + the bound. One
   * statement, not a transaction: BEGIN and COMMIT around it cost a third of the server's CPU per
   * imported signal (groups are small), so a statement sent and not answered in time fails saying it
   * may have been applied (a resent reading is harmless: the newest measurement is published), and
   * one still queued fails as never sent.
   */
  private store(rows: StoredTransmission[], queuedAt: number): Promise<void> {
    const bound = timeoutOf(this.sql);
    if (bound === undefined) return storeTransmissions(this.sql, rows);
    return storeTransmissions(statementsBy(this.sql, queuedAt + bound), rows);
  }

  /** Fails, unsent, a request still queued at the pool's bound: its client is not kept waiting. */
  private expire(pending: Pending, bound: number): void {
    const index = this.queue.indexOf(pending);
    if (index < 0) return;
    this.queue.splice(index, 1);
    pending.reject(new DatabaseTimeoutError(`PostgreSQL did not take the write within ${bound} ms; it was not sent`, false));
  }

  private take(): Pending[] {
    let rows = 0;
    let count = 0;
    while (count < this.queue.length && (count === 0 || rows + this.queue[count]!.rows.length <= this.maxRowsPerCommit)) {
      rows += this.queue[count]!.rows.length;
      count++;
    }
    const batch = this.queue.splice(0, count);
    for (const p of batch) clearTimeout(p.timer);
    return batch;
  }
}

/** Times as epoch milliseconds (whole, as a Date holds them): numbers parse faster than timestamps. */
/** The payload as text: parsed when first read (src/domain/signals.ts `StoredReading`). */
type PublishedRow = { hrs_id: string; category: Category; originator_id: string; measured_ms: number; received_ms: number; payload: string };

/**
 * Every published reading (`published_signals`), `batchSize` rows at a time, in pages by the primary
 * key (hrs_id, category): each page is a statement of its own, short whatever the table's size (a
 * cursor over the whole table is one statement, which the server's `statement_timeout` cancels once the
 * restore of a large registry takes longer than DATABASE_TIMEOUT). The next page is read while the
 * caller takes the current one. A row written meanwhile is read when its key is still ahead. Payloads
 * come as text, parsed when first read.
 */
export async function* publishedSignalBatches(sql: Sql, batchSize = 5000): AsyncGenerator<PublishedSignal[]> {
  const page = (after: { hrsId: string; category: string } | undefined) =>
    after === undefined
      ? sql<PublishedRow[]>`
          SELECT hrs_id, category, originator_id, floor(extract(epoch FROM measured_at) * 1000)::float8 AS measured_ms,
                 floor(extract(epoch FROM received_at) * 1000)::float8 AS received_ms, payload::text AS payload
          FROM published_signals ORDER BY hrs_id, category LIMIT ${batchSize}`
      : sql<PublishedRow[]>`
          SELECT hrs_id, category, originator_id, floor(extract(epoch FROM measured_at) * 1000)::float8 AS measured_ms,
                 floor(extract(epoch FROM received_at) * 1000)::float8 AS received_ms, payload::text AS payload
          FROM published_signals WHERE (hrs_id, category) > (${after.hrsId}, ${after.category})
          ORDER BY hrs_id, category LIMIT ${batchSize}`;
  let next: Promise<PublishedRow[]> | undefined = page(undefined);
  while (next) {
    const rows: PublishedRow[] = await next;
    const last = rows.at(-1);
    next = rows.length === batchSize && last ? page({ hrsId: last.hrs_id, category: last.category }) : undefined;
    // Not left unhandled while the caller takes this page; awaited (and so thrown) in the next turn.
    next?.catch(() => {});
    yield rows.map((row) => new StoredSignal(row.hrs_id, row.category, row.originator_id, new StoredReading(row.measured_ms, row.received_ms, row.payload)));
  }
}

export interface TransmissionRow {
  originator: string;
  hrs_id: string;
  category: string;
  state: 'testing' | 'unassigned';
  measured_at: Date;
  received_at: Date;
  transmission_id: string | null;
  payload: unknown;
}

/**
 * The latest testing or unassigned transmission per originator, station and category, newest receipt
 * first; `after` continues from an entry's (received_at, originator, hrs_id, category).
 */
export async function listTransmissions(
  db: Sql,
  filter: { state: 'testing' | 'unassigned'; originator?: string | undefined; after?: { received_at: string; key: string } | undefined; limit: number },
): Promise<TransmissionRow[]> {
  return db<TransmissionRow[]>`
    SELECT originator_id AS originator, hrs_id, category, assignment_state AS state, measured_at, received_at, transmission_id, payload
    FROM signal_latest
    WHERE assignment_state = ${filter.state}
      ${filter.originator ? db`AND originator_id = ${filter.originator}` : db``}
      ${filter.after
        ? db`AND (received_at, originator_id || ' ' || hrs_id || ' ' || category) < (${filter.after.received_at}::timestamptz, ${filter.after.key})`
        : db``}
    ORDER BY received_at DESC, originator_id || ' ' || hrs_id || ' ' || category DESC
    LIMIT ${filter.limit}`;
}
