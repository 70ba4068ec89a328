/**
 * Import validation rules of v1 and v2, by example and by property.
 *
 * One file, one process: its parts share the loaded platform code. Each part is a subtest named after
 * what it covers.
 */
import Ajv2020Module from 'ajv/dist/2020.js';
import fc from 'fast-check';
import t from 'tap';
import { signalSchemas } from '../../src/api/import-v2/docs/signals.js';
import { decimalProblem } from '../../src/domain/decimal.js';
import { V1_MESSAGES } from '../../src/domain/import-v1/messages.js';
import { CANONICAL_TO_V1, DIALECT_CODES, layoutContradictions, providedOptions, toCanonical, V1_TO_CANONICAL } from '../../src/domain/import-v1/options.js';
import { V1_SCHEMAS, v1FieldErrorsSchema, v1NonFieldErrorsSchema, v1ValidationErrorListSchema } from '../../src/domain/import-v1/schemas.js';
import { type Dialect, type V1BatchResult, type V1Signal, validateV1Batch, validateV1BatchInSlices } from '../../src/domain/import-v1/validate.js';
import { LIMIT_MESSAGES, LIMITS } from '../../src/domain/import-v2/limits.js';
import { MESSAGES, parseMeasurementTime } from '../../src/domain/import-v2/rules.js';
import { validateBatch } from '../../src/domain/import-v2/validate.js';
import type { ConfirmedLayout, StationEntry, StationLookup } from '../../src/domain/stations.js';
import { componentSchemas } from '../../src/http/openapi.js';
import { holds } from '../helpers/property.js';
import { runs } from '../helpers/scale.js';

t.test('import-v1-rules', async (t) => {
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
});

t.test('import-v1-property', async (t) => {
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
});

