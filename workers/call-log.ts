import { Worker, createNodeRedisClient, UnrecoverableError, type Job, type Queue } from 'bullmq';
import { z } from 'zod';
import type { Logger } from 'pino';
import type { Sql } from '../db/connect.js';
import { insertCallLogs, type CallLogRow } from '../db/queries/call-logs.js';
import type { Redis } from '../src/infra/redis.js';
import { QUEUES, bullPrefix } from './queues.js';

import type { CallLogMode } from '../src/domain/vocabulary.js';

/** One API call as a request handler describes it, once its response status is known. */
export interface CallLogEntry {
  /** The originator whose token authenticated the call. */
  originator: string;
  /** When the platform received the request (`Request.receivedAt`). */
  requestTime: Date;
  /** Method and route path, e.g. `POST /import/v2/signal/usage/`. */
  endpoint: string;
  /** The stations (`hrs_id`) the request named, as far as they could be read; empty if none. */
  stationIds: readonly string[];
  /** The response status sent. */
  status: number;
  /** The request body as received; stored for every recorded call (capped). */
  requestBody: Buffer | string | undefined;
  /** The response body sent; stored for failed calls only (capped). */
  responseBody?: Buffer | string | undefined;
  /** What went wrong, any JSON value (error code, validation issues, …); stored for failed calls only. */
  errorDetails?: unknown;
  /** The `X-Request-Id` the response carried. */
  requestId: string;
}

/** Bodies are stored up to this many bytes of UTF-8, then cut at a character boundary with a marker. */
export const MAX_STORED_BODY_BYTES = 64 * 1024;
/** Error details whose JSON is longer are replaced by a truncated preview. */
export const MAX_ERROR_DETAILS_CHARS = 64 * 1024;
const MAX_STATION_IDS = 1000;
const MAX_STATION_ID_CHARS = 100;
// Room for the marker a cut body ends with.
const MARKER_ROOM = 200;

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/** PostgreSQL text and jsonb refuse U+0000 and unpaired surrogates; both become U+FFFD. */
export function storable(text: string): string {
  return text.replace(/\0/g, '\uFFFD').replace(LONE_SURROGATE, '\uFFFD');
}

function storableJson(value: z.core.util.JSONType): z.core.util.JSONType {
  if (typeof value === 'string') return storable(value);
  if (Array.isArray(value)) return value.map(storableJson);
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [storable(k), storableJson(v)]));
  }
  return value;
}

const text = (max: number) => z.string().max(max).transform(storable);

/**
 * A call-log job: one row of `call_logs`. Parsing makes every string storable, so the recorder and
 * the worker (which validates again) agree and no entry can make a whole batch fail.
 */
export const callLogJobSchema = z.strictObject({
  originator: z.string().regex(/^[a-z0-9][a-z0-9._-]{0,63}$/),
  request_time: z.iso.datetime({ offset: true }),
  endpoint: text(300).pipe(z.string().min(1)),
  station_ids: z.array(text(MAX_STATION_ID_CHARS)).max(MAX_STATION_IDS),
  status: z.number().int().min(100).max(599),
  request_body: text(MAX_STORED_BODY_BYTES + MARKER_ROOM),
  response_body: text(MAX_STORED_BODY_BYTES + MARKER_ROOM).nullable(),
  error_details: z.json().transform(storableJson).nullable(),
  request_id: text(200).pipe(z.string().min(1)),
});
export type CallLogJob = z.output<typeof callLogJobSchema>;

/** A body as received, decoded as UTF-8 and cut to `maxBytes` with a marker saying how much came. */
export function capBody(body: Buffer | string | undefined | null, maxBytes = MAX_STORED_BODY_BYTES): string {
  if (body === undefined || body === null) return '';
  if (typeof body === 'string' && body.length * 3 <= maxBytes) return body;
  const bytes = typeof body === 'string' ? Buffer.from(body, 'utf8') : body;
  if (bytes.length <= maxBytes) return typeof body === 'string' ? body : bytes.toString('utf8');
  let end = maxBytes;
  // Back off to the start of a UTF-8 sequence, so no character is cut in half.
  while (end > 0 && (bytes[end]! & 0xc0) === 0x80) end--;
  return `${bytes.subarray(0, end).toString('utf8')}\n[truncated: ${bytes.length} bytes received, the first ${end} stored]`;
}

