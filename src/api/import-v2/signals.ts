import { SignalWriter, type StoredTransmission } from '../../../db/queries/signals.js';
import { CATEGORIES, type Category } from '../../domain/vocabulary.js';
import { validateBatch } from '../../domain/import-v2/validate.js';
import { json, type Reply } from '../../http/errors.js';
import { parseJson, type Request } from '../../http/request.js';
import type { HttpServer, Observer } from '../../http/server.js';
import type { Services } from '../../services.js';
import { Publisher } from '../../infra/announce.js';
import type { PublishedSignal } from '../../../machines/live-status.js';
import type { Receipt } from '../../infra/receipts.js';

/**
 * The four import v2 signal endpoints. The whole request is validated first; one failing
 * transmission rejects it all (400, nothing stored). Otherwise every non-dry-run transmission is
 * stored in one transaction (shared with concurrent requests by the group-commit writer), and the 204
 * goes out only after that COMMIT; live ones are then announced to every instance.
 */
export function signalRoutes(server: HttpServer, services: Services): void {
  const writer = new SignalWriter(services.sql);
  const publisher = new Publisher(services.status, services.bus, services.log, services.receipts);
  for (const category of CATEGORIES) {
    server.route({
      method: 'POST',
      path: `/import/v2/signal/${category}/`,
      auth: 'import_v2',
      body: true,
      handler: (req) => receive(services, writer, publisher, category, req),
    });
  }
}

async function receive(services: Services, writer: SignalWriter, publisher: Publisher, category: Category, req: Request): Promise<Reply> {
  const principal = req.principal;
  if (principal?.kind !== 'originator') throw new Error('import v2 route reached without an originator');
  const body = parseJson(req);
  const result = validateBatch(category, body, services.registry, req.receivedAt);
  if (!result.ok) {
    req.notes.stationIds = result.stationIds;
    req.notes.errorDetails = { code: 'validation_failed', errors: result.body };
    return json(400, result.body);
  }
  req.notes.stationIds = result.transmissions.map((t) => t.hrsId);

  const rows: StoredTransmission[] = result.transmissions
    .filter((t) => !t.dryRun)
    .map((t) => ({
      originatorId: principal.id,
      hrsId: t.hrsId,
      category,
      state: routing(services.registry.assignment(principal.id, t.hrsId, category)),
      measuredAt: t.measuredAt,
      receivedAt: req.receivedAt,
      transmissionId: t.transmissionId,
      payload: t.payload,
    }));
  await writer.write(rows);
  const live: PublishedSignal[] = [];
  const receipts: Receipt[] = [];
  for (const r of rows) {
    if (r.state !== 'live') {
      receipts.push({
        originator_id: r.originatorId,
        hrs_id: r.hrsId,
        category,
        assignment: r.state,
        datetime: r.measuredAt.toISOString(),
        received_datetime: r.receivedAt.toISOString(),
      });
      continue;
    }
    live.push({
      hrsId: r.hrsId,
      category,
      originatorId: r.originatorId,
      datetime: r.measuredAt.getTime(),
      receivedAt: r.receivedAt.getTime(),
      payload: r.payload,
    });
  }
  publisher.publish(live);
  publisher.received(receipts);
  return { status: 204 };
}

/** Where a transmission goes: live ones are published, testing ones kept for the operator, the rest for debugging. */
function routing(assignment: string | undefined): StoredTransmission['state'] {
  return assignment === 'live' || assignment === 'testing' ? assignment : 'unassigned';
}

/** The import v2 call log: every answered call of an originator, as its call-log mode asks. */
export function callLogObserver(services: Services): Observer {
  return (req, reply) => {
    const principal = req.principal;
    if (principal?.kind !== 'originator') return;
    void services.callLog.record(services.registry.callLogMode(principal.id), {
      originator: principal.id,
      requestTime: req.receivedAt,
      endpoint: `${req.method} ${req.path}`,
      stationIds: req.notes.stationIds ?? [],
      status: reply.status,
      requestBody: req.body,
      responseBody: reply.body,
      errorDetails: req.notes.errorDetails ?? (reply.status >= 400 ? { status: reply.status } : undefined),
      requestId: req.id,
    });
  };
}
