import { z } from 'zod';
import { hrsIdSchema } from '../export-v2/fields.js';
import { CANONICAL_TO_V1 } from '../import-v1/options.js';
import type { ConfirmedLayout } from '../stations.js';
import { FUELLING_OPTIONS, V1_FUEL_TYPES, type FuellingOption, type V1FuelType } from '../vocabulary.js';
import type { PublishedReading } from '../categories/index.js';

/**
 * The per-fuelling-option five-state status summary of the export v1 / v1.1 API: for one station,
 * one entry per fuelling option it provides, computed from the live availability reading, its
 * freshness and the station's opening hours. The rules, first match wins:
 *
 * | # | condition                                                        | status                | reason                  |
 * |---|------------------------------------------------------------------|-----------------------|-------------------------|
 * | 1 | outside the opening hours                                        | `CLOSED`              | `outside_opening_hours` |
 * | 2 | no live availability reading in the last 30 minutes              | `UNKNOWN`             | `no_signal`             |
 * | 3 | the reading says `maintenance`                                   | `UNAVAILABLE`         | `maintenance`           |
 * | 4 | the reading says `limitedly_available`                           | `LIMITEDLY_AVAILABLE` | `limited`               |
 * | 5 | the option is absent from the reading, or its `available` is null | `UNKNOWN`             | `not_reported`          |
 * | 6 | the reading reports the option unavailable                       | `UNAVAILABLE`         | `reported_unavailable`  |
 * | 7 | the reading reports the option available                         | `AVAILABLE`           | `reported_available`    |
 *
 * An option's value comes from the reading as stored (see `optionValues`): a legacy (v1, v1.1) reading
 * carries it per option; an import v2 reading carries nozzles, resolved against the station's current
 * confirmed layout. Every entry carries the measurement time (`datetime`) of the reading it was
 * computed from, also when the station is closed or silent, so a consumer sees how old the last word
 * is; null only when there is no reading at all.
 *
 * Pure: opening hours and freshness are evaluated by the caller and handed in as booleans.
 */

/** The five states, as the API names them. */
export const SUMMARY_STATES = ['AVAILABLE', 'LIMITEDLY_AVAILABLE', 'UNAVAILABLE', 'UNKNOWN', 'CLOSED'] as const;
export type SummaryState = (typeof SUMMARY_STATES)[number];

/** Why an entry has its state: which rule of the table decided it, in the table's order. */
export const SUMMARY_REASONS = [
  'outside_opening_hours',
  'no_signal',
  'maintenance',
  'limited',
  'not_reported',
  'reported_unavailable',
  'reported_available',
] as const;
export type SummaryReason = (typeof SUMMARY_REASONS)[number];

/** The state each reason gives: a reason names exactly one state. */
export const REASON_STATES = {
  outside_opening_hours: 'CLOSED',
  no_signal: 'UNKNOWN',
  maintenance: 'UNAVAILABLE',
  limited: 'LIMITEDLY_AVAILABLE',
  not_reported: 'UNKNOWN',
  reported_unavailable: 'UNAVAILABLE',
  reported_available: 'AVAILABLE',
} as const satisfies Record<SummaryReason, SummaryState>;

/** The summary of one fuelling option at one station. */
export interface OptionSummary {
  fuelling_option: FuellingOption;
  status: SummaryState;
  reason: SummaryReason;
  /** The measurement time of the reading the entry was computed from (ISO 8601, UTC); null: no reading. */
  datetime: string | null;
}

export interface SummaryInput {
  /** The options to summarise, one entry each, in this order (usually `providedOptions(station)`). */
  options: readonly FuellingOption[];
  /** The station's last live availability reading (import v2 or legacy), or null when there is none. */
  reading: PublishedReading | null;
  /** Whether the reading is still live: its freshness is not `unknown` (30 minutes without a signal). */
  fresh: boolean;
  /** Whether the station is within its opening hours now. */
  open: boolean;
  /** The station's confirmed layout, against which an import v2 reading's nozzles resolve. */
  layout: ConfirmedLayout | null;
}

