import t from 'tap';
import { z } from 'zod';
import { providedOptions } from '../../src/domain/import-v1/options.js';
import type { ConfirmedLayout, StationEntry } from '../../src/domain/stations.js';
import type { PublishedReading } from '../../src/domain/categories/index.js';
import {
  optionValues,
  REASON_STATES,
  stationSummarySchema,
  summarize,
  summaryEntrySchema,
  SUMMARY_REASONS,
  SUMMARY_STATES,
  toV11Summary,
  toV1Summary,
  v1StationSummarySchema,
  v1SummaryEntrySchema,
  type OptionSummary,
  type SummaryInput,
} from '../../src/domain/status/summary.js';
import { FUELLING_OPTIONS, type FuellingOption } from '../../src/domain/vocabulary.js';

/**
 * The per-fuelling-option summary, rule by rule: each row of the table against the rule above it,
 * legacy (v1, v1.1) and import v2 readings, the any/every nozzle rule, the datetime an entry carries,
 * and the API's form (v1.1 and v1 codes, schemas).
 */

const MEASURED = '2026-11-22T10:00:00.000Z';
const MEASURED_MS = Date.parse(MEASURED);
const ALL = FUELLING_OPTIONS;

/** A confirmed layout with one dispenser holding the nozzles given (id → options). */
function layout(nozzles: Record<string, string[]>): ConfirmedLayout {
  return {
    nozzles: new Map(Object.entries(nozzles).map(([id, fuellingOptions]) => [id, { dispenser: 'D1', fuellingOptions }])),
    dispensers: new Map([['D1', Object.keys(nozzles)]]),
    storages: new Set(),
    products: new Set(),
  };
}

interface Flags {
  maintenance?: boolean;
  limitedly_available?: boolean;
}
const flags = (f: Flags) => ({ maintenance: f.maintenance ?? false, limitedly_available: f.limitedly_available ?? false });
const reading = (payload: Record<string, unknown>, datetime = MEASURED_MS): PublishedReading => ({ datetime, receivedAt: datetime + 1200, payload });

/** An import v2 reading: nozzle id → available. */
const v2 = (nozzles: Record<string, boolean>, f: Flags = {}) =>
  reading({ station: flags(f), nozzles: Object.entries(nozzles).map(([id, available]) => ({ id, available })) });

/** A legacy reading as import v1 / v1.1 stores it: canonical option → available (null: unknown). */
const legacy = (source: 'import_v1' | 'import_v1.1', options: Partial<Record<FuellingOption, boolean | null>>, f: Flags = {}) =>
  reading({
    station: flags(f),
    fuelling_options: Object.entries(options).map(([fuelling_option, available]) => ({ fuelling_option, available })),
    source,
  });

const LAYOUT = layout({ N1: ['700ld'], N2: ['350ld'], N3: ['700hd'], N4: ['350hd'] });
const ALL_AVAILABLE = v2({ N1: true, N2: true, N3: true, N4: true });

const run = (input: Partial<SummaryInput>): OptionSummary[] =>
  summarize({ options: ALL, reading: ALL_AVAILABLE, fresh: true, open: true, layout: LAYOUT, ...input });
/** Each entry as `option status reason`. */
const brief = (entries: OptionSummary[]) => entries.map((e) => `${e.fuelling_option} ${e.status} ${e.reason}`);
const everyOption = (status: string, reason: string, options: readonly FuellingOption[] = ALL) => options.map((o) => `${o} ${status} ${reason}`);

t.test('the vocabulary: five states, seven reasons, each reason naming one state', async (t) => {
  t.strictSame([...SUMMARY_STATES], ['AVAILABLE', 'LIMITEDLY_AVAILABLE', 'UNAVAILABLE', 'UNKNOWN', 'CLOSED']);
  t.strictSame(Object.keys(REASON_STATES), [...SUMMARY_REASONS]);
  t.strictSame(new Set(Object.values(REASON_STATES)), new Set(SUMMARY_STATES), 'every state is reachable');
});

t.test('rule 1: outside the opening hours every option is CLOSED', async (t) => {
  t.strictSame(brief(run({ open: false })), everyOption('CLOSED', 'outside_opening_hours'), 'an available station');
  t.strictSame(brief(run({ open: false, reading: v2({ N1: true }, { maintenance: true }) })), everyOption('CLOSED', 'outside_opening_hours'), 'a closed station in maintenance is CLOSED');
  t.strictSame(brief(run({ open: false, fresh: false })), everyOption('CLOSED', 'outside_opening_hours'), 'a closed, silent station is CLOSED');
  t.strictSame(brief(run({ open: false, reading: null })), everyOption('CLOSED', 'outside_opening_hours'), 'a closed station without any reading is CLOSED');
});

