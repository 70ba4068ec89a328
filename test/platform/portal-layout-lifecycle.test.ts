/**
 * The layout's lifecycle through the portal on two instances of the service (one database, one Redis):
 * a draft is invisible to import and export on both; a confirmation is in effect on the other instance
 * when its answer arrives (no waiting): the new nozzle is accepted and exported there, a removed product's
 * price and a removed nozzle leave the published status at once on both; an assignment changed on one
 * instance switches publication on the other with the next signal.
 */
import t, { type Test } from 'tap';
import { TOKENS } from '../helpers/fixtures.js';
import { get, startTestPlatform, type TestPlatform } from '../helpers/platform.js';
import { ACCOUNTS, grantPortalRoles, portalFixture, signedIn } from '../helpers/portal.js';
import { until } from '../helpers/wait.js';

const ago = (seconds: number) => new Date(Date.now() - seconds * 1000).toISOString();

function post(p: TestPlatform, category: string, body: unknown) {
  return fetch(`${p.url}/import/v2/signal/${category}/`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${TOKENS.import_v2}`, 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
  }).then(async (res) => ({ status: res.status, text: await res.text() }));
}

const availability = (nozzles: { id: string; available: boolean }[]) => [
  { hrs: 'BERLA', datetime: ago(2), nozzles, station: { maintenance: false, limitedly_available: false } },
];

async function record(p: TestPlatform) {
  const res = await get(`${p.url}/v2/hrs/BERLA`, TOKENS.export_v2);
  const body = (await res.json()) as { dispensers: { nozzles: { external_id: string }[] }[] };
  return { lastModified: res.headers.get('last-modified'), nozzles: body.dispensers.flatMap((d) => d.nozzles.map((n) => n.external_id)) };
}

type Status = {
  availability: { nozzles: { id: string; available: boolean }[] } | null;
  pricing: { products: { id: string }[] } | null;
};

async function status(p: TestPlatform): Promise<Status> {
  return (await (await get(`${p.url}/v2/hrs/BERLA/status`, TOKENS.export_v2)).json()) as Status;
}

/**
 * Whether `holds` is true of the status on the instance that accepted a signal (at once: it applied it
 * before its 204) and on the other (once the announcement has come over Redis, a few milliseconds later).
 */
async function seenOnBoth(t: Test, accepted: TestPlatform, other: TestPlatform, holds: (s: Status) => boolean, what: string): Promise<void> {
  t.ok(holds(await status(accepted)), `${what} (the instance that accepted it)`);
  const seen = await until(`${what} on the other instance`, async () => (holds(await status(other)) ? true : undefined), 5000).catch(() => false);
  t.ok(seen, `${what} (the other instance)`);
}

t.test('draft invisible, confirmation at once on both instances, removals leave the status at once, assignments switch publication', async (t) => {
  const a = await startTestPlatform(t, { fixture: portalFixture() });
  const b = await startTestPlatform(t, { sameStoreAs: a });
  await grantPortalRoles(a);
  const staff = await signedIn(a, ACCOUNTS.staff);
  const { confirmed } = (await staff.call('GET', '/portal/v1/stations/BERLA/layout')).body;
  const current = confirmed.layout;
  const withN9 = {
    ...current,
    dispensers: current.dispensers.map((d: any, i: number) =>
      i === 0 ? { ...d, nozzles: [...d.nozzles, { external_id: 'N9', connector_type: 'H70', vehicle_side: 'left', is_certified: true, fuelling_options: ['700ld'] }] } : d,
    ),
  };

  // The draft: invisible to import and export on both instances.
  t.equal((await staff.call('PUT', '/portal/v1/stations/BERLA/layout/draft', withN9)).status, 200);
  for (const p of [a, b]) {
    const refused = await post(p, 'availability', availability([{ id: 'N9', available: true }]));
    t.equal(refused.status, 400, 'a draft-only nozzle is refused');
    t.match(refused.text, /Unknown nozzle identifier: N9/, 'with the spec\'s message');
    t.notOk((await record(p)).nozzles.includes('N9'), 'export shows no draft nozzle');
  }
  const before = await record(b);

  // Confirmed on A: in effect on B when the answer arrives.
  await new Promise((resolve) => setTimeout(resolve, 1100)); // Last-Modified has whole seconds
  t.equal((await staff.call('POST', '/portal/v1/stations/BERLA/layout/confirm', { expected_version: confirmed.version })).status, 200);
  t.equal((await post(b, 'availability', availability([{ id: 'N1', available: true }, { id: 'N2', available: true }, { id: 'N9', available: true }]))).status, 204, 'B accepts N9 at once');
  const after = await record(b);
  t.ok(after.nozzles.includes('N9'), 'B exports N9 at once');
  t.ok(Date.parse(after.lastModified!) > Date.parse(before.lastModified!), 'Last-Modified moved');
  await seenOnBoth(t, b, a, (s) => s.availability!.nozzles.some((n) => n.id === 'N9'), 'N9 in the status');

  // Pricing live for mon-1 (testing in the fixture), then P350's price published.
  t.equal((await staff.call('PUT', '/portal/v1/stations/BERLA/assignments/mon-1/pricing', { state: 'live' })).status, 200);
  t.equal((await post(b, 'pricing', [{ hrs: 'BERLA', datetime: ago(2), products: [{ id: 'P700', gross_price: '13.85' }, { id: 'P350', gross_price: '11.50' }] }])).status, 204);
  await seenOnBoth(t, b, a, (s) => JSON.stringify(s.pricing?.products.map((x) => x.id)) === '["P700","P350"]', 'both prices published');

  // P350 and nozzle N2 removed: gone from the status at once on both, and refused on B.
  const withoutP350 = {
    ...withN9,
    dispensers: withN9.dispensers.map((d: any) => ({ ...d, nozzles: d.nozzles.filter((n: any) => n.external_id !== 'N2') })),
    products: withN9.products.filter((p: any) => p.external_id !== 'P350'),
  };
  // The v1 fuel types must follow the layout (350ld is gone with N2).
  const rec = (await staff.call('GET', '/portal/v1/stations/BERLA')).body;
  const { hrs_id: _h, operator: _o, photo: _p, static_modified_at: _s, ...fields } = rec;
  t.equal((await staff.call('PUT', '/portal/v1/stations/BERLA/layout/draft', withoutP350)).status, 200);
  const contradicted = await staff.call('POST', '/portal/v1/stations/BERLA/layout/confirm', {});
  t.equal(contradicted.status, 422, 'not while the v1 fuel types still name 350car');
  t.ok((await record(b)).nozzles.includes('N2'), 'nothing changed');
  // Neither may go first while both name 350: the record alone cannot drop 350car either. A station
  // without v1 fuel types has nothing to contradict (the legacy import then refuses its signals).
  t.equal((await staff.call('PUT', '/portal/v1/stations/BERLA', { ...fields, v1_fuel_types: ['700car'] })).status, 422, 'the record alone cannot drop 350car');
  t.equal((await staff.call('PUT', '/portal/v1/stations/BERLA', { ...fields, v1_fuel_types: [] })).status, 200, 'no v1 fuel types');
  t.equal((await staff.call('POST', '/portal/v1/stations/BERLA/layout/confirm', {})).status, 200, 'now the layout without N2 and P350');
  for (const [name, p] of [['A', a], ['B', b]] as const) {
    const now = await status(p);
    t.same(now.pricing!.products.map((x) => x.id), ['P700'], `${name}: P350's price stopped at once`);
    t.notOk(now.availability!.nozzles.some((n) => n.id === 'N2'), `${name}: N2 left the status at once`);
  }
  const refusedPrice = await post(b, 'pricing', [{ hrs: 'BERLA', datetime: ago(1), products: [{ id: 'P350', gross_price: '11.50' }] }]);
  t.equal(refusedPrice.status, 400);
  t.match(refusedPrice.text, /Unknown product identifier: P350/);

  // Assignments: availability to testing on A; B's next signal is accepted, not published.
  t.equal((await staff.call('PUT', '/portal/v1/stations/BERLA/assignments/mon-1/availability', { state: 'testing' })).status, 200);
  t.equal((await post(b, 'availability', availability([{ id: 'N1', available: false }, { id: 'N9', available: false }]))).status, 204, 'accepted while testing');
  for (const p of [a, b]) t.equal((await status(p)).availability, null, 'no live source: nothing published, the testing signal neither');
  t.equal((await staff.call('PUT', '/portal/v1/stations/BERLA/assignments/mon-1/availability', { state: 'live' })).status, 200);
  t.equal((await post(b, 'availability', availability([{ id: 'N1', available: false }, { id: 'N9', available: false }]))).status, 204);
  await seenOnBoth(t, b, a, (s) => s.availability?.nozzles.find((n) => n.id === 'N1')?.available === false, 'live again: published');
});
