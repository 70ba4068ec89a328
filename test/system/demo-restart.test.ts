/**
 * `hrs demo` keeps what was edited: a station renamed, a layout confirmed with a new nozzle, an event
 * added, a photo uploaded (portal, as the demo's operator staff signed in by the printed link) and a
 * call-log mode set (admin API) are all still there after the demo is stopped and started again on the
 * same database; `hrs demo --reset` loads the demo file again over them, and the banner says which.
 */
import t from 'tap';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { DEMO_ADMIN_TOKEN, DEMO_OPERATOR_EMAIL, DEMO_ORIGINATOR, DEMO_TOKENS, demoPhotoPath } from '../../src/cli/demo/fixture.js';
import { demoSetting, startDemo, stopDemo, type DemoProcess } from '../helpers/demo.js';
import { portalClient, type PortalClient } from '../helpers/portal.js';
import { until } from '../helpers/wait.js';

/** Signs in as `email` the way a demo user does: asks for a link, takes it from the demo's terminal. */
async function signIn(demo: DemoProcess, email: string): Promise<PortalClient> {
  const mark = demo.output().length;
  const asked = await portalClient(demo).call('POST', '/portal/v1/sign-in', { email });
  if (asked.status !== 202) throw new Error(`sign-in: ${asked.status}`);
  const prefix = `  sign-in link for ${email}: `;
  const link = await until(`the sign-in link for ${email} in the terminal`, () => {
    const line = demo.since(mark).split('\n').find((l) => l.startsWith(prefix));
    return line?.slice(prefix.length);
  });
  const secret = /#sign-in=([\w-]+)$/.exec(link)![1]!;
  const opened = await fetch(`${demo.url}/portal/v1/session`, {
    method: 'POST',
    headers: { Origin: demo.url, 'Content-Type': 'application/json' },
    body: JSON.stringify({ token: secret }),
  });
  if (opened.status !== 201) throw new Error(`session: ${opened.status} ${await opened.text()}`);
  const cookie = opened.headers.get('set-cookie')!.split(';')[0]!;
  return portalClient(demo, cookie);
}

