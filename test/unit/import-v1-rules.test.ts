import t from 'tap';
import { componentSchemas } from '../../src/http/openapi.js';
import { V1_MESSAGES } from '../../src/domain/import-v1/messages.js';
import { CANONICAL_TO_V1, DIALECT_CODES, V1_TO_CANONICAL, layoutContradictions, providedOptions, toCanonical } from '../../src/domain/import-v1/options.js';
import {
  V1_SCHEMAS,
  v1FieldErrorsSchema,
  v1NonFieldErrorsSchema,
  v1ValidationErrorListSchema,
} from '../../src/domain/import-v1/schemas.js';
import { validateV1Batch, validateV1BatchInSlices, type Dialect, type V1BatchResult, type V1Signal } from '../../src/domain/import-v1/validate.js';
import { LIMIT_MESSAGES, LIMITS } from '../../src/domain/import-v2/limits.js';
import { MESSAGES } from '../../src/domain/import-v2/rules.js';
import { validateBatch } from '../../src/domain/import-v2/validate.js';
import type { ConfirmedLayout, StationEntry, StationLookup } from '../../src/domain/stations.js';

const NOW = new Date('2026-11-22T10:00:00.000Z');
const at = (offsetSeconds: number) => new Date(NOW.getTime() + offsetSeconds * 1000).toISOString();

/** A confirmed layout with one nozzle per list of fuelling options. */
function layout(...nozzles: string[][]): ConfirmedLayout {
  return {
    nozzles: new Map(nozzles.map((fuellingOptions, i) => [`N${i + 1}`, { dispenser: 'D1', fuellingOptions }])),
    dispensers: new Map([['D1', nozzles.map((_, i) => `N${i + 1}`)]]),
    storages: new Set(),
    products: new Set(),
  };
}

/** Cars at 700 and 350 bar, on the layout and as v1 fuel types. */
const BERLA: StationEntry = { hrsId: 'BERLA', name: 'Berlin A', heavyDuty: false, layout: layout(['700ld'], ['350ld']), v1FuelTypes: ['700car', '350car'] };
/** Heavy duty: 700hd and 350hd on the layout (one nozzle offering both), 700ld too. */
const HDBUS: StationEntry = {
  hrsId: 'HDBUS',
  name: 'Bus depot',
  heavyDuty: true,
  layout: layout(['700hd', '350hd'], ['700ld']),
  v1FuelTypes: ['700car', '350bus'],
};
/** No confirmed layout; only its registered v1 fuel types say what it provides. */
const V1ONL: StationEntry = { hrsId: 'V1ONL', name: 'v1 only', heavyDuty: false, layout: null, v1FuelTypes: ['350car'] };
/** Nothing registered: provides no fuelling option. */
const EMPTY: StationEntry = { hrsId: 'EMPTY', name: 'Empty', heavyDuty: false, layout: null };
const STATIONS = new Map([BERLA, HDBUS, V1ONL, EMPTY].map((s) => [s.hrsId, s]));
const registry: StationLookup = { station: (id) => STATIONS.get(id) };

const signal = (extra: Record<string, unknown> = {}) => ({
  hrs: 'BERLA',
  datetime: at(-10),
  dispensers: [
    { fuel_type: '700car', available: true },
    { fuel_type: '350car', available: false },
  ],
  maintenance: false,
  limitedly_available: false,
  ...extra,
});
const signal11 = (extra: Record<string, unknown> = {}) =>
  signal({
    dispensers: [
      { fuel_type: '700ld', available: true },
      { fuel_type: '350ld', available: false },
    ],
    ...extra,
  });

function checked(dialect: Dialect, body: unknown): Extract<V1BatchResult, { kind: 'checked' }> {
  const result = validateV1Batch(dialect, body, registry, NOW);
  if (result.kind !== 'checked') throw new Error(`expected a checked batch, got ${result.kind}`);
  return result;
}
/** The errors of one signal sent alone (it must fail). */
function errorsOf(dialect: Dialect, one: unknown): any {
  const result = checked(dialect, [one]);
  if (result.body === null || result.body.length !== 1) throw new Error('expected a rejection');
  return result.body[0];
}
/** The stored form of one signal sent alone (it must pass). */
function accepted(dialect: Dialect, one: unknown): V1Signal {
  const result = checked(dialect, [one]);
  const outcome = result.outcomes[0]!;
  if (result.body !== null || !outcome.ok) throw new Error(`expected acceptance, got ${JSON.stringify(result.body)}`);
  return outcome.signal;
}
const options = (s: V1Signal) => Object.fromEntries(s.payload.fuelling_options.map((o) => [o.fuelling_option, o.available]));

