import t from 'tap';
import fc from 'fast-check';
import Ajv2020Module from 'ajv/dist/2020.js';
import { componentSchemas } from '../../src/http/openapi.js';
import { signalSchemas } from '../../src/api/import-v2/docs/signals.js';
import { validateBatch } from '../../src/domain/import-v2/validate.js';
import type { StationEntry, StationLookup } from '../../src/domain/stations.js';
import { runs } from '../helpers/scale.js';

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
