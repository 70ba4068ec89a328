import t from 'tap';
import fc from 'fast-check';
import { centsHalfUp } from '../../src/domain/datex2/prices.js';
import { siteStatus, type Held, type SiteSituation } from '../../src/domain/datex2/status.js';
import { siteOf, tableVersion, type PricingInput, type SiteModel, type TableStationInput } from '../../src/domain/datex2/table.js';
import { siteStatusElement, statusEnvelope, statusPublication } from '../../src/api/datex2/xml/status.js';
import { siteElement, tableEnvelope, tablePublication } from '../../src/api/datex2/xml/table.js';
import { writeElement } from '../../src/api/datex2/xml/writer.js';
import type { ConfirmedLayout } from '../../src/domain/stations.js';
import { datex2Errors } from '../helpers/datex2.js';
import { runs } from '../helpers/scale.js';

/**
 * The DATEX II publications' rules without I/O: prices, the table's objects and versions, the status
 * of a refill point in every situation, and documents valid against the 3.7 schema set for arbitrary
 * registries and situations.
 */

const PUBLISHER = { country: 'DE', nationalIdentifier: 'hrs-test' };
const AT = new Date('2026-11-26T10:00:00Z');
const NOW = AT.getTime();

function station(overrides: Partial<TableStationInput> = {}): TableStationInput {
  return {
    hrs_id: 'BERLA',
    modifiedUs: 1_764_000_000_000_000,
    name: 'Berlin Airport',
    operator_id: 'h2-demo',
    operator_name: 'H2 Demo GmbH',
    opening_hours: '24/7',
    time_zone: 'Europe/Berlin',
    details: { city: 'Schönefeld', country: 'DE', lat: 52.3667, lon: 13.5033, cumulative_daily_hydrogen_capacity: 400 },
    v1_fuel_types: [],
    dispensers: [
      {
        external_id: 'D1',
        nozzles: [
          { external_id: 'N1', fuelling_options: ['700ld'] },
          { external_id: 'N2', fuelling_options: ['350ld', '350hd'] },
        ],
      },
    ],
    products: [
      { external_id: 'P700', pressure_stage: 700, green_hydrogen_share: 100, nozzle_external_ids: ['N1'] },
      { external_id: 'P350', pressure_stage: 350, green_hydrogen_share: null, nozzle_external_ids: ['N2'] },
    ],
    ...overrides,
  };
}

const pricing = (products: Record<string, unknown>[], datetime = NOW): PricingInput => ({ datetime, receivedAt: datetime, products });

function site(row = station(), price: PricingInput | null = null): SiteModel {
  const result = siteOf(row, price);
  if (!('site' in result)) throw new Error(`left out: ${result.leftOut.join(', ')}`);
  return result.site;
}

t.test('prices are rounded half up to the cent, on the digits as written', async (t) => {
  const cases: [string, string | null][] = [
    ['12.345', '12.35'],
    ['12.344', '12.34'],
    ['12.3', '12.30'],
    ['7', '7.00'],
    ['0.005', '0.01'],
    ['0.004', '0.00'],
    ['99999.995', '100000.00'],
    ['13.999', '14.00'],
    ['1.2345', '1.23'],
    ['1.2355', '1.24'],
    ['-1.00', null],
    ['1e3', null],
    ['', null],
  ];
  for (const [given, expected] of cases) t.equal(centsHalfUp(given), expected, `${given} → ${expected}`);
  // Against exact rational arithmetic for every three-decimal price.
  fc.assert(
    fc.property(fc.integer({ min: 1, max: 99_999_999 }), (thousandths) => {
      const text = `${Math.floor(thousandths / 1000)}.${String(thousandths % 1000).padStart(3, '0')}`;
      const cents = Math.floor((thousandths + 5) / 10);
      return centsHalfUp(text) === `${Math.floor(cents / 100)}.${String(cents % 100).padStart(2, '0')}`;
    }),
    { numRuns: runs(2000) },
  );
});

