import type { ErrorTree } from '../import-v2/errors.js';
import type { StationEntry } from '../stations.js';
import { V1_MESSAGES } from './messages.js';
import { toCanonical, type Dialect } from './options.js';

/**
 * The semantic rules of a legacy import v1 / v1.1 signal beyond its envelope (the envelope is import
 * v2's: ../import-v2/rules.ts `checkEnvelope`), run on the signal as sent: each rule looks only at
 * values of the right type, so every failing rule is reported even when other fields are malformed.
 */

type Raw = Record<string, unknown>;
const isObject = (v: unknown): v is Raw => v !== null && typeof v === 'object' && !Array.isArray(v);

/**
 * The `dispensers` entries: each fuelling option at most once (a repeat is an error), and only options
 * the station provides (`provided`, canonical). An option the station does not provide is not an error
 * of the signal (the spec refuses unknown codes only): it is left out of what is reported and listed in
 * `notProvided`, for the caller to name in its answer. Returns what the signal reports, canonical option
 * → `available` (`null` for `null` or left out), for the entries whose `fuel_type` is in the dialect.
 */
export function checkDispensers(
  dialect: Dialect,
  raw: Raw,
  errors: ErrorTree,
  station: StationEntry | undefined,
  provided: readonly string[],
): Map<string, boolean | null> {
  const reported = new Map<string, boolean | null>();
  const seen = new Set<string>();
  if (!Array.isArray(raw.dispensers)) return reported;
  (raw.dispensers as unknown[]).forEach((entry, index) => {
    if (!isObject(entry) || typeof entry.fuel_type !== 'string') return; // reported by the schema
    const code = entry.fuel_type;
    const option = toCanonical(dialect, code);
    if (option === undefined) return; // reported by the schema
    if (seen.has(option)) errors.add(['dispensers', index, 'fuel_type'], V1_MESSAGES.duplicateFuellingOption(code));
    seen.add(option);
    if (station && !provided.includes(option)) errors.add(['dispensers', index, 'fuel_type'], V1_MESSAGES.notProvided(code));
    else if (!reported.has(option)) reported.set(option, typeof entry.available === 'boolean' ? entry.available : null);
  });
  return reported;
}