t.test('rule 2: without a live reading in the last 30 minutes every option is UNKNOWN (no_signal)', async (t) => {
  t.strictSame(brief(run({ fresh: false })), everyOption('UNKNOWN', 'no_signal'), 'a silent station that last said available');
  t.strictSame(brief(run({ fresh: false, reading: v2({ N1: true }, { maintenance: true }) })), everyOption('UNKNOWN', 'no_signal'), 'a silent station in maintenance is UNKNOWN');
  t.strictSame(brief(run({ fresh: false, reading: v2({}, { limitedly_available: true }) })), everyOption('UNKNOWN', 'no_signal'), 'a silent, limited station is UNKNOWN');
  t.strictSame(brief(run({ reading: null })), everyOption('UNKNOWN', 'no_signal'), 'no reading at all, whatever `fresh` says');
  t.strictSame(brief(run({ reading: null, fresh: false })), everyOption('UNKNOWN', 'no_signal'));
});

t.test('rule 3: a station in maintenance is UNAVAILABLE whatever else the reading says', async (t) => {
  t.strictSame(brief(run({ reading: v2({ N1: true, N2: true, N3: true, N4: true }, { maintenance: true }) })), everyOption('UNAVAILABLE', 'maintenance'), 'all nozzles available');
  t.strictSame(brief(run({ reading: v2({ N1: true }, { maintenance: true, limitedly_available: true }) })), everyOption('UNAVAILABLE', 'maintenance'), 'maintenance beats limited');
  t.strictSame(brief(run({ reading: v2({}, { maintenance: true }) })), everyOption('UNAVAILABLE', 'maintenance'), 'options not reported');
  t.strictSame(brief(run({ reading: legacy('import_v1.1', { '700ld': null }, { maintenance: true }) })), everyOption('UNAVAILABLE', 'maintenance'), 'a legacy reading');
});

t.test('rule 4: a limitedly available station is LIMITEDLY_AVAILABLE whatever the per-option values', async (t) => {
  const limited = v2({ N1: true, N2: false }, { limitedly_available: true }); // 700hd, 350hd not reported
  t.strictSame(brief(run({ reading: limited })), everyOption('LIMITEDLY_AVAILABLE', 'limited'), 'available, unavailable and unreported options alike');
  t.strictSame(
    brief(run({ reading: legacy('import_v1', { '700ld': false, '350ld': null }, { limitedly_available: true }) })),
    everyOption('LIMITEDLY_AVAILABLE', 'limited'),
    'a legacy reading',
  );
});

t.test('rule 5: an option left out of the reading, or sent with available null, is UNKNOWN (not_reported)', async (t) => {
  t.strictSame(brief(run({ reading: v2({ N1: false }) })), [
    '700ld UNAVAILABLE reported_unavailable',
    '350ld UNKNOWN not_reported',
    '700hd UNKNOWN not_reported',
    '350hd UNKNOWN not_reported',
  ], 'v2: nozzles left out');
  t.strictSame(brief(run({ reading: legacy('import_v1.1', { '700ld': null, '350ld': true }) })), [
    '700ld UNKNOWN not_reported',
    '350ld AVAILABLE reported_available',
    '700hd UNKNOWN not_reported',
    '350hd UNKNOWN not_reported',
  ], 'legacy: null and left out');
  t.strictSame(brief(run({ reading: v2({}) })), everyOption('UNKNOWN', 'not_reported'), 'an empty nozzle list');
});

t.test('rules 6 and 7: reported unavailable is UNAVAILABLE, reported available is AVAILABLE', async (t) => {
  t.strictSame(brief(run({ reading: v2({ N1: true, N2: false, N3: false, N4: true }) })), [
    '700ld AVAILABLE reported_available',
    '350ld UNAVAILABLE reported_unavailable',
    '700hd UNAVAILABLE reported_unavailable',
    '350hd AVAILABLE reported_available',
  ]);
});