t.test('the body must be a JSON array; an empty one is valid', async (t) => {
  for (const dialect of ['v1', 'v1.1'] as const) {
    for (const [body, type] of [[{}, 'dict'], ['x', 'str'], [1, 'int'], [1.5, 'float'], [null, 'NoneType'], [true, 'bool']] as const) {
      const result = validateV1Batch(dialect, body, registry, NOW);
      t.strictSame(result, { kind: 'not-a-list', body: { non_field_errors: [`Expected a list of items but got type "${type}".`] } });
      const v2 = validateBatch('availability', body, registry, NOW);
      t.strictSame(result.body, v2.ok ? undefined : v2.body, `${type}: the same words as import v2`);
    }
    t.strictSame(validateV1Batch(dialect, [], registry, NOW), { kind: 'checked', outcomes: [], body: null }, 'empty: all passed, nothing to store');
  }
});

t.test('more signals than the limit: refused whole', async (t) => {
  const body = Array.from({ length: LIMITS.transmissions + 1 }, () => signal());
  t.strictSame(validateV1Batch('v1', body, registry, NOW), { kind: 'too-long', body: { non_field_errors: [LIMIT_MESSAGES.tooLong(LIMITS.transmissions)] } });
  t.equal(V1_MESSAGES.tooLong(LIMITS.transmissions), 'Ensure this field has no more than 1000 elements.');
  const atLimit = validateV1Batch('v1', body.slice(1), registry, NOW);
  t.ok(atLimit.kind === 'checked' && atLimit.body === null && atLimit.outcomes.length === LIMITS.transmissions, 'exactly the limit is fine');
});

t.test('a valid v1 signal: every provided option, canonical, station flags', async (t) => {
  const s = accepted('v1', signal({ transmission_id: 'run-7', maintenance: true }));
  t.strictSame(s, {
    hrsId: 'BERLA',
    measuredAt: new Date(at(-10)),
    transmissionId: 'run-7',
    dialect: 'v1',
    payload: {
      station: { maintenance: true, limitedly_available: false },
      fuelling_options: [
        { fuelling_option: '700ld', available: true },
        { fuelling_option: '350ld', available: false },
      ],
    },
  });
  t.equal(accepted('v1', signal()).transmissionId, null, 'transmission_id left out: null');
  t.equal(accepted('v1', signal({ transmission_id: null })).transmissionId, null, 'transmission_id null: null');
});

t.test('a valid v1.1 signal', async (t) => {
  const s = accepted('v1.1', signal11({ hrs: 'HDBUS', limitedly_available: true, dispensers: [{ fuel_type: '350hd', available: true }, { fuel_type: '700hd', available: false }, { fuel_type: '700ld', available: true }] }));
  t.strictSame(s.payload, {
    station: { maintenance: false, limitedly_available: true },
    fuelling_options: [
      { fuelling_option: '700ld', available: true },
      { fuelling_option: '700hd', available: false },
      { fuelling_option: '350hd', available: true },
    ],
  });
  t.equal(s.dialect, 'v1.1');
});

t.test('omitted means unknown: left out and null options are null', async (t) => {
  t.strictSame(options(accepted('v1', signal({ dispensers: [{ fuel_type: '350car', available: true }] }))), { '700ld': null, '350ld': true });
  t.strictSame(options(accepted('v1', signal({ dispensers: [{ fuel_type: '350car', available: null }, { fuel_type: '700car' }] }))), { '700ld': null, '350ld': null });
  t.strictSame(options(accepted('v1', signal({ dispensers: [] }))), { '700ld': null, '350ld': null }, 'an empty dispensers list: all unknown');
  t.strictSame(options(accepted('v1.1', signal11({ dispensers: [{ fuel_type: '700ld', available: false }] }))), { '700ld': false, '350ld': null });
  t.strictSame(
    accepted('v1', signal({ dispensers: [{ fuel_type: '700car', available: true }] })).payload.fuelling_options.map((o) => o.fuelling_option),
    ['700ld', '350ld'],
    'in canonical order, every provided option',
  );
});

