import { SignalWriter, type StoredTransmission } from '../../../db/queries/signals.js';
import type { Dialect, V1Signal } from '../../domain/import-v1/validate.js';
import { validateV1BatchInSlices } from '../../domain/import-v1/validate.js';
import { stationNamed } from '../../domain/import-v2/fields.js';
import type { PublishedSignal, Receipt } from '../../domain/signals.js';
import type { OriginatorLookup, StationLookup } from '../../domain/stations.js';
import { json, type Reply } from '../../http/errors.js';
import type { Family } from '../../http/family.js';
import { parseJson, type Request } from '../../http/request.js';
import type { HttpServer } from '../../http/server.js';
import { originatorOf } from '../auth.js';
import { noteCall } from '../call-log.js';
import { IMPORT_V2_JSON, publishedOf, receiptOf, type SignalOutlet } from '../signals.js';
import { signalDoc } from './docs/signals.js';
import type { DialectDoc } from './docs/dialects.js';

/**
 * `POST /import/v1/hrs-availability` and `POST /import/v1.1/hrs-availability`: signals validated
 * independently, in order; every valid one is stored (one group commit, the same writer as v2) even
 * when the answer is a 400 whose array, aligned with the request, says what was refused. A signal is
 * an availability reading: live ones replace the station's published availability when they are the
 * newest by `datetime`, whichever generation sent the other, and drive its freshness actor.
 *
 * The originator's transmission state for the station routes it: Live is stored and published,
 * Testing is stored as its latest and not published, Inactive (or none) is kept for debugging only, as
 * v2's unassigned.
 */

/** Told how many signals a family stored and refused (metrics). */
export type LegacySignalCounter = (family: string, outcome: 'accepted' | 'rejected', count: number) => void;

export interface LegacySignalDeps {
  registry: StationLookup & Pick<OriginatorLookup, 'assignment'>;
  writer: SignalWriter;
  outlet: SignalOutlet;
  counted?: LegacySignalCounter;
}

const SLICE = 50;
const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/** The generation a stored v1 reading names as its source (`payload.source`). */
export const SOURCES: Record<Dialect, NonNullable<Receipt['source']>> = { v1: 'import_v1', 'v1.1': 'import_v1.1' };

export function legacySignalRoute(server: HttpServer, family: Family, d: DialectDoc, deps: LegacySignalDeps): void {
  server.route({
    family,
    method: 'POST',
    path: `${family.prefix}hrs-availability`,
    // Read and checked by the domain, not by a body schema: each signal is validated on its own and the
    // valid ones stored even when others fail (partial acceptance, an array aligned with the request),
    // which no schema's refusal can do. The request's schema is the document's (`SignalRequest`).
    body: true,
    doc: signalDoc(d),
    handler: (req) => receive(deps, family.name, d.dialect, req),
  });
}

async function receive(deps: LegacySignalDeps, familyName: string, dialect: Dialect, req: Request): Promise<Reply> {
  const originatorId = originatorOf(req);
  const body = parseJson(req, IMPORT_V2_JSON); // read as import v2 reads a body: the same limits
  const result = await validateV1BatchInSlices(dialect, body, deps.registry, req.receivedAt, SLICE, nextTurn);
  if (result.kind !== 'checked') {
    deps.counted?.(familyName, 'rejected', Array.isArray(body) ? body.length : 1);
    noteCall(req, { errorDetails: { code: 'validation_failed', errors: result.body } });
    return json(400, result.body);
  }
  const signals = result.outcomes.flatMap((o) => (o.ok ? [o.signal] : []));
  const rows = signals.map((s) => stored(deps, originatorId, req, s));
  await deps.writer.write(rows);
  const rejected = result.outcomes.length - signals.length;
  deps.counted?.(familyName, 'accepted', rows.length);
  deps.counted?.(familyName, 'rejected', rejected);
  const live: PublishedSignal[] = [];
  const receipts: Receipt[] = [];
  for (const row of rows) {
    if (row.state === 'live') live.push(publishedOf(row));
    else receipts.push(receiptOf(row, SOURCES[dialect]));
  }
  deps.outlet.publish(live);
  deps.outlet.received(receipts);
  const stationIds = stationsNamed(body);
  if (result.body === null) {
    noteCall(req, { stationIds });
    return { status: 204 };
  }
  noteCall(req, { stationIds, errorDetails: { code: 'validation_failed', accepted: rows.length, rejected, errors: result.body } });
  return json(400, result.body);
}

/** The `hrs` values a list names, in order (what the call log records). */
function stationsNamed(body: unknown): string[] {
  if (!Array.isArray(body)) return [];
  return body.flatMap((s) => stationNamed(s) ?? []);
}

function stored(deps: LegacySignalDeps, originatorId: string, req: Request, s: V1Signal): StoredTransmission {
  const state = deps.registry.assignment(originatorId, s.hrsId, 'v1');
  return {
    originatorId,
    hrsId: s.hrsId,
    category: 'availability',
    state: state === 'live' || state === 'testing' ? state : 'unassigned',
    measuredAt: s.measuredAt,
    receivedAt: req.receivedAt,
    transmissionId: s.transmissionId,
    payload: { ...s.payload, source: SOURCES[s.dialect] },
  };
}
