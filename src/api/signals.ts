import type { StoredTransmission } from '../../db/queries/signals.js';
import { LIMIT_MESSAGES, LIMITS } from '../domain/import-v2/validate.js';
import type { PublishedSignal, Receipt } from '../domain/signals.js';
import type { Category } from '../domain/categories/index.js';
import { badRequest } from '../http/errors.js';
import type { JsonOptions } from '../http/request.js';

/**
 * What every import generation shares about signals (import v2 and the legacy import both read their
 * bodies this way and hand what they stored to the same outlet), apart from any one family's folder so
 * no family imports another.
 */

/** Where committed transmissions go: live ones published, the others' receipts to the admins' feed. */
export interface SignalOutlet {
  /** Call only after the COMMIT that stored `signals`. */
  publish(signals: readonly PublishedSignal[]): void;
  /** Call only after the COMMIT that stored the transmissions `receipts` describe. */
  received(receipts: readonly Receipt[]): void;
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
