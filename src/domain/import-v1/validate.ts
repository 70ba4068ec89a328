import { batchRun, runInSlices, runWhole, type BatchRun, type Counted } from '../import-v2/batch.js';
import { ErrorTree } from '../import-v2/errors.js';
import { LIMITS } from '../import-v2/limits.js';
import { checkEnvelope } from '../import-v2/rules.js';
import type { StationLookup } from '../stations.js';
import { V1_MESSAGES } from './messages.js';
import { providedOptions, type Dialect } from './options.js';
import { checkDispensers } from './rules.js';
import { V1_SCHEMAS } from './schemas.js';
import { withoutRefused } from '../text.js';

export type { Dialect };

/** A signal that passed every rule, in the form it is stored and published. */
export interface V1Signal {
  hrsId: string;
  measuredAt: Date;
  transmissionId: string | null;
  dialect: Dialect;
  /** what is stored and published: station flags and every provided option in canonical codes */
  payload: {
    station: { maintenance: boolean; limitedly_available: boolean };
    fuelling_options: { fuelling_option: string; available: boolean | null }[];
  };
}

export type V1Outcome =
  /** Accepted (stored): its entry of a 400 body is `{}`. */
  | { ok: true; signal: V1Signal }
  | { ok: false; errors: Record<string, unknown> };

export type V1BatchResult =
  /** The body is not a JSON array: 400 with this body, nothing stored. */
  | { kind: 'not-a-list'; body: { non_field_errors: string[] } }
  /** The body holds more signals than the limit: 400 with this body, nothing looked at or stored. */
  | { kind: 'too-long'; body: { non_field_errors: string[] } }
  | {
      kind: 'checked';
      /** One per signal, in order: the accepted ones are stored, in this order, whatever the others. */
      outcomes: V1Outcome[];
      /** 400 body aligned with the request (`{}` for each accepted signal, the errors of each refused one), or null when all passed */
      body: unknown[] | null;
    };

/**
 * Validates a legacy import v1 (`dialect` 'v1') or v1.1 ('v1.1') request body. The signals are
 * checked independently, in order: each one is accepted or not on its own (several signals for one
 * station are all accepted, in order), and an empty list is valid. Fields a signal carries beyond
 * the v1 ones are ignored, as the legacy API always ignored them.
 *
 * An accepted signal carries every fuelling option its station provides, canonical (`700ld`, `350ld`,
 * `700hd`, `350hd`): options the signal leaves out or sends as `available: null` are `null`
 * (unknown); `700hd`, which v1 cannot name, is always `null` from a v1 signal.
 */
export function validateV1Batch(dialect: Dialect, body: unknown, registry: StationLookup, now: Date): V1BatchResult {
  const run = startBatch(dialect, body, registry, now);
  return 'kind' in run ? run : runWhole(run);
}

/*
 * These two entry points mirror import v2's (../import-v2/validate.ts) by dialect instead of category:
 * both run on ../import-v2/batch.ts and differ in their checks and results.
 */

/**
 * The same as {@link validateV1Batch}, calling `pause` after every `slice` signals, so that a caller
 * can let other work run between slices (a large request never holds the event loop long).
 */
export async function validateV1BatchInSlices(
  dialect: Dialect,
  body: unknown,
  registry: StationLookup,
  now: Date,
  slice: number,
  pause: () => Promise<void>,
): Promise<V1BatchResult> {
  const run = startBatch(dialect, body, registry, now);
  return 'kind' in run ? run : runInSlices(run, slice, pause);
}

/** Each signal is answered on its own: accepted (maybe with notes) or refused with its errors. */
function startBatch(dialect: Dialect, body: unknown, registry: StationLookup, now: Date): BatchRun<V1BatchResult> | V1BatchResult {
  if (!Array.isArray(body)) return { kind: 'not-a-list', body: { non_field_errors: [V1_MESSAGES.notAList(body)] } };
  if (body.length > LIMITS.transmissions) return { kind: 'too-long', body: { non_field_errors: [V1_MESSAGES.tooLong(LIMITS.transmissions)] } };
  return batchRun(
    body,
    (raw) => validateOne(dialect, raw, registry, now),
    (): V1Outcome => ({ ok: false, errors: { non_field_errors: [V1_MESSAGES.notValidated] } }),
    (outcomes) => {
      const answered = outcomes.some((o) => !o.ok);
      return { kind: 'checked', outcomes, body: answered ? outcomes.map((o) => (o.ok ? {} : o.errors)) : null };
    },
  );
}

const failed = (errors: ErrorTree, raw: unknown): Counted<V1Outcome> => ({ outcome: { ok: false, errors: errors.toJSON(raw) }, count: errors.count });

function validateOne(dialect: Dialect, raw: unknown, registry: StationLookup, now: Date): Counted<V1Outcome> {
  const isObject = raw !== null && typeof raw === 'object' && !Array.isArray(raw);
  const given = (isObject ? raw : {}) as Record<string, unknown>;
  // A list longer than the limit is reported alone, without looking into any entry.
  if (Array.isArray(given.dispensers) && given.dispensers.length > LIMITS.entries) {
    const errors = new ErrorTree();
    errors.add(['dispensers'], V1_MESSAGES.tooLong(LIMITS.entries));
    return failed(errors, raw);
  }
  const errors = new ErrorTree();
  const parsed = V1_SCHEMAS[dialect].signal.safeParse(raw);
  if (!parsed.success) for (const issue of parsed.error.issues) errors.add(issue.path as (string | number)[], issue.message);
  if (!isObject) return failed(errors, raw);

  // The rules read the signal as it came, but never a value its length limit refused.
  const input = (parsed.success ? raw : withoutRefused(raw, parsed.error.issues)) as Record<string, unknown>;
  const station = typeof input.hrs === 'string' ? registry.station(input.hrs) : undefined;
  // Import v2's envelope rules; a fresh set each time: v1 accepts several signals for one station.
  const measuredAt = checkEnvelope(input, errors, station, new Set(), now);
  const provided = station ? providedOptions(station) : [];
  const reported = checkDispensers(dialect, input, errors, station, provided);
  if (!parsed.success || !errors.empty) return failed(errors, raw);

  const data = parsed.data;
  return {
    outcome: {
      ok: true,
      signal: {
        hrsId: data.hrs,
        measuredAt: measuredAt!,
        transmissionId: data.transmission_id ?? null,
        dialect,
        payload: {
          station: { maintenance: data.maintenance, limitedly_available: data.limitedly_available },
          fuelling_options: provided.map((option) => ({ fuelling_option: option, available: reported.get(option) ?? null })),
        },
      },
    },
    count: 0,
  };
}
