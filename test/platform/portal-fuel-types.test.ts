/**
 * A draft layout against the station's v1 fuel types through the portal's API: the rule ties them both
 * ways (every v1 fuel type has a nozzle offering its option; every option with a v1 code is among the v1
 * fuel types), so removing the last 350ld nozzle or adding the first one can only be confirmed together
 * with new v1 fuel types. The draft's answer and the diff say which (`v1_fuel_types.agreeing`); the
 * confirmation carries them (`v1_fuel_types`) in its own transaction; the old body still works; a
 * refused confirmation changes nothing (neither layout nor v1 fuel types).
 */
import t from 'tap';
import { checkFuelTypesAgainst } from '../../src/domain/portal/fuel-types.js';
import { startTestPlatform } from '../helpers/platform.js';
import { ACCOUNTS, grantPortalRoles, portalFixture, signedIn } from '../helpers/portal.js';

const N3 = { external_id: 'N3', connector_type: 'H35', vehicle_side: 'right', is_certified: true, fuelling_options: ['350ld'] };

t.test('the confirmation carries the v1 fuel types a draft needs, both directions, in one transaction', async (t) => {
  const p = await startTestPlatform(t, { fixture: portalFixture() });
  await grantPortalRoles(p);
  const staff = await signedIn(p, ACCOUNTS.staff);
  const BERLA = '/portal/v1/stations/BERLA';
  const state = async () => {
    const [record, layouts] = await Promise.all([staff.call('GET', BERLA), staff.call('GET', `${BERLA}/layout`)]);
    return { v1: record.body.v1_fuel_types, version: layouts.body.confirmed.version, draft: layouts.body.draft !== null };
  };
  const { confirmed } = (await staff.call('GET', `${BERLA}/layout`)).body;
  t.same((await state()).v1, ['350car', '700car'], 'BERLA starts with 700car and 350car (N1 700ld, N2 350ld)');

  // Removing the last 350ld nozzle: 350car has no nozzle any more.
  const without350 = {
    ...confirmed.layout,
    dispensers: confirmed.layout.dispensers.map((d: any) => ({ ...d, nozzles: d.nozzles.filter((n: any) => n.external_id !== 'N2') })),
    products: confirmed.layout.products.filter((x: any) => x.external_id !== 'P350'),
  };
  const saved = await staff.call('PUT', `${BERLA}/layout/draft`, without350);
  t.equal(saved.status, 200, 'the draft is saved');
  t.same(saved.body.v1_fuel_types, {
    current: ['700car', '350car'],
    contradictions: ['v1 fuel type 350car has no nozzle with fuelling option 350ld on the draft layout'],
    agreeing: ['700car'],
    add: [],
    remove: ['350car'],
  }, 'the draft\'s answer names the conflict and the v1 fuel types that agree');
  t.same((await staff.call('GET', `${BERLA}/layout/diff`)).body.v1_fuel_types, saved.body.v1_fuel_types, 'and so does the diff');

  const old = await staff.call('POST', `${BERLA}/layout/confirm`, { expected_version: 1 });
  t.equal(old.status, 422, 'the old body: refused, the draft contradicts the v1 fuel types');
  t.match(old.body.detail, /350car has no nozzle/);
  const wrong = await staff.call('POST', `${BERLA}/layout/confirm`, { expected_version: 1, v1_fuel_types: ['700car', '350bus'] });
  t.equal(wrong.status, 422, 'v1 fuel types that disagree with the draft: refused');
  t.match(wrong.body, { code: 'layout_contradiction', detail: /^v1_fuel_types: v1 fuel type 350bus has no nozzle with fuelling option 350hd/ });
  t.match(wrong.headers.get('content-type'), /^application\/problem\+json/);
  const bad = await staff.call('POST', `${BERLA}/layout/confirm`, { expected_version: 1, v1_fuel_types: ['350ld'] });
  t.equal(bad.status, 400, 'a v1 fuel type that is not one: a 400');
  t.match(bad.body.detail, /v1_fuel_types\.0: must be one of 700car, 350car, 350bus/);
  const stale = await staff.call('POST', `${BERLA}/layout/confirm`, { expected_version: 0, v1_fuel_types: ['700car'] });
  t.equal(stale.status, 409, 'a stale version with v1 fuel types: a 409');
  t.same(await state(), { v1: ['350car', '700car'], version: 1, draft: true }, 'nothing of the refused confirmations was applied');

  const both = await staff.call('POST', `${BERLA}/layout/confirm`, { expected_version: 1, v1_fuel_types: saved.body.v1_fuel_types.agreeing });
  t.equal(both.status, 200, 'the layout and the v1 fuel types confirmed together');
  t.same(await state(), { v1: ['700car'], version: 2, draft: false }, 'both changed');

  // Adding the first 350ld nozzle again: 350car is missing.
  const with350 = { ...without350, dispensers: without350.dispensers.map((d: any, i: number) => (i === 0 ? { ...d, nozzles: [...d.nozzles, N3] } : d)) };
  t.equal((await staff.call('PUT', `${BERLA}/layout/draft`, with350)).status, 200);
  const diff = (await staff.call('GET', `${BERLA}/layout/diff`)).body;
  t.same(diff.diff.nozzles.added, ['N3']);
  t.same(diff.v1_fuel_types, {
    current: ['700car'],
    contradictions: ['fuelling option 350ld on the draft layout is missing from the v1 fuel types (350car)'],
    agreeing: ['700car', '350car'],
    add: ['350car'],
    remove: [],
  }, 'the diff: 350car is to be added');
  const tick = await staff.call('PUT', BERLA, { ...(await staff.call('GET', BERLA)).body, v1_fuel_types: ['700car', '350car'] });
  t.equal(tick.status, 422, 'ticking 350car on the record alone is refused (no confirmed nozzle offers it yet)');
  t.equal((await staff.call('POST', `${BERLA}/layout/confirm`, { expected_version: 2, v1_fuel_types: diff.v1_fuel_types.agreeing })).status, 200);
  t.same(await state(), { v1: ['350car', '700car'], version: 3, draft: false }, 'N3 and 350car are in effect together');

  // A draft that agrees: the old body still confirms it, and the v1 fuel types stay.
  const certified = { ...with350, dispensers: with350.dispensers.map((d: any) => ({ ...d, is_certified: !d.is_certified })) };
  const agrees = await staff.call('PUT', `${BERLA}/layout/draft`, certified);
  t.same(agrees.body.v1_fuel_types, { current: ['700car', '350car'], contradictions: [], agreeing: null, add: [], remove: [] }, 'no conflict');
  t.equal((await staff.call('POST', `${BERLA}/layout/confirm`, { expected_version: 3 })).status, 200, 'the old body confirms it');
  t.equal((await staff.call('POST', `${BERLA}/layout/confirm`)).status, 409, 'no body at all: still taken (no draft left)');
  t.same(await state(), { v1: ['350car', '700car'], version: 4, draft: false });

  // The audit trail: the v1 fuel types' change is recorded with the confirmation that made it.
  const audit = (await staff.call('GET', `${BERLA}/audit?limit=100`)).body.entries as { action: string; before: any; after: any }[];
  const updates = audit.filter((e) => e.action === 'station.update');
  t.same(updates.map((e) => [e.before.v1_fuel_types, e.after.v1_fuel_types]).reverse(), [[['350car', '700car'], ['700car']], [['700car'], ['350car', '700car']]], 'both changes audited');
  t.equal(audit.filter((e) => e.action === 'layout.confirm').length, 3, 'three confirmations');
});