t.test('700hd omitted for a heavy-duty station is unknown; v1 cannot carry it', async (t) => {
  const v1 = accepted('v1', signal({ hrs: 'HDBUS', dispensers: [{ fuel_type: '700car', available: true }, { fuel_type: '350bus', available: true }] }));
  t.strictSame(options(v1), { '700ld': true, '700hd': null, '350hd': true });
  const v11 = accepted('v1.1', signal11({ hrs: 'HDBUS', dispensers: [{ fuel_type: '350hd', available: false }] }));
  t.strictSame(options(v11), { '700ld': null, '700hd': null, '350hd': false });
  t.strictSame(errorsOf('v1', signal({ hrs: 'HDBUS', dispensers: [{ fuel_type: '700hd', available: true }] })), {
    dispensers: [{ fuel_type: ['Invalid fuelling option'] }],
  });
});

t.test('fuel_type: the dialect\'s vocabulary, nested errors aligned with the entries', async (t) => {
  t.strictSame(errorsOf('v1', signal({ dispensers: [{ fuel_type: '700car', available: true }, { fuel_type: '700ld', available: true }] })), {
    dispensers: [{}, { fuel_type: ['Invalid fuelling option'] }],
  });
  t.strictSame(errorsOf('v1.1', signal11({ dispensers: [{ fuel_type: '700ld', available: true }, { fuel_type: '700car', available: true }] })), {
    dispensers: [{}, { fuel_type: ['Invalid fuelling option'] }],
  });
  t.equal(
    JSON.stringify(errorsOf('v1', signal({ dispensers: [{ fuel_type: '350car' }, { fuel_type: '350ld' }] }))),
    '{"dispensers":[{},{"fuel_type":["Invalid fuelling option"]}]}',
    'exactly the legacy body',
  );
  for (const dialect of ['v1', 'v1.1'] as const) {
    const other = dialect === 'v1' ? DIALECT_CODES['v1.1'] : DIALECT_CODES.v1;
    for (const bad of [...other, 'x', '', '700CAR', ' 700car', 700, true, {}, ['700car']]) {
      t.strictSame(errorsOf(dialect, signal({ dispensers: [{ fuel_type: bad, available: true }] })), { dispensers: [{ fuel_type: [V1_MESSAGES.invalidFuellingOption] }] }, `${dialect}: ${JSON.stringify(bad)}`);
    }
    t.strictSame(errorsOf(dialect, signal({ dispensers: [{ available: true }] })), { dispensers: [{ fuel_type: ['This field is required.'] }] });
    t.strictSame(errorsOf(dialect, signal({ dispensers: [{ fuel_type: null }] })), { dispensers: [{ fuel_type: ['This field may not be null.'] }] });
  }
  t.strictSame(DIALECT_CODES, { v1: ['700car', '350car', '350bus'], 'v1.1': ['700ld', '350ld', '700hd', '350hd'] });
});

t.test('the fixed mapping to the canonical codes', async (t) => {
  t.strictSame([...V1_TO_CANONICAL], [['700car', '700ld'], ['350car', '350ld'], ['350bus', '350hd']]);
  t.strictSame([...CANONICAL_TO_V1], [['700ld', '700car'], ['350ld', '350car'], ['350hd', '350bus']], '700hd has no v1 code');
  t.equal(toCanonical('v1', '350bus'), '350hd');
  t.equal(toCanonical('v1', '700hd'), undefined);
  t.equal(toCanonical('v1.1', '700hd'), '700hd');
  t.equal(toCanonical('v1.1', '700car'), undefined);
  t.equal(toCanonical('v1', 'constructor'), undefined);
});

t.test('available: a boolean, null or left out', async (t) => {
  t.strictSame(errorsOf('v1', signal({ dispensers: [{ fuel_type: '700car', available: 'yes' }] })), { dispensers: [{ available: ['Must be a valid boolean.'] }] });
  t.strictSame(errorsOf('v1', signal({ dispensers: [{ fuel_type: '700car', available: 1 }] })), { dispensers: [{ available: ['Must be a valid boolean.'] }] });
});