const admin = (demo: DemoProcess, method: string, path: string, body?: unknown) =>
  fetch(`${demo.url}${path}`, {
    method,
    headers: { Authorization: `Bearer ${DEMO_ADMIN_TOKEN}`, ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });

async function callLogMode(demo: DemoProcess): Promise<string> {
  const { originators } = (await (await admin(demo, 'GET', '/admin/v1/originators')).json()) as { originators: { id: string; call_log_mode: string }[] };
  return originators.find((o) => o.id === DEMO_ORIGINATOR)!.call_log_mode;
}

const sha256 = (bytes: ArrayBuffer | Buffer) => createHash('sha256').update(Buffer.from(bytes as ArrayBuffer)).digest('hex');

/** What the test edits, as the platform answers it now. */
async function edited(demo: DemoProcess, staff: PortalClient) {
  const station = (await staff.call('GET', '/portal/v1/stations/BERAP')).body;
  const layout = (await staff.call('GET', '/portal/v1/stations/BERAP/layout')).body.confirmed.layout;
  const events = (await staff.call('GET', '/portal/v1/stations/BERAP/events')).body.events as { id: string; description: string | null }[];
  const photo = await fetch(`${demo.url}/v2/hrs/BERAP/photo`, { headers: { Authorization: `Bearer ${DEMO_TOKENS.export_v2}` } });
  return {
    name: station.name as string,
    nozzles: (layout.dispensers as { nozzles: { external_id: string }[] }[]).flatMap((d) => d.nozzles.map((n) => n.external_id)),
    events: events.map((e) => e.id),
    photo: photo.status === 200 ? sha256(await photo.arrayBuffer()) : `status ${photo.status}`,
    callLogMode: await callLogMode(demo),
  };
}

t.test('a demo restart keeps every portal and admin edit; --reset loads the demo file again', async (t) => {
  const setting = await demoSetting(t, { SANDBOX: 'on' });
  const first = await startDemo(t, setting, ['--interval', '3600']);
  t.match(first.output(), /registry: the demo file, loaded into the empty registry/, 'a first start loads the demo file (the sandbox\'s stations do not count)');
  t.match(first.output(), /demo on \S+: 12 stations/, 'its twelve stations, not the sandbox\'s');
  const staff = await signIn(first, DEMO_OPERATOR_EMAIL);
  const original = await edited(first, staff);
  t.equal(original.name, 'Berlin Airport');

  // The edits: name, layout with a new nozzle, an event, a photo (staff); the call-log mode (admin).
  const { hrs_id: _id, operator: _op, photo: _photo, static_modified_at: _at, ...fields } = (await staff.call('GET', '/portal/v1/stations/BERAP')).body;
  t.equal((await staff.call('PUT', '/portal/v1/stations/BERAP', { ...fields, name: 'Berlin BER Terminal 5' })).status, 200, 'renamed');
  const { confirmed } = (await staff.call('GET', '/portal/v1/stations/BERAP/layout')).body;
  // A nozzle added to D1, and D2's 350 bar nozzle taken out (the originator must follow both).
  type Dispenser = { external_id: string; nozzles: { external_id: string }[] };
  const withNozzle = {
    ...confirmed.layout,
    dispensers: confirmed.layout.dispensers.map((d: Dispenser) =>
      d.external_id === 'D1'
        ? { ...d, nozzles: [...d.nozzles, { external_id: 'D1-H70-2', connector_type: 'H70', vehicle_side: 'right', is_certified: true, fuelling_options: ['700ld'] }] }
        : { ...d, nozzles: d.nozzles.filter((n) => n.external_id !== 'D2-H35') },
    ),
    products: confirmed.layout.products.map((p: { nozzle_external_ids: string[] }) => ({ ...p, nozzle_external_ids: p.nozzle_external_ids.filter((n) => n !== 'D2-H35') })),
  };
  t.equal((await staff.call('PUT', '/portal/v1/stations/BERAP/layout/draft', withNozzle)).status, 200, 'a draft with a new nozzle, one fewer');
  const confirmedAnswer = await staff.call('POST', '/portal/v1/stations/BERAP/layout/confirm', { expected_version: confirmed.version });
  t.equal(confirmedAnswer.status, 200, 'the layout confirmed');
  const event = await staff.call('POST', '/portal/v1/stations/BERAP/events', {
    kind: 'other',
    starts_at: new Date(Date.now() + 3 * 86_400_000).toISOString(),
    description: 'Open day at the station.',
  });
  t.equal(event.status, 201, 'an event');
  const photoBytes = readFileSync(demoPhotoPath('demo-truck-stop.png'));
  t.equal((await staff.send('PUT', '/portal/v1/stations/BERAP/photo', photoBytes, { 'Content-Type': 'image/png' })).status, 200, 'a photo');
  const mode = original.callLogMode === 'always' ? 'errors' : 'always';
  t.equal((await admin(first, 'PATCH', `/admin/v1/originators/${DEMO_ORIGINATOR}`, { call_log_mode: mode })).status, 200, 'a call-log mode');

  const want = await edited(first, staff);
  t.equal(want.name, 'Berlin BER Terminal 5', 'the new name is in effect');
  t.ok(want.nozzles.includes('D1-H70-2') && !want.nozzles.includes('D2-H35'), 'the new layout is confirmed');
  t.ok(want.events.includes(event.body.id), 'the event is listed');
  t.not(want.photo, original.photo, 'the new photo is exported (as the platform stores it: re-encoded)');
  t.match(want.photo, /^[0-9a-f]{64}$/);
  t.equal(want.callLogMode, mode, 'the call-log mode is set');
  t.same(await stopDemo(first), { code: 0, signal: null }, 'stopped');

  // Started again on the same database: every edit is still there.
  const second = await startDemo(t, setting, ['--interval', '1']);
  t.match(second.output(), /registry: kept as it was, edits included \(`hrs demo --reset` loads the demo file again over them\)/, 'the banner says the registry was kept');
  t.same(await edited(second, await signIn(second, DEMO_OPERATOR_EMAIL)), want, 'after a restart: the name, the layout, the event, the photo and the call-log mode as edited');
  // And the simulated originator reports the layout as edited: the new nozzle, not the removed one.
  const reported = await until('an availability reading with the new nozzle', async () => {
    const res = await fetch(`${second.url}/v2/hrs/BERAP/status`, { headers: { Authorization: `Bearer ${DEMO_TOKENS.export_v2}` } });
    const nozzles = ((await res.json()) as { availability: { nozzles: { id: string }[] } | null }).availability?.nozzles.map((n) => n.id) ?? [];
    return nozzles.includes('D1-H70-2') ? nozzles : undefined;
  }, 30_000);
  t.notOk(reported.includes('D2-H35'), 'the removed nozzle is not reported');
  await new Promise((resolve) => setTimeout(resolve, 1500));
  t.notMatch(second.output(), /transmission refused/, 'nothing the simulated originator sends is refused');
  t.same(await stopDemo(second), { code: 0, signal: null });

  // --reset: the demo file again over what it describes.
  const reset = await startDemo(t, setting, ['--interval', '3600', '--reset']);
  t.match(reset.output(), /registry: the demo file loaded again over its operator, stations, originators, accounts and tokens \(--reset\)/, 'the banner says --reset reloaded it');
  const back = await edited(reset, await signIn(reset, DEMO_OPERATOR_EMAIL));
  t.same({ ...back, events: back.events.sort() }, { ...original, events: original.events.sort() }, '--reset: the station, layout, events, photo and call-log mode of the demo file');
  t.same(await stopDemo(reset), { code: 0, signal: null });
});
