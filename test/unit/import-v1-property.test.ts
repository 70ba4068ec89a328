import t from 'tap';
import fc from 'fast-check';
import { V1_TO_CANONICAL, DIALECT_CODES, providedOptions } from '../../src/domain/import-v1/options.js';
import { v1NonFieldErrorsSchema, v1ValidationErrorListSchema } from '../../src/domain/import-v1/schemas.js';
import { validateV1Batch, type Dialect, type V1BatchResult } from '../../src/domain/import-v1/validate.js';
import type { ConfirmedLayout, StationEntry, StationLookup } from '../../src/domain/stations.js';
import { runs } from '../helpers/scale.js';
import { holds } from '../helpers/property.js';

const NOW = new Date('2026-11-22T10:00:00.000Z');
const at = (offsetSeconds: number) => new Date(NOW.getTime() + offsetSeconds * 1000).toISOString();

function layout(...nozzles: string[][]): ConfirmedLayout {
  return {
    nozzles: new Map(nozzles.map((fuellingOptions, i) => [`N${i + 1}`, { dispenser: 'D1', fuellingOptions }])),
    dispensers: new Map([['D1', nozzles.map((_, i) => `N${i + 1}`)]]),
    storages: new Set(),
    products: new Set(),
  };
}

const STATIONS = new Map<string, StationEntry>(
  [
    { hrsId: 'BERLA', name: 'Berlin A', heavyDuty: false, layout: layout(['700ld'], ['350ld']), v1FuelTypes: ['700car', '350car'] },
    { hrsId: 'HDBUS', name: 'Bus depot', heavyDuty: true, layout: layout(['700hd', '350hd'], ['700ld']), v1FuelTypes: ['350bus'] },
    { hrsId: 'V1ONL', name: 'v1 only', heavyDuty: false, layout: null, v1FuelTypes: ['350car', '350bus'] },
    { hrsId: 'EMPTY', name: 'Empty', heavyDuty: false, layout: null },
  ].map((s) => [s.hrsId, s]),
);
const registry: StationLookup = { station: (id) => STATIONS.get(id) };
const DIALECTS = ['v1', 'v1.1'] as const;
const ABSENT = Symbol('absent');

/** The body well formed for the request, whatever it held; undefined when it is, else what is wrong. */
function malformation(sent: unknown, result: V1BatchResult): string | undefined {
  if (!Array.isArray(sent)) {
    return result.kind === 'not-a-list' && v1NonFieldErrorsSchema.safeParse(result.body).success && result.body.non_field_errors.length === 1
      ? undefined
      : 'a non-array body must give one non_field_errors message';
  }
  if (result.kind !== 'checked') return `an array of ${sent.length} was not checked`;
  if (result.outcomes.length !== sent.length) return 'one outcome per signal';
  const allPassed = result.outcomes.every((o) => o.ok);
  if (allPassed) return result.body === null ? undefined : 'all passed, yet a body';
  const body = result.body;
  if (body === null || body.length !== sent.length) return 'the body must be aligned with the request';
  if (!v1ValidationErrorListSchema.safeParse(body).success) return 'the body must be field errors as documented';
  for (const [i, outcome] of result.outcomes.entries()) {
    const entry = body[i] as Record<string, unknown>;
    if (outcome.ok && (entry === null || typeof entry !== 'object' || Object.keys(entry).length !== 0)) return `accepted #${i} must be {}`;
    if (!outcome.ok && (Object.keys(entry).length === 0 || entry !== outcome.errors)) return `refused #${i} must carry its errors`;
  }
  for (const outcome of result.outcomes) {
    if (!outcome.ok) continue;
    const { signal } = outcome;
    const station = STATIONS.get(signal.hrsId);
    if (!station) return 'accepted for an unknown station';
    if (JSON.stringify(signal.payload.fuelling_options.map((o) => o.fuelling_option)) !== JSON.stringify(providedOptions(station))) {
      return 'an accepted signal carries every provided option, in canonical order';
    }
  }
  return undefined;
}

const check = (dialect: Dialect, body: unknown) => {
  const result = validateV1Batch(dialect, body, registry, NOW);
  const wrong = malformation(body, result);
  if (wrong) throw new Error(`${wrong}: ${JSON.stringify(result)} for ${JSON.stringify(body)}`);
  return result;
};