t.test('the table: a site and station per HRS, a refill point per nozzle, a rate per priced product', async (t) => {
  const s = site(station({ v1_fuel_types: ['700car'] }), pricing([{ id: 'P700', gross_price: '13.855', currency: 'EUR' }, { id: 'PX', gross_price: '9.000' }]));
  t.equal(s.id, 'BERLA');
  t.equal(s.station.id, 'BERLA-S');
  t.same(s.station.refuellingModes, ['gaseousHydrogen700barCar', 'gaseousHydrogen350barCar', 'gaseousHydrogen350barTruck']);
  t.equal(s.station.capacityPerDay, 400);
  t.same(
    s.station.refillPoints.map((p) => [p.id, p.nozzle, p.dispenser, p.pressure, p.renewableShare, p.rates]),
    [
      ['BERLA-N-N1', 'N1', 'D1', 700, 100, ['BERLA-R-P700']],
      ['BERLA-N-N2', 'N2', 'D1', 350, null, []],
    ],
    'one refill point per nozzle; only priced products are referred to',
  );
  t.same(
    s.station.rates.map((r) => [r.id, r.grossPrice, r.currency, r.lastUpdated]),
    [['BERLA-R-P700', '13.86', 'EUR', AT.toISOString()]],
    'an unregistered product (PX) is not published',
  );
  const modeOf = (option: string) =>
    site(station({ products: null, v1_fuel_types: [], dispensers: [{ external_id: 'D1', nozzles: [{ external_id: 'N1', fuelling_options: [option] }] }] })).station.refuellingModes;
  t.same(
    ['700ld', '350ld', '700hd', '350hd'].map((option) => [option, modeOf(option)]),
    [['700ld', ['gaseousHydrogen700barCar']], ['350ld', ['gaseousHydrogen350barCar']], ['700hd', ['gaseousHydrogen700barTruck']], ['350hd', ['gaseousHydrogen350barTruck']]],
    'a nozzle\'s one fuelling option: its refuelling mode alone',
  );
  t.same(site(station({ dispensers: null, products: null })).station.refuellingModes, ['unknown'], 'a station naming no option says so');
  t.same(site(station({ dispensers: null, products: null, v1_fuel_types: ['350bus'] })).station.refuellingModes, ['gaseousHydrogen350barTruck'], 'v1 fuel types count');
  t.equal(site(station({ dispensers: null, products: null })).station.refillPoints.length, 0, 'no confirmed layout: no refill points');
  t.equal(s.timeZoneOffset, '+01:00', 'the standard offset of Europe/Berlin');
  t.equal(site(station({ time_zone: 'America/St_Johns' })).timeZoneOffset, '-03:30');
  t.equal(site(station({ time_zone: null })).timeZoneOffset, null);
});

t.test('stations without capacity or coordinates are left out, with the reasons', async (t) => {
  const { cumulative_daily_hydrogen_capacity: _c, ...noCapacity } = station().details;
  const { lat: _a, lon: _o, ...noCoordinates } = station().details;
  t.same(siteOf(station({ details: noCapacity }), null), { leftOut: ['no_capacity'] });
  t.same(siteOf(station({ details: noCoordinates }), null), { leftOut: ['no_coordinates'] });
  t.same(siteOf(station({ details: {} }), null), { leftOut: ['no_capacity', 'no_coordinates'] });
  t.ok('site' in siteOf(station({ details: { coordinates: { lat: 50, lon: 8 }, cumulative_daily_hydrogen_capacity: 0 } }), null), 'coordinates as an object; a capacity of 0 is a capacity');
  t.ok('site' in siteOf(station({ details: { latitude: 50, longitude: 8, cumulative_daily_hydrogen_capacity: 10 } }), null), 'latitude/longitude');
  t.same(siteOf(station({ details: { lat: 91, lon: 8, cumulative_daily_hydrogen_capacity: 10 } }), null), { leftOut: ['no_coordinates'] }, 'out of range');
});