t.test('the same fuelling option twice: named under the later entry', async (t) => {
  t.strictSame(errorsOf('v1', signal({ dispensers: [{ fuel_type: '700car', available: true }, { fuel_type: '350car' }, { fuel_type: '700car', available: false }] })), {
    dispensers: [{}, {}, { fuel_type: ['Duplicate fuelling option: 700car'] }],
  });
  t.strictSame(errorsOf('v1.1', signal11({ dispensers: [{ fuel_type: '350ld' }, { fuel_type: '350ld' }, { fuel_type: '350ld' }] })), {
    dispensers: [{}, { fuel_type: ['Duplicate fuelling option: 350ld'] }, { fuel_type: ['Duplicate fuelling option: 350ld'] }],
  });
  t.strictSame(
    errorsOf('v1', signal({ dispensers: [{ fuel_type: '350bus' }, { fuel_type: '350bus' }] })),
    { dispensers: [{ fuel_type: ['Fuelling option not provided by this station: 350bus'] }, { fuel_type: ['Duplicate fuelling option: 350bus', 'Fuelling option not provided by this station: 350bus'] }] },
    'both rules, as import v2 reports an unknown and repeated id',
  );
});

/** One signal sent alone that must be refused: its errors, and that nothing of it is accepted. */
function refused(dialect: Dialect, one: unknown): unknown {
  const result = checked(dialect, [one]);
  const outcome = result.outcomes[0]!;
  if (outcome.ok || result.body === null) throw new Error(`expected a refusal, got ${JSON.stringify(result.body)}`);
  t.strictSame(result.body, [outcome.errors], 'the answer\'s entry is its errors');
  return outcome.errors;
}
const notProvided = (code: string) => `Fuelling option not provided by this station: ${code}`;

t.test('an option the station does not provide: the signal is refused, the entry named (nothing of it stored)', async (t) => {
  t.strictSame(
    refused('v1', signal({ maintenance: true, dispensers: [{ fuel_type: '700car', available: true }, { fuel_type: '350bus', available: true }] })),
    { dispensers: [{}, { fuel_type: [notProvided('350bus')] }] },
    'named under its entry, aligned with the request',
  );
  t.strictSame(refused('v1.1', signal11({ dispensers: [{ fuel_type: '700hd', available: true }] })), { dispensers: [{ fuel_type: [notProvided('700hd')] }] });
  t.strictSame(
    refused('v1', signal({ hrs: 'HDBUS', dispensers: [{ fuel_type: '350car', available: false }, { fuel_type: '350bus', available: false }] })),
    { dispensers: [{ fuel_type: [notProvided('350car')] }, {}] },
    'a false for an option it lacks is refused too',
  );
  t.strictSame(refused('v1', signal({ hrs: 'EMPTY', dispensers: [{ fuel_type: '700car' }] })), { dispensers: [{ fuel_type: [notProvided('700car')] }] });
  t.strictSame(options(accepted('v1', signal({ hrs: 'HDBUS', dispensers: [{ fuel_type: '350bus', available: false }] }))), { '700ld': null, '700hd': null, '350hd': false }, 'without it, the signal is stored');
  t.strictSame(options(accepted('v1', signal({ hrs: 'V1ONL', dispensers: [{ fuel_type: '350car', available: true }] }))), { '350ld': true }, 'v1 fuel types alone');
  t.strictSame(options(accepted('v1.1', signal11({ hrs: 'V1ONL', dispensers: [{ fuel_type: '350ld', available: true }] }))), { '350ld': true }, 'and in v1.1 codes');
  t.strictSame(accepted('v1', signal({ hrs: 'EMPTY', dispensers: [] })).payload.fuelling_options, [], 'a station with no option: just the flags');
  const batch = checked('v1', [signal({ dispensers: [{ fuel_type: '350bus', available: true }] }), signal()]);
  t.strictSame(batch.body, [{ dispensers: [{ fuel_type: [notProvided('350bus')] }] }, {}], 'in a batch: the others are accepted, {} each');
  t.strictSame(batch.outcomes.map((o) => o.ok), [false, true]);
});

t.test('an option the station does not provide, in a signal refused for another reason: named with the refusal', async (t) => {
  t.strictSame(errorsOf('v1', signal({ datetime: at(-400), dispensers: [{ fuel_type: '700car', available: true }, { fuel_type: '350bus', available: true }] })), {
    dispensers: [{}, { fuel_type: ['Fuelling option not provided by this station: 350bus'] }],
    datetime: ['The signal may not be older than 5 minutes.'],
  });
  t.strictSame(errorsOf('v1', signal({ dispensers: [{ fuel_type: '350bus', available: 'y' }] })), {
    dispensers: [{ available: ['Must be a valid boolean.'], fuel_type: ['Fuelling option not provided by this station: 350bus'] }],
  });
});

