/**
 * Export v1.1 and v1: the five-state summary per fuelling option over HTTP, from v1, v1.1 and v2
 * readings, with the opening hours, the 30-minute fallback, the filter and the tokens.
 */
import t from 'tap';
import { legacyFixture, TOKENS } from '../helpers/fixtures.js';
import { get, startTestPlatform, type TestPlatform } from '../helpers/platform.js';
import { until } from '../helpers/wait.js';

const ago = (seconds: number) => new Date(Date.now() - seconds * 1000).toISOString();

/** Opening hours that are closed now: one hour, twelve hours from now (UTC). */
function closedNow(): string {
  const hour = (new Date().getUTCHours() + 12) % 24;
  const two = (n: number) => String(n).padStart(2, '0');
  return `Mo-Su ${two(hour)}:00-${two(hour)}:59`;
}

/** BERLA (700ld, 350ld) and TRUCK (700ld, 700hd, 350hd) live on v1; HAMBG provides nothing; CLOSD is closed now. */
function fixture() {
  const f = legacyFixture();
  f.stations.push({ hrs_id: 'CLOSD', operator: 'h2-demo', name: 'Closed Now', opening_hours: closedNow(), time_zone: 'UTC', v1_fuel_types: ['700car'] } as Record<string, unknown>);
  f.assignments.push(
    { originator: 'mon-1', hrs_id: 'BERLA', signal_type: 'v1', state: 'live' },
    { originator: 'mon-1', hrs_id: 'TRUCK', signal_type: 'v1', state: 'live' },
    { originator: 'mon-1', hrs_id: 'CLOSD', signal_type: 'v1', state: 'live' },
  );
  return f;
}

const post = (p: TestPlatform, body: unknown) =>
  fetch(`${p.url}/import/v1.1/hrs-availability`, {
    method: 'POST',
    body: JSON.stringify(body),
    headers: { Authorization: `Bearer ${TOKENS.import_v1}`, 'Content-Type': 'application/json' },
  });

const summary = async (p: TestPlatform, path: string, token: string = TOKENS.export_v1) => {
  const res = await get(`${p.url}${path}`, token);
  return { status: res.status, body: (await res.json()) as any };
};

t.test('every station and option, UNKNOWN without a signal; then each rule of the table', async (t) => {
  const p = await startTestPlatform(t, { fixture: fixture() });
  let res = await summary(p, '/v1.1/hrs/status');
  t.equal(res.status, 200);
  t.same(res.body.map((s: { hrs_id: string }) => s.hrs_id), ['BERLA', 'CLOSD', 'HAMBG', 'TRUCK'], 'every station, sorted');
  t.same(res.body.find((s: { hrs_id: string }) => s.hrs_id === 'TRUCK').fuelling_options, [
    { fuel_type: '700ld', status: 'UNKNOWN', reason: 'no_signal', datetime: null },
    { fuel_type: '700hd', status: 'UNKNOWN', reason: 'no_signal', datetime: null },
    { fuel_type: '350hd', status: 'UNKNOWN', reason: 'no_signal', datetime: null },
  ], 'one entry per option the station provides, in the fuel-type list order');
  t.same(res.body.find((s: { hrs_id: string }) => s.hrs_id === 'HAMBG').fuelling_options, [], 'a station that provides no option');
  t.match(res.body.find((s: { hrs_id: string }) => s.hrs_id === 'CLOSD').fuelling_options, [{ fuel_type: '700ld', status: 'CLOSED', reason: 'outside_opening_hours' }], 'closed: CLOSED before anything else');

  const datetime = ago(5);
  t.equal((await post(p, [{ hrs: 'TRUCK', datetime, maintenance: false, limitedly_available: false, dispensers: [{ fuel_type: '700ld', available: true }, { fuel_type: '350hd', available: false }] }])).status, 204);
  res = await until('the summary after the signal', async () => {
    const r = await summary(p, '/v1.1/hrs/TRUCK/status');
    return r.body.fuelling_options[0].status === 'UNKNOWN' ? undefined : r;
  });
  t.same(res.body, {
    hrs_id: 'TRUCK',
    fuelling_options: [
      { fuel_type: '700ld', status: 'AVAILABLE', reason: 'reported_available', datetime: new Date(datetime).toISOString() },
      { fuel_type: '700hd', status: 'UNKNOWN', reason: 'not_reported', datetime: new Date(datetime).toISOString() },
      { fuel_type: '350hd', status: 'UNAVAILABLE', reason: 'reported_unavailable', datetime: new Date(datetime).toISOString() },
    ],
  });

  t.equal((await post(p, [{ hrs: 'TRUCK', datetime: ago(4), maintenance: false, limitedly_available: true, dispensers: [{ fuel_type: '700ld', available: true }] }])).status, 204);
  res = await until('limited', async () => {
    const r = await summary(p, '/v1.1/hrs/TRUCK/status');
    return r.body.fuelling_options[0].status === 'LIMITEDLY_AVAILABLE' ? r : undefined;
  });
  t.ok(res.body.fuelling_options.every((o: { status: string; reason: string }) => o.status === 'LIMITEDLY_AVAILABLE' && o.reason === 'limited'), 'limited applies to every option');
  t.equal((await post(p, [{ hrs: 'TRUCK', datetime: ago(3), maintenance: true, limitedly_available: true, dispensers: [{ fuel_type: '700ld', available: true }] }])).status, 204);
  res = await until('maintenance', async () => {
    const r = await summary(p, '/v1.1/hrs/TRUCK/status');
    return r.body.fuelling_options[0].reason === 'maintenance' ? r : undefined;
  });
  t.ok(res.body.fuelling_options.every((o: { status: string }) => o.status === 'UNAVAILABLE'), 'maintenance wins over limited');

  // An import v2 reading: an option is available when any nozzle offering it is.
  const v2 = await fetch(`${p.url}/import/v2/signal/availability/`, {
    method: 'POST',
    body: JSON.stringify([{ hrs: 'BERLA', datetime: ago(2), nozzles: [{ id: 'N1', available: true }, { id: 'N2', available: false }], station: { maintenance: false, limitedly_available: false } }]),
    headers: { Authorization: `Bearer ${TOKENS.import_v2}`, 'Content-Type': 'application/json' },
  });
  t.equal(v2.status, 204);
  res = await until('the v2 reading', async () => {
    const r = await summary(p, '/v1.1/hrs/BERLA/status');
    return r.body.fuelling_options[0].status === 'UNKNOWN' ? undefined : r;
  });
  t.match(res.body.fuelling_options, [
    { fuel_type: '700ld', status: 'AVAILABLE', reason: 'reported_available' },
    { fuel_type: '350ld', status: 'UNAVAILABLE', reason: 'reported_unavailable' },
  ], 'from a v2 reading through the layout');
});