type Entry = Record<string, unknown>;
const isEntry = (value: unknown): value is Entry => typeof value === 'object' && value !== null && !Array.isArray(value);
const isFuellingOption = (value: unknown): value is FuellingOption => (FUELLING_OPTIONS as readonly unknown[]).includes(value);

/**
 * The options a stored availability payload reports, in the order `700ld, 350ld, 700hd, 350hd`:
 * `true` available, `false` unavailable, `null` reported as unknown; an option the reading does not
 * cover has no key.
 *
 * - A legacy reading (v1, v1.1; `fuelling_options` is an array, as `buildSection` tells them apart)
 *   gives each option's value directly; `available` other than a boolean is null. An entry for a code
 *   outside the fuelling options is ignored, and of two entries for one option the first counts.
 * - An import v2 reading gives each option from the nozzles against the layout, first match wins:
 *   1. no listed nozzle offers it: absent;
 *   2. a listed nozzle offering it is available: `true`;
 *   3. every nozzle of the confirmed layout offering it is listed, and unavailable: `false`;
 *   4. otherwise (some listed unavailable, others offering it not listed, so without a reported state):
 *      `null`, unknown — an unlisted nozzle may well be available.
 *   Only nozzles still in the confirmed layout count (none without a layout); a nozzle counts as
 *   available only with `available: true`, as the published availability section shows it. The
 *   per-option map import v2 stores at receipt is not used: the layout may have changed since.
 */
export function optionValues(payload: Record<string, unknown>, layout: ConfirmedLayout | null): Map<FuellingOption, boolean | null> {
  const found = new Map<FuellingOption, boolean | null>();
  if (Array.isArray(payload.fuelling_options)) {
    for (const entry of payload.fuelling_options) {
      if (!isEntry(entry) || !isFuellingOption(entry.fuelling_option) || found.has(entry.fuelling_option)) continue;
      found.set(entry.fuelling_option, typeof entry.available === 'boolean' ? entry.available : null);
    }
  } else if (Array.isArray(payload.nozzles) && layout !== null) {
    // Each listed nozzle of the layout: whether any of its entries says available.
    const listed = new Map<string, boolean>();
    for (const nozzle of payload.nozzles) {
      if (!isEntry(nozzle) || typeof nozzle.id !== 'string' || !layout.nozzles.has(nozzle.id)) continue;
      listed.set(nozzle.id, listed.get(nozzle.id) === true || nozzle.available === true);
    }
    if (listed.size > 0) nozzleOptionValues(layout, listed, found);
  }
  return new Map(FUELLING_OPTIONS.filter((option) => found.has(option)).map((option) => [option, found.get(option)!]));
}

/** The import v2 rules above, over every nozzle of the layout: `listed` holds the reported ones (id → available). */
function nozzleOptionValues(layout: ConfirmedLayout, listed: ReadonlyMap<string, boolean>, found: Map<FuellingOption, boolean | null>): void {
  // Per option: 'available', 'unavailable' (every nozzle so far listed unavailable), or 'unlisted' (one was not).
  const state = new Map<FuellingOption, 'available' | 'unavailable' | 'unlisted'>();
  // Options some listed nozzle offers (rule 1 leaves the others absent).
  const reported = new Set<FuellingOption>();
  for (const [id, nozzle] of layout.nozzles) {
    const available = listed.get(id);
    for (const option of nozzle.fuellingOptions) {
      if (!isFuellingOption(option)) continue;
      if (available !== undefined) reported.add(option);
      const before = state.get(option);
      if (before === 'available' || available === true) state.set(option, 'available');
      else if (available === undefined) state.set(option, 'unlisted');
      else if (before === undefined) state.set(option, 'unavailable');
    }
  }
  for (const option of reported) {
    const value = state.get(option);
    found.set(option, value === 'available' ? true : value === 'unavailable' ? false : null);
  }
}

