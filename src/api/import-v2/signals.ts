import { SignalWriter, type StoredTransmission } from '../../../db/queries/signals.js';
import type { PublishedSignal, Receipt } from '../../domain/signals.js';
import type { OriginatorLookup, StationLookup } from '../../domain/stations.js';
import { CATEGORIES, type Category } from '../../domain/categories/index.js';
import { validateBatch, validateBatchInSlices, type Transmission } from '../../domain/import-v2/validate.js';
import { json, type Reply } from '../../http/errors.js';
import type { Family } from '../../http/family.js';
import { parseJson, type Request } from '../../http/request.js';
import type { HttpServer } from '../../http/server.js';
import { originatorOf } from '../auth.js';
import { noteCall } from '../call-log.js';
import { IMPORT_V2_JSON, publishedOf, receiptOf, type SignalOutlet } from '../signals.js';
import { signalDoc } from './docs/signals.js';

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
      // Read and checked by the domain, not by a body schema: a request is refused with an array aligned
      // with it, every transmission's problems reported (../../domain/import-v2/validate.ts), which no
      // schema's issues can say. The request's schema is the document's (`{Category}Request`, ./docs/signals.ts).
      body: true,
      doc: signalDoc(category),
      handler: (req) => receive(deps, category, req),
    });
  }
}

/** Transmissions validated per event-loop turn: a large request lets other requests through between slices. */
const SLICE = 50;
const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

async function receive(deps: SignalRouteDeps, category: Category, req: Request): Promise<Reply> {
  const originatorId = originatorOf(req);
  const body = parseJson(req, IMPORT_V2_JSON);
  // A request of one slice or less is validated at once: no pause would come between its transmissions.
  const result =
    Array.isArray(body) && body.length <= SLICE
      ? validateBatch(category, body, deps.registry, req.receivedAt)
      : await validateBatchInSlices(category, body, deps.registry, req.receivedAt, SLICE, nextTurn);
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
