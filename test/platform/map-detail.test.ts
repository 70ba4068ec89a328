/**
 * The station panel's detail, `GET /map/v1/stations/{hrs_id}`, and its photo: a driver's view (the
 * feed's Feature, the opening hours and the week's intervals, per fuelling option the feed's value with
 * its gross price and green share, certification, events without ids, the photo link) and nothing
 * record-level (no dispenser, nozzle, storage or product id, no net price); 404 problems for an unknown,
 * sandbox or coordinate-less station.
 */
import t from 'tap';
import { TOKENS } from '../helpers/fixtures.js';
import { closedNow, mapFixture } from '../helpers/map.js';
import { get, postSignals, startTestPlatform } from '../helpers/platform.js';
import { until } from '../helpers/wait.js';
import { weekHours } from '../../src/api/map/week.js';
import { mapStationDetailSchema } from '../../src/domain/map/schemas.js';
import { driverOptions, nozzleCertification, type DriverLayout } from '../../src/domain/map/driver.js';
import type { OptionSummary } from '../../src/domain/status/summary.js';

const ENV = { MAP_RATE_LIMIT: '100000', EXPORT_V2_RATE_LIMIT_MINUTE: '100000' };

/** The map fixture with mon-1 live for BERLA's pricing. */
function pricedFixture() {
  const f = mapFixture();
  (f.assignments as { originator: string; hrs_id: string; signal_type: string; state: string }[]).push({ originator: 'mon-1', hrs_id: 'BERLA', signal_type: 'pricing', state: 'live' });
  f.assignments = f.assignments.filter((a) => !(a.hrs_id === 'BERLA' && a.signal_type === 'pricing' && a.state === 'testing'));
  return f;
}

/** Every key anywhere in a JSON value. */
const keysIn = (value: unknown): string[] =>
  Array.isArray(value) ? value.flatMap(keysIn) : typeof value === 'object' && value !== null ? Object.entries(value).flatMap(([k, v]) => [k, ...keysIn(v)]) : [];

t.test('the detail: the feed\'s feature, hours, week, per-option values with prices, certification, events, photo', async (t) => {
  const p = await startTestPlatform(t, { fixture: pricedFixture(), env: ENV });
  let res = await fetch(`${p.url}/map/v1/stations/BERLA`);
  t.equal(res.status, 200);
  t.equal(res.headers.get('access-control-allow-origin'), '*');
  let detail = (await res.json()) as Record<string, any>;
  t.same(Object.keys(detail), ['hrs_id', 'feature', 'opening_hours', 'week', 'fuelling_options', 'certification', 'events', 'photo']);
  const feed = (await (await fetch(`${p.url}/map/v1/stations.geojson`)).json()) as { features: { id: string; properties: { fuelling_options: unknown[] } }[] };
  const feature = feed.features.find((x) => x.id === 'BERLA')!;
  t.same(detail.feature, feature, 'the Feature exactly as in the feed');
  const unpriced = { gross_price: null, currency: null, price_datetime: null };
  t.same(
    detail.fuelling_options,
    [
      { ...(feature.properties.fuelling_options[0] as object), ...unpriced, green_hydrogen_share: null },
      { ...(feature.properties.fuelling_options[1] as object), ...unpriced, green_hydrogen_share: 50 },
    ],
    'per option the feed\'s value, no price yet, the green share of the product its nozzle dispenses',
  );
  t.same(detail.certification, { nozzles: 2, certified: 1 }, 'N1 certified with its dispenser, N2 not');
  const events = (await (await get(`${p.url}/v2/hrs/BERLA/events`, TOKENS.export_v2)).json()) as Record<string, unknown>[];
  t.same(detail.events, events.map(({ id: _id, ...event }) => event), 'the events as GET /v2/hrs/BERLA/events, without their ids');
  t.equal(detail.opening_hours, '24/7');
  t.equal(detail.week.length, 7);
  t.same(detail.week[0].intervals, [{ from: '00:00', to: '24:00' }], 'open all day');
  t.equal(detail.photo, null, 'no photo');

  const measured = new Date().toISOString();
  await postSignals(p, 'pricing', [{ hrs: 'BERLA', datetime: measured, products: [{ id: 'P700', gross_price: '13.850', net_price: '11.639', currency: 'EUR' }, { id: 'P350', gross_price: '11.500', net_price: '9.664', currency: 'EUR' }] }]);
  detail = await until('the prices', async () => {
    const d = (await (await fetch(`${p.url}/map/v1/stations/BERLA`)).json()) as Record<string, any>;
    return d.fuelling_options[0].gross_price ? d : undefined;
  });
  const at = new Date(measured).toISOString();
  t.same(
    detail.fuelling_options.map((o: Record<string, unknown>) => [o.fuelling_option, o.gross_price, o.currency, o.price_datetime]),
    [
      ['700ld', '13.850', 'EUR', at],
      ['350ld', '11.500', 'EUR', at],
    ],
    'each option the gross price of the product its nozzle dispenses',
  );
  t.ok(mapStationDetailSchema.safeParse(detail).success, 'the body is what the document describes (MapStationDetail)');

  await p.sql`UPDATE stations SET photo = ${Buffer.from('not really a png')}, photo_media_type = 'image/png', photo_sha256 = sha256(${Buffer.from('not really a png')}), photo_checked = true, static_modified_at = now() WHERE hrs_id = 'BERLA'`;
  detail = (await (await fetch(`${p.url}/map/v1/stations/BERLA`)).json()) as Record<string, any>;
  t.equal(detail.photo, '/map/v1/stations/BERLA/photo');
  res = await fetch(`${p.url}${detail.photo}`);
  t.equal(res.status, 200);
  t.equal(res.headers.get('content-type'), 'image/png');
  t.equal(Buffer.from(await res.arrayBuffer()).toString(), 'not really a png', 'the photo\'s bytes');

  const closed = (await (await fetch(`${p.url}/map/v1/stations/CLOSD`)).json()) as Record<string, any>;
  t.equal(closed.opening_hours, closedNow());
  t.equal(closed.week[0].intervals.length, 1, 'one interval a day');
  t.match(closed.week[0].intervals[0], { from: /^\d\d:00$/, to: /^\d\d:59$/ });
  t.equal(closed.certification, null, 'no confirmed layout: no nozzles to count');
  t.same(closed.fuelling_options.map((o: Record<string, unknown>) => [o.fuelling_option, o.status, o.gross_price]), [['700ld', 'CLOSED', null]]);
});