t.test('versions change with content and only then', async (t) => {
  const base = site();
  const again = site();
  t.equal(again.version, base.version, 'the same content, the same version');
  t.equal(again.station.version, base.station.version);
  const renamed = site(station({ name: 'Berlin BER' }));
  t.not(renamed.version, base.version, 'the site moves with its name');
  t.same(renamed.station.refillPoints.map((p) => p.version), base.station.refillPoints.map((p) => p.version), 'refill points do not');
  const priced = site(station(), pricing([{ id: 'P700', gross_price: '13.850' }]));
  t.not(priced.station.version, base.station.version, 'a price moves the station (its energy products)');
  t.not(priced.station.refillPoints[0]!.version, base.station.refillPoints[0]!.version, 'and the refill point that now refers to the rate');
  t.equal(priced.station.refillPoints[1]!.version, base.station.refillPoints[1]!.version, 'not the one that does not');
  const samePrice = site(station(), pricing([{ id: 'P700', gross_price: '13.854' }]));
  t.equal(samePrice.version, priced.version, 'a price that rounds to the same cent, at the same time: unchanged');
  const nozzleAdded = site(station({ dispensers: [{ external_id: 'D1', nozzles: [...station().dispensers![0]!.nozzles, { external_id: 'N3', fuelling_options: ['700hd'] }] }] }));
  t.same(nozzleAdded.station.refillPoints.map((p) => p.id), ['BERLA-N-N1', 'BERLA-N-N2', 'BERLA-N-N3'], 'the refill points follow the layout');
  t.not(nozzleAdded.station.version, base.station.version);
  t.equal(nozzleAdded.station.refillPoints[0]!.version, base.station.refillPoints[0]!.version);
  t.not(tableVersion([nozzleAdded]), tableVersion([base]), 'the table moves with any site');
});

/* ---- The status, row by row ------------------------------------------------------------------------ */

const layout: ConfirmedLayout = {
  nozzles: new Map([
    ['N1', { dispenser: 'D1', fuellingOptions: ['700ld'] }],
    ['N2', { dispenser: 'D1', fuellingOptions: ['350ld', '350hd'] }],
  ]),
  dispensers: new Map([['D1', ['N1', 'N2']]]),
  storages: new Set(['S1', 'S2']),
  products: new Set(['P700', 'P350']),
};

const held = (payload: Record<string, unknown>, freshness: Held['freshness'] = 'fresh'): Held => ({ reading: { datetime: NOW - 60_000, receivedAt: NOW - 59_000, payload }, freshness });
const availability = (n1: unknown, n2: unknown, station: Record<string, unknown> = {}) =>
  held({ station: { maintenance: false, limitedly_available: false, ...station }, nozzles: [{ id: 'N1', available: n1 }, { id: 'N2', available: n2 }].filter((n) => n.available !== undefined) });
const usage = (n1: string, freshness: Held['freshness'] = 'fresh') => held({ nozzles: [{ id: 'N1', usage_status: n1 }] }, freshness);

function statusOf(situation: Partial<SiteSituation>) {
  return siteStatus(site(), { open: true, availability: undefined, usage: undefined, storage: undefined, layout, ...situation });
}
const n1 = (situation: Partial<SiteSituation>) => {
  const point = statusOf(situation).refillPoints[0]!;
  return [point.status, point.reason, point.openingStatus, point.operationStatus];
};

