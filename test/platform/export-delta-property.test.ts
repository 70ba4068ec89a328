import t from 'tap';
import fc from 'fast-check';
import { unbounded } from '../../db/deadline.js';
import { lockChangeLog } from '../../db/queries/change-log.js';
import { deleteStations, touchOperatorStations, upsertOperator, upsertStationEvent, upsertStationRow, touchStation } from '../../db/queries/registry-file.js';
import { baseFixture, TOKENS } from '../helpers/fixtures.js';
import { get, startTestPlatform, type TestPlatform } from '../helpers/platform.js';
import { runs } from '../helpers/scale.js';

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
      }, null);
    } else if (s.kind === 'remove') {
      await deleteStations(tx, s.ids.map((i) => IDS[i]!));
    } else if (s.kind === 'operator') {
      if ((await upsertOperator(tx, { id: 'h2-demo', name: `H2 Demo ${s.name}`, email: 'ops@h2-demo.example' })) === 'changed') {
        await touchOperatorStations(tx, 'h2-demo');
      }
    } else {
      // An event changes the station's exported static content: the writer moves its version (no-op for a removed station).
      const [exists] = await tx`SELECT 1 FROM stations WHERE hrs_id = ${IDS[s.id]!}`;
      if (!exists) return;
      const event = { id: 'ev-p', kind: 'maintenance', starts_at: '2030-01-01T00:00:00Z', ends_at: null, description: `note ${s.n}` };
      if (await upsertStationEvent(tx, IDS[s.id]!, event)) await touchStation(tx, IDS[s.id]!);
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