t.test('the check alone: either side empty agrees; 700hd has no v1 code; the agreeing set may be empty', async (t) => {
  const layout = (...options: string[][]) => ({
    dispensers: [{ external_id: 'D', is_certified: true, nozzles: options.map((o, i) => ({ external_id: `N${i}`, connector_type: 'H70', vehicle_side: 'left', is_certified: true, fuelling_options: o })) }],
    storages: [],
    products: [],
  });
  t.same(checkFuelTypesAgainst(layout(['700ld'], ['350hd']), []), { current: [], contradictions: [], agreeing: null, add: [], remove: [] }, 'no v1 fuel types: nothing to compare');
  t.same(checkFuelTypesAgainst(layout(), ['700car']), { current: ['700car'], contradictions: [], agreeing: null, add: [], remove: [] }, 'no nozzle: nothing to compare');
  t.same(checkFuelTypesAgainst(null, ['700car']).agreeing, null, 'no layout: nothing to compare');
  t.same(checkFuelTypesAgainst(layout(['700ld', '700hd']), ['700car']).agreeing, null, '700hd needs no v1 fuel type');
  t.same(checkFuelTypesAgainst(layout(['700hd']), ['700car']), {
    current: ['700car'],
    contradictions: ['v1 fuel type 700car has no nozzle with fuelling option 700ld on the draft layout'],
    agreeing: [],
    add: [],
    remove: ['700car'],
  }, 'only 700hd left: the v1 fuel types that agree are none');
  t.same(checkFuelTypesAgainst(layout(['700ld'], ['350hd']), ['700car', '350car']), {
    current: ['700car', '350car'],
    contradictions: [
      'v1 fuel type 350car has no nozzle with fuelling option 350ld on the draft layout',
      'fuelling option 350hd on the draft layout is missing from the v1 fuel types (350bus)',
    ],
    agreeing: ['700car', '350bus'],
    add: ['350bus'],
    remove: ['350car'],
  }, 'one added and one removed at once');
});
