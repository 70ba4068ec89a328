/**
 * Delta sync, by example and by property.
 *
 * One file, one process: its parts share the loaded platform code. Each part is a subtest named after
 * what it covers.
 */
import fc from 'fast-check';
import t, { type Test } from 'tap';
import { unbounded } from '../../db/deadline.js';
import { lockChangeLog } from '../../db/queries/change-log.js';
import { deleteStations, touchOperatorStations, touchStation, upsertOperator, upsertStationEvent, upsertStationRow } from '../../db/queries/registry-file.js';
import { syncToken } from '../../src/domain/export-v2/delta.js';
import { type Actor, RegistryEditor } from '../../src/registry/editor.js';
import { changeLogUpkeep } from '../../workers/change-log/processor.js';
import { baseFixture, TOKENS } from '../helpers/fixtures.js';
import { documentAjv } from '../helpers/openapi.js';
import { get, startTestPlatform, type TestPlatform } from '../helpers/platform.js';
import { runs } from '../helpers/scale.js';

t.test('export-delta', async (t) => {
  /**
   * Export v2's delta (extension) beyond the property test (export-delta-property.test.ts): the 410 once
   * the log is pruned past the point asked from, clock skew (the token loses nothing where the client's
   * own clock would), paging while changes arrive, the 400s, the events' delta with ended and deleted,
   * the writers that must move a station (layouts, events, broadcasts) and their locks, the plain list
   * still conditional, and every answer valid against the served OpenAPI document.
   */

  const ENV = { EXPORT_V2_RATE_LIMIT_MINUTE: '1000000', EXPORT_V2_RATE_LIMIT_DAY: '1000000' };
  const PROBLEM = 'application/problem+json; charset=utf-8';
  const ACTOR: Actor = { id: 'admin', via: 'admin', userId: null };
  const IDS = ['QAAAA', 'QAAAB', 'QAAAC', 'QAAAD', 'QAAAE', 'QAAAF'];

  type Json = Record<string, any>;

  /** The base fixture with the extra stations QAAAA … QAAAF. */
  function fixture(names: Record<string, string> = {}) {
    const f = baseFixture();
    f.stations.push(...(IDS.map((hrs_id) => ({ hrs_id, operator: 'h2-demo', name: names[hrs_id] ?? `Station ${hrs_id}` })) as never[]));
    return f;
  }

  async function answer(p: TestPlatform, path: string, headers: Record<string, string> = {}): Promise<{ status: number; body: Json; res: Response }> {
    const res = await get(`${p.url}${path}`, TOKENS.export_v2, { headers });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : undefined, res };
  }

  async function ok(p: TestPlatform, path: string): Promise<Json> {
    const { status, body } = await answer(p, path);
    if (status !== 200) throw new Error(`GET ${path} answered ${status}: ${JSON.stringify(body)}`);
    return body;
  }

  async function problem(t: Test, p: TestPlatform, path: string, status: number, code: string, detail: RegExp): Promise<Json> {
    const { status: got, body, res } = await answer(p, path);
    t.equal(got, status, `${path}: ${status}`);
    t.equal(res.headers.get('content-type'), PROBLEM, `${path}: a problem body`);
    t.match(body, { type: 'about:blank', status, code, detail }, `${path}: ${code}`);
    return body;
  }

  /** Renames stations through the registry editor (one transaction each, as the portal does). */
  async function rename(p: TestPlatform, editor: RegistryEditor, ids: string[], suffix: string): Promise<void> {
    for (const id of ids) {
      const [row] = await p.sql<{ name: string }[]>`SELECT name FROM stations WHERE hrs_id = ${id}`;
      await editor.updateStation(ACTOR, id, { name: `${row!.name.split(' #')[0]} #${suffix}`, heavy_duty: false, opening_hours: null, details: {}, v1_fuel_types: [], time_zone: null } as never);
    }
  }

  const ids = (body: Json) => body.results.map((r: Json) => (r.deleted ? `-${r.hrs_id}` : r.hrs_id));

  /** Every page of a delta from `token`, `limit` at a time: the results and the last sync_token. */
  async function syncAll(p: TestPlatform, path: string, token: string, limit = 100): Promise<{ results: Json[]; token: string; pages: number }> {
    const results: Json[] = [];
    let url: string | null = `${p.url}${path}?since=${token}&limit=${limit}`;
    let last = token;
    let pages = 0;
    while (url) {
      const body = await ok(p, url.slice(p.url.length));
      results.push(...body.results);
      last = body.sync_token;
      url = body.next;
      pages++;
    }
    return { results, token: last, pages };
  }

  t.test('paging while changes arrive: no change skipped, none repeated, each station once at its latest change', async (t) => {
    const p = await startTestPlatform(t, { env: ENV, fixture: fixture() });
    const editor = new RegistryEditor(p.sql, async () => {}, p.clock);
    const { sync_token: start } = await ok(p, '/v2/hrs?limit=1');
    await rename(p, editor, IDS, '1');
    const first = await ok(p, `/v2/hrs?since=${start}&limit=2`);
    t.same(ids(first), ['QAAAA', 'QAAAB'], 'in the order they changed');
    t.equal(first.next, `${p.baseUrl}/v2/hrs?since=${first.sync_token}&limit=2`, 'next carries the position after the page\'s last change');
    t.match(first.results[0], { hrs_id: 'QAAAA', name: 'Station QAAAA #1' }, 'the record as it is now');
    // Changes arrive between the pages: one already listed, one not yet.
    await rename(p, editor, ['QAAAB', 'QAAAC'], '2');
    const rest = await syncAll(p, '/v2/hrs', first.sync_token, 2);
    t.same(rest.results.map((r) => r.hrs_id), ['QAAAD', 'QAAAE', 'QAAAF', 'QAAAB', 'QAAAC'], 'the rest, then B and C again at their new change; A not repeated');
    t.same(rest.results.filter((r) => r.hrs_id === 'QAAAC').map((r) => r.name), ['Station QAAAC #2'], 'C once, at its latest change');
    t.equal(rest.pages, 3);
    const after = await ok(p, `/v2/hrs?since=${rest.token}`);
    t.same(after, { next: null, sync_token: rest.token, results: [] }, 'the last page\'s token: nothing new, the same token back');
    // The tombstone, and a station removed and created again comes as it is now.
    const f = fixture({ QAAAA: 'Again' });
    f.stations = f.stations.filter((s) => s.hrs_id !== 'QAAAD');
    await p.load(f);
    const removed = await ok(p, `/v2/hrs?since=${rest.token}`);
    // The file renames every renamed station back: each once; the removal comes last (the loader removes after it writes).
    t.same(ids(removed), ['QAAAA', 'QAAAB', 'QAAAC', 'QAAAE', 'QAAAF', '-QAAAD']);
    t.match(removed.results, [{ hrs_id: 'QAAAA', name: 'Again' }]);
    const tombstone = removed.results.at(-1);
    t.match(tombstone, { hrs_id: 'QAAAD', deleted: true, deleted_at: /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/ });
    t.same(Object.keys(tombstone), ['hrs_id', 'deleted', 'deleted_at'], 'a tombstone is exactly its three fields');
    await p.load(fixture());
    const back = await ok(p, `/v2/hrs?since=${removed.sync_token}`);
    t.same(ids(back), ['QAAAA', 'QAAAD'], 'QAAAA renamed, QAAAD created again');
    t.match(back.results, [{ hrs_id: 'QAAAA', name: 'Station QAAAA' }, { hrs_id: 'QAAAD', name: 'Station QAAAD' }], 'recreated: its record, no tombstone');
  });

  t.test('clock skew: a client whose clock runs minutes ahead loses a change by its own clock, never by the token', async (t) => {
    const p = await startTestPlatform(t, { env: ENV, fixture: fixture() });
    const editor = new RegistryEditor(p.sql, async () => {}, p.clock);
    const list = await ok(p, '/v2/hrs?limit=500');
    // The client notes when it synced by its own clock, 3 minutes ahead of the platform's.
    const clientClock = new Date(Date.now() + 3 * 60_000).toISOString();
    await rename(p, editor, ['QAAAE'], 'skew');
    const byClock = await ok(p, `/v2/hrs?updated_since=${encodeURIComponent(clientClock)}`);
    t.same(byClock.results, [], 'updated_since from the skewed clock misses the change');
    const byToken = await ok(p, `/v2/hrs?since=${list.sync_token}`);
    t.same(ids(byToken), ['QAAAE'], 'the token does not');
    // A clock minutes behind sees the change too (and perhaps more: applied twice, harmless).
    const behindAt = new Date(Date.now() - 3 * 60_000).toISOString();
    const behind = await ok(p, `/v2/hrs?updated_since=${encodeURIComponent(behindAt)}`);
    t.ok(ids(behind).includes('QAAAE'), 'a clock behind gets it, with what came before');
    t.equal(ids(behind).at(-1), 'QAAAE', 'latest change last');
  });

  t.test('the 410: a point older than the log holds, after pruning and before its start', async (t) => {
    const p = await startTestPlatform(t, { env: ENV, fixture: fixture() });
    const editor = new RegistryEditor(p.sql, async () => {}, p.clock);
    const { config } = p.parts;
    const start = (await ok(p, '/v2/hrs?limit=1')).sync_token;
    // A new installation's log holds everything since its first station: a time from long before is everything.
    const [horizon] = await p.sql<{ started_at: Date; complete: boolean }[]>`SELECT started_at, complete FROM change_log_horizon`;
    t.equal(horizon!.complete, true, 'the log came with the schema');
    const everything = await ok(p, '/v2/hrs?updated_since=2020-01-01T00:00:00Z&limit=500');
    t.same(ids(everything).sort(), ids(await ok(p, '/v2/hrs?limit=500')).sort(), 'from years before the install, with nothing pruned: every station, no 410');
    // A log added to a registry that already had stations: a time before it began is refused, saying so.
    await p.sql`UPDATE change_log_horizon SET complete = false`;
    const early = await problem(t, p, '/v2/hrs?updated_since=2020-01-01T00:00:00Z', 410, 'sync_expired', /change log began at .*stations that existed before are not in it/);
    t.equal(early.oldest_updated_since, horizon!.started_at.toISOString(), 'the oldest time accepted: the log\'s start');
    t.notMatch(early.detail, /DELETED_RETENTION_DAYS/, 'not blamed on the retention: nothing was pruned');
    t.equal(early.title, 'Gone');
    await p.sql`UPDATE change_log_horizon SET complete = true`;
    // Everything so far becomes 40 days old (the log, its start); one station is removed 29 days ago.
    await rename(p, editor, ['QAAAB'], 'old');
    const f = fixture();
    f.stations = f.stations.filter((s) => s.hrs_id !== 'QAAAF');
    await p.load(f);
    await p.sql`UPDATE change_log SET at = at - interval '40 days' WHERE NOT (topic = 'station' AND change = 'deleted' AND hrs_id = 'QAAAF')`;
    await p.sql`UPDATE change_log SET at = at - interval '29 days' WHERE topic = 'station' AND change = 'deleted' AND hrs_id = 'QAAAF'`;
    await p.sql`UPDATE change_log_horizon SET started_at = started_at - interval '60 days'`;
    const middle = (await ok(p, '/v2/hrs?limit=1')).sync_token;
    await rename(p, editor, ['QAAAC'], 'new');
    // Status rows (webhooks only) are pruned after WEBHOOK_GIVE_UP_AFTER + 1 h, apart from the horizon.
    await p.sql`INSERT INTO change_log (seq, topic, hrs_id, entity, change, at, payload)
              VALUES (hrs_change_seq(), 'status', 'BERLA', 'BERLA/availability', 'changed', now() - interval '26 hours', '{}'),
                     (hrs_change_seq(), 'status', 'BERLA', 'BERLA/usage', 'changed', now() - interval '1 hour', '{}')`;
    const done = await changeLogUpkeep(unbounded(p.sql), config);
    t.ok(done.pruned > 0, `pruned ${done.pruned} station and event rows`);
    t.equal(done.pruned_statuses, 1, 'the status row older than 25 hours, not the newer one');
    t.equal((await changeLogUpkeep(unbounded(p.sql), config)).pruned, 0, 'pruning again prunes nothing');
    const [pruned] = await p.sql<{ pruned_at: Date }[]>`SELECT pruned_at FROM change_log_horizon`;
    const oldest = pruned!.pruned_at.toISOString();
    const byToken = await problem(t, p, `/v2/hrs?since=${start}`, 410, 'sync_expired', /up to .* have been pruned .*DELETED_RETENTION_DAYS/);
    t.equal(byToken.oldest_updated_since, oldest, 'the oldest time accepted: the newest pruned change\'s');
    const byTime = await problem(t, p, `/v2/hrs?updated_since=${encodeURIComponent(new Date(Date.now() - 45 * 86_400_000).toISOString())}`, 410, 'sync_expired', /Read the whole list again/);
    t.equal(byTime.oldest_updated_since, oldest);
    await problem(t, p, `/v2/hrs/events?since=${start}`, 410, 'sync_expired', /holds changes from/);
    const longBefore = await problem(t, p, '/v2/hrs?updated_since=2020-01-01T00:00:00Z', 410, 'sync_expired', /pruned/);
    t.equal(longBefore.oldest_updated_since, oldest, 'pruned: a time before the newest pruned change is refused, on a complete log too');
    // From the oldest time on: the tombstone (29 days old, kept) and the new change.
    t.same(ids(await ok(p, `/v2/hrs?updated_since=${encodeURIComponent(oldest)}`)), ['-QAAAF', 'QAAAC'], 'the tombstone kept, within the retention');
    t.same(ids(await ok(p, `/v2/hrs?since=${middle}`)), ['QAAAC'], 'a token after the horizon still works');
  });

  t.test('pruning never takes the log\'s head back: a token naming the newest row stays valid in a quiet log', async (t) => {
    const p = await startTestPlatform(t, { env: ENV, fixture: fixture() });
    await p.sql`INSERT INTO change_log (seq, topic, hrs_id, entity, change, at, payload)
              VALUES (hrs_change_seq(), 'status', 'BERLA', 'BERLA/availability', 'changed', now() - interval '30 hours', '{}'),
                     (hrs_change_seq(), 'status', 'BERLA', 'BERLA/usage', 'changed', now() - interval '26 hours', '{}')`;
    const token = (await ok(p, '/v2/hrs?limit=1')).sync_token;
    t.equal((await changeLogUpkeep(unbounded(p.sql), p.parts.config)).pruned_statuses, 1, 'the older status row only');
    const [left] = await p.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM change_log WHERE topic = 'status'`;
    t.equal(left!.n, 1, 'the newest row stays, old as it is');
    t.same(await ok(p, `/v2/hrs?since=${token}`), { next: null, sync_token: token, results: [] }, 'the token still names a position of the log');
  });

  t.test('400s: a malformed time or token, both at once, with offset or a geo filter, a bad limit', async (t) => {
    const p = await startTestPlatform(t, { env: ENV, fixture: fixture() });
    const token = (await ok(p, '/v2/hrs?limit=1')).sync_token;
    const cases: [string, RegExp][] = [
      ['updated_since=yesterday', /^updated_since: must be an ISO 8601 date-time with an offset/],
      ['updated_since=2026-02-30T00:00:00Z', /^updated_since: 2026-02-30 is not a date/],
      ['updated_since=2026-11-24T08:00:00', /^updated_since: must be an ISO 8601/],
      ['since=not-a-token', /^since: not a sync_token of this platform/],
      [`since=${Buffer.from('hrs-sync:1:-5').toString('base64url')}`, /^since: not a sync_token/],
      [`since=${syncToken(9_000_000_000)}`, /^since: this sync_token is ahead of the change log/],
      ['since=', /^since: not a sync_token/],
      [`since=${token}&updated_since=2026-11-24T08:00:00Z`, /^give either since \(a sync_token\) or updated_since/],
      [`since=${token}&since=${token}`, /^since: give it once/],
      [`since=${token}&offset=5`, /^offset: the delta is paged by position/],
      ['updated_since=2026-11-24T08:00:00Z&offset=0', /^offset: the delta is paged by position/],
      [`since=${token}&bbox=5.9,47.3,15.0,55.1`, /^bbox: the delta lists every changed station/],
      [`since=${token}&near=52.5,13.4&radius_km=10`, /^near: the delta lists every changed station/],
      [`since=${token}&limit=0`, /^limit: must be a whole number from 1 to 500\.$/],
      [`since=${token}&limit=501`, /^limit: must be a whole number from 1 to 500\.$/],
      [`since=${token}&limit=1e2`, /^limit: must be a whole number from 1 to 500\.$/],
    ];
    for (const [query, detail] of cases) await problem(t, p, `/v2/hrs?${query}`, 400, 'invalid_parameter', detail);
    await problem(t, p, '/v2/hrs/events', 400, 'invalid_parameter', /^give since \(the sync_token of a previous answer\) or updated_since/);
    await problem(t, p, '/v2/hrs/events?updated_since=soon', 400, 'invalid_parameter', /^updated_since: must be/);
    await problem(t, p, `/v2/hrs/events?since=${token}&offset=1`, 400, 'invalid_parameter', /unknown parameter\(s\): offset/);
    // A station's own events are still its own route (hrs_id: five capitals), not the delta's.
    const own = await ok(p, '/v2/hrs/BERLA/events');
    t.match(own, [{ id: 'ev-1' }], '/v2/hrs/{hrs_id}/events unchanged');
    t.equal((await answer(p, '/v2/hrs/EVENT')).status, 404, 'a five-letter id is a station, not the delta');
  });

  t.test('events delta: created, changed, ended (swept, idempotent) and deleted, with its station too', async (t) => {
    const p = await startTestPlatform(t, { env: ENV, fixture: fixture() });
    const editor = new RegistryEditor(p.sql, async () => {}, p.clock);
    const token = (await ok(p, '/v2/hrs?limit=1')).sync_token;
    const past = new Date(Date.now() - 3600_000).toISOString();
    await editor.createEvent(ACTOR, 'QAAAA', { id: 'ev-a', kind: 'maintenance', starts_at: past, ends_at: null, description: 'Running' });
    await editor.createEvent(ACTOR, 'QAAAB', { id: 'ev-b', kind: 'limited-service', starts_at: '2030-01-01T00:00:00.000Z', ends_at: null, description: 'Later' });
    await editor.changeEvent(ACTOR, 'QAAAB', 'ev-b', { description: 'Later, changed' });
    await editor.createEvent(ACTOR, 'QAAAC', { id: 'ev-c', kind: 'maintenance', starts_at: '2030-01-01T00:00:00.000Z', ends_at: null, description: 'Gone soon' });
    const created = await ok(p, `/v2/hrs/events?since=${token}`);
    t.same(created.results.map((r: Json) => [r.hrs_id, r.event.id, r.change]), [['QAAAA', 'ev-a', 'created'], ['QAAAB', 'ev-b', 'changed'], ['QAAAC', 'ev-c', 'created']]);
    t.same(created.results[1].event, { id: 'ev-b', kind: 'limited-service', starts_at: '2030-01-01T00:00:00.000Z', ends_at: null, description: 'Later, changed' }, 'the event as export v2 lists it');
    t.match(created.results[0].changed_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    // Ended: the end passes (the editor ends it now); the sweep before the read writes `ended` once.
    await editor.endEvent(ACTOR, 'QAAAA', 'ev-a');
    // Deleted: by the registry file (ev-c left out), and with its station (QAAAB removed).
    const f = fixture();
    f.stations = f.stations.filter((s) => s.hrs_id !== 'QAAAB');
    // The file keeps QAAAA's event as it is (a file replaces a station's events).
    (f.stations.find((s) => s.hrs_id === 'QAAAA') as Json).events = await editor.events('QAAAA');
    await p.load(f);
    const ended = await ok(p, `/v2/hrs/events?since=${created.sync_token}`);
    t.same(ended.results.map((r: Json) => [r.hrs_id, r.event.id, r.change]), [['QAAAC', 'ev-c', 'deleted'], ['QAAAB', 'ev-b', 'deleted'], ['QAAAA', 'ev-a', 'ended']]);
    t.same(ended.results[0].event, { id: 'ev-c' }, 'a deleted event: its id');
    t.match(ended.results[2].event, { id: 'ev-a', ends_at: /Z$/ });
    const rows = async () => (await p.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM change_log WHERE change = 'ended'`)[0]!.n;
    t.equal(await rows(), 1, 'one ended row');
    await Promise.all([changeLogUpkeep(unbounded(p.sql), p.parts.config), changeLogUpkeep(unbounded(p.sql), p.parts.config), ok(p, `/v2/hrs/events?since=${token}`)]);
    t.equal(await rows(), 1, 'sweeps at once, by the job and by readers, write no second one');
    t.same((await ok(p, `/v2/hrs/events?since=${ended.sync_token}`)).results, [], 'nothing after the last token');
    // By time, from the log's start: the fixture's own event's creation and the rest, two at a time.
    const [horizon] = await p.sql<{ started_at: Date }[]>`SELECT started_at FROM change_log_horizon`;
    const byTime = await ok(p, `/v2/hrs/events?updated_since=${encodeURIComponent(horizon!.started_at.toISOString())}&limit=2`);
    t.equal(byTime.results.length, 2, 'limit');
    t.type(byTime.next, 'string', 'more to come');
    // An event whose end is moved later and passes again ends again.
    await p.sql`UPDATE station_events SET ends_at = now() - interval '1 second' WHERE hrs_id = 'QAAAA' AND id = 'ev-a'`;
    const again = await ok(p, `/v2/hrs/events?since=${ended.sync_token}`);
    t.same(again.results.map((r: Json) => r.change), ['ended'], 'a new end, a new ended change (the latest of that event)');
  });

  t.test('writers: layout confirmation, events, broadcasts and photos move the station; sandbox stations never appear', async (t) => {
    const p = await startTestPlatform(t, { env: ENV, fixture: fixture() });
    const editor = new RegistryEditor(p.sql, async () => {}, p.clock);
    let token = (await ok(p, '/v2/hrs?limit=1')).sync_token;
    const changed = async () => {
      const body = await ok(p, `/v2/hrs?since=${token}`);
      token = body.sync_token;
      return ids(body);
    };
    await editor.confirmDraft(ACTOR, 'HAMBG');
    t.same(await changed(), ['HAMBG'], 'a confirmed layout');
    await editor.putDraft(ACTOR, 'BERLA', { dispensers: [], storages: [], products: [] } as never);
    t.same(await changed(), [], 'a draft is not exported: no change');
    await editor.createEvent(ACTOR, 'BERLA', { id: 'ev-w', kind: 'maintenance', starts_at: '2030-01-01T00:00:00.000Z', ends_at: null, description: '' });
    t.same(await changed(), ['BERLA'], 'an event');
    await editor.changeEvent(ACTOR, 'BERLA', 'ev-w', { description: 'edited' });
    t.same(await changed(), ['BERLA'], 'an event edited');
    await editor.broadcastEvent(ACTOR, 'h2-demo', ['QAAAE', 'QAAAD'], { id: 'ev-all', kind: 'maintenance', starts_at: '2030-01-01T00:00:00.000Z', ends_at: null, description: '' });
    t.same(await changed(), ['QAAAD', 'QAAAE'], 'a broadcast, one change per station');
    const [sandbox] = await p.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM change_log c JOIN stations s ON s.hrs_id = c.hrs_id WHERE s.sandbox`;
    t.equal(sandbox!.n, 0, 'the sandbox\'s sample stations are never in the log');
  });

  t.test('writers lock the change log before station rows: a load and many edits at once never deadlock', async (t) => {
    const p = await startTestPlatform(t, { env: ENV, fixture: fixture() });
    const editor = new RegistryEditor(p.sql, async () => {}, p.clock);
    const token = (await ok(p, '/v2/hrs?limit=1')).sync_token;
    for (let round = 0; round < 4; round++) {
      const names = Object.fromEntries(IDS.map((id) => [id, `Round ${round}`]));
      await Promise.all([
        p.load(fixture(names)),
        rename(p, editor, [...IDS].reverse(), `r${round}`),
        editor.broadcastEvent(ACTOR, 'h2-demo', IDS, { id: `ev-${round}`, kind: 'maintenance', starts_at: '2030-01-01T00:00:00.000Z', ends_at: null, description: '' }),
      ]);
    }
    const all = await syncAll(p, '/v2/hrs', token, 500);
    t.same([...new Set(all.results.map((r) => r.hrs_id))].sort(), IDS, 'every station changed, each once');
    const list = await ok(p, '/v2/hrs?limit=500');
    for (const id of IDS) t.same(all.results.find((r) => r.hrs_id === id), list.results.find((r: Json) => r.hrs_id === id), `${id} as the list has it`);
  });

  t.test('the plain list: still conditional, its sync_token read before the page; answers valid against the document', async (t) => {
    const p = await startTestPlatform(t, { env: ENV, fixture: fixture() });
    const editor = new RegistryEditor(p.sql, async () => {}, p.clock);
    const first = await answer(p, '/v2/hrs?limit=2');
    const lastModified = first.res.headers.get('last-modified')!;
    const again = await answer(p, '/v2/hrs?limit=2', { 'If-Modified-Since': lastModified });
    t.equal(again.status, 304, 'not modified: 304, no body');
    t.equal(again.body, undefined);
    t.equal(first.res.headers.get('cache-control'), 'no-cache', 'the list: revalidate');
    // The delta is not conditional: the same header changes nothing.
    const delta = await answer(p, `/v2/hrs?since=${first.body.sync_token}`, { 'If-Modified-Since': lastModified });
    t.equal(delta.status, 200);
    t.equal(delta.res.headers.get('cache-control'), 'no-store');
    t.equal(delta.res.headers.get('last-modified'), null);
    p.clock.advance(1000); // Last-Modified has whole seconds
    await rename(p, editor, ['BERLA'], 'x');
    await editor.createEvent(ACTOR, 'BERLA', { id: 'ev-doc', kind: 'maintenance', starts_at: '2030-01-01T00:00:00.000Z', ends_at: null, description: '' });
    const changed = await answer(p, '/v2/hrs?limit=2', { 'If-Modified-Since': lastModified });
    t.equal(changed.status, 200, 'changed: 200');
    t.not(changed.body.sync_token, first.body.sync_token, 'a new token');
    t.same(ids(await ok(p, `/v2/hrs?since=${first.body.sync_token}`)), ['BERLA'], 'the first page\'s token leads to the change');
    const geo = await answer(p, '/v2/hrs?limit=2', { Accept: 'application/geo+json' });
    t.match(geo.body, { type: 'FeatureCollection', sync_token: changed.body.sync_token });

    const res = await fetch(`${p.url}/v2/doc/schema`);
    const document = (await res.json()) as Json;
    const { check } = documentAjv(document);
    const schema = (name: string) => ['components', 'schemas', name];
    t.equal(check(schema('StationListAnswer'), changed.body), null, 'the list\'s page');
    t.equal(check(schema('StationListAnswer'), delta.body), null, 'the delta\'s page');
    t.equal(check(schema('StationFeatureCollection'), geo.body), null, 'the GeoJSON page');
    const f = fixture();
    f.stations = f.stations.filter((s) => s.hrs_id !== 'QAAAF');
    await p.load(f);
    const tombstones = await ok(p, `/v2/hrs?since=${changed.body.sync_token}`);
    t.equal(check(schema('StationDelta'), tombstones), null, 'a page with a tombstone');
    t.not(check(schema('StationTombstone'), { ...tombstones.results[0], name: 'x' }), null, 'the check can fail');
    const events = await ok(p, `/v2/hrs/events?since=${first.body.sync_token}`);
    t.ok(events.results.length > 0);
    t.equal(check(schema('EventDelta'), events), null, 'the events\' delta');
    // A log added to a registry that had stations already: a time before it began is a 410.
    await p.sql`UPDATE change_log_horizon SET complete = false`;
    const gone = await answer(p, '/v2/hrs?updated_since=2001-01-01T00:00:00Z');
    await p.sql`UPDATE change_log_horizon SET complete = true`;
    t.equal(gone.status, 410);
    t.equal(check(schema('SyncExpired'), gone.body), null, 'the 410');
    const operations = document.paths as Json;
    t.ok(operations['/v2/hrs/events']?.get, 'GET /v2/hrs/events is documented');
    t.ok(operations['/v2/hrs/{hrs_id}/events']?.get, 'beside GET /v2/hrs/{hrs_id}/events');
    t.same(operations['/v2/hrs'].get.parameters.map((x: Json) => x.$ref?.split('/').pop() ?? x.name).filter((n: string) => n === 'since' || n === 'updated_since'), ['since', 'updated_since']);
    t.ok(operations['/v2/hrs'].get.responses['410'], 'the 410 documented');
    t.match(document.info.description, /## Extension: delta sync/);
  });
});

t.test('export-delta-property', async (t) => {
  /**
   * Export v2's delta as a mirror uses it: random sequences of creations, changes and removals of
   * stations, written through the registry's own writers (db/queries/registry-file.ts, in transactions
   * that take the change log's lock first, as the loader does), with a client that reads the whole list,
   * then syncs over HTTP at random points with random page sizes, sometimes a page at a time with
   * changes landing between its pages. However they interleave, once the client has synced after the
   * last change its copy equals the full list: every record as the list shows it, no removed station left.
   */

  const RUNS = Number(process.env.PROPERTY_RUNS ?? runs(100));
  const ENV = { EXPORT_V2_RATE_LIMIT_MINUTE: '1000000', EXPORT_V2_RATE_LIMIT_DAY: '1000000' };

  /** The stations the runs play with (besides the fixture's BERLA and HAMBG, which only the operator's rename touches). */
  const IDS = ['QAAAA', 'QAAAB', 'QAAAC', 'QAAAD', 'QAAAE', 'QAAAF'];

  type Step =
    | { kind: 'put'; id: number; name: number; heavy: boolean }
    | { kind: 'remove'; ids: number[] }
    | { kind: 'operator'; name: number }
    | { kind: 'event'; id: number; n: number }
    | { kind: 'page'; limit: number };

  const step: fc.Arbitrary<Step> = fc.oneof(
    { weight: 4, arbitrary: fc.record({ kind: fc.constant('put' as const), id: fc.nat(IDS.length - 1), name: fc.nat(3), heavy: fc.boolean() }) },
    { weight: 2, arbitrary: fc.record({ kind: fc.constant('remove' as const), ids: fc.uniqueArray(fc.nat(IDS.length - 1), { minLength: 1, maxLength: 3 }) }) },
    { weight: 1, arbitrary: fc.record({ kind: fc.constant('operator' as const), name: fc.nat(3) }) },
    { weight: 1, arbitrary: fc.record({ kind: fc.constant('event' as const), id: fc.nat(IDS.length - 1), n: fc.nat(2) }) },
    { weight: 4, arbitrary: fc.record({ kind: fc.constant('page' as const), limit: fc.integer({ min: 1, max: 4 }) }) },
  );

  type Json = Record<string, any>;

  async function page(p: TestPlatform, url: string): Promise<Json> {
    const res = await get(url, TOKENS.export_v2);
    if (res.status !== 200) throw new Error(`GET ${url} answered ${res.status}: ${await res.text()}`);
    return res.json();
  }

  /** The whole plain list, page by page (`limit` each), with the first page's sync token. */
  async function wholeList(p: TestPlatform, limit: number): Promise<{ records: Map<string, string>; token: string }> {
    const records = new Map<string, string>();
    let url: string | null = `${p.url}/v2/hrs?limit=${limit}`;
    let token: string | undefined;
    while (url) {
      const body = await page(p, url);
      token ??= body.sync_token;
      for (const record of body.results) records.set(record.hrs_id, JSON.stringify(record));
      url = body.next;
    }
    return { records, token: token! };
  }

  /** A mirror: its copy, its token, and the next page when it is in the middle of a sync. */
  class Mirror {
    next: string | null = null;
    pages = 0;
    constructor(
      private readonly p: TestPlatform,
      readonly copy: Map<string, string>,
      private token: string,
    ) {}

    /** One page: the next of the sync under way, or the first of a new one from the token. */
    async page(limit: number): Promise<void> {
      const url = this.next ?? `${this.p.url}/v2/hrs?since=${this.token}&limit=${limit}`;
      const body = await page(this.p, url);
      this.pages++;
      for (const item of body.results) {
        if (item.deleted === true) this.copy.delete(item.hrs_id);
        else this.copy.set(item.hrs_id, JSON.stringify(item));
      }
      this.token = body.sync_token;
      this.next = body.next;
    }

    async finish(limit: number): Promise<void> {
      do await this.page(limit);
      while (this.next !== null);
    }
  }

  /** Applies one registry change through the registry file's writers, in a transaction that locks the change log first. */
  async function apply(p: TestPlatform, s: Exclude<Step, { kind: 'page' }>): Promise<void> {
    await unbounded(p.sql).begin(async (tx) => {
      await lockChangeLog(tx);
      if (s.kind === 'put') {
        await upsertStationRow(tx, {
          hrs_id: IDS[s.id]!, operator: 'h2-demo', name: `Station ${s.id} v${s.name}`, heavy_duty: s.heavy, opening_hours: null,
          details: { city: `City ${s.name}` }, time_zone: null, sandbox: false,
        }, null, p.clock);
      } else if (s.kind === 'remove') {
        await deleteStations(tx, s.ids.map((i) => IDS[i]!));
      } else if (s.kind === 'operator') {
        if ((await upsertOperator(tx, { id: 'h2-demo', name: `H2 Demo ${s.name}`, email: 'ops@h2-demo.example' })) === 'changed') {
          await touchOperatorStations(tx, 'h2-demo', p.clock);
        }
      } else {
        // An event changes the station's exported static content: the writer moves its version (no-op for a removed station).
        const [exists] = await tx`SELECT 1 FROM stations WHERE hrs_id = ${IDS[s.id]!}`;
        if (!exists) return;
        const event = { id: 'ev-p', kind: 'maintenance', starts_at: '2030-01-01T00:00:00Z', ends_at: null, description: `note ${s.n}` };
        if (await upsertStationEvent(tx, IDS[s.id]!, event)) await touchStation(tx, IDS[s.id]!, p.clock);
      }
    });
  }

  t.test('a mirror that syncs by sync_token at random points ends equal to the full list', async (t) => {
    const p = await startTestPlatform(t, { env: ENV, fixture: baseFixture() });
    const started = performance.now();
    let checked = 0;
    let pages = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 40 }), fc.integer({ min: 1, max: 5 }), async (steps, firstLimit) => {
        const start = await wholeList(p, firstLimit);
        const mirror = new Mirror(p, start.records, start.token);
        for (const s of steps) {
          if (s.kind === 'page') await mirror.page(s.limit);
          else await apply(p, s);
        }
        await mirror.finish(3);
        const full = await wholeList(p, 500);
        pages += mirror.pages;
        checked++;
        if (full.records.size !== mirror.copy.size || [...full.records].some(([id, record]) => mirror.copy.get(id) !== record)) {
          throw new Error(`the copy differs from the list: copy ${[...mirror.copy.keys()].sort().join(',')}, list ${[...full.records.keys()].sort().join(',')}`);
        }
      }),
      { numRuns: RUNS, endOnFailure: true },
    );
    t.equal(checked, RUNS, `${RUNS} random histories, each ending with the copy equal to the list`);
    t.ok(pages > RUNS, `the mirrors read ${pages} delta pages`);
    t.ok(performance.now() - started < 60_000, `within a minute (${Math.round(performance.now() - started)} ms)`);
  });

  t.test('the property can fail: a mirror that ignores tombstones keeps a removed station', async (t) => {
    const p = await startTestPlatform(t, { env: ENV, fixture: baseFixture() });
    await apply(p, { kind: 'put', id: 0, name: 1, heavy: false });
    const start = await wholeList(p, 2);
    t.ok(start.records.has('QAAAA'));
    await apply(p, { kind: 'remove', ids: [0] });
    const body = await page(p, `${p.url}/v2/hrs?since=${start.token}`);
    t.same(body.results.map((r: Json) => [r.hrs_id, r.deleted]), [['QAAAA', true]], 'the removal comes as a tombstone');
    const careless = new Map(start.records);
    for (const item of body.results) if (!item.deleted) careless.set(item.hrs_id, JSON.stringify(item));
    const full = await wholeList(p, 500);
    t.not(careless.size, full.records.size, 'a copy that skips tombstones differs from the list');
  });
});
