import type { Queue } from 'bullmq';
import type { Logger } from 'pino';
import type { CallLogMode } from '../../src/domain/vocabulary.js';
import { shouldRecord } from '../../src/domain/vocabulary.js';
import { callLogJobSchema, callLogPayload, type CallLogEntry, type CallLogJob } from './job.js';
import type { Redis } from '../../src/infra/redis.js';
import { redisFailed } from '../../src/infra/redis-outage.js';

/** The call-log producer: what the API process uses to enqueue a call-log job per recorded call. */

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
    /** The queue's Redis client: a failed enqueue during its outage is a debug line under the outage's one warning (src/infra/redis-outage.ts). */
    private readonly redis?: Redis,
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
        const fields = { originator: entry.originator, request_id: entry.requestId };
        if (this.redis) redisFailed(this.redis, this.log, err, 'call log entry could not be enqueued', fields);
        else this.log.warn({ err, ...fields }, 'call log entry could not be enqueued');
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