t.test('import-v2-rules', async (t) => {
  const NOW = new Date('2026-11-22T10:00:00.000Z');
  const at = (offsetSeconds: number) => new Date(NOW.getTime() + offsetSeconds * 1000).toISOString();

  const BERLA: StationEntry = {
    hrsId: 'BERLA',
    name: 'Berlin A',
    heavyDuty: false,
    layout: {
      nozzles: new Map([
        ['N1', { dispenser: 'D1', fuellingOptions: ['700ld'] }],
        ['N2', { dispenser: 'D1', fuellingOptions: ['350ld'] }],
        ['N3', { dispenser: 'D2', fuellingOptions: [] }],
      ]),
      dispensers: new Map([
        ['D1', ['N1', 'N2']],
        ['D2', ['N3']],
      ]),
      storages: new Set(['S1', 'S2']),
      products: new Set(['P700', 'P350']),
    },
  };
  const NOLAY: StationEntry = { hrsId: 'NOLAY', name: 'No layout', heavyDuty: false, layout: null };
  const registry: StationLookup = { station: (id) => ({ BERLA, NOLAY })[id as 'BERLA'] };

  const availability = (extra: Record<string, unknown> = {}) => ({
    hrs: 'BERLA',
    datetime: at(-10),
    nozzles: [{ id: 'N1', available: true }],
    station: { maintenance: false, limitedly_available: false },
    ...extra,
  });

  function errorsOf(category: Parameters<typeof validateBatch>[0], body: unknown): any {
    const result = validateBatch(category, body, registry, NOW);
    if (result.ok) throw new Error('expected a rejection');
    return result.body;
  }

  t.test('the body must be a non-empty array', async (t) => {
    for (const [body, type] of [[{}, 'dict'], ['x', 'str'], [1, 'int'], [1.5, 'float'], [null, 'NoneType'], [true, 'bool']] as const) {
      t.same(errorsOf('availability', body), { non_field_errors: [`Expected a list of items but got type "${type}".`] });
    }
    t.same(errorsOf('availability', []), { non_field_errors: ['This list may not be empty.'] });
  });

  t.test('a valid availability transmission becomes a resolved snapshot', async (t) => {
    const result = validateBatch('availability', [availability({ nozzles: [{ dispenser_id: 'D1', available: false }], transmission_id: 'run-7' })], registry, NOW);
    t.ok(result.ok);
    if (!result.ok) return;
    t.same(result.transmissions[0], {
      category: 'availability',
      hrsId: 'BERLA',
      measuredAt: new Date(at(-10)),
      transmissionId: 'run-7',
      dryRun: false,
      payload: {
        station: { maintenance: false, limitedly_available: false },
        nozzles: [
          { id: 'N1', available: false },
          { id: 'N2', available: false },
        ],
        fuelling_options: { '700ld': false, '350ld': false },
      },
    });
  });

  t.test('required fields, nulls and types, every problem at once', async (t) => {
    const body = errorsOf('availability', [
      { nozzles: [{ id: 'N1', available: null }, { id: 'N2', available: 'yes' }], station: { maintenance: true } },
    ]);
    t.same(body, [
      {
        hrs: ['This field is required.'],
        datetime: ['This field is required.'],
        nozzles: [{ available: ['This field may not be null.'] }, { available: ['Must be a valid boolean.'] }],
        station: { limitedly_available: ['This field is required.'] },
      },
    ]);
    t.same(errorsOf('availability', [availability({ nozzles: {} , dry_run: 'no' })]), [
      { nozzles: ['Expected a list of items but got type "dict".'], dry_run: ['Must be a valid boolean.'] },
    ]);
    t.same(errorsOf('availability', [availability({ nozzles: [] })]), [{ nozzles: ['This list may not be empty.'] }]);
    t.same(errorsOf('availability', ['BERLA']), [{ non_field_errors: ['Invalid data. Expected a dictionary, but got str.'] }]);
  });

  t.test('measurement time: offset required, at most 5 minutes old, at most 30 seconds ahead', async (t) => {
    const accepted = (datetime: string) => validateBatch('availability', [availability({ datetime })], registry, NOW).ok;
    t.ok(accepted(at(-300)), 'exactly 5 minutes old is accepted');
    t.ok(accepted(at(30)), 'exactly 30 seconds ahead is accepted');
    t.ok(accepted('2026-11-22T11:00:00+01:00'), 'any offset');
    t.ok(accepted('2026-11-22T10:59:59.5+0100'), 'basic-format offset and fractions');
    t.same(errorsOf('availability', [availability({ datetime: at(-300.001) })]), [{ datetime: [MESSAGES.tooOld] }]);
    t.same(errorsOf('availability', [availability({ datetime: at(30.001) })]), [{ datetime: [MESSAGES.future] }]);
    for (const bad of ['2026-11-22T10:00:00', '2026-11-22 10:00:00Z', '2026-02-30T10:00:00Z', '22.11.2026', '2026-11-22T25:00:00Z']) {
      t.same(errorsOf('availability', [availability({ datetime: bad })]), [{ datetime: [MESSAGES.datetimeFormat] }], bad);
    }
    t.equal(parseMeasurementTime('2026-11-22T10:00:00-0230')?.toISOString(), '2026-11-22T12:30:00.000Z');
  });

  t.test('stations: registered, once per batch', async (t) => {
    t.same(errorsOf('availability', [availability({ hrs: 'NOWHR' })]), [{ hrs: ['Unknown station identifier: NOWHR'] }]);
    t.same(errorsOf('availability', [availability(), availability({ nozzles: [{ id: 'N2', available: true }] })]), [
      {},
      { hrs: ['Duplicate station in batch: BERLA'] },
    ]);
  });

  t.test('nozzle references: exactly one kind, resolved, never twice', async (t) => {
    const nozzles = (list: unknown[]) => errorsOf('availability', [availability({ nozzles: list })])[0].nozzles;
    t.same(nozzles([{ id: 'N1', dispenser_id: 'D1', available: true }]), [{ non_field_errors: [MESSAGES.exactlyOne] }]);
    t.same(nozzles([{ available: true }]), [{ non_field_errors: [MESSAGES.exactlyOne] }]);
    t.same(nozzles([{ id: 'N1', available: true }, { id: 'N9', available: true }]), [{}, { id: ['Unknown nozzle identifier: N9'] }]);
    t.same(nozzles([{ dispenser_id: 'D9', available: true }]), [{ dispenser_id: ['Unknown dispenser identifier: D9'] }]);
    t.same(nozzles([{ id: 'N1', available: true }, { id: 'N1', available: false }]), [{}, { id: ['Duplicate nozzle reference: N1'] }]);
    t.same(nozzles([{ id: 'N2', available: true }, { dispenser_id: 'D1', available: false }]), [{}, { dispenser_id: ['Duplicate nozzle reference: N2'] }], 'a shorthand overlapping a nozzle given by id');
    t.ok(validateBatch('availability', [availability({ nozzles: [{ dispenser_id: 'D1', available: true }, { id: 'N3', available: false }] })], registry, NOW).ok, 'mixed kinds that do not overlap');
    const noLayout = errorsOf('availability', [availability({ hrs: 'NOLAY' })]);
    t.same(noLayout, [{ nozzles: [{ id: ['Unknown nozzle identifier: N1'] }] }], 'no confirmed layout: nothing resolves');
  });

  t.test('availability: no derivable fuelling option is a rejection', async (t) => {
    t.same(errorsOf('availability', [availability({ nozzles: [{ id: 'N3', available: true }] })]), [{ non_field_errors: [MESSAGES.noFuellingOption] }]);
  });

  t.test('usage', async (t) => {
    const usage = (nozzles: unknown[]) => [{ hrs: 'BERLA', datetime: at(0), nozzles }];
    const result = validateBatch('usage', usage([{ dispenser_id: 'D1', usage_status: 'in-use' }, { id: 'N3', usage_status: 'reserved' }]), registry, NOW);
    t.ok(result.ok);
    if (result.ok) {
      t.same(result.transmissions[0]!.payload, {
        nozzles: [
          { id: 'N1', usage_status: 'in-use' },
          { id: 'N2', usage_status: 'in-use' },
          { id: 'N3', usage_status: 'reserved' },
        ],
      });
    }
    t.same(errorsOf('usage', usage([{ id: 'N1', usage_status: 'busy' }])), [{ nozzles: [{ usage_status: ['"busy" is not a valid choice.'] }] }]);
    t.same(errorsOf('usage', usage([{ id: 'N1' }])), [{ nozzles: [{ usage_status: ['This field is required.'] }] }]);
  });

  t.test('hydrogen storage', async (t) => {
    const storage = (storages: unknown[]) => [{ hrs: 'BERLA', datetime: at(0), storages }];
    const ok = (storages: unknown[]) => {
      const result = validateBatch('hydrogen-storage', storage(storages), registry, NOW);
      return result.ok ? result.transmissions[0]!.payload.storages : result.body;
    };
    t.same(ok([{ id: 'S1', remaining_kg: '100.00' }]), [{ id: 'S1', remaining_kg: '100.00', low_h2_storage: false }], 'exactly 100 kg is not low');
    t.same(ok([{ id: 'S1', remaining_kg: 99.99 }]), [{ id: 'S1', remaining_kg: '99.99', low_h2_storage: true }], 'a JSON number is accepted');
    t.same(ok([{ id: 'S1', low_h2_storage: true }]), [{ id: 'S1', remaining_kg: null, low_h2_storage: true }]);
    t.same(ok([{ id: 'S1', remaining_kg: '999999.99', low_h2_storage: false }]), [{ id: 'S1', remaining_kg: '999999.99', low_h2_storage: false }]);
    t.same(ok([{ id: 'S1', remaining_kg: 0 }]), [{ id: 'S1', remaining_kg: '0.00', low_h2_storage: true }]);
    const entry = (s: unknown) => errorsOf('hydrogen-storage', storage([s]))[0].storages[0];
    t.same(entry({ id: 'S1' }), { non_field_errors: [MESSAGES.atLeastOne] });
    t.same(entry({ id: 'S1', remaining_kg: null, low_h2_storage: null }), { non_field_errors: [MESSAGES.atLeastOne] });
    t.same(entry({ id: 'S1', remaining_kg: '100', low_h2_storage: true }), { low_h2_storage: [MESSAGES.inconsistentStorage('S1', '100.00')] });
    t.match(MESSAGES.inconsistentStorage('S1', '100.00'), /^Inconsistent low_h2_storage for storage S1/);
    t.same(entry({ id: 'S1', remaining_kg: '99.99', low_h2_storage: false }), { low_h2_storage: [MESSAGES.inconsistentStorage('S1', '99.99')] });
    t.same(entry({ id: 'S1', remaining_kg: '-1' }), { remaining_kg: [MESSAGES.notNegative] });
    t.same(entry({ id: 'S1', remaining_kg: '1000000.00' }), { remaining_kg: ['Ensure that there are no more than 8 digits in total.'] });
    t.same(entry({ id: 'S1', remaining_kg: '1000000' }), { remaining_kg: ['Ensure that there are no more than 6 digits before the decimal point.'] });
    t.same(entry({ id: 'S1', remaining_kg: '1.234' }), { remaining_kg: ['Ensure that there are no more than 2 decimal places.'] });
    t.same(entry({ id: 'S1', remaining_kg: 'lots' }), { remaining_kg: ['A valid number is required.'] });
    t.same(entry({ id: 'S1', remaining_kg: 1e21 }), { remaining_kg: ['A valid number is required.'] });
    t.same(entry({ id: 'S9', low_h2_storage: true }), { id: ['Unknown storage identifier: S9'] });
    t.same(errorsOf('hydrogen-storage', storage([{ id: 'S1', low_h2_storage: true }, { id: 'S1', low_h2_storage: true }]))[0].storages, [
      {},
      { id: ['Duplicate storage reference: S1'] },
    ]);
  });

  t.test('pricing', async (t) => {
    const pricing = (products: unknown[]) => [{ hrs: 'BERLA', datetime: at(0), products }];
    const result = validateBatch('pricing', pricing([{ id: 'P700', gross_price: '13.85', net_price: '11.639' }, { id: 'P350', gross_price: '99999.999' }]), registry, NOW);
    t.ok(result.ok);
    if (result.ok) {
      t.same(result.transmissions[0]!.payload.products, [
        { id: 'P700', gross_price: '13.850', net_price: '11.639', currency: 'EUR' },
        { id: 'P350', gross_price: '99999.999', net_price: null, currency: 'EUR' },
      ]);
    }
    const entry = (p: unknown) => errorsOf('pricing', pricing([p]))[0].products[0];
    t.match(entry({ id: 'P700', gross_price: 13.85 }), { gross_price: [/^A valid number is required/] }, 'a JSON number is rejected');
    t.same(entry({ id: 'P700', gross_price: '0' }), { gross_price: [MESSAGES.aboveZero] });
    t.same(entry({ id: 'P700', gross_price: '0.000' }), { gross_price: [MESSAGES.aboveZero] });
    t.same(entry({ id: 'P700', gross_price: '100000.000' }), { gross_price: ['Ensure that there are no more than 8 digits in total.'] });
    t.same(entry({ id: 'P700', gross_price: '100000' }), { gross_price: ['Ensure that there are no more than 5 digits before the decimal point.'] });
    t.same(entry({ id: 'P700', gross_price: '1.2345' }), { gross_price: ['Ensure that there are no more than 3 decimal places.'] });
    t.same(entry({ id: 'P700', gross_price: '10.000', net_price: '10.001' }), { net_price: [MESSAGES.inconsistentPrice('P700')] });
    t.ok(validateBatch('pricing', pricing([{ id: 'P700', gross_price: '10', net_price: '10.000' }]), registry, NOW).ok, 'net equal to gross is fine');
    t.same(entry({ id: 'P700', gross_price: '10', currency: 'USD' }), { currency: ['"USD" is not a valid choice.'] });
    t.same(entry({ id: 'P999', gross_price: '10' }), { id: ['Unknown product identifier: P999'] });
    t.same(errorsOf('pricing', pricing([{ id: 'P700', gross_price: '10', currency: 'CHF' }, { id: 'P350', gross_price: '9' }]))[0], {
      non_field_errors: ['Mixed currencies in one transmission: CHF, EUR.'],
    });
    t.same(errorsOf('pricing', pricing([{ id: 'P700', gross_price: '10' }, { id: 'P700', gross_price: '11' }]))[0].products, [
      {},
      { id: ['Duplicate product reference: P700'] },
    ]);
  });

  t.test('decimal digits are counted as a max_digits=8 decimal field counts them', async (t) => {
    const rule = { maxDigits: 8, decimalPlaces: 3 };
    t.equal(decimalProblem('99999.999', rule), undefined);
    t.equal(decimalProblem('00099999.999', rule), undefined, 'leading zeros do not count');
    t.equal(decimalProblem('0.000', rule), undefined);
    t.equal(decimalProblem('1.100', rule), undefined);
    t.equal(decimalProblem('12345.6789', rule), 'Ensure that there are no more than 8 digits in total.');
    t.equal(decimalProblem('1e3', rule), 'A valid number is required.');
    t.equal(decimalProblem(' 1.0', rule), 'A valid number is required.');
  });

  t.test('measurement time: the parser agrees with the calendar for any date, fraction and offset', async (t) => {
    const fc = (await import('fast-check')).default;
    const pad = (n: number, w = 2) => String(n).padStart(w, '0');
    await holds(
      t,
      fc.property(
        fc.integer({ min: 1900, max: 2400 }), fc.integer({ min: 1, max: 12 }), fc.integer({ min: 1, max: 31 }),
        fc.integer({ min: 0, max: 23 }), fc.integer({ min: 0, max: 59 }), fc.integer({ min: 0, max: 59 }),
        fc.option(fc.stringMatching(/^[0-9]{1,9}$/)), fc.integer({ min: -14 * 60, max: 14 * 60 }),
        (year, month, day, hour, minute, second, fraction, offset) => {
          const sign = offset < 0 ? '-' : '+';
          const zone = offset === 0 ? 'Z' : `${sign}${pad(Math.floor(Math.abs(offset) / 60))}:${pad(Math.abs(offset) % 60)}`;
          const text = `${year}-${pad(month)}-${pad(day)}T${pad(hour)}:${pad(minute)}:${pad(second)}${fraction === null ? '' : `.${fraction}`}${zone}`;
          const real = new Date(Date.UTC(year, month - 1, day)).getUTCDate() === day;
          const millis = fraction === null ? 0 : Math.floor(Number(`0.${fraction}`) * 1000 + 1e-6);
          const expected = real ? Date.UTC(year, month - 1, day, hour, minute, second, millis) - offset * 60_000 : undefined;
          return parseMeasurementTime(text)?.getTime() === expected;
        },
      ),
      { numRuns: runs(2000) },
      `${runs(2000)} date-times: the instant when the date exists, none when it does not (30 February, 29 February of a common year)`,
    );
  });

  t.test('measurement time: read character by character as the pattern reads it, whatever the text', async (t) => {
    const fc = (await import('fast-check')).default;
    // The reading as a regular expression (as it was written before), then the parts' ranges.
    const PATTERN = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(\.\d{1,9})?)?(?:(Z)|([+-])(\d{2}):?(\d{2}))$/i;
    const byPattern = (text: string): number | undefined => {
      const m = PATTERN.exec(text);
      if (!m) return undefined;
      const [year, month, day, hour, minute] = [1, 2, 3, 4, 5].map((i) => Number(m[i]));
      const second = m[6] === undefined ? 0 : Number(m[6]);
      if (month! < 1 || month! > 12 || day! < 1 || hour! > 23 || minute! > 59 || second > 59) return undefined;
      if (new Date(Date.UTC(year!, month! - 1, day!)).getUTCDate() !== day) return undefined;
      const millis = m[7] === undefined ? 0 : Number(`${m[7].slice(1, 4)}00`.slice(0, 3));
      let offset = 0;
      if (m[8] === undefined) {
        if (Number(m[10]) > 23 || Number(m[11]) > 59) return undefined;
        offset = (m[9] === '-' ? -1 : 1) * (Number(m[10]) * 60 + Number(m[11]));
      }
      const at = Date.UTC(year!, month! - 1, day!, hour!, minute!, second, millis) - offset * 60_000;
      return Number.isNaN(new Date(at).getTime()) ? undefined : at;
    };
    // Date-times near the pattern: each number mostly of its width and about its range (a month of 0
    // to 13), sometimes of another width or not digits; separators, `T`, the zone and the fraction's
    // length (up to 11 digits) of any of the forms that matter.
    const num = (max: number, width: number) =>
      fc.oneof(
        { weight: 16, arbitrary: fc.integer({ min: 0, max }).map((n) => String(n).padStart(width, '0')) },
        { weight: 1, arbitrary: fc.stringMatching(/^[0-9]{0,4}$/) },
        { weight: 1, arbitrary: fc.constantFrom('', '٣', 'x', ' 1') },
      );
    const near = fc
      .tuple(num(9999, 4), fc.constantFrom('-', '-', '-', '/'), num(13, 2), num(32, 2), fc.constantFrom('T', 't', 'T', ' '), num(24, 2), num(60, 2),
        fc.option(fc.tuple(num(60, 2), fc.option(fc.stringMatching(/^\.[0-9]{0,11}$/)))), fc.constantFrom('Z', 'z', '+', '-', '+', '-', '', 'T'), num(24, 2), fc.constantFrom(':', '', '::'), num(60, 2))
      .map(([y, dash, mo, d, tee, h, mi, sec, z, oh, oc, om]) => {
        const seconds = sec === null ? '' : `:${sec[0]}${sec[1] ?? ''}`;
        const zone = z === '+' || z === '-' ? `${z}${oh}${oc}${om}` : z;
        return `${y}${dash}${mo}-${d}${tee}${h}:${mi}${seconds}${zone}`;
      });
    const text = fc.oneof(near, fc.tuple(near, fc.nat(), fc.string({ maxLength: 2 })).map(([s, at, add]) => s.slice(0, at % (s.length + 1)) + add + s.slice(at % (s.length + 1) + 1)), fc.string({ maxLength: 40 }));
    await holds(
      t,
      fc.property(text, (s) => parseMeasurementTime(s)?.getTime() === byPattern(s)),
      { numRuns: runs(20000) },
      `${runs(20000)} texts near the pattern and anywhere: the same instant, or none, as the pattern's reading`,
    );
    const valid = ['2026-11-22T10:00Z', '2026-11-22t10:00:00.5z', '2026-11-22T10:00:00.123456789+0100', '2026-11-22T10:00:00-02:30', '2024-02-29T23:59:59.999+23:59'];
    t.same(valid.map((v) => parseMeasurementTime(v)?.getTime()), valid.map(byPattern), 'date-times of every form the pattern takes');
    t.ok(valid.every((v) => byPattern(v) !== undefined), 'each of them an instant');
  });
});