/* A generator of signals whose validity is known: each field from values labelled valid or not. */

type Labelled = { value: unknown; valid: boolean };
const labelled = (...pairs: [unknown, boolean][]) => fc.constantFrom(...pairs.map(([value, valid]): Labelled => ({ value, valid })));

/** Mostly one of `good`, sometimes one of `bad`: enough signals pass for the property to say something. */
const mostly = <T>(good: readonly T[], bad: readonly T[], badWeight = 1) =>
  fc.oneof({ weight: 6, arbitrary: fc.constantFrom(...good) }, { weight: badWeight, arbitrary: fc.constantFrom(...bad) });

const hrsArb = mostly<unknown>(['BERLA', 'HDBUS', 'V1ONL', 'EMPTY'], ['NOWHR', 'berla', '', 5, null, ABSENT]);
const datetimeArb = fc.oneof(
  { weight: 6, arbitrary: labelled([at(-10), true], [at(-300), true], [at(30), true], ['2026-11-22T10:59:00+01:00', true]) },
  {
    weight: 1,
    arbitrary: labelled(
      [at(-301), false],
      [at(31), false],
      ['2026-11-22T10:00:00', false],
      ['2026-02-30T10:00:00Z', false],
      ['yesterday', false],
      [1700000000, false],
      [null, false],
      [ABSENT, false],
    ),
  },
);
const booleanArb = mostly<unknown>([true, false], [null, 'true', 0, ABSENT]);
const transmissionIdArb = mostly<unknown>([ABSENT, null, 'run-1', 'x'.repeat(200)], ['x'.repeat(201), '', 'a\u0000b', 'a\ud800', 7]);
const fuelTypeArb = (dialect: Dialect) =>
  mostly<unknown>(DIALECT_CODES[dialect], [...DIALECT_CODES[dialect === 'v1' ? 'v1.1' : 'v1'], '350CAR', 'x', 5, null, ABSENT]);
const availableArb = mostly<unknown>([true, false, null, ABSENT], ['yes', 1]);
const entryArb = (dialect: Dialect) =>
  fc.oneof(
    { weight: 19, arbitrary: fc.record({ fuel_type: fuelTypeArb(dialect), available: availableArb }) },
    { weight: 1, arbitrary: fc.constantFrom<unknown>('700car', 5, null, [], ABSENT) },
  );
const dispensersArb = (dialect: Dialect) =>
  fc.oneof(
    { weight: 19, arbitrary: fc.array(entryArb(dialect), { maxLength: 4 }) },
    { weight: 1, arbitrary: fc.constantFrom<unknown>({}, '700car', null, ABSENT) },
  );
const extraArb = fc.dictionary(fc.constantFrom('dry_run', 'station', 'nozzles', 'note', 'fuelling_options'), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 2 });

const signalArb = (dialect: Dialect) =>
  fc.record({
    hrs: hrsArb,
    datetime: datetimeArb,
    dispensers: dispensersArb(dialect),
    maintenance: booleanArb,
    limitedly_available: booleanArb,
    transmission_id: transmissionIdArb,
    extra: extraArb,
  });
type Generated = ReturnType<typeof signalArb> extends fc.Arbitrary<infer T> ? T : never;

/** The JSON signal: ABSENT fields (and entries) left out. */
function build(g: Generated): unknown {
  const strip = (o: Record<string, unknown>) => Object.fromEntries(Object.entries(o).filter(([, v]) => v !== ABSENT));
  const dispensers = Array.isArray(g.dispensers)
    ? g.dispensers.map((e) => (e !== null && typeof e === 'object' && !Array.isArray(e) ? strip(e as Record<string, unknown>) : e === ABSENT ? {} : e))
    : g.dispensers;
  return strip({
    ...g.extra,
    hrs: g.hrs,
    datetime: g.datetime.value,
    dispensers,
    maintenance: g.maintenance,
    limitedly_available: g.limitedly_available,
    transmission_id: g.transmission_id,
  });
}

/**
 * The rules, said plainly: whether the signal must be accepted, and its options if so (`notProvided`:
 * the codes of entries naming an option the station does not provide, which refuse the signal).
 */