t.test('each five-state situation and usage status to its DATEX status', async (t) => {
  t.same(n1({ open: false, availability: availability(true, true) }), ['unavailable', 'outside_opening_hours', 'closed', null], 'CLOSED → unavailable, closed');
  t.same(n1({ availability: undefined }), ['unknown', 'no_signal', 'open', null], 'no reading → unknown');
  t.same(n1({ availability: availability(true, true, {}) && held(availability(true, true).reading.payload, 'unknown') }), ['unknown', 'no_signal', 'open', null], '30 minutes silent → unknown');
  t.same(n1({ availability: availability(true, true, { maintenance: true }) }), ['outOfOrder', 'maintenance', 'open', null], 'maintenance → outOfOrder');
  t.same(n1({ availability: availability(true, true, { limitedly_available: true }) }), ['available', 'limited', 'open', 'limitedOperation'], 'limited → available, limitedOperation');
  t.same(n1({ availability: availability(undefined, true) }), ['unknown', 'not_reported', 'open', null], 'nozzle not reported → unknown');
  t.same(n1({ availability: availability(false, true) }), ['outOfOrder', 'reported_unavailable', 'open', null], 'reported unavailable → outOfOrder');
  t.same(n1({ availability: availability(null, true) }), ['outOfOrder', 'reported_unavailable', 'open', null], 'as published, only true is available');
  t.same(n1({ availability: availability(true, true) }), ['available', 'reported_available', 'open', null], 'available');
  t.same(n1({ availability: availability(true, true), usage: usage('free') }), ['available', 'reported_available', 'open', null], 'free → available');
  t.same(n1({ availability: availability(true, true), usage: usage('in-use') }), ['occupied', 'in_use', 'open', null], 'in-use → occupied');
  t.same(n1({ availability: availability(true, true), usage: usage('reserved') }), ['reserved', 'reserved', 'open', null], 'reserved → reserved');
  t.same(n1({ availability: availability(true, true), usage: usage('in-use', 'stale') }), ['occupied', 'in_use', 'open', null], 'a stale usage reading still counts');
  t.same(n1({ availability: availability(true, true), usage: usage('in-use', 'unknown') }), ['available', 'reported_available', 'open', null], 'a silent usage reading does not');
  t.same(n1({ availability: availability(false, true), usage: usage('in-use') }), ['outOfOrder', 'reported_unavailable', 'open', null], 'usage refines only available');
  t.same(n1({ availability: held(availability(true, true).reading.payload, 'stale') }), ['available', 'reported_available', 'open', null], 'stale availability still counts (as the summary)');
});

t.test('a legacy reading gives each nozzle its fuelling options\' value', async (t) => {
  const legacy = (options: { fuelling_option: string; available: unknown }[]) =>
    held({ station: { maintenance: false, limitedly_available: false }, fuelling_options: options });
  const points = (reading: Held) => statusOf({ availability: reading }).refillPoints.map((p) => p.status);
  t.same(points(legacy([{ fuelling_option: '700ld', available: true }, { fuelling_option: '350ld', available: false }])), ['available', 'unknown'], 'N2 also offers 350hd, not reported: it may be available');
  t.same(points(legacy([{ fuelling_option: '700ld', available: false }, { fuelling_option: '350hd', available: true }])), ['outOfOrder', 'available'], 'N2 offers 350ld and 350hd: one available is enough');
  t.same(points(legacy([{ fuelling_option: '350ld', available: false }])), ['unknown', 'unknown'], 'an option not reported is unknown; N2\'s 350hd too, so N2 may be available: unknown');
  t.same(points(legacy([{ fuelling_option: '350ld', available: false }, { fuelling_option: '350hd', available: false }])), ['unknown', 'outOfOrder'], 'every option of N2 reported unavailable: out of order');
  t.same(points(legacy([{ fuelling_option: '700ld', available: null }])), ['unknown', 'unknown'], 'null is not reported');
  t.same(
    statusOf({ availability: legacy([{ fuelling_option: '700ld', available: true }]), usage: usage('in-use') }).refillPoints[0]!.status,
    'occupied',
    'import v2 usage refines a legacy availability',
  );
});