t.test('hrs: a registered station, with import v2\'s words', async (t) => {
  t.strictSame(errorsOf('v1', signal({ hrs: 'NOWHR', dispensers: [{ fuel_type: '350bus' }] })), { hrs: ['Unknown station identifier: NOWHR'] }, 'no option check without a station');
  t.strictSame(errorsOf('v1', signal({ hrs: 'berla' })), { hrs: ['Unknown station identifier: berla'] }, 'off the pattern: never registered');
  t.strictSame(errorsOf('v1', signal({ hrs: 'BERLAX' })), { hrs: ['Unknown station identifier: BERLAX'] });
  t.strictSame(errorsOf('v1', signal({ hrs: 5 })), { hrs: ['Not a valid string.'] });
  t.strictSame(errorsOf('v1', signal({ hrs: '' })), { hrs: ['This field may not be blank.'] });
  t.strictSame(errorsOf('v1', signal({ hrs: null })), { hrs: ['This field may not be null.'] });
  t.strictSame(errorsOf('v1', signal({ hrs: 'BE\u0000LA' })), { hrs: ['Null characters are not allowed.', 'Unknown station identifier: BE\u0000LA'] });
  t.strictSame(errorsOf('v1', signal({ hrs: '__proto__' })), { hrs: ['Unknown station identifier: __proto__'] });
  const v2 = validateBatch('availability', [{ hrs: 'NOWHR', datetime: at(0), nozzles: [{ id: 'N1', available: true }], station: { maintenance: false, limitedly_available: false } }], registry, NOW);
  t.strictSame(v2.ok ? undefined : (v2.body as any)[0].hrs, ['Unknown station identifier: NOWHR'], 'as import v2 words it');
});

t.test('datetime: import v2\'s format and window', async (t) => {
  const ok = (datetime: string) => checked('v1', [signal({ datetime })]).body === null;
  t.ok(ok(at(-300)), 'exactly 5 minutes old is accepted');
  t.ok(ok(at(30)), 'exactly 30 seconds ahead is accepted');
  t.ok(ok('2026-11-22T10:59:59.5+0100'), 'basic-format offset and fractions');
  t.strictSame(errorsOf('v1', signal({ datetime: at(-300.001) })), { datetime: ['The signal may not be older than 5 minutes.'] });
  t.strictSame(errorsOf('v1.1', signal11({ datetime: at(30.001) })), { datetime: ['The signal may not be from the future.'] });
  for (const bad of ['2026-11-22T10:00:00', '2026-11-22 10:00:00Z', '2026-02-30T10:00:00Z', '22.11.2026']) {
    t.strictSame(errorsOf('v1', signal({ datetime: bad })), { datetime: [MESSAGES.datetimeFormat] }, bad);
  }
  t.strictSame(errorsOf('v1', signal({ datetime: undefined })), { datetime: ['This field is required.'] });
  t.strictSame(errorsOf('v1', signal({ datetime: 1700000000 })), { datetime: ['Not a valid string.'] });
  t.equal(V1_MESSAGES.tooOld, MESSAGES.tooOld);
  t.equal(V1_MESSAGES.future, MESSAGES.future);
  t.equal(V1_MESSAGES.datetimeFormat, MESSAGES.datetimeFormat);
});

t.test('maintenance and limitedly_available: required booleans, no default', async (t) => {
  for (const dialect of ['v1', 'v1.1'] as const) {
    const base = dialect === 'v1' ? signal : signal11;
    t.strictSame(errorsOf(dialect, base({ maintenance: undefined, limitedly_available: undefined })), {
      maintenance: ['This field is required.'],
      limitedly_available: ['This field is required.'],
    });
    t.strictSame(errorsOf(dialect, base({ maintenance: null })), { maintenance: ['This field may not be null.'] });
    t.strictSame(errorsOf(dialect, base({ limitedly_available: 'false' })), { limitedly_available: ['Must be a valid boolean.'] });
    t.strictSame(errorsOf(dialect, base({ maintenance: 0 })), { maintenance: ['Must be a valid boolean.'] });
  }
});