/** Rules 1 to 4: the reason when the whole station decides, else null (each option decides). The DATEX II status publication starts from it too. */
export function stationReason({ reading, fresh, open }: SummaryInput): SummaryReason | null {
  if (!open) return 'outside_opening_hours';
  if (reading === null || !fresh) return 'no_signal';
  const station = isEntry(reading.payload.station) ? reading.payload.station : {};
  if (station.maintenance === true) return 'maintenance';
  if (station.limitedly_available === true) return 'limited';
  return null;
}

/** Rules 5 to 7: the reason from an option's reported value (undefined: not in the reading). */
function optionReason(value: boolean | null | undefined): SummaryReason {
  if (value === undefined || value === null) return 'not_reported';
  return value ? 'reported_available' : 'reported_unavailable';
}

/** The summary of each of `options`, in that order (see the table above). */
export function summarize(input: SummaryInput): OptionSummary[] {
  const { options, reading, layout } = input;
  const datetime = reading === null ? null : new Date(reading.datetime).toISOString();
  const whole = stationReason(input);
  const values = whole === null && reading !== null ? optionValues(reading.payload, layout) : new Map<FuellingOption, boolean | null>();
  return options.map((option) => {
    const reason = whole ?? optionReason(values.get(option));
    return { fuelling_option: option, status: REASON_STATES[reason], reason, datetime };
  });
}

/* ---- The API's form: v1.1 (canonical codes) and v1 (v1 fuel types) --------------------------------- */

const STATE_DESCRIPTIONS: Record<SummaryState, string> = {
  AVAILABLE: 'The option can be fuelled: the live reading reports it available.',
  LIMITEDLY_AVAILABLE:
    'The station reports itself limitedly available: fuelling may be possible, with restrictions. Overrides the per-option values.',
  UNAVAILABLE: 'The option cannot be fuelled: the station is in maintenance, or the live reading reports the option unavailable.',
  UNKNOWN:
    'Not known: no live availability reading in the last 30 minutes, or the reading does not report this option (left out, or `available` null).',
  CLOSED: 'The station is outside its opening hours, whatever the last reading said.',
};

const REASON_DESCRIPTIONS: Record<SummaryReason, string> = {
  outside_opening_hours: '`CLOSED`: the station is outside its opening hours. Decides before anything else.',
  no_signal: '`UNKNOWN`: no live availability reading in the last 30 minutes (by the reading\'s measurement time).',
  maintenance: '`UNAVAILABLE`: the station reports maintenance, so it is out of service whatever the per-option values say.',
  limited: '`LIMITEDLY_AVAILABLE`: the station reports itself limitedly available, which overrides the per-option values.',
  not_reported:
    '`UNKNOWN`: the live reading does not report this option: left out, or sent with `available` null (from import v2: no listed ' +
    'nozzle offering it is available, and some nozzle offering it is not listed, so has no reported state).',
  reported_unavailable:
    '`UNAVAILABLE`: the live reading reports the option unavailable (from import v2: every nozzle of the confirmed layout offering it is listed, and unavailable).',
  reported_available: '`AVAILABLE`: the live reading reports the option available (from import v2: some listed nozzle offering it is available).',
};

/** A closed list as a union of literals, each with its own description (the document lists them one by one). */
function described<const T extends readonly [string, ...string[]]>(values: T, descriptions: Record<T[number], string>) {
  const [first, ...rest] = values.map((value: T[number]) => z.literal(value).meta({ description: descriptions[value] }));
  return z.union([first!, ...rest]);
}

export const summaryStateSchema = described(SUMMARY_STATES, STATE_DESCRIPTIONS).meta({
  description: 'The state of the fuelling option: one of five.',
});

export const summaryReasonSchema = described(SUMMARY_REASONS, REASON_DESCRIPTIONS).meta({
  description: 'Which rule decided `status`; the rules apply in this order, the first that matches wins.',
});

const summaryDatetime = z.iso
  .datetime({ offset: true })
  .nullable()
  .meta({
    description:
      'When the source measured the availability reading this entry was computed from (ISO 8601, UTC); null when there is none. ' +
      'Given for `CLOSED` and for `UNKNOWN`/`no_signal` too: then it is the last reading\'s time, which tells how long the station has been silent.',
    examples: ['2026-11-22T10:00:00.000Z'],
  });