t.test('the station: low storage, operation, availability, prices as updates', async (t) => {
  const storage = (low: unknown[], freshness: Held['freshness'] = 'fresh') =>
    held({ storages: low.map((l, i) => (typeof l === 'number' ? { id: `S${i + 1}`, remaining_kg: l } : { id: `S${i + 1}`, low_h2_storage: l })) }, freshness);
  t.equal(statusOf({ storage: storage([false, true]) }).limitedHydrogenAmount, true, 'any storage low');
  t.equal(statusOf({ storage: storage([false, false]) }).limitedHydrogenAmount, false, 'none low');
  t.equal(statusOf({ storage: storage([99.9]) }).limitedHydrogenAmount, true, 'derived from the amount: under 100 kg');
  t.equal(statusOf({ storage: storage([100]) }).limitedHydrogenAmount, false, 'exactly 100 kg is not low');
  t.equal(statusOf({ storage: storage([true], 'unknown') }).limitedHydrogenAmount, null, 'a silent reading says nothing');
  t.equal(statusOf({}).limitedHydrogenAmount, null, 'no reading says nothing');
  t.equal(statusOf({ storage: held({ storages: [{ id: 'SX', low_h2_storage: true }] }) }).limitedHydrogenAmount, false, 'a storage no longer in the layout does not count');
  t.equal(statusOf({ availability: availability(true, false) }).isAvailable, true);
  t.equal(statusOf({ availability: availability(false, false) }).isAvailable, false);
  t.equal(statusOf({ availability: undefined }).isAvailable, null);
  t.equal(statusOf({ availability: availability(true, true, { maintenance: true }) }).operationStatus, 'notInOperation');
  t.equal(statusOf({ availability: availability(true, true, { limitedly_available: true }) }).operationStatus, 'limitedOperation');
  t.equal(statusOf({ availability: availability(true, true) }).operationStatus, 'inOperation');
  t.equal(statusOf({ open: false }).openingStatus, 'closed');
  const priced = siteStatus(site(station(), pricing([{ id: 'P350', gross_price: '12.005' }])), { open: true, availability: undefined, usage: undefined, storage: undefined, layout });
  t.same(priced.rates.map((r) => [r.id, r.grossPrice]), [['BERLA-R-P350', '12.01']]);
});

/* ---- Documents ------------------------------------------------------------------------------------- */

t.test('documents: valid, and the kept pieces are exactly what the builder writes for the whole', async (t) => {
  const sites = [
    site(station({ details: { ...station().details, address: { street: 'Melli-Beese-Ring', house_number: '1', postal_code: '12529', city: 'Schönefeld', country: 'DE' }, nuts_region: 'DE40G', contact_phone_number: '+493012345678', contact: { email: 'ops@h2.example', website: 'https://h2.example/' }, owner: 'Owner <&> AG', entrance_coordinates: { lat: 52.36, lon: 13.5 }, location_directions: 'Gate "2"' } }), pricing([{ id: 'P700', gross_price: '13.855' }])),
    site(station({ hrs_id: 'HAMBG', name: 'Hamburg \u0001Port\uFFFE', opening_hours: 'Mo-Fr 06:00-22:00; Sa 08:00-18:00', dispensers: null, products: null, v1_fuel_types: ['350bus'] })),
  ];
  const table = tablePublication(sites, PUBLISHER, AT);
  const whole = tableEnvelope(sites, PUBLISHER, AT);
  for (const s of sites) whole.table.append(siteElement(s));
  t.equal(table, whole.document.write(), 'the table written around kept sites is the builder\'s whole document');
  t.same(await datex2Errors(table), [], 'the table validates');
  t.notMatch(table, /\u0001|\uFFFE/, 'characters XML cannot carry are left out');
  t.match(table, /Owner &lt;&amp;&gt; AG/, 'text is escaped');
  const approximated = tablePublication([site(station({ opening_hours: 'Mo-Su 06:00-20:00; Dec 24-26 off' }))], PUBLISHER, AT);
  t.match(approximated, /<afac:additionalInformation><com:values><com:value lang="en">Opening hours: Specific dates \(such as Dec 24\) are not published: each weekday of each month shows its usual hours.<\/com:value><\/com:values><\/afac:additionalInformation>/, 'approximated hours say so in the document');
  t.notMatch(table, /Opening hours:/, 'exact hours say nothing');
  const models = sites.map((s) => siteStatus(s, { open: true, availability: availability(true, false), usage: usage('in-use'), storage: undefined, layout }));
  const pieces = models.map((m) => writeElement(siteStatusElement(m)));
  const status = statusPublication(pieces, tableVersion(sites), PUBLISHER, AT);
  const wholeStatus = statusEnvelope(tableVersion(sites), PUBLISHER, AT);
  for (const m of models) wholeStatus.root.append(siteStatusElement(m));
  t.equal(status, wholeStatus.document.write());
  t.same(await datex2Errors(status), [], 'the status validates');
  t.match(status, /<aegi:tableReference id="hrs-energy-infrastructure" version="[0-9a-f]{16}" targetClass="aegi:EnergyInfrastructureTable"/);
  t.match(status, /<aegi:status>occupied<\/aegi:status>/);
  t.match(await datex2Errors(tablePublication([], PUBLISHER, AT)), [/Missing child element.*energyInfrastructureSite/], 'a table needs a site (the route answers 404 instead)');
  t.same(await datex2Errors(statusPublication([], null, PUBLISHER, AT)), [], 'a status without sites refers to no table and is valid');
});