function expected(dialect: Dialect, signal: Record<string, unknown>, datetimeValid: boolean, notProvided: string[] = []): Record<string, boolean | null> | undefined {
  const station = typeof signal.hrs === 'string' ? STATIONS.get(signal.hrs) : undefined;
  if (!station || !datetimeValid) return undefined;
  if (typeof signal.maintenance !== 'boolean' || typeof signal.limitedly_available !== 'boolean') return undefined;
  const id = signal.transmission_id;
  if (!(id === undefined || id === null || (typeof id === 'string' && id.length > 0 && id.length <= 200 && !/[\u0000\ud800-\udfff]/.test(id)))) return undefined;
  if (!Array.isArray(signal.dispensers)) return undefined;
  const provided = providedOptions(station);
  const reported: Record<string, boolean | null> = {};
  const seen = new Set<string>();
  for (const entry of signal.dispensers as unknown[]) {
    if (entry === null || typeof entry !== 'object' || Array.isArray(entry)) return undefined;
    const { fuel_type, available } = entry as Record<string, unknown>;
    if (typeof fuel_type !== 'string' || !DIALECT_CODES[dialect].includes(fuel_type)) return undefined;
    const option = dialect === 'v1' ? V1_TO_CANONICAL.get(fuel_type)! : fuel_type;
    if (seen.has(option)) return undefined;
    seen.add(option);
    if (!(available === undefined || available === null || typeof available === 'boolean')) return undefined;
    if (!provided.includes(option as (typeof provided)[number])) notProvided.push(fuel_type);
    else reported[option] = typeof available === 'boolean' ? available : null;
  }
  if (notProvided.length > 0) return undefined;
  return Object.fromEntries(provided.map((option) => [option, reported[option] ?? null]));
}

t.test('generated signals: exactly the valid ones are accepted, with every provided option', async (t) => {
  let acceptedCount = 0;
  let refusedCount = 0;
  let notProvidedCount = 0;
  fc.assert(
    fc.property(fc.constantFrom(...DIALECTS).chain((dialect) => fc.tuple(fc.constant(dialect), fc.array(signalArb(dialect), { maxLength: 6 }))), ([dialect, generated]) => {
      const body = generated.map(build);
      const result = check(dialect, body);
      if (result.kind !== 'checked') throw new Error('checked expected');
      generated.forEach((g, i) => {
        const sent = body[i] as Record<string, unknown>;
        const notProvided: string[] = [];
        const want = expected(dialect, sent, g.datetime.valid, notProvided);
        const outcome = result.outcomes[i]!;
        if ((want !== undefined) !== outcome.ok) {
          throw new Error(`#${i} ${dialect}: expected ${want ? 'acceptance' : 'refusal'}, got ${JSON.stringify(outcome)} for ${JSON.stringify(sent)}`);
        }
        if (!outcome.ok) {
          refusedCount++;
          if (notProvided.length === 0) return;
          // Each such entry is named among its errors.
          const named = new Set(JSON.stringify(outcome.errors).match(/not provided by this station: \w+/g) ?? []);
          if (!notProvided.every((code) => named.has(`not provided by this station: ${code}`))) {
            throw new Error(`#${i}: the entries ${JSON.stringify(notProvided)} must be named, got ${JSON.stringify(outcome.errors)}`);
          }
          notProvidedCount++;
          return;
        }
        acceptedCount++;
        const options = Object.fromEntries(outcome.signal.payload.fuelling_options.map((o) => [o.fuelling_option, o.available]));
        if (JSON.stringify(options) !== JSON.stringify(want)) throw new Error(`#${i}: options ${JSON.stringify(options)}, expected ${JSON.stringify(want)}`);
        const s = outcome.signal;
        if (s.hrsId !== sent.hrs || s.dialect !== dialect || s.transmissionId !== (sent.transmission_id ?? null)) throw new Error(`#${i}: envelope ${JSON.stringify(s)}`);
        if (s.payload.station.maintenance !== sent.maintenance || s.payload.station.limitedly_available !== sent.limitedly_available) {
          throw new Error(`#${i}: flags ${JSON.stringify(s.payload.station)}`);
        }
      });
    }),
    { numRuns: runs(1500) },
  );
  t.ok(acceptedCount > runs(1500) / 15, `enough accepted signals generated (${acceptedCount})`);
  t.ok(refusedCount > runs(1500) / 15, `enough refused signals generated (${refusedCount})`);
  t.ok(notProvidedCount > runs(1500) / 75, `enough otherwise valid signals naming an option their station does not provide generated (${notProvidedCount})`);
});