t.test('what tokens guard stays behind them: no layout id and no net price anywhere in the public detail', async (t) => {
  const p = await startTestPlatform(t, { fixture: pricedFixture(), env: ENV });
  await postSignals(p, 'pricing', [{ hrs: 'BERLA', datetime: new Date().toISOString(), products: [{ id: 'P700', gross_price: '13.850', net_price: '11.639', currency: 'EUR' }] }]);
  const status = (await (await get(`${p.url}/v2/hrs/BERLA/status`, TOKENS.export_v2)).json()) as { pricing: { products: { net_price: string }[] } | null };
  t.equal(status.pricing?.products[0]?.net_price, '11.639', 'a personal token reads the net price');
  const record = (await (await get(`${p.url}/v2/hrs/BERLA`, TOKENS.export_v2)).json()) as Record<string, any>;
  const ids: string[] = [
    ...record.dispensers.flatMap((d: any) => [d.external_id, ...d.nozzles.map((n: any) => n.external_id)]),
    ...record.storages.map((s: any) => s.external_id),
    ...record.products.map((x: any) => x.external_id),
  ];
  t.same(ids.sort(), ['D1', 'N1', 'N2', 'P350', 'P700', 'S1'], 'the record\'s layout ids (export v2, with a token)');

  const text = await until('the price on the map', async () => {
    const body = await (await fetch(`${p.url}/map/v1/stations/BERLA`)).text();
    return body.includes('13.850') ? body : undefined;
  });
  for (const id of ids) t.notOk(text.includes(`"${id}"`), `no ${id} in the public detail`);
  t.notOk(text.includes('11.639'), 'no net price value');
  const keys = new Set(keysIn(JSON.parse(text)));
  for (const key of ['net_price', 'record', 'prices', 'external_id', 'nozzle_external_ids', 'dispenser_external_ids', 'dispensers', 'storages', 'products']) {
    t.notOk(keys.has(key), `no "${key}" key`);
  }
});

t.test('404 problems: unknown, coordinate-less, a photo that is not there', async (t) => {
  const p = await startTestPlatform(t, { fixture: mapFixture(), env: ENV });
  for (const path of ['/map/v1/stations/NOPES', '/map/v1/stations/HAMBG', '/map/v1/stations/HAMBG/photo', '/map/v1/stations/NOPES/photo', '/map/v1/stations/BERLA/photo']) {
    const res = await fetch(`${p.url}${path}`);
    t.equal(res.status, 404, path);
    t.equal(res.headers.get('content-type'), 'application/problem+json; charset=utf-8');
    t.match(await res.json(), { status: 404, title: 'Not Found' });
  }
});

t.test('a sandbox station is not on the map', async (t) => {
  const p = await startTestPlatform(t, { fixture: mapFixture(), env: { ...ENV, SANDBOX: 'on' } });
  const sandboxIds = [...p.parts.registry.stationIds()].filter((id) => p.parts.registry.station(id)?.sandbox === true);
  t.ok(sandboxIds.length > 0, 'the sandbox has stations');
  const feed = (await (await fetch(`${p.url}/map/v1/stations.geojson`)).json()) as { features: { id: string }[] };
  t.same(feed.features.map((x) => x.id), ['BERLA', 'CLOSD', 'TRUCK'], 'no sandbox station in the feed');
  const res = await fetch(`${p.url}/map/v1/stations/${sandboxIds[0]}`);
  t.equal(res.status, 404, 'nor a detail');
});