t.test('transmission_id: optional, import v2\'s string rules', async (t) => {
  t.strictSame(errorsOf('v1', signal({ transmission_id: '' })), { transmission_id: ['This field may not be blank.'] });
  t.strictSame(errorsOf('v1', signal({ transmission_id: 5 })), { transmission_id: ['Not a valid string.'] });
  t.strictSame(errorsOf('v1', signal({ transmission_id: 'x'.repeat(201) })), { transmission_id: ['Ensure this field has no more than 200 characters.'] });
  t.strictSame(errorsOf('v1', signal({ transmission_id: 'a\u0000b' })), { transmission_id: ['Null characters are not allowed.'] });
  t.strictSame(errorsOf('v1', signal({ transmission_id: 'a\ud800b' })), { transmission_id: ['Surrogate characters are not allowed: U+D800.'] });
  t.equal(accepted('v1', signal({ transmission_id: 'x'.repeat(200) })).transmissionId, 'x'.repeat(200));
  t.equal(accepted('v1', signal({ transmission_id: 'run 😀' })).transmissionId, 'run 😀');
});

t.test('dispensers: a required list within import v2\'s entry limit', async (t) => {
  t.strictSame(errorsOf('v1', signal({ dispensers: undefined })), { dispensers: ['This field is required.'] });
  t.strictSame(errorsOf('v1', signal({ dispensers: null })), { dispensers: ['This field may not be null.'] });
  t.strictSame(errorsOf('v1', signal({ dispensers: {} })), { dispensers: ['Expected a list of items but got type "dict".'] });
  t.strictSame(errorsOf('v1', signal({ dispensers: [{ fuel_type: '700car' }, 'x'] })), {
    dispensers: [{}, { non_field_errors: ['Invalid data. Expected a dictionary, but got str.'] }],
  });
  const many = Array.from({ length: LIMITS.entries + 1 }, () => ({ fuel_type: 'nonsense' }));
  t.strictSame(errorsOf('v1', signal({ dispensers: many, maintenance: 'x' })), { dispensers: ['Ensure this field has no more than 100 elements.'] }, 'reported alone, entries unread');
  t.strictSame(errorsOf('v1', signal({ dispensers: many.slice(1) })).dispensers.length, LIMITS.entries, 'the limit itself: entries read');
});

t.test('a signal that is not an object; fields beyond v1\'s are ignored', async (t) => {
  t.strictSame(errorsOf('v1', 'BERLA'), { non_field_errors: ['Invalid data. Expected a dictionary, but got str.'] });
  t.strictSame(errorsOf('v1', [signal()]), { non_field_errors: ['Invalid data. Expected a dictionary, but got list.'] });
  t.strictSame(errorsOf('v1', null), { non_field_errors: ['This field may not be null.'] });
  const s = accepted('v1', signal({ dry_run: 'no', nozzles: 5, station: {}, extra: { a: 1 }, dispensers: [{ fuel_type: '700car', available: true, nozzle: 'N1' }] }));
  t.strictSame(s.payload, { station: { maintenance: false, limitedly_available: false }, fuelling_options: [{ fuelling_option: '700ld', available: true }, { fuelling_option: '350ld', available: null }] });
});

t.test('every problem of a signal at once', async (t) => {
  t.strictSame(errorsOf('v1', { hrs: 'NOWHR', datetime: 'now', dispensers: [{ fuel_type: '700ld' }, { fuel_type: '700car', available: 'y' }], limitedly_available: null }), {
    dispensers: [{ fuel_type: ['Invalid fuelling option'] }, { available: ['Must be a valid boolean.'] }],
    maintenance: ['This field is required.'],
    limitedly_available: ['This field may not be null.'],
    hrs: ['Unknown station identifier: NOWHR'],
    datetime: [MESSAGES.datetimeFormat],
  });
});

