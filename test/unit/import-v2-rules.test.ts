import t from 'tap';
import { decimalProblem } from '../../src/domain/decimal.js';
import { MESSAGES, parseMeasurementTime } from '../../src/domain/import-v2/rules.js';
import { validateBatch } from '../../src/domain/import-v2/validate.js';
import type { StationEntry, StationLookup } from '../../src/domain/stations.js';
import { runs } from '../helpers/scale.js';
import { holds } from '../helpers/property.js';

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