/** One entry of the API's summary, for fuel-type codes `codes`. */
const summaryEntry = <T extends readonly [string, ...string[]]>(codes: T, description: string) =>
  z
    .strictObject({
      fuel_type: z.enum(codes).meta({ description }),
      status: summaryStateSchema,
      reason: summaryReasonSchema,
      datetime: summaryDatetime,
    })
    .refine((entry) => REASON_STATES[entry.reason] === entry.status, { message: 'reason and status disagree', path: ['reason'] });

export const summaryEntrySchema = summaryEntry(FUELLING_OPTIONS, 'The fuelling option (v1.1 identifier).').meta({
  title: 'Fuelling-option status',
  description: 'The five-state status of one fuelling option of the station, and why.',
  examples: [{ fuel_type: '700ld', status: 'AVAILABLE', reason: 'reported_available', datetime: '2026-11-22T10:00:00.000Z' }],
});

export const v1SummaryEntrySchema = summaryEntry(V1_FUEL_TYPES, 'The fuel type (v1 code; `700hd` has none and is left out).').meta({
  title: 'Fuel-type status (v1)',
  description: 'The five-state status of one fuel type of the station, and why.',
  examples: [{ fuel_type: '700car', status: 'AVAILABLE', reason: 'reported_available', datetime: '2026-11-22T10:00:00.000Z' }],
});

export type SummaryEntry = z.infer<typeof summaryEntrySchema>;
export type V1SummaryEntry = z.infer<typeof v1SummaryEntrySchema>;

export const stationSummarySchema = z
  .strictObject({
    hrs_id: hrsIdSchema,
    fuelling_options: z
      .array(summaryEntrySchema)
      .meta({ description: 'One entry per fuelling option the station provides, in the order `700ld`, `350ld`, `700hd`, `350hd`.' }),
  })
  .meta({
    title: 'Station status summary',
    description: 'The per-fuelling-option status of one station.',
    examples: [
      {
        hrs_id: 'BERLA',
        fuelling_options: [
          { fuel_type: '700ld', status: 'AVAILABLE', reason: 'reported_available', datetime: '2026-11-22T10:00:00.000Z' },
          { fuel_type: '350ld', status: 'UNKNOWN', reason: 'not_reported', datetime: '2026-11-22T10:00:00.000Z' },
        ],
      },
    ],
  });

export const v1StationSummarySchema = z
  .strictObject({
    hrs_id: hrsIdSchema,
    fuelling_options: z
      .array(v1SummaryEntrySchema)
      .meta({ description: 'One entry per fuel type the station provides, in the order `700car`, `350car`, `350bus`.' }),
  })
  .meta({
    title: 'Station status summary (v1)',
    description: 'The per-fuel-type status of one station, in v1 codes.',
    examples: [
      {
        hrs_id: 'BERLA',
        fuelling_options: [{ fuel_type: '700car', status: 'CLOSED', reason: 'outside_opening_hours', datetime: null }],
      },
    ],
  });

/** The entries as the v1.1 API gives them: the option as `fuel_type`. */
export function toV11Summary(entries: readonly OptionSummary[]): SummaryEntry[] {
  return entries.map(({ fuelling_option, status, reason, datetime }) => ({ fuel_type: fuelling_option, status, reason, datetime }));
}

/** The entries as the v1 API gives them: `700ld` → `700car`, `350ld` → `350car`, `350hd` → `350bus`; `700hd` left out. */
export function toV1Summary(entries: readonly OptionSummary[]): V1SummaryEntry[] {
  return entries.flatMap(({ fuelling_option, status, reason, datetime }) => {
    const fuelType: V1FuelType | undefined = CANONICAL_TO_V1.get(fuelling_option);
    return fuelType === undefined ? [] : [{ fuel_type: fuelType, status, reason, datetime }];
  });
}