/** Error details as plain, bounded JSON; something that is not JSON-serialisable is described instead. */
function errorDetailsJson(details: unknown): unknown {
  if (details === undefined || details === null) return null;
  let json: string | undefined;
  try {
    json = JSON.stringify(details);
  } catch (err) {
    return { unserializable: err instanceof Error ? err.message : String(err) };
  }
  if (json === undefined) return null;
  if (json.length > MAX_ERROR_DETAILS_CHARS) {
    return { truncated: true, json_chars: json.length, preview: json.slice(0, MAX_ERROR_DETAILS_CHARS) };
  }
  return JSON.parse(json);
}

/** The job payload for an entry: failed calls keep their response body and error details. */
export function callLogPayload(entry: CallLogEntry): unknown {
  const failed = entry.status >= 400;
  return {
    originator: entry.originator,
    request_time: entry.requestTime.toISOString(),
    endpoint: entry.endpoint,
    station_ids: entry.stationIds.slice(0, MAX_STATION_IDS).map((id) => String(id).slice(0, MAX_STATION_ID_CHARS)),
    status: entry.status,
    request_body: capBody(entry.requestBody),
    response_body: failed ? capBody(entry.responseBody) : null,
    error_details: failed ? errorDetailsJson(entry.errorDetails) : null,
    request_id: entry.requestId,
  };
}

/** Whether a call is recorded under an originator's mode. */
export function shouldRecord(mode: CallLogMode, status: number): boolean {
  return mode === 'always' || (mode === 'errors' && status >= 400);
}

// The table is the record; a completed job need not stay in Redis holding a copy of the body.
const JOB_OPTIONS = { removeOnComplete: true, removeOnFail: { age: 7 * 24 * 3600, count: 1000 } } as const;

/**
 * Used by request handlers once the response status is known. Recording only enqueues a job; it
 * never throws and never fails the request: a failed enqueue is logged and the entry is lost.
 */
export class CallLogRecorder {
  private readonly pending = new Set<Promise<void>>();
  private closed = false;

  constructor(
    private readonly queue: Queue,
    private readonly log: Logger,
  ) {}

  /** Resolves once the entry is enqueued (or skipped, or its enqueue failed); never rejects. */
  record(mode: CallLogMode, entry: CallLogEntry): Promise<void> {
    if (!shouldRecord(mode, entry.status)) return Promise.resolve();
    if (this.closed) {
      this.log.warn({ originator: entry.originator, request_id: entry.requestId }, 'call log entry dropped: the recorder is closed');
      return Promise.resolve();
    }
    let job: CallLogJob;
    try {
      const parsed = callLogJobSchema.safeParse(callLogPayload(entry));
      if (!parsed.success) throw new Error(`invalid call log entry: ${parsed.error.message}`);
      job = parsed.data;
    } catch (err) {
      this.log.error({ err, originator: entry.originator, request_id: entry.requestId }, 'call log entry dropped');
      return Promise.resolve();
    }
    const added = (async () => {
      try {
        await this.queue.add('call', job, JOB_OPTIONS);
      } catch (err) {
        this.log.warn({ err, originator: entry.originator, request_id: entry.requestId }, 'call log entry could not be enqueued');
      }
    })();
    this.pending.add(added);
    void added.finally(() => this.pending.delete(added));
    return added;
  }

  /** Waits for enqueues under way, then closes the queue; later entries are dropped with a warning. */
  async close(): Promise<void> {
    this.closed = true;
    await Promise.all(this.pending);
    await this.queue.close();
  }
}

