import t from 'tap';
import fc from 'fast-check';
import { isDeepStrictEqual } from 'node:util';
import type { ConfirmedLayout } from '../../src/domain/stations.js';
import type { PublishedReading } from '../../src/domain/categories/index.js';
import {
  stationSummarySchema,
  summarize,
  SUMMARY_REASONS,
  toV11Summary,
  toV1Summary,
  v1StationSummarySchema,
  type SummaryInput,
} from '../../src/domain/status/summary.js';
import { FUELLING_OPTIONS, type FuellingOption } from '../../src/domain/vocabulary.js';
import { runs } from '../helpers/scale.js';
import { holds } from '../helpers/property.js';

/**
 * For any availability reading (legacy- or import-v2-shaped), layout, freshness, opening state and
 * list of options, `summarize` agrees with a reference written here straight from the table, option
 * by option, without sharing any of the module's code.
 */

interface Entry {
  fuelling_option: string;
  status: string;
  reason: string;
  datetime: string | null;
}

/** The table, read top to bottom for one option. */
function referenceEntry(option: FuellingOption, { reading, fresh, open, layout }: SummaryInput): Entry {
  const datetime = reading === null ? null : new Date(reading.datetime).toISOString();
  const entry = (status: string, reason: string): Entry => ({ fuelling_option: option, status, reason, datetime });
  if (!open) return entry('CLOSED', 'outside_opening_hours');
  if (reading === null || !fresh) return entry('UNKNOWN', 'no_signal');
  const payload = reading.payload as {
    station?: { maintenance?: unknown; limitedly_available?: unknown };
    fuelling_options?: unknown;
    nozzles?: { id: string; available: unknown }[];
  };
  if (payload.station?.maintenance === true) return entry('UNAVAILABLE', 'maintenance');
  if (payload.station?.limitedly_available === true) return entry('LIMITEDLY_AVAILABLE', 'limited');

  let reported: boolean | null | undefined;
  if (Array.isArray(payload.fuelling_options)) {
    // Legacy: the option's own entry (the first, should there be two).
    const own = (payload.fuelling_options as { fuelling_option: string; available: unknown }[]).find((o) => o.fuelling_option === option);
    reported = own === undefined ? undefined : typeof own.available === 'boolean' ? own.available : null;
  } else {
    // Import v2: the listed nozzles that the current layout has and that offer the option; available
    // when one of them is; unavailable only when every nozzle of the layout offering it is listed (and
    // none available); unknown when some nozzle offering it is not listed.
    const offering = (payload.nozzles ?? []).filter((n) => layout !== null && (layout.nozzles.get(n.id)?.fuellingOptions ?? []).includes(option));
    const all = layout === null ? [] : [...layout.nozzles].filter(([, n]) => n.fuellingOptions.includes(option)).map(([id]) => id);
    if (offering.length === 0) reported = undefined;
    else if (offering.some((n) => n.available === true)) reported = true;
    else if (all.every((id) => offering.some((n) => n.id === id))) reported = false;
    else reported = null;
  }
  if (reported === undefined || reported === null) return entry('UNKNOWN', 'not_reported');
  return reported ? entry('AVAILABLE', 'reported_available') : entry('UNAVAILABLE', 'reported_unavailable');
}

const reference = (input: SummaryInput): Entry[] => input.options.map((option) => referenceEntry(option, input));

const V1_CODE: Record<string, string | undefined> = { '700ld': '700car', '350ld': '350car', '350hd': '350bus' };

/* ---- Generators --------------------------------------------------------------------------------------- */

/** Mostly `usual`, one time in twenty `rare`. */
const mostly = <T>(usual: fc.Arbitrary<T>, rare: fc.Arbitrary<T>) => fc.oneof({ weight: 19, arbitrary: usual }, { weight: 1, arbitrary: rare });

const optionArb = fc.constantFrom(...FUELLING_OPTIONS);
/** Nozzles N1–N5 may be on the layout; N6 and N7 never are (removed since the reading). */
const nozzleIdArb = fc.constantFrom('N1', 'N2', 'N3', 'N4', 'N5', 'N6', 'N7');

const layoutArb: fc.Arbitrary<ConfirmedLayout | null> = fc.option(
  fc
    .dictionary(
      fc.constantFrom('N1', 'N2', 'N3', 'N4', 'N5'),
      fc.uniqueArray(fc.oneof({ weight: 9, arbitrary: optionArb }, { weight: 1, arbitrary: fc.constant('700car') }), { maxLength: 3 }),
    )
    .map((nozzles) => ({
      nozzles: new Map(Object.entries(nozzles).map(([id, fuellingOptions]) => [id, { dispenser: 'D1', fuellingOptions }])),
      dispensers: new Map([['D1', Object.keys(nozzles)]]),
      storages: new Set<string>(),
      products: new Set<string>(),
    })),
  { freq: 6 },
);