t.test('partial acceptance: signals are validated independently, in order', async (t) => {
  const bad = signal({ dispensers: [{ fuel_type: '700car' }, { fuel_type: '700car' }] });
  const lacking = signal({ hrs: 'HDBUS', dispensers: [{ fuel_type: '700car' }, { fuel_type: '350car' }] });
  const result = checked('v1', [signal(), bad, signal({ hrs: 'V1ONL', dispensers: [] }), lacking]);
  t.strictSame(result.outcomes.map((o) => o.ok), [true, false, true, false]);
  t.strictSame(result.body, [{}, { dispensers: [{}, { fuel_type: ['Duplicate fuelling option: 700car'] }] }, {}, { dispensers: [{}, { fuel_type: [notProvided('350car')] }] }]);
  t.strictSame(result.outcomes.flatMap((o) => (o.ok ? [o.signal.hrsId] : [])), ['BERLA', 'V1ONL'], 'exactly the signals answered {}');
  t.ok(v1ValidationErrorListSchema.safeParse(result.body).success, 'the 400 body as documented');
  const all = checked('v1.1', [signal11(), signal11({ datetime: at(-20) })]);
  t.equal(all.body, null, 'all passed: no body');
  t.strictSame(all.outcomes.map((o) => (o.ok ? o.signal.measuredAt.toISOString() : '')), [at(-10), at(-20)], 'the same station twice: both, in order');
  const none = checked('v1', [{}, 'x']);
  t.strictSame(none.outcomes.map((o) => o.ok), [false, false]);
});

t.test('the error budget of one request, as import v2\'s', async (t) => {
  // `{}` has five errors: after LIMITS.reportedErrors / 5 signals the rest are not validated.
  const first = LIMITS.reportedErrors / 5;
  const result = checked('v1', [...Array.from({ length: first }, () => ({})), signal(), {}]);
  t.strictSame(result.body!.at(-1), { non_field_errors: [LIMIT_MESSAGES.notValidated] });
  t.strictSame(result.body!.at(-2), { non_field_errors: [LIMIT_MESSAGES.notValidated] }, 'a valid signal past the budget is not accepted');
  t.strictSame(Object.keys(result.body![first - 1] as object).length, 5);
  t.equal(V1_MESSAGES.notValidated, LIMIT_MESSAGES.notValidated);
});

t.test('in slices: the same result, pausing between slices', async (t) => {
  const body = [signal(), signal({ hrs: 'NOWHR' }), signal11(), signal({ hrs: 'HDBUS', dispensers: [] }), 'x'];
  let pauses = 0;
  const sliced = await validateV1BatchInSlices('v1', body, registry, NOW, 2, async () => void pauses++);
  t.strictSame(sliced, validateV1Batch('v1', body, registry, NOW));
  t.equal(pauses, 2);
  t.strictSame(await validateV1BatchInSlices('v1', {}, registry, NOW, 2, async () => void pauses++), validateV1Batch('v1', {}, registry, NOW));
});

t.test('the messages shared with import v2 are import v2\'s', async (t) => {
  const v2 = validateBatch(
    'availability',
    [{ hrs: 5, datetime: '', transmission_id: 'a\u0000', nozzles: {}, station: { maintenance: null, limitedly_available: 'x' } }, 'x'],
    registry,
    NOW,
  );
  t.strictSame(v2.ok ? undefined : v2.body, [
    {
      hrs: [V1_MESSAGES.notAString],
      datetime: [V1_MESSAGES.blank],
      transmission_id: [V1_MESSAGES.nullCharacter],
      nozzles: [V1_MESSAGES.notAList({})],
      station: { maintenance: [V1_MESSAGES.notNull], limitedly_available: [V1_MESSAGES.notABoolean] },
    },
    { non_field_errors: [V1_MESSAGES.notAnObject('x')] },
  ]);
  const missing = validateBatch('availability', [{}], registry, NOW);
  t.strictSame(missing.ok ? undefined : (missing.body as any)[0].hrs, [V1_MESSAGES.required]);
  const long = validateBatch('usage', [{ hrs: 'BERLA', datetime: at(0), transmission_id: 'x'.repeat(201), nozzles: [{ id: 'N1', usage_status: 'free' }] }], registry, NOW);
  t.strictSame(long.ok ? undefined : (long.body as any)[0].transmission_id, [V1_MESSAGES.textTooLong]);
  t.equal(V1_MESSAGES.unknownStation('ABCDE'), MESSAGES.unknownStation('ABCDE'));
});

