import type { OriginatorLookup } from '../domain/stations.js';
import { shouldRecord, type CallLogMode } from '../domain/vocabulary.js';
import type { Observer } from '../http/family.js';
import type { Request } from '../http/request.js';
import type { CallLogEntry } from '../../workers/call-log/job.js';
import type { CallLogListing } from '../../db/queries/call-logs.js';
import { firstError, type Rejection } from '../domain/rejections.js';
import { principalOf } from './auth.js';

/** The import families whose calls are logged, and where their paths start (the admin API and the portal filter by them). */
export const FAMILY_PREFIXES = { import_v1: '/import/v1/', 'import_v1.1': '/import/v1.1/', import_v2: '/import/v2/' } as const;

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
  // Only a call its originator's mode keeps is recorded, and only then is the client address read.
  const keeping = (req: Request, status: number): { originator: string; mode: CallLogMode } | undefined => {
    const principal = principalOf(req);
    if (principal?.kind !== 'originator') return undefined;
    const mode = originators.callLogMode(principal.id);
    return shouldRecord(mode, status) ? { originator: principal.id, mode } : undefined;
  };
  const observer: Observer = (req, reply) => {
    const kept = keeping(req, reply.status);
    if (kept === undefined) return;
    const { originator, mode } = kept;
    const note = notes.get(req) ?? {};
    void sink.record(mode, {
      originator,
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
  observer.wantsClientAddress = (req, reply) => keeping(req, reply.status) !== undefined;
  return observer;
}

/**
 * One logged call as the portal and the admin API list it: its time as ISO 8601 and, for a refused
 * call, the first error of the answer and where it points (`error`, null for an accepted call or one
 * whose answer says nothing more than its status), as the admins' live feed shows refusals.
 */
export function callLogView(row: CallLogListing): Omit<CallLogListing, 'request_time'> & { request_time: string; error: Rejection['error'] } {
  let error: Rejection['error'] = null;
  if (row.status >= 400) {
    const details = row.error_details as { errors?: unknown } | null;
    error = firstError(row.response_body) ?? (details && typeof details === 'object' && 'errors' in details ? firstError(details.errors) : null);
  }
  return { ...row, request_time: row.request_time.toISOString(), error };
}