/**
 * Flags: true often enough that rules 3 and 4 leave room for 5 to 7. Now and then a flag, or the whole
 * `station` object, is missing or not a boolean (never stored so, but only `true` may count).
 */
const flagArb = mostly<unknown>(fc.oneof({ weight: 1, arbitrary: fc.constant(true) }, { weight: 4, arbitrary: fc.constant(false) }), fc.constantFrom(null, 'true', 1));
const flagsArb = fc.record({ maintenance: flagArb, limitedly_available: flagArb });
const stationArb = mostly<unknown>(flagsArb, fc.oneof(fc.record({ maintenance: flagArb, limitedly_available: flagArb }, { requiredKeys: [] }), fc.constantFrom(undefined, null, 'maintenance')));

const v2PayloadArb = fc.record(
  {
    station: stationArb,
    nozzles: fc.array(fc.record({ id: nozzleIdArb, available: mostly<unknown>(fc.boolean(), fc.constantFrom(null, 'true')) }), { maxLength: 8 }),
    // What import v2 stores at receipt beside the nozzles; the summary must not rely on it.
    fuelling_options: fc.dictionary(optionArb, fc.boolean()),
  },
  { requiredKeys: ['station', 'nozzles'] },
);

const legacyPayloadArb = fc.record({
  station: stationArb,
  fuelling_options: fc.array(
    fc.record({
      fuelling_option: optionArb,
      available: mostly<unknown>(fc.constantFrom(true, false, null), fc.constantFrom('true', 0)),
    }),
    { maxLength: 5 },
  ),
  source: fc.constantFrom('import_v1', 'import_v1.1'),
});

const readingArb: fc.Arbitrary<PublishedReading | null> = fc.option(
  fc.record({
    datetime: fc.integer({ min: Date.parse('2024-01-01T00:00:00Z'), max: Date.parse('2030-01-01T00:00:00Z') }),
    receivedAt: fc.integer({ min: 0, max: 5000 }),
    payload: fc.oneof(v2PayloadArb, legacyPayloadArb) as fc.Arbitrary<Record<string, unknown>>,
  }),
  { freq: 8 },
);

/** Opening and freshness mostly true, so the per-option rules are reached. */
const mostlyTrue = fc.oneof({ weight: 4, arbitrary: fc.constant(true) }, { weight: 1, arbitrary: fc.constant(false) });

const inputArb: fc.Arbitrary<SummaryInput> = fc.record({
  options: fc.oneof(fc.subarray([...FUELLING_OPTIONS]), fc.array(optionArb, { maxLength: 6 })),
  reading: readingArb,
  fresh: mostlyTrue,
  open: mostlyTrue,
  layout: layoutArb,
});

/* ---- Properties ---------------------------------------------------------------------------------------- */

t.test('summarize agrees with the reference for any reading, layout, freshness, opening and options', async (t) => {
  const seen = new Set<string>();
  await holds(
    t,
    fc.property(inputArb, (input) => {
      const got = summarize(input);
      for (const entry of got) seen.add(entry.reason);
      return isDeepStrictEqual(got, reference(input));
    }),
    { numRuns: runs(3000) },
    'agrees on every generated input',
  );
  t.strictSame([...seen].sort(), [...SUMMARY_REASONS].sort(), 'the inputs reached every rule of the table');
});

t.test('the API form of any summary is valid, v1 codes mapped and 700hd left out', async (t) => {
  await holds(
    t,
    fc.property(inputArb, (input) => {
      const entries = summarize(input);
      const v11 = toV11Summary(entries);
      const v1 = toV1Summary(entries);
      const expectedV1 = reference(input).flatMap((e) => {
        const code = V1_CODE[e.fuelling_option];
        return code === undefined ? [] : [{ fuel_type: code, status: e.status, reason: e.reason, datetime: e.datetime }];
      });
      return (
        stationSummarySchema.safeParse({ hrs_id: 'BERLA', fuelling_options: v11 }).success &&
        v1StationSummarySchema.safeParse({ hrs_id: 'BERLA', fuelling_options: v1 }).success &&
        isDeepStrictEqual(v11.map((e) => e.fuel_type), [...input.options]) &&
        isDeepStrictEqual(v1, expectedV1)
      );
    }),
    { numRuns: runs(1000) },
    'every generated summary',
  );
});