export interface CallLogWorkerOptions {
  redis: Redis;
  redisPrefix: string;
  sql: Sql;
  log: Logger;
  /** Entries per INSERT: a batch is written as soon as it has this many (default 200). */
  batchSize?: number;
  /** The longest an entry waits for its batch to fill before it is written anyway (default 200 ms). */
  maxWaitMs?: number;
}

export interface CallLogWorkerStats {
  /** INSERT statements committed, rows they wrote, entries skipped (originator gone), failed INSERTs. */
  flushes: number;
  rows: number;
  skipped: number;
  failedFlushes: number;
}

export interface CallLogWorker {
  readonly name: string;
  readonly worker: Worker;
  readonly stats: Readonly<CallLogWorkerStats>;
  /** Writes what is gathered, lets active jobs finish, stops. */
  close(): Promise<void>;
}

/** Raised to every job of a batch whose INSERT failed; BullMQ retries them with backoff. */
class CallLogWriteError extends Error {}

interface Waiting {
  row: CallLogRow;
  resolve: () => void;
  reject: (err: Error) => void;
}

/**
 * Writes call-log jobs to PostgreSQL in batches. The worker takes up to `batchSize` jobs at once;
 * each waits for its batch, which is written in one INSERT when full or `maxWaitMs` after its first
 * entry. A job completes only once its row is committed; when the INSERT fails, every job of the
 * batch fails and is retried.
 */
export function startCallLogWorker(options: CallLogWorkerOptions): CallLogWorker {
  const batchSize = options.batchSize ?? 200;
  const maxWaitMs = options.maxWaitMs ?? 200;
  const log = options.log.child({ worker: QUEUES.callLog });
  const stats: CallLogWorkerStats = { flushes: 0, rows: 0, skipped: 0, failedFlushes: 0 };
  let waiting: Waiting[] = [];
  let timer: NodeJS.Timeout | undefined;

  const flush = (): void => {
    clearTimeout(timer);
    timer = undefined;
    if (waiting.length === 0) return;
    const batch = waiting;
    waiting = [];
    insertCallLogs(options.sql, batch.map((w) => w.row)).then(
      (written) => {
        stats.flushes++;
        stats.rows += written;
        stats.skipped += batch.length - written;
        if (written < batch.length) log.info({ skipped: batch.length - written }, 'call log entries of removed originators skipped');
        for (const w of batch) w.resolve();
      },
      (err: unknown) => {
        stats.failedFlushes++;
        log.warn({ err, entries: batch.length }, 'writing call log entries failed; the jobs will be retried');
        const failure = new CallLogWriteError(`writing call log entries failed: ${err instanceof Error ? err.message : String(err)}`);
        for (const w of batch) w.reject(failure);
      },
    );
  };

  const worker = new Worker(
    QUEUES.callLog,
    async (job: Job) => {
      const parsed = callLogJobSchema.safeParse(job.data);
      if (!parsed.success) throw new UnrecoverableError(`invalid call log job: ${parsed.error.message}`);
      await new Promise<void>((resolve, reject) => {
        waiting.push({ row: parsed.data, resolve, reject });
        if (waiting.length >= batchSize) flush();
        else timer ??= setTimeout(flush, maxWaitMs);
      });
    },
    {
      connection: createNodeRedisClient(options.redis),
      prefix: bullPrefix(options.redisPrefix),
      // As many jobs in hand as one batch holds: a full batch is written at once.
      concurrency: batchSize,
    },
  );
  worker.on('failed', (job, err) => {
    // A failed batch was logged once, not once per job.
    if (!(err instanceof CallLogWriteError)) log.warn({ job_id: job?.id, err }, 'call log job failed');
  });
  worker.on('error', (err) => log.error({ err }, 'call log worker error'));

  return {
    name: worker.name,
    worker,
    stats,
    async close() {
      // Closed while its blocking connection is still opening, a worker can leave that connection
      // open; let it finish opening first (briefly: an unreachable Redis must not hold up shutdown).
      await Promise.race([worker.waitUntilReady().catch(() => {}), sleep(2000)]);
      const closing = worker.close();
      flush();
      await closing;
      flush();
    },
  };
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}
