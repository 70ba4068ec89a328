/**
 * The station panel's detail, `GET /map/v1/stations/{hrs_id}`, and its photo: the feed's Feature, the
 * export v2 record and events as export v2 answers them, the opening hours and the week's intervals,
 * the live prices, the photo link; 404 problems for an unknown, sandbox or coordinate-less station.
 */
import t from 'tap';
import { TOKENS } from './helpers/fixtures.js';
import { closedNow, mapFixture } from './helpers/map.js';
import { get, postSignals, startTestPlatform } from './helpers/platform.js';
import { until } from './helpers/wait.js';
import { weekHours } from '../src/api/map/week.js';

const ENV = { MAP_RATE_LIMIT: '100000', EXPORT_V2_RATE_LIMIT_MINUTE: '100000' };

t.test('the detail: the feed\'s feature, the export v2 record and events, hours, week, prices, photo', async (t) => {
  const f = mapFixture();
  (f.assignments as { originator: string; hrs_id: string; signal_type: string; state: string }[]).push({ originator: 'mon-1', hrs_id: 'BERLA', signal_type: 'pricing', state: 'live' });
  f.assignments = f.assignments.filter((a) => !(a.hrs_id === 'BERLA' && a.signal_type === 'pricing' && a.state === 'testing'));
  const p = await startTestPlatform(t, { fixture: f, env: ENV });
  let res = await fetch(`${p.url}/map/v1/stations/BERLA`);
  t.equal(res.status, 200);
  t.equal(res.headers.get('access-control-allow-origin'), '*');
  let detail = (await res.json()) as Record<string, any>;
  t.same(Object.keys(detail), ['hrs_id', 'feature', 'record', 'opening_hours', 'week', 'events', 'prices', 'photo']);
  const feed = (await (await fetch(`${p.url}/map/v1/stations.geojson`)).json()) as { features: { id: string }[] };
  t.same(detail.feature, feed.features.find((x) => x.id === 'BERLA'), 'the Feature exactly as in the feed');
  const record = await (await get(`${p.url}/v2/hrs/BERLA`, TOKENS.export_v2)).json();
  t.same(detail.record, record, 'the record exactly as GET /v2/hrs/BERLA');
  const events = await (await get(`${p.url}/v2/hrs/BERLA/events`, TOKENS.export_v2)).json();
  t.same(detail.events, events, 'the events as GET /v2/hrs/BERLA/events');
  t.equal(detail.opening_hours, '24/7');
  t.equal(detail.week.length, 7);
  t.same(detail.week[0].intervals, [{ from: '00:00', to: '24:00' }], 'open all day');
  t.equal(detail.prices, null, 'no prices published yet');
  t.equal(detail.photo, null, 'no photo');

  await postSignals(p, 'pricing', [{ hrs: 'BERLA', datetime: new Date().toISOString(), products: [{ id: 'P700', gross_price: '13.850', currency: 'EUR' }] }]);
  detail = await until('the prices', async () => {
    const d = (await (await fetch(`${p.url}/map/v1/stations/BERLA`)).json()) as Record<string, any>;
    return d.prices ? d : undefined;
  });
  const status = (await (await get(`${p.url}/v2/hrs/BERLA/status`, TOKENS.export_v2)).json()) as Record<string, unknown>;
  t.same(detail.prices, status.pricing, 'the pricing section as GET /v2/hrs/BERLA/status has it');

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