t.test('the filter, the v1 vocabulary, tokens', async (t) => {
  const p = await startTestPlatform(t, { fixture: fixture() });
  let res = await summary(p, '/v1.1/hrs/status?fuelling_option=700hd');
  t.same(res.body.map((s: { hrs_id: string }) => s.hrs_id), ['TRUCK'], 'stations without the option are left out');
  t.same(res.body[0].fuelling_options.map((o: { fuel_type: string }) => o.fuel_type), ['700hd']);
  res = await summary(p, '/v1.1/hrs/BERLA/status?fuelling_option=350ld');
  t.same(res.body.fuelling_options.map((o: { fuel_type: string }) => o.fuel_type), ['350ld']);
  res = await summary(p, '/v1.1/hrs/status?fuelling_option=700car');
  t.equal(res.status, 400);
  t.match(res.body, { detail: 'fuelling_option: must be one of 700ld, 350ld, 700hd, 350hd (got "700car").' }, 'an unknown code names the allowed ones');

  res = await summary(p, '/v1/hrs/TRUCK/status');
  t.same(res.body.fuelling_options.map((o: { fuel_type: string }) => o.fuel_type), ['700car', '350bus'], 'v1 codes; 700hd has none and is left out');
  res = await summary(p, '/v1/hrs/status?fuelling_option=350car');
  t.same(res.body.map((s: { hrs_id: string }) => s.hrs_id), ['BERLA']);
  t.equal((await summary(p, '/v1/hrs/status?fuelling_option=700hd')).status, 400, 'no 700hd on v1');
  t.equal((await summary(p, '/v1.1/hrs/NOPEE/status')).status, 404);

  for (const token of [TOKENS.export_v2, TOKENS.import_v1, TOKENS.import_v2]) {
    t.equal((await summary(p, '/v1.1/hrs/status', token)).status, 401, 'only export v1/v1.1 tokens');
  }
});

t.test('the 30-minute fallback: a silent station turns UNKNOWN', async (t) => {
  const p = await startTestPlatform(t, { fixture: fixture(), env: { STATUS_STALE_AFTER: '1', STATUS_UNKNOWN_AFTER: '2' } });
  t.equal((await post(p, [{ hrs: 'BERLA', datetime: ago(0), maintenance: true, limitedly_available: false, dispensers: [] }])).status, 204);
  await until('maintenance', async () => ((await summary(p, '/v1.1/hrs/BERLA/status')).body.fuelling_options[0].reason === 'maintenance' ? true : undefined));
  const res = await until('the fallback', async () => {
    const r = await summary(p, '/v1.1/hrs/BERLA/status');
    return r.body.fuelling_options[0].reason === 'no_signal' ? r : undefined;
  }, 10_000);
  t.match(res.body.fuelling_options, [{ status: 'UNKNOWN', reason: 'no_signal' }, { status: 'UNKNOWN', reason: 'no_signal' }], 'a silent station in maintenance is UNKNOWN');
});