t.test('legacy readings: v1 and v1.1 give each option directly', async (t) => {
  // Import v1 stores canonical codes: 700car → 700ld, 350car → 350ld, 350bus → 350hd; it cannot carry 700hd.
  const v1 = legacy('import_v1', { '700ld': true, '350ld': false, '350hd': null });
  t.strictSame(brief(run({ reading: v1 })), [
    '700ld AVAILABLE reported_available',
    '350ld UNAVAILABLE reported_unavailable',
    '700hd UNKNOWN not_reported',
    '350hd UNKNOWN not_reported',
  ], 'v1');
  const v11 = legacy('import_v1.1', { '700ld': false, '350ld': true, '350hd': true });
  t.strictSame(brief(run({ reading: v11, options: ['700ld', '350ld', '700hd', '350hd'] })), [
    '700ld UNAVAILABLE reported_unavailable',
    '350ld AVAILABLE reported_available',
    '700hd UNKNOWN not_reported',
    '350hd AVAILABLE reported_available',
  ], 'v1.1: 700hd omitted for a heavy-duty station is UNKNOWN');
  t.strictSame(brief(run({ reading: v11, layout: null })), brief(run({ reading: v11 })), 'the layout plays no part');
  const noNozzleFor700ld = layout({ N2: ['350ld'] });
  t.strictSame(brief(run({ reading: v11, layout: noNozzleFor700ld })), brief(run({ reading: v11 })), 'nor does a layout without a nozzle for the option');
});

t.test('import v2 readings: an option is available when any listed nozzle offering it is, unavailable when every nozzle of the layout offering it is listed unavailable, unknown otherwise', async (t) => {
  const twoFor700 = layout({ N1: ['700ld'], N2: ['700ld', '350ld'], N3: ['350hd'] });
  const at = (nozzles: Record<string, boolean>, options: FuellingOption[] = ['700ld']) =>
    brief(summarize({ options, reading: v2(nozzles), fresh: true, open: true, layout: twoFor700 }));
  t.strictSame(at({ N1: true, N2: false }), ['700ld AVAILABLE reported_available'], 'two nozzles offering 700ld, one available');
  t.strictSame(at({ N1: false, N2: true }), ['700ld AVAILABLE reported_available'], 'the other one available');
  t.strictSame(at({ N1: false, N2: false }), ['700ld UNAVAILABLE reported_unavailable'], 'both unavailable');
  t.strictSame(at({ N1: false }), ['700ld UNKNOWN not_reported'], 'one listed unavailable, the other (N2) not listed: it may be available, so unknown');
  t.strictSame(at({ N2: false }, ['700ld', '350ld']), ['700ld UNKNOWN not_reported', '350ld UNAVAILABLE reported_unavailable'], 'N2 unavailable: 350ld (only N2 offers it) is unavailable, 700ld (N1 unlisted) unknown');
  t.strictSame(at({ N2: true }, ['700ld', '350ld']), ['700ld AVAILABLE reported_available', '350ld AVAILABLE reported_available'], 'a listed nozzle available: available whatever the unlisted ones');
  t.strictSame(at({ N3: true }, ['700ld', '350ld', '350hd']), [
    '700ld UNKNOWN not_reported',
    '350ld UNKNOWN not_reported',
    '350hd AVAILABLE reported_available',
  ], 'no listed nozzle offers 700ld or 350ld');
  t.strictSame(at({ N1: false, N2: false, N9: true }), ['700ld UNAVAILABLE reported_unavailable'], 'a nozzle no longer on the layout is ignored');
  t.strictSame(at({ N9: true }), ['700ld UNKNOWN not_reported'], 'a reading with only unknown nozzles reports nothing');
  const relaid = layout({ N1: ['350ld'] }); // N1 now offers 350ld only
  t.strictSame(
    brief(summarize({ options: ['700ld', '350ld'], reading: v2({ N1: true }), fresh: true, open: true, layout: relaid })),
    ['700ld UNKNOWN not_reported', '350ld AVAILABLE reported_available'],
    'options come from the current layout, not the one the reading was checked against',
  );
  t.strictSame(
    brief(summarize({ options: ['700ld'], reading: v2({ N1: true }), fresh: true, open: true, layout: null })),
    ['700ld UNKNOWN not_reported'],
    'without a confirmed layout no nozzle counts',
  );
  const stored = reading({ station: flags({}), nozzles: [{ id: 'N1', available: false }, { id: 'N2', available: false }], fuelling_options: { '700ld': true } });
  t.strictSame(
    brief(summarize({ options: ['700ld'], reading: stored, fresh: true, open: true, layout: twoFor700 })),
    ['700ld UNAVAILABLE reported_unavailable'],
    'the per-option map import v2 stores at receipt is not used',
  );
});