/* ---- Arbitrary registries and situations ------------------------------------------------------------ */

const textArb = fc.oneof(
  { weight: 8, arbitrary: fc.string({ minLength: 1, maxLength: 30 }) },
  { weight: 2, arbitrary: fc.string({ unit: 'binary', minLength: 1, maxLength: 20 }) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', minLength: 1020, maxLength: 1100 }) },
);
const idArb = fc.stringMatching(/^[A-Za-z0-9][A-Za-z0-9._-]{0,9}$/);
const hoursArb = fc.constantFrom(null, '24/7', 'Mo-Fr 06:00-22:00; Sa 08:00-18:00', 'Mo-Su 07:00-21:00', 'Fr-Sa 22:00-03:00', 'Apr-Sep Mo-Su 06:00-22:00; Oct-Mar Mo-Su 08:00-18:00', 'Mo-Fr 08:00-12:00,13:00-18:00; PH off', 'off', 'Mo-Su 06:00-20:00; Dec 24-26 off');
const optionsArb = fc.uniqueArray(fc.constantFrom('700ld', '350ld', '700hd', '350hd'), { maxLength: 3 });
const detailsArb = fc.record(
  {
    lat: fc.double({ min: -90, max: 90, noNaN: true }),
    lon: fc.double({ min: -180, max: 180, noNaN: true }),
    cumulative_daily_hydrogen_capacity: fc.oneof(fc.nat(100_000), fc.double({ min: 0, max: 1e6, noNaN: true })),
    country: fc.constantFrom('DE', 'AT', 'fr', 'XX1'),
    address: fc.oneof(textArb, fc.record({ street: textArb, house_number: textArb, postal_code: textArb, city: textArb, country: fc.constantFrom('DE', 'nl') }, { requiredKeys: [] })),
    nuts_region: fc.constantFrom('DE', 'DE3', 'DE30', 'DE300', 'DE40G'),
    contact_phone_number: fc.constant('+493012345678'),
    contact: fc.record({ email: fc.constant('ops@h2.example'), website: fc.constantFrom('https://h2.example/', 'https://h2.example/a b') }, { requiredKeys: [] }),
    owner: textArb,
    entrance_coordinates: fc.record({ lat: fc.double({ min: -90, max: 90, noNaN: true }), lon: fc.double({ min: -180, max: 180, noNaN: true }) }),
    location_directions: textArb,
  },
  { requiredKeys: [] },
);
const priceArb = fc.integer({ min: 1, max: 99_999_999 }).map((th) => `${Math.floor(th / 1000)}.${String(th % 1000).padStart(3, '0')}`);

const stationArb = fc
  .record({
    letters: fc.stringMatching(/^[A-Z]{5}$/),
    name: textArb,
    operator_name: textArb,
    opening_hours: hoursArb,
    time_zone: fc.constantFrom(null, 'Europe/Berlin', 'Europe/Lisbon', 'Asia/Kolkata'),
    details: detailsArb,
    v1_fuel_types: fc.uniqueArray(fc.constantFrom('700car', '350car', '350bus'), { maxLength: 2 }),
    nozzles: fc.option(fc.uniqueArray(fc.record({ id: idArb, options: optionsArb }), { maxLength: 4, selector: (n) => n.id }), { nil: null }),
    products: fc.array(fc.record({ id: idArb, pressure: fc.constantFrom(350, 700), green: fc.option(fc.double({ min: 0, max: 100, noNaN: true }), { nil: null }), price: fc.option(priceArb, { nil: null }) }), { maxLength: 3 }),
    pricedAt: fc.integer({ min: 0, max: 10 ** 12 }),
  })
  .map((g) => {
    const products = g.nozzles === null ? null : [...new Map(g.products.map((p) => [p.id, p])).values()];
    const row: TableStationInput = {
      hrs_id: g.letters,
      modifiedUs: 1_764_000_000_000_000,
      name: g.name,
      operator_id: 'op',
      operator_name: g.operator_name,
      opening_hours: g.opening_hours,
      time_zone: g.time_zone,
      details: g.details,
      v1_fuel_types: g.v1_fuel_types,
      dispensers: g.nozzles === null ? null : [{ external_id: 'D1', nozzles: g.nozzles.map((n) => ({ external_id: n.id, fuelling_options: n.options })) }],
      products: products?.map((p, i) => ({ external_id: p.id, pressure_stage: p.pressure, green_hydrogen_share: p.green, nozzle_external_ids: g.nozzles!.slice(i, i + 2).map((n) => n.id) })) ?? null,
    };
    const prices = (products ?? []).filter((p) => p.price !== null).map((p) => ({ id: p.id, gross_price: p.price, currency: 'EUR' }));
    return { row, pricing: prices.length === 0 ? null : pricing(prices, g.pricedAt) };
  });

const heldArb = (payload: fc.Arbitrary<Record<string, unknown>>) =>
  fc.option(fc.record({ payload, freshness: fc.constantFrom<Held['freshness']>('fresh', 'stale', 'unknown') }).map((h) => held(h.payload, h.freshness)), { nil: undefined });
const flagsArb = fc.record({ maintenance: fc.boolean(), limitedly_available: fc.boolean() });
const situationArb = (nozzles: string[]) =>
  fc.record({
    open: fc.boolean(),
    availability: heldArb(
      fc.oneof(
        fc.record({ station: flagsArb, nozzles: fc.subarray(nozzles).chain((ids) => fc.tuple(...ids.map((id) => fc.record({ id: fc.constant(id), available: fc.boolean() })))) }),
        fc.record({ station: flagsArb, fuelling_options: fc.array(fc.record({ fuelling_option: fc.constantFrom('700ld', '350ld', '700hd', '350hd'), available: fc.option(fc.boolean(), { nil: null }) }), { maxLength: 4 }) }),
      ),
    ),
    usage: heldArb(fc.record({ nozzles: fc.subarray(nozzles).chain((ids) => fc.tuple(...ids.map((id) => fc.record({ id: fc.constant(id), usage_status: fc.constantFrom('free', 'in-use', 'reserved') })))) })),
    storage: heldArb(fc.record({ storages: fc.array(fc.record({ id: fc.constantFrom('S1', 'S2'), low_h2_storage: fc.boolean() }), { maxLength: 2 }) })),
  });

t.test('arbitrary registries and situations give valid documents', async (t) => {
  const networkArb = fc.uniqueArray(stationArb, { minLength: 1, maxLength: 8, selector: (s) => s.row.hrs_id }).chain((stations) =>
    fc.tuple(fc.constant(stations), fc.tuple(...stations.map((s) => situationArb((s.row.dispensers ?? []).flatMap((d) => d.nozzles.map((n) => n.external_id)))))),
  );
  // Validation reads the schema set once per call (about a second): the documents of every network
  // are made first and validated together; an error names its document (payload-N.xml).
  const seed = Date.now() % 2 ** 31;
  const documents: string[] = [];
  let published = 0;
  for (const [stations, situations] of fc.sample(networkArb, { numRuns: runs(150), seed })) {
    const sites: SiteModel[] = [];
    const statuses: string[] = [];
    stations.forEach((s, i) => {
      const result = siteOf(s.row, s.pricing);
      if (!('site' in result)) return;
      sites.push(result.site);
      statuses.push(writeElement(siteStatusElement(siteStatus(result.site, { ...situations[i]!, layout: null }))));
    });
    published += sites.length;
    if (sites.length > 0) documents.push(tablePublication(sites, PUBLISHER, AT));
    documents.push(statusPublication(statuses, sites.length === 0 ? null : tableVersion(sites), PUBLISHER, AT));
  }
  const errors = await datex2Errors(...documents);
  const first = errors.length === 0 ? '' : documents[Number(/payload-(\d+)/.exec(errors[0]!)?.[1])]!;
  t.same(errors, [], `${documents.length} documents of ${runs(150)} networks (seed ${seed}) are valid${first ? `; the first failing one:\n${first}` : ''}`);
  t.ok(published > runs(150), `${published} stations published`);
});

t.test('a refresh asked while a read runs waits for a read that began after it (the one under way may predate a change)', async (t) => {
  const { Datex2Publications } = await import('../../src/api/datex2/publications.js');
  const { createLogger } = await import('../../src/config/log.js');
  /** A database whose answers wait for the test: each heads query is counted, and answered when released. */
  const asked: { release: () => void }[] = [];
  const query = () =>
    new Promise((resolve) => {
      asked.push({ release: () => resolve([{ set_us: '1', hrs_id: null, us: null }]) });
    });
  // The reads run in one transaction (db/deadline.ts wholeRegistryRead): its statements are the same queries.
  const sql = Object.assign(query, { begin: (_mode: string, fn: (tx: typeof query) => unknown) => fn(query) }) as unknown as ConstructorParameters<
    typeof Datex2Publications
  >[0]['sql'];
  const publications = new Datex2Publications({
    sql,
    status: { published: () => undefined, version: 0 },
    stations: { version: 0 } as unknown as ConstructorParameters<typeof Datex2Publications>[0]['stations'],
    opening: { nextDue: () => undefined },
    publisher: { country: 'DE', nationalIdentifier: 'test' } as unknown as ConstructorParameters<typeof Datex2Publications>[0]['publisher'],
    log: createLogger('silent'),
  });
  const settled: string[] = [];
  const first = publications.refresh().then(() => settled.push('first'));
  const second = publications.refresh().then(() => settled.push('second'));
  const third = publications.refresh().then(() => settled.push('third'));
  await new Promise((resolve) => setImmediate(resolve));
  t.equal(asked.length, 1, 'one read under way');
  asked[0]!.release();
  await first;
  await new Promise((resolve) => setImmediate(resolve));
  t.same(settled, ['first'], 'the callers that came during it are not answered by it');
  t.equal(asked.length, 2, 'one more read, shared by both');
  asked[1]!.release();
  await Promise.all([second, third]);
  t.same(settled, ['first', 'second', 'third']);
  const fourth = publications.refresh();
  await new Promise((resolve) => setImmediate(resolve));
  t.equal(asked.length, 3, 'a refresh while none runs reads at once');
  asked[2]!.release();
  await fourth;
});
