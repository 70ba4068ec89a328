import type { OriginatorLookup } from '../domain/stations.js';
import type { CallLogMode } from '../domain/vocabulary.js';
import type { Observer } from '../http/family.js';
import type { Request } from '../http/request.js';
import type { CallLogEntry } from '../../workers/call-log/job.js';
import { principalOf } from './auth.js';

/** What a handler learnt that the call log wants: the stations named, error details. */
export interface CallNotes {
  stationIds?: string[];
  errorDetails?: unknown;
}

/** Where the call log is kept (the producer of the call-log queue). */
export interface CallLogSink {
  record(mode: CallLogMode, entry: CallLogEntry): Promise<void>;
}

const notes = new WeakMap<Request, CallNotes>();

/** Notes, for the call log, what the handler learnt of a request. */
export function noteCall(req: Request, note: CallNotes): void {
  notes.set(req, note);
}

/** What the handler noted of a request, if anything. */
export function callNotesOf(req: Request): CallNotes | undefined {
  return notes.get(req);
}

/** The import call log (v1, v1.1, v2): every answered call of an originator, as its call-log mode asks. */
export function callLogObserver(sink: CallLogSink, originators: Pick<OriginatorLookup, 'callLogMode'>): Observer {
  return (req, reply) => {
    const principal = principalOf(req);
    if (principal?.kind !== 'originator') return;
    const note = notes.get(req) ?? {};
    void sink.record(originators.callLogMode(principal.id), {
      originator: principal.id,
      requestTime: req.receivedAt,
      endpoint: `${req.method} ${req.path}`,
      stationIds: note.stationIds ?? [],
      status: reply.status,
      requestBody: req.body,
      responseBody: reply.body,
      errorDetails: note.errorDetails ?? (reply.status >= 400 ? { status: reply.status } : undefined),
      requestId: req.id,
      clientAddress: req.clientAddress,
    });
  };
}