t.test('optionValues: per option, in canonical order; absent options have no key', async (t) => {
  const twoFor700 = layout({ N1: ['700ld'], N2: ['700ld', '350hd'] });
  t.strictSame(
    [...optionValues({ station: flags({}), nozzles: [{ id: 'N2', available: false }, { id: 'N1', available: true }] }, twoFor700)],
    [['700ld', true], ['350hd', false]],
  );
  t.strictSame(
    [...optionValues(legacy('import_v1.1', { '350hd': null, '700ld': false }).payload, null)],
    [['700ld', false], ['350hd', null]],
    'legacy: null kept as reported unknown',
  );
  t.strictSame(
    [
      ...optionValues(
        {
          fuelling_options: [
            { fuelling_option: '700car', available: true },
            { fuelling_option: '350ld', available: 'yes' },
            { fuelling_option: '700ld', available: true },
            { fuelling_option: '700ld', available: false },
            null,
          ],
        },
        null,
      ),
    ],
    [['700ld', true], ['350ld', null]],
    'legacy: an unknown code ignored, a non-boolean is null, the first entry for an option counts',
  );
  t.strictSame([...optionValues({}, LAYOUT)], [], 'a payload with neither shape reports nothing');
  t.strictSame([...optionValues({ nozzles: [{ available: true }, { id: 'N1', available: null }] }, LAYOUT)], [['700ld', false]], 'v2: a nozzle counts as available only with `available: true`');
});

t.test('each entry carries the measurement time of its reading, ISO 8601 UTC', async (t) => {
  const measured = reading({ station: flags({}), nozzles: [{ id: 'N1', available: true }] }, Date.parse('2026-11-22T11:30:00+01:00'));
  const times = (input: Partial<SummaryInput>) => run({ options: ['700ld'], reading: measured, ...input }).map((e) => e.datetime);
  t.strictSame(times({}), ['2026-11-22T10:30:00.000Z'], 'AVAILABLE');
  t.strictSame(times({ open: false }), ['2026-11-22T10:30:00.000Z'], 'CLOSED with a reading');
  t.strictSame(times({ fresh: false }), ['2026-11-22T10:30:00.000Z'], 'UNKNOWN (no_signal) with a stale reading: its time');
  t.strictSame(times({ open: false, reading: null }), [null], 'CLOSED without a reading');
  t.strictSame(times({ reading: null }), [null], 'UNKNOWN (no_signal) without a reading');
  t.strictSame(times({ options: ['350ld'] }), ['2026-11-22T10:30:00.000Z'], 'UNKNOWN (not_reported)');
});

t.test('one entry per option asked for, in that order', async (t) => {
  t.strictSame(run({ options: [] }), []);
  t.strictSame(brief(run({ options: ['350hd', '700ld'] })), ['350hd AVAILABLE reported_available', '700ld AVAILABLE reported_available']);
  const station: StationEntry = { hrsId: 'HDBUS', name: 'Bus depot', heavyDuty: true, layout: layout({ N1: ['350hd'], N2: ['700ld'] }), v1FuelTypes: ['350bus', '700car'] };
  t.strictSame(
    run({ options: providedOptions(station), reading: v2({ N1: true, N2: false }), layout: station.layout }),
    [
      { fuelling_option: '700ld', status: 'UNAVAILABLE', reason: 'reported_unavailable', datetime: MEASURED },
      { fuelling_option: '350hd', status: 'AVAILABLE', reason: 'reported_available', datetime: MEASURED },
    ],
    'the options a station provides',
  );
});