t.test('providedOptions: the layout\'s and the v1 fuel types\', canonical order', async (t) => {
  t.strictSame(providedOptions(BERLA), ['700ld', '350ld']);
  t.strictSame(providedOptions(HDBUS), ['700ld', '700hd', '350hd']);
  t.strictSame(providedOptions(V1ONL), ['350ld']);
  t.strictSame(providedOptions(EMPTY), []);
  const mixed: StationEntry = { ...EMPTY, layout: layout(['350hd'], ['350ld', '700hd'], []), v1FuelTypes: ['700car', '350car'] };
  t.strictSame(providedOptions(mixed), ['700ld', '350ld', '700hd', '350hd'], 'the union, in canonical order');
  t.strictSame(providedOptions({ ...EMPTY, layout: layout(['350ld', 'h2-other']), v1FuelTypes: ['bogus', '350car'] }), ['350ld'], 'unknown codes are not options');
  t.strictSame(providedOptions({ ...EMPTY, v1FuelTypes: [] }), []);
});

t.test('layoutContradictions: v1 fuel types against the confirmed layout', async (t) => {
  t.strictSame(layoutContradictions(['700ld', '350ld'], ['700car', '350car']), [], 'agreeing');
  t.strictSame(layoutContradictions(['700ld', '700hd', '350hd'], ['350bus', '700car']), [], '700hd needs no v1 code');
  t.strictSame(layoutContradictions([], ['700car']), [], 'no layout options: nothing to compare');
  t.strictSame(layoutContradictions(['700ld'], []), [], 'no v1 fuel types: nothing to compare');
  t.strictSame(layoutContradictions(['700ld', '350ld'], ['700car', '350bus']), [
    'v1 fuel type 350bus has no nozzle with fuelling option 350hd on the confirmed layout',
    'fuelling option 350ld on the confirmed layout is missing from the v1 fuel types (350car)',
  ]);
  t.strictSame(layoutContradictions(['700hd'], ['350car']), ['v1 fuel type 350car has no nozzle with fuelling option 350ld on the confirmed layout']);
  t.strictSame(layoutContradictions(['350hd', '700ld'], ['350bus', 'diesel']), [
    'v1 fuel type diesel is not one of 700car, 350car, 350bus',
    'fuelling option 700ld on the confirmed layout is missing from the v1 fuel types (700car)',
  ]);
  t.equal(V1_MESSAGES.v1FuelTypeWithoutNozzle('350bus', '350hd'), 'v1 fuel type 350bus has no nozzle with fuelling option 350hd on the confirmed layout');
  t.equal(V1_MESSAGES.missingV1FuelType('350ld', '350car'), 'fuelling option 350ld on the confirmed layout is missing from the v1 fuel types (350car)');
});

t.test('the schemas make OpenAPI 3.1 component schemas', async (t) => {
  const requests = componentSchemas(
    { V1Signal: V1_SCHEMAS.v1.signal, V1Request: V1_SCHEMAS.v1.request, V11Signal: V1_SCHEMAS['v1.1'].signal, V11Request: V1_SCHEMAS['v1.1'].request },
    'input',
  ) as any;
  t.strictSame(requests.V1Request.items, { $ref: '#/components/schemas/V1Signal' });
  t.equal(requests.V1Request.maxItems, LIMITS.transmissions);
  t.strictSame(requests.V1Signal.required, ['hrs', 'datetime', 'dispensers', 'maintenance', 'limitedly_available']);
  t.strictSame(requests.V1Signal.properties.dispensers.items.properties.fuel_type.enum, ['700car', '350car', '350bus']);
  t.strictSame(requests.V11Signal.properties.dispensers.items.properties.fuel_type.enum, ['700ld', '350ld', '700hd', '350hd']);
  t.strictSame(requests.V1Signal.properties.dispensers.items.properties.available.type, ['boolean', 'null']);
  t.equal(requests.V1Signal.properties.hrs.pattern, '^[A-Z]{5}$');
  t.equal(requests.V1Signal.additionalProperties, undefined, 'other fields allowed (ignored)');
  const responses = componentSchemas({ V1ValidationErrors: v1ValidationErrorListSchema, V1FieldErrors: v1FieldErrorsSchema, V1NonFieldErrors: v1NonFieldErrorsSchema }, 'output') as any;
  t.strictSame(responses.V1ValidationErrors.items, { $ref: '#/components/schemas/V1FieldErrors' });
  for (const dialect of ['v1', 'v1.1'] as const) {
    const name = dialect === 'v1' ? 'V1Request' : 'V11Request';
    for (const example of requests[name].examples as Record<string, unknown>[][]) {
      const fresh = example.map((s) => ({ ...s, datetime: at(0) }));
      t.equal(checked(dialect, fresh).body, null, `the ${dialect} example is valid`);
    }
  }
});