t.test('import-v2-docs-property', async (t) => {
  /**
   * The import v2 document is not looser than the validator: a transmission the document's JSON Schema
   * accepts, with registered ids and within what the descriptions say JSON Schema cannot express
   * (no duplicates, one currency, net not above gross, no contradiction at 100 kg, a fresh datetime),
   * is accepted by validateBatch. Values are drawn from a mix of valid, near-valid and arbitrary ones,
   * so the document has to refuse what the rules refuse (`"+5"`, `"abc"`, `null` currency, both ids…).
   */

  type AjvClass = typeof Ajv2020Module.default;
  const Ajv2020 = ((Ajv2020Module as unknown as { default?: AjvClass }).default ?? Ajv2020Module) as AjvClass;

  const NOW = new Date('2026-11-22T10:00:00.000Z');
  const BERLA: StationEntry = {
    hrsId: 'BERLA',
    name: 'Berlin A',
    heavyDuty: false,
    layout: {
      nozzles: new Map([
        ['N1', { dispenser: 'D1', fuellingOptions: ['700ld'] }],
        ['N2', { dispenser: 'D1', fuellingOptions: ['350ld'] }],
        ['N3', { dispenser: 'D2', fuellingOptions: ['700ld'] }],
      ]),
      dispensers: new Map([
        ['D1', ['N1', 'N2']],
        ['D2', ['N3']],
      ]),
      storages: new Set(['S1', 'S2']),
      products: new Set(['P700', 'P350']),
    },
  };
  const registry: StationLookup = { station: (id) => (id === 'BERLA' ? BERLA : undefined) };

  const schemas = componentSchemas(signalSchemas(), 'input');
  const ajv = new Ajv2020({ strict: false });
  ajv.addSchema({ components: { schemas } }, 'https://docs.invalid/import.json');
  const documentAccepts = (name: string) => ajv.compile({ $ref: `https://docs.invalid/import.json#/components/schemas/${name}` });

  /** Mostly plausible values, some arbitrary: what a generator working from the document might send. */
  const anything = fc.oneof(fc.string(), fc.integer(), fc.double(), fc.constant(null), fc.boolean());
  const mix = <T>(plausible: fc.Arbitrary<T>) => fc.oneof({ weight: 30, arbitrary: plausible }, { weight: 1, arbitrary: anything });
  const decimalText = fc.oneof(
    { weight: 4, arbitrary: fc.stringMatching(/^\d{1,5}(\.\d{1,3})?$/) },
    fc.stringMatching(/^[+-]?\d{1,9}(\.\d{1,4})?$/),
    fc.constantFrom('+5', 'abc', '0', '0.000', '1e3', '1.0001', '123456', ' 1.5', '1.', '.5', '13.850', '00099999.999', '-0'),
  );
  const datetime = fc.oneof(
    { weight: 4, arbitrary: fc.integer({ min: -290, max: 25 }).map((s) => new Date(NOW.getTime() + s * 1000).toISOString()) },
    fc.integer({ min: -290, max: 25 }).map((s) => new Date(NOW.getTime() + s * 1000).toISOString().replace('Z', '+00:00').replace(/\.\d+/, '')),
    fc.constantFrom('2026-11-22T10:00:00', '2026-11-22 10:00:00Z', 'now'),
  );
  const text = fc.oneof({ weight: 4, arbitrary: fc.string({ minLength: 1 }) }, fc.string({ unit: 'binary', minLength: 1 }), fc.constantFrom('a\u0000b', '\ud800', 'run 😀'));
  const envelope = {
    hrs: mix(fc.constantFrom('BERLA', 'BERLA', 'BERLA', 'berla')),
    datetime: mix(datetime),
    transmission_id: fc.option(mix(text), { nil: undefined }),
    dry_run: fc.option(mix(fc.boolean()), { nil: undefined }),
  };
  const optional = <T>(a: fc.Arbitrary<T>) => fc.option(a, { nil: undefined });
  const nozzleRef = { id: optional(mix(fc.constantFrom('N1', 'N2', 'N3'))), dispenser_id: optional(mix(fc.constantFrom('D1', 'D2'))) };
  const list = <T>(entry: fc.Arbitrary<T>) => fc.array(entry, { minLength: 0, maxLength: 2 });

  const TRANSMISSIONS = {
    availability: fc.record({
      ...envelope,
      nozzles: list(fc.record({ ...nozzleRef, available: mix(fc.boolean()) }, { requiredKeys: ['available'] })),
      station: fc.record({ maintenance: mix(fc.boolean()), limitedly_available: mix(fc.boolean()) }),
    }),
    usage: fc.record({ ...envelope, nozzles: list(fc.record({ ...nozzleRef, usage_status: mix(fc.constantFrom('free', 'in-use', 'reserved')) })) }),
    'hydrogen-storage': fc.record({
      ...envelope,
      storages: list(
        fc.record({
          id: mix(fc.constantFrom('S1', 'S2')),
          remaining_kg: optional(mix(fc.oneof(decimalText, fc.integer({ min: -5, max: 2_000_000 }), fc.double({ min: -1, max: 1e7 })))),
          low_h2_storage: optional(mix(fc.boolean())),
        }),
      ),
    }),
    pricing: fc.record({
      ...envelope,
      products: list(
        fc.record({
          id: mix(fc.constantFrom('P700', 'P350')),
          gross_price: mix(decimalText),
          net_price: optional(mix(decimalText)),
          currency: optional(mix(fc.constantFrom('EUR', 'CHF', 'USD'))),
        }),
      ),
    }),
  } as const;
  const NAMES = { availability: 'AvailabilityTransmission', usage: 'UsageTransmission', 'hydrogen-storage': 'HydrogenStorageTransmission', pricing: 'PricingTransmission' } as const;

  type Entry = Record<string, unknown>;
  const price = (v: unknown) => Number(v);

  /** Within what the descriptions say the schema cannot express. */
  function beyondSchemaHolds(category: keyof typeof NAMES, tx: Entry): boolean {
    const age = NOW.getTime() - new Date(tx.datetime as string).getTime();
    if (!(age <= 5 * 60_000 && age >= -30_000) || tx.hrs !== 'BERLA') return false;
    const layout = BERLA.layout!;
    if (category === 'availability' || category === 'usage') {
      const nozzles = tx.nozzles as Entry[];
      if (!nozzles.every((n) => (typeof n.id === 'string' ? layout.nozzles.has(n.id) : layout.dispensers.has(n.dispenser_id as string)))) return false;
      const covered = nozzles.flatMap((n) => (typeof n.id === 'string' ? [n.id] : layout.dispensers.get(n.dispenser_id as string)!));
      return new Set(covered).size === covered.length;
    }
    const entries = (tx.storages ?? tx.products) as Entry[];
    const known = category === 'pricing' ? layout.products : layout.storages;
    if (!entries.every((e) => known.has(e.id as string))) return false;
    if (new Set(entries.map((e) => e.id)).size !== entries.length) return false;
    if (category === 'hydrogen-storage') {
      return entries.every((s) => s.remaining_kg == null || typeof s.low_h2_storage !== 'boolean' || (Number(s.remaining_kg) < 100) === s.low_h2_storage);
    }
    if (new Set(entries.map((p) => p.currency ?? 'EUR')).size > 1) return false;
    return entries.every((p) => typeof p.net_price !== 'string' || price(p.net_price) <= price(p.gross_price));
  }

  t.test('what the document accepts (ids registered, the described rules kept) the validator accepts', async (t) => {
    for (const category of Object.keys(NAMES) as (keyof typeof NAMES)[]) {
      const accepts = documentAccepts(NAMES[category]);
      let valid = 0;
      let refused = 0;
      fc.assert(
        fc.property(TRANSMISSIONS[category], (tx) => {
          if (!accepts(tx)) return void refused++;
          if (!beyondSchemaHolds(category, tx as Entry)) return;
          valid++;
          const result = validateBatch(category, [tx], registry, NOW);
          if (!result.ok) throw new Error(`valid by the document, refused: ${JSON.stringify(result.body)}`);
        }),
        { numRuns: runs(3000) },
      );
      t.ok(valid >= runs(3000) / 60, `${category}: ${valid} document-valid transmissions accepted (${refused} refused by the document)`);
      t.ok(refused >= 50, `${category}: the document refused ${refused}`);
    }
  });

  t.test('the document refuses the malformed values the rules refuse', async (t) => {
    const pricing = documentAccepts('PricingTransmission');
    const storage = documentAccepts('HydrogenStorageTransmission');
    const usage = documentAccepts('UsageTransmission');
    const env = { hrs: 'BERLA', datetime: '2026-11-22T10:00:00Z' };
    for (const bad of ['+5', 'abc', '0', '0.000', '1e3', '1.0001', '123456', '', '-1', 5]) {
      t.notOk(pricing({ ...env, products: [{ id: 'P700', gross_price: bad }] }), `gross_price ${JSON.stringify(bad)}`);
      t.notOk(pricing({ ...env, products: [{ id: 'P700', gross_price: '5', net_price: bad }] }), `net_price ${JSON.stringify(bad)}`);
    }
    t.ok(pricing({ ...env, products: [{ id: 'P700', gross_price: '13.850', net_price: null }] }), 'a good price, net null');
    t.ok(pricing({ ...env, products: [{ id: 'P700', gross_price: '5', currency: null }] }), 'currency null: EUR, as when left out');
    t.ok(pricing({ ...env, dry_run: null, products: [{ id: 'P700', gross_price: '5' }] }), 'dry_run null: false, as when left out');
    for (const bad of ['+120', '-1', -1, '1.001', '1000000', 1000000, 'abc']) {
      t.notOk(storage({ ...env, storages: [{ id: 'S1', remaining_kg: bad }] }), `remaining_kg ${JSON.stringify(bad)}`);
    }
    t.notOk(storage({ ...env, storages: [{ id: 'S1' }] }), 'neither remaining_kg nor low_h2_storage');
    t.notOk(storage({ ...env, storages: [{ id: 'S1', remaining_kg: null, low_h2_storage: null }] }), 'both null');
    t.notOk(usage({ ...env, nozzles: [{ id: 'N1', dispenser_id: 'D1', usage_status: 'free' }] }), 'both id and dispenser_id');
    t.notOk(usage({ ...env, nozzles: [{ usage_status: 'free' }] }), 'neither');
    t.ok(usage({ ...env, nozzles: [{ id: null, dispenser_id: 'D1', usage_status: 'free' }] }), 'a dispenser, id null');
    t.notOk(usage({ ...env, transmission_id: 'a\u0000b', nozzles: [{ id: 'N1', usage_status: 'free' }] }), 'NUL in a text field');
    t.notOk(usage({ ...env, transmission_id: 'a\ud800', nozzles: [{ id: 'N1', usage_status: 'free' }] }), 'a lone surrogate');
    t.ok(usage({ ...env, transmission_id: 'run 😀', nozzles: [{ id: 'N1', usage_status: 'free' }] }), 'a surrogate pair');
    t.notOk(usage({ ...env, nozzles: Array(101).fill({ id: 'N1', usage_status: 'free' }) }), 'more entries than the limit');
    t.notOk(usage({ ...env, datetime: '2026-11-22T10:00:00', nozzles: [{ id: 'N1', usage_status: 'free' }] }), 'a datetime without offset');
  });
});