t.test('arbitrary bodies never throw and every 400 body is well formed', async (t) => {
  fc.assert(
    fc.property(fc.constantFrom(...DIALECTS), fc.jsonValue(), (dialect, body) => void check(dialect, body)),
    { numRuns: runs(1000) },
  );
  fc.assert(
    fc.property(fc.constantFrom(...DIALECTS), fc.array(fc.jsonValue({ maxDepth: 3 }), { maxLength: 5 }), (dialect, body) => void check(dialect, body)),
    { numRuns: runs(1000) },
  );
  await holds(
    t,
    fc.property(
      fc.constantFrom(...DIALECTS),
      fc.array(fc.dictionary(fc.constantFrom('hrs', 'datetime', 'dispensers', 'maintenance', 'limitedly_available', 'transmission_id', '__proto__', 'constructor'), fc.jsonValue({ maxDepth: 2 })), { maxLength: 4 }),
      (dialect, body) => void check(dialect, body),
    ),
    { numRuns: runs(1000) },
    'no throw, no malformed body',
  );
});

/* Mutations of valid requests: one value replaced or removed anywhere in the body. */

function validBatch(dialect: Dialect) {
  const dispensers =
    dialect === 'v1'
      ? [
          { fuel_type: '700car', available: true },
          { fuel_type: '350car', available: null },
        ]
      : [
          { fuel_type: '700ld', available: false },
          { fuel_type: '350ld' },
        ];
  return [
    { hrs: 'BERLA', datetime: at(-5), dispensers, maintenance: false, limitedly_available: false, transmission_id: 'run-1' },
    { hrs: 'BERLA', datetime: at(-1), dispensers: [], maintenance: true, limitedly_available: false },
  ];
}

function paths(value: unknown, prefix: (string | number)[] = []): (string | number)[][] {
  const here = prefix.length > 0 ? [prefix] : [];
  if (Array.isArray(value)) return [...here, ...value.flatMap((v, i) => paths(v, [...prefix, i]))];
  if (value !== null && typeof value === 'object') return [...here, ...Object.entries(value).flatMap(([k, v]) => paths(v, [...prefix, k]))];
  return here;
}

function mutate(root: any, path: (string | number)[], value: unknown, remove: boolean): void {
  let node = root;
  for (const key of path.slice(0, -1)) node = node[key];
  const last = path[path.length - 1]!;
  if (remove && !Array.isArray(node)) delete node[last];
  else node[last] = value;
}

t.test('mutated valid requests: never throw, aligned bodies, the untouched signal still accepted', async (t) => {
  for (const dialect of DIALECTS) {
    const result = check(dialect, validBatch(dialect));
    t.ok(result.kind === 'checked' && result.body === null, `${dialect}: the batch is valid`);
  }
  await holds(
    t,
    fc.property(
      fc.constantFrom(...DIALECTS).chain((dialect) =>
        fc.tuple(fc.constant(dialect), fc.constantFrom(...paths(validBatch(dialect))), fc.jsonValue({ maxDepth: 2 }), fc.boolean()),
      ),
      ([dialect, path, value, remove]) => {
        const batch = validBatch(dialect);
        mutate(batch, path, value, remove);
        const result = check(dialect, batch);
        if (result.kind !== 'checked') throw new Error('checked expected');
        // The signal the mutation did not touch is accepted whatever happened to the other.
        const untouched = path[0] === 0 ? 1 : 0;
        if (!result.outcomes[untouched]!.ok) throw new Error(`untouched #${untouched} refused: ${JSON.stringify(result.body)} for ${JSON.stringify(batch)}`);
      },
    ),
    { numRuns: runs(2000) },
    'no throw, no malformed body, partial acceptance holds',
  );
});
