import { CATEGORY, type Category } from '../categories/index.js';
import type { StationLookup } from '../stations.js';
import { batchRun, runInSlices, runWhole, type BatchRun } from './batch.js';
import { ErrorTree } from './errors.js';
import { stationNamed, typeName } from './fields.js';
import { checkEnvelope, type Raw } from './rules.js';
import { withoutRefused } from '../text.js';

import { LIMIT_MESSAGES, LIMITS } from './limits.js';

export { LIMIT_MESSAGES, LIMITS };

const LISTS = ['nozzles', 'storages', 'products'] as const;

/** A transmission that passed every rule, in the form it is stored and published. */
export interface Transmission {
  category: Category;
  hrsId: string;
  measuredAt: Date;
  transmissionId: string | null;
  dryRun: boolean;
  /** The snapshot: ids resolved (dispenser shorthand expanded), values canonical. */
  payload: Record<string, unknown>;
}

export type BatchResult =
  | { ok: true; transmissions: Transmission[] }
  | { ok: false; body: unknown; stationIds: string[] };

/**
 * Validates a whole request body for one category. Every transmission is checked completely (until
 * the error budget is spent); one failure rejects the batch with a body aligned with the request.
 */
export function validateBatch(category: Category, body: unknown, registry: StationLookup, now: Date): BatchResult {
  const run = startBatch(category, body, registry, now);
  return 'ok' in run ? run : runWhole(run);
}

/**
 * The same as {@link validateBatch}, calling `pause` after every `slice` transmissions, so that a
 * caller can let other work run between slices (a large request never holds the event loop long).
 */
export async function validateBatchInSlices(
  category: Category,
  body: unknown,
  registry: StationLookup,
  now: Date,
  slice: number,
  pause: () => Promise<void>,
): Promise<BatchResult> {
  const run = startBatch(category, body, registry, now);
  return 'ok' in run ? run : runInSlices(run, slice, pause);
}

/** One failed transmission rejects the batch; a station id is reported for each entry that names one. */
function startBatch(category: Category, body: unknown, registry: StationLookup, now: Date): BatchRun<BatchResult> | BatchResult {
  if (!Array.isArray(body)) {
    return { ok: false, body: { non_field_errors: [`Expected a list of items but got type "${typeName(body)}".`] }, stationIds: [] };
  }
  if (body.length === 0) return { ok: false, body: { non_field_errors: ['This list may not be empty.'] }, stationIds: [] };
  if (body.length > LIMITS.transmissions) {
    return { ok: false, body: { non_field_errors: [LIMIT_MESSAGES.tooLong(LIMITS.transmissions)] }, stationIds: [] };
  }
  const seen = new Set<string>();
  return batchRun<Transmission | Failed, BatchResult>(
    body,
    (raw) => {
      const outcome = validateOne(category, raw, registry, seen, now);
      return { outcome, count: 'errors' in outcome ? outcome.count : 0 };
    },
    () => ({ errors: { non_field_errors: [LIMIT_MESSAGES.notValidated] }, count: 1 }),
    (results) => {
      if (results.some((r) => 'errors' in r)) {
        const stationIds = body.flatMap((raw) => stationNamed(raw) ?? []);
        return { ok: false, body: results.map((r) => ('errors' in r ? r.errors : {})), stationIds };
      }
      return { ok: true, transmissions: results as Transmission[] };
    },
  );
}

/** A transmission's error body and how many messages it holds. */
interface Failed {
  errors: unknown;
  count: number;
}

/** A list of entries longer than the limit: reported alone, without looking into any entry. */
function oversizeLists(raw: unknown): ErrorTree | undefined {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) return undefined;
  let errors: ErrorTree | undefined;
  for (const field of LISTS) {
    const value = (raw as Raw)[field];
    if (Array.isArray(value) && value.length > LIMITS.entries) (errors ??= new ErrorTree()).add([field], LIMIT_MESSAGES.tooLong(LIMITS.entries));
  }
  return errors;
}

function validateOne(category: Category, raw: unknown, registry: StationLookup, seen: Set<string>, now: Date): Transmission | Failed {
  const oversize = oversizeLists(raw);
  if (oversize) return { errors: oversize.toJSON(raw), count: oversize.count };
  const errors = new ErrorTree();
  const definition = CATEGORY[category];
  const parsed = definition.transmission.safeParse(raw);
  if (!parsed.success) for (const issue of parsed.error.issues) errors.add(issue.path as (string | number)[], issue.message);
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) return { errors: errors.toJSON(raw), count: errors.count };

  // The rules read the transmission as it came, but never a value its length limit refused.
  const input = (parsed.success ? raw : withoutRefused(raw, parsed.error.issues)) as Raw;
  const station = typeof input.hrs === 'string' ? registry.station(input.hrs) : undefined;
  const measuredAt = checkEnvelope(input, errors, station, seen, now);
  const payload = definition.check(input, errors, station, parsed.success ? parsed.data : undefined);
  if (!parsed.success || !errors.empty) return { errors: errors.toJSON(raw), count: errors.count };
  return {
    category,
    hrsId: parsed.data.hrs,
    measuredAt: measuredAt!,
    transmissionId: parsed.data.transmission_id ?? null,
    dryRun: parsed.data.dry_run ?? false,
    payload,
  };
}