t.test('the API form: v1.1 codes as fuel_type; v1 codes with 700hd left out', async (t) => {
  const entries = run({ reading: v2({ N1: true, N2: false, N3: true }) });
  const v11 = toV11Summary(entries);
  t.strictSame(v11, [
    { fuel_type: '700ld', status: 'AVAILABLE', reason: 'reported_available', datetime: MEASURED },
    { fuel_type: '350ld', status: 'UNAVAILABLE', reason: 'reported_unavailable', datetime: MEASURED },
    { fuel_type: '700hd', status: 'AVAILABLE', reason: 'reported_available', datetime: MEASURED },
    { fuel_type: '350hd', status: 'UNKNOWN', reason: 'not_reported', datetime: MEASURED },
  ]);
  t.strictSame(toV1Summary(entries), [
    { fuel_type: '700car', status: 'AVAILABLE', reason: 'reported_available', datetime: MEASURED },
    { fuel_type: '350car', status: 'UNAVAILABLE', reason: 'reported_unavailable', datetime: MEASURED },
    { fuel_type: '350bus', status: 'UNKNOWN', reason: 'not_reported', datetime: MEASURED },
  ]);
  t.strictSame(toV1Summary(run({ options: ['700hd'] })), [], 'a station with 700hd only has nothing in v1');
  t.strictSame(toV1Summary(run({ options: ['350hd', '700ld'], open: false, reading: null })), [
    { fuel_type: '350bus', status: 'CLOSED', reason: 'outside_opening_hours', datetime: null },
    { fuel_type: '700car', status: 'CLOSED', reason: 'outside_opening_hours', datetime: null },
  ], 'the order of the entries is kept');

  t.ok(stationSummarySchema.safeParse({ hrs_id: 'BERLA', fuelling_options: v11 }).success, 'v1.1 station summary');
  t.ok(v1StationSummarySchema.safeParse({ hrs_id: 'BERLA', fuelling_options: toV1Summary(entries) }).success, 'v1 station summary');
  t.notOk(v1StationSummarySchema.safeParse({ hrs_id: 'BERLA', fuelling_options: v11 }).success, 'v1.1 codes are not v1 codes');
  t.notOk(stationSummarySchema.safeParse({ hrs_id: 'BERLA', fuelling_options: v11, extra: 1 }).success, 'strict');
});

t.test('the schemas accept every entry summarize gives and refuse a reason that names another state', async (t) => {
  const readings = [null, ALL_AVAILABLE, v2({ N1: false }), v2({}, { maintenance: true }), v2({}, { limitedly_available: true }), legacy('import_v1', { '700ld': null })];
  const refused = readings.flatMap((r) =>
    [true, false].flatMap((open) =>
      [true, false].flatMap((fresh) => toV11Summary(run({ reading: r, open, fresh })).filter((entry) => !summaryEntrySchema.safeParse(entry).success)),
    ),
  );
  t.strictSame(refused, [], 'every entry, open or closed, fresh or silent, is valid');
  const base = { fuel_type: '700ld', status: 'AVAILABLE', reason: 'reported_available', datetime: MEASURED };
  t.notOk(summaryEntrySchema.safeParse({ ...base, reason: 'no_signal' }).success, 'AVAILABLE because of no_signal');
  t.notOk(summaryEntrySchema.safeParse({ ...base, status: 'OPEN' }).success, 'an unknown state');
  t.notOk(summaryEntrySchema.safeParse({ ...base, datetime: '2026-11-22 10:00' }).success, 'a datetime not ISO 8601');
  t.ok(summaryEntrySchema.safeParse({ ...base, status: 'CLOSED', reason: 'outside_opening_hours', datetime: null }).success, 'datetime null');
  t.notOk(v1SummaryEntrySchema.safeParse({ ...base, fuel_type: '700hd' }).success, 'no 700hd in v1');
});

t.test('the schemas become JSON Schemas, with a description for each state and reason', async (t) => {
  const registry = z.registry<{ id: string }>();
  for (const [id, schema] of Object.entries({ StationSummary: stationSummarySchema, StationSummaryV1: v1StationSummarySchema })) registry.add(schema, { id });
  const { schemas } = z.toJSONSchema(registry, { io: 'output', target: 'draft-2020-12', unrepresentable: 'throw', uri: (id) => `#/components/schemas/${id}` }) as unknown as {
    schemas: Record<string, { properties: { fuelling_options: { items: { properties: Record<string, { anyOf?: { const: string; description?: string }[] }> } } } }>;
  };
  for (const id of ['StationSummary', 'StationSummaryV1']) {
    const entry = schemas[id]!.properties.fuelling_options.items.properties;
    t.strictSame(entry.status!.anyOf!.map((s) => s.const), [...SUMMARY_STATES], `${id}: the states`);
    t.strictSame(entry.reason!.anyOf!.map((s) => s.const), [...SUMMARY_REASONS], `${id}: the reasons`);
    t.ok([...entry.status!.anyOf!, ...entry.reason!.anyOf!].every((s) => typeof s.description === 'string' && s.description.length > 0), `${id}: each described`);
  }
});