t.test('the week: intervals by the station\'s wall clock across a daylight-saving change', async (t) => {
  // Berlin's clocks go forward on 29 March 2026 at 02:00.
  const week = weekHours('Mo-Su 06:00-22:00', 'Europe/Berlin', new Date('2026-03-27T12:00:00Z'));
  t.same(week.map((d) => d.date), ['2026-03-27', '2026-03-28', '2026-03-29', '2026-03-30', '2026-03-31', '2026-04-01', '2026-04-02']);
  t.ok(week.every((d) => d.intervals.length === 1 && d.intervals[0]!.from === '06:00' && d.intervals[0]!.to === '22:00'), 'the same local hours every day');
  t.same(weekHours('Mo-Fr 08:00-12:00,13:00-18:00', 'UTC', new Date('2026-11-28T10:00:00Z')).slice(0, 3), [
    { date: '2026-11-28', intervals: [] },
    { date: '2026-11-29', intervals: [] },
    { date: '2026-11-30', intervals: [{ from: '08:00', to: '12:00' }, { from: '13:00', to: '18:00' }] },
  ], 'closed all day at the weekend; two intervals on Monday');
  t.same(weekHours('Mo-Su 18:00-02:00', 'UTC', new Date('2026-11-30T10:00:00Z'))[0], { date: '2026-11-30', intervals: [{ from: '00:00', to: '02:00' }, { from: '18:00', to: '24:00' }] }, 'past midnight');
  t.same(weekHours(null, null, new Date('2026-11-30T10:00:00Z'))[0], { date: '2026-11-30', intervals: [{ from: '00:00', to: '24:00' }] }, 'no hours: open all day');
});

t.test('which product an option takes: its nozzles\' (the cheapest priced), else an unmapped one of its pressure stage', async (t) => {
  const entry = (option: OptionSummary['fuelling_option']): OptionSummary => ({ fuelling_option: option, status: 'AVAILABLE', reason: 'reported_available', datetime: '2026-11-27T09:40:00.000Z' });
  const nozzle = (id: string, options: string[], certified = true) => ({ external_id: id, is_effectively_certified: certified, fuelling_options: options });
  const product = (id: string, stage: number, nozzles: string[], share: number | null = null) => ({ external_id: id, pressure_stage: stage, green_hydrogen_share: share, nozzle_external_ids: nozzles });
  const layout: DriverLayout = {
    dispensers: [{ nozzles: [nozzle('N1', ['700ld', '700hd']), nozzle('N2', ['700hd'], false), nozzle('N3', ['350hd'])] }],
    products: [product('GREY', 700, ['N1', 'N2'], 0), product('GREEN', 700, ['N2'], 100), product('LOOSE', 350, [], 30), product('LOOSE700', 700, [])],
  };
  const pricing = {
    datetime: '2026-11-27T06:00:00.000Z',
    products: [
      { id: 'GREY', gross_price: '13.850', currency: 'EUR' },
      { id: 'GREEN', gross_price: '12.990', currency: 'EUR' },
      { id: 'LOOSE', gross_price: '9.500', currency: 'EUR' },
    ],
  };
  const seen = (p: typeof pricing | null) =>
    driverOptions([entry('700ld'), entry('700hd'), entry('350hd'), entry('350ld')], layout, p).map((o) => [o.fuelling_option, o.gross_price, o.green_hydrogen_share, o.price_datetime]);
  t.same(seen(pricing), [
    ['700ld', '13.850', 0, pricing.datetime],
    ['700hd', '12.990', 100, pricing.datetime],
    ['350hd', '9.500', 30, pricing.datetime],
    ['350ld', '9.500', 30, pricing.datetime],
  ], '700hd: the cheaper of its two products; 350 bar: the product mapped to no nozzle, as no mapped one serves it');
  t.same(seen(null), [
    ['700ld', null, 0, null],
    ['700hd', null, 0, null],
    ['350hd', null, 30, null],
    ['350ld', null, 30, null],
  ], 'no price published: the first product\'s green share, no price');
  t.same(driverOptions([entry('700ld')], { dispensers: null, products: null }, pricing)[0], { ...entry('700ld'), gross_price: null, currency: null, price_datetime: null, green_hydrogen_share: null }, 'no layout: the value alone');
  t.same(nozzleCertification(layout), { nozzles: 3, certified: 2 });
  t.equal(nozzleCertification({ dispensers: null }), null);
});
