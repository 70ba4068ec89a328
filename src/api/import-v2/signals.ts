import { SignalWriter, type StoredTransmission } from '../../../db/queries/signals.js';
import type { PublishedSignal, Receipt } from '../../domain/signals.js';
import type { OriginatorLookup, StationLookup } from '../../domain/stations.js';
import { CATEGORIES, type Category } from '../../domain/categories/index.js';
import { LIMIT_MESSAGES, LIMITS, validateBatchInSlices, type Transmission } from '../../domain/import-v2/validate.js';
import { badRequest, json, type Reply } from '../../http/errors.js';
import type { Family } from '../../http/family.js';
import { parseJson, type JsonOptions, type Request } from '../../http/request.js';
import type { HttpServer } from '../../http/server.js';
import { originatorOf } from '../auth.js';
import { noteCall } from '../call-log.js';

/** Where committed transmissions go: live ones published, the others' receipts to the admins' feed. */
export interface SignalOutlet {
  /** Call only after the COMMIT that stored `signals`. */
  publish(signals: readonly PublishedSignal[]): void;
  /** Call only after the COMMIT that stored the transmissions `receipts` describe. */
  received(receipts: readonly Receipt[]): void;
}

/** Told how many transmissions of a category were stored, validated as a dry run, or rejected (metrics). */
export type TransmissionCounter = (category: Category, outcome: 'accepted' | 'dry_run' | 'rejected', count: number) => void;

export interface SignalRouteDeps {
  registry: StationLookup & Pick<OriginatorLookup, 'assignment'>;
  writer: SignalWriter;
  outlet: SignalOutlet;
  counted?: TransmissionCounter;
}

/**
 * The four import v2 signal endpoints. The whole request is validated first; one failing
 * transmission rejects it all (400, nothing stored). Otherwise every non-dry-run transmission is
 * stored in one transaction (shared with concurrent requests by the group-commit writer), and the 204
 * goes out only after that COMMIT; live ones are then announced to every instance.
 */
export function signalRoutes(server: HttpServer, family: Family, deps: SignalRouteDeps): void {
  for (const category of CATEGORIES) {
    server.route({
      family,
      method: 'POST',
      path: `/import/v2/signal/${category}/`,
      body: true,
      handler: (req) => receive(deps, category, req),
    });
  }
}

const TOO_MANY = LIMIT_MESSAGES.tooLong(LIMITS.transmissions);

/**
 * How import v2 reads a body: `Content-Type: application/json` required (the spec), no duplicate keys
 * (the last would silently win), bounded nesting, and an array of more than the maximum transmissions
 * refused before it is parsed, in the same words as validation would.
 */
export const IMPORT_V2_JSON: JsonOptions = {
  requireContentType: true,
  rejectDuplicateKeys: true,
  maxDepth: LIMITS.depth,
  maxItems: { max: LIMITS.transmissions, error: () => badRequest('too_many_items', TOO_MANY, { non_field_errors: [TOO_MANY] }) },
};

/** Transmissions validated per event-loop turn: a large request lets other requests through between slices. */
const SLICE = 50;
const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

async function receive(deps: SignalRouteDeps, category: Category, req: Request): Promise<Reply> {
  const originatorId = originatorOf(req);
  const body = parseJson(req, IMPORT_V2_JSON);
  const result = await validateBatchInSlices(category, body, deps.registry, req.receivedAt, SLICE, nextTurn);
  if (!result.ok) {
    deps.counted?.(category, 'rejected', Array.isArray(body) ? body.length : 0);
    noteCall(req, { stationIds: result.stationIds, errorDetails: { code: 'validation_failed', errors: result.body } });
    return json(400, result.body);
  }
  noteCall(req, { stationIds: result.transmissions.map((t) => t.hrsId) });
  const rows = result.transmissions.filter((t) => !t.dryRun).map((t) => stored(deps, originatorId, category, req, t));
  await deps.writer.write(rows);
  deps.counted?.(category, 'accepted', rows.length);
  deps.counted?.(category, 'dry_run', result.transmissions.length - rows.length);
  const live: PublishedSignal[] = [];
  const receipts: Receipt[] = [];
  for (const row of rows) {
    if (row.state === 'live') live.push(publishedOf(row));
    else receipts.push(receiptOf(row));
  }
  deps.outlet.publish(live);
  deps.outlet.received(receipts);
  return { status: 204 };
}

function stored(deps: SignalRouteDeps, originatorId: string, category: Category, req: Request, t: Transmission): StoredTransmission {
  return {
    originatorId,
    hrsId: t.hrsId,
    category,
    state: routing(deps.registry.assignment(originatorId, t.hrsId, category)),
    measuredAt: t.measuredAt,
    receivedAt: req.receivedAt,
    transmissionId: t.transmissionId,
    payload: t.payload,
  };
}

/** Where a transmission goes: live ones are published, testing ones kept for the operator, the rest for debugging. */
function routing(assignment: string | undefined): StoredTransmission['state'] {
  return assignment === 'live' || assignment === 'testing' ? assignment : 'unassigned';
}

/** A stored live row as instances announce it (import v2 and the legacy import). */
export function publishedOf(row: StoredTransmission): PublishedSignal {
  return {
    hrsId: row.hrsId,
    category: row.category as Category,
    originatorId: row.originatorId,
    datetime: row.measuredAt.getTime(),
    receivedAt: row.receivedAt.getTime(),
    payload: row.payload,
    text: row.text,
  };
}

/** A stored row that is not published, as the admins' feed shows it (no values); `source` names a legacy generation. */
export function receiptOf(row: StoredTransmission, source?: Receipt['source']): Receipt {
  return {
    ...(source ? { source } : {}),
    originator_id: row.originatorId,
    hrs_id: row.hrsId,
    category: row.category as Category,
    assignment: row.state as Receipt['assignment'],
    datetime: row.measuredAt.toISOString(),
    received_datetime: row.receivedAt.toISOString(),
  };
}
