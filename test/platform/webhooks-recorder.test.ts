/**
 * The change log's `status` and `option` rows that every server instance records for webhooks
 * (src/push/webhooks/recorder.ts): nothing without a subscription that wants them, a row per status change
 * and per changed five-state value of a fuelling option after an import v2 signal, the freshness
 * fallback's rows, and one row per change when two instances on one database both see it; on its own
 * (a registry, a live status and a PostgreSQL of the test's): the buffer while PostgreSQL fails, the
 * change keys, the options' rows as a station closes and opens.
 */
import t from 'tap';
import { randomBytes } from 'node:crypto';
import type { RecordedChange } from '../../db/queries/recorded-changes.js';
import type { StatusChange } from '../../machines/status-change.js';
import type { StationEntry } from '../../src/domain/stations.js';
import { createLogger } from '../../src/config/log.js';
import { ChangeRecorder, FLUSH_DELAY_MS, RETRY_MS, TOPICS_EVERY_MS } from '../../src/push/webhooks/recorder.js';
import { ADMIN_TOKEN, get, logCapture, postSignals, startTestPlatform, type TestPlatform } from '../helpers/platform.js';
import { baseFixture, berlaAssignments, TOKENS } from '../helpers/fixtures.js';
import { until } from '../helpers/wait.js';

function fixture() {
  const f = baseFixture();
  f.assignments = berlaAssignments();
  return f;
}

interface LogRow {
  seq: string;
  topic: string;
  hrs_id: string;
  entity: string;
  change: string;
  change_key: string | null;
  payload: Record<string, any>;
}

const rows = (p: TestPlatform) =>
  p.sql<LogRow[]>`SELECT seq, topic, hrs_id, entity, change, change_key, payload FROM change_log WHERE topic IN ('status', 'option') ORDER BY seq`;

/** An active subscription of alice's for `kinds` (the columns the recorder reads; the secret is no concern here). */
async function subscribe(p: TestPlatform, kinds: string[]): Promise<string> {
  const id = `wh_${randomBytes(8).toString('hex')}`;
  await p.sql`
    INSERT INTO webhook_subscriptions (id, user_id, url, kinds, cursor_seq, secret_sealed)
    VALUES (${id}, 'alice', 'http://127.0.0.1:9/hook', ${kinds}, 0, ${Buffer.from([0])})`;
  return id;
}

/** Waits until the instance records exactly `topics` (it reads the subscriptions every TOPICS_EVERY_MS). */
async function recording(p: TestPlatform, topics: string[]): Promise<void> {
  const want = [...topics].sort().join();
  await until(
    `the recorder to take topics ${want}`,
    () => {
      const told = p.logs.lines.filter((l) => l.msg === 'webhook changes recorded for these topics').at(-1);
      return told && [...(told.topics as string[])].sort().join() === want ? true : undefined;
    },
    TOPICS_EVERY_MS + 5000,
  );
}

const ago = (seconds: number) => new Date(Date.now() - seconds * 1000).toISOString();

const availability = (datetime: string, n1 = true) => [
  { hrs: 'BERLA', datetime, nozzles: [{ id: 'N1', available: n1 }, { id: 'N2', available: false }], station: { maintenance: false, limitedly_available: false } },
];

async function statusOf(p: TestPlatform): Promise<Record<string, any>> {
  const res = await get(`${p.url}/v2/hrs/BERLA/status`, TOKENS.export_v2);
  return (await res.json()) as Record<string, any>;
}

/** The webhook change counter of an instance's /metrics, by `topic outcome`. */
async function counted(p: TestPlatform): Promise<Record<string, number>> {
  const text = await (await get(`${p.url}/metrics`, ADMIN_TOKEN)).text();
  const out: Record<string, number> = {};
  for (const m of text.matchAll(/^hrs_webhook_change_rows_total\{topic="(\w+)",outcome="(\w+)"\} (\d+)/gm)) out[`${m[1]} ${m[2]}`] = Number(m[3]);
  return out;
}

const settle = () => new Promise((resolve) => setTimeout(resolve, 400));

t.test('nothing without a subscription; a signal gives the status row and a row per fuelling option', async (t) => {
  const p = await startTestPlatform(t, { fixture: fixture() });
  await postSignals(p, 'availability', availability(ago(60)));
  await settle();
  t.same(await rows(p), [], 'no subscription: no rows');

  // Only station_status wanted: status rows, no option rows.
  await subscribe(p, ['station_status', 'events']);
  await recording(p, ['status']);
  const first = ago(30);
  await postSignals(p, 'availability', availability(first));
  const status = await until('the status row', async () => ((await rows(p)).length > 0 ? rows(p) : undefined));
  await settle();
  t.equal((await rows(p)).length, 1, 'one row, no option rows');
  const published = await statusOf(p);
  t.match(status[0], { topic: 'status', hrs_id: 'BERLA', entity: 'BERLA/availability', change: 'changed' });
  t.same(status[0]!.payload, { category: 'availability', freshness: 'fresh', status: published.availability }, 'the section as GET /v2/hrs/BERLA/status shows it');
  t.match(status[0]!.change_key, /^status\|BERLA\|availability\|/);

  // Both kinds: the next signal gives its status row and one row per option, in this order.
  await subscribe(p, ['fuelling_options']);
  await recording(p, ['status', 'option']);
  const second = ago(20);
  await postSignals(p, 'availability', availability(second));
  const after = await until('three more rows', async () => {
    const all = await rows(p);
    return all.length >= 4 ? all : undefined;
  });
  await settle();
  t.equal((await rows(p)).length, 4);
  t.same(after.slice(1).map((r) => r.topic), ['status', 'option', 'option']);
  t.ok(after.every((r, i) => i === 0 || BigInt(r.seq) > BigInt(after[i - 1]!.seq)), 'seq ascending');
  const at = new Date(second).toISOString();
  t.same(
    after.slice(2).map((r) => ({ entity: r.entity, payload: r.payload })),
    [
      { entity: 'BERLA/700ld', payload: { fuelling_option: '700ld', status: 'AVAILABLE', reason: 'reported_available', datetime: at } },
      { entity: 'BERLA/350ld', payload: { fuelling_option: '350ld', status: 'UNAVAILABLE', reason: 'reported_unavailable', datetime: at } },
    ],
    'the export v1.1 summary per option',
  );
  const summary = (await (await get(`${p.url}/v1.1/hrs/BERLA/status`, TOKENS.export_v1)).json()) as { fuelling_options: { status: string; datetime: string | null }[] };
  t.same(summary.fuelling_options.map((o) => [o.status, o.datetime && new Date(o.datetime).toISOString()]), [['AVAILABLE', at], ['UNAVAILABLE', at]], 'as export v1.1 answers');

  // The same reading again: received anew, so its section (received_datetime) changed; the options' values did not.
  await postSignals(p, 'availability', availability(second));
  const again = await until('the status row of the repeated reading', async () => {
    const all = await rows(p);
    return all.length >= 5 ? all : undefined;
  });
  await settle();
  t.equal((await rows(p)).length, 5, 'a status row, no option rows');
  t.same(again[4]!.payload.status, (await statusOf(p)).availability, 'with the new received_datetime');
  t.not(again[4]!.payload.status.received_datetime, after[1]!.payload.status.received_datetime);
  t.same(await counted(p), { 'status written': 3, 'option written': 2 }, 'counted on /metrics');

  // No subscription any more: nothing recorded.
  await p.sql`UPDATE webhook_subscriptions SET state = 'disabled'`;
  await recording(p, []);
  await postSignals(p, 'availability', availability(ago(5), false));
  await settle();
  t.equal((await rows(p)).length, 5, 'subscriptions disabled: no rows');
});

t.test('two instances on one database: one row per change, the freshness fallback included', async (t) => {
  const a = await startTestPlatform(t, { fixture: fixture(), env: { STATUS_STALE_AFTER: '1', STATUS_UNKNOWN_AFTER: '2' } });
  const b = await startTestPlatform(t, { sameStoreAs: a });
  await subscribe(a, ['station_status', 'fuelling_options']);
  await Promise.all([recording(a, ['status', 'option']), recording(b, ['status', 'option'])]);
  const datetime = new Date().toISOString();
  await postSignals(a, 'availability', availability(datetime));
  // fresh, stale, unknown: three status rows; the options' values, then UNKNOWN no_signal.
  const all = await until('the fallback recorded', async () => {
    const found = await rows(a);
    return found.some((r) => r.topic === 'option' && r.payload.reason === 'no_signal') && found.some((r) => r.payload.freshness === 'unknown') ? found : undefined;
  }, 15_000);
  await settle();
  t.equal((await rows(a)).length, all.length, 'nothing more came');
  const status = all.filter((r) => r.topic === 'status');
  t.same(status.map((r) => r.payload.freshness), ['fresh', 'stale', 'unknown'], 'one row per freshness, however many instances saw it');
  t.equal(status[1]!.payload.status.freshness, 'stale', 'the stale section says so');
  t.equal(status[2]!.payload.status, null, 'unknown: not published');
  const options = all.filter((r) => r.topic === 'option').map((r) => `${r.payload.fuelling_option} ${r.payload.status} ${r.payload.reason}`);
  t.same(options, ['700ld AVAILABLE reported_available', '350ld UNAVAILABLE reported_unavailable', '700ld UNKNOWN no_signal', '350ld UNKNOWN no_signal']);
  t.equal(new Set(all.map((r) => r.change_key)).size, all.length, 'every key once');
  // Both instances recorded every change (each as it got to it); the log kept one row of each.
  const recorded = (c: Record<string, number>, topic: string) => (c[`${topic} written`] ?? 0) + (c[`${topic} duplicate`] ?? 0);
  const rowsOf = (topic: string) => all.filter((r) => r.topic === topic).length;
  const everything = async (p: TestPlatform) => {
    const c = await counted(p);
    return ['status', 'option'].every((topic) => recorded(c, topic) >= rowsOf(topic)) ? c : undefined;
  };
  const [ca, cb] = await Promise.all([until('a to record every change', () => everything(a), 10_000), until('b to record every change', () => everything(b), 10_000)]);
  for (const topic of ['status', 'option']) {
    t.equal(recorded(ca, topic), rowsOf(topic), `${topic}: a recorded every change once`);
    t.equal(recorded(cb, topic), rowsOf(topic), `${topic}: b recorded every change once`);
    t.equal((ca[`${topic} written`] ?? 0) + (cb[`${topic} written`] ?? 0), rowsOf(topic), `${topic}: written once between them`);
  }
});

t.test('registry changes: a section withdrawn and back, a station removed; once each over two instances', async (t) => {
  const a = await startTestPlatform(t, { fixture: fixture() });
  const b = await startTestPlatform(t, { sameStoreAs: a });
  await subscribe(a, ['station_status', 'fuelling_options']);
  await Promise.all([recording(a, ['status', 'option']), recording(b, ['status', 'option'])]);
  const datetime = ago(10);
  await postSignals(a, 'availability', availability(datetime));
  await postSignals(a, 'pricing', [{ hrs: 'BERLA', datetime, products: [{ id: 'P700', gross_price: '13.850', currency: 'EUR' }] }]);
  await until('both status rows', async () => ((await rows(a)).filter((r) => r.topic === 'status').length === 2 ? true : undefined));
  const pricing = (await statusOf(a)).pricing;
  const reload = async (f: ReturnType<typeof fixture>) => {
    await a.load(f);
    await a.parts.bus.publish({ type: 'registry', hrs_ids: ['BERLA'], tokens: false });
  };
  const pricingRows = async (n: number) =>
    until(`${n} pricing rows`, async () => {
      const found = (await rows(a)).filter((r) => r.entity === 'BERLA/pricing');
      return found.length >= n ? found : undefined;
    });

  const f = fixture();
  f.assignments = berlaAssignments('testing');
  await reload(f);
  await pricingRows(2);
  f.assignments = berlaAssignments('live');
  await reload(f);
  const back = await pricingRows(3);
  t.same(back.map((r) => r.payload.status), [pricing, null, pricing], 'published, withdrawn (no live source), published again');
  t.match(back[1]!.change_key, /\|r\d+$/, 'a registry change: the registry version in its key');
  t.not(back[2]!.change_key, back[0]!.change_key, 'the same section again is a change of its own');

  f.stations = f.stations.filter((s) => s.hrs_id !== 'BERLA');
  f.assignments = f.assignments.filter((x) => x.hrs_id !== 'BERLA');
  await reload(f);
  const removed = await until('the removal rows', async () => {
    const found = (await rows(a)).filter((r) => r.topic === 'status').slice(4);
    return found.length >= 2 ? found : undefined;
  });
  await new Promise((resolve) => setTimeout(resolve, 1000));
  const all = await rows(a);
  t.same(removed.map((r) => [r.entity, r.payload.freshness, r.payload.status]).sort(), [['BERLA/availability', null, null], ['BERLA/pricing', null, null]], 'the station left: its sections are gone');
  t.same(all.filter((r) => r.topic === 'option').map((r) => `${r.entity} ${r.payload.status}`), ['BERLA/700ld AVAILABLE', 'BERLA/350ld UNAVAILABLE'], 'the pricing assignment and the removal change no option value');
  t.equal(all.filter((r) => r.topic === 'status').length, 6, 'two signals, two registry changes of pricing, two removals: once each');
});

// --- the recorder on its own, over a registry, a live status and a PostgreSQL of the test's -----------

const LAYOUT = {
  nozzles: new Map([['N1', { dispenser: 'D1', fuellingOptions: ['700ld'] }]]),
  dispensers: new Map([['D1', ['N1']]]),
  storages: new Set<string>(),
  products: new Set<string>(),
};

/** One station open 10:00-22:00 (UTC) with a held availability reading; PostgreSQL that can fail; listeners the test calls. */
function world(options: { bufferRows?: number; kinds: string[] }) {
  let now = new Date('2026-11-30T21:59:00Z');
  let version = 1000;
  const station: StationEntry = { hrsId: 'BERLA', name: 'Berlin', heavyDuty: false, layout: LAYOUT, openingHours: 'Mo-Su 10:00-22:00', timeZone: 'UTC', point: null };
  const reading = { datetime: Date.parse('2026-11-30T21:58:00Z'), receivedAt: Date.parse('2026-11-30T21:58:01Z'), payload: { station: { maintenance: false, limitedly_available: false }, nozzles: [{ id: 'N1', available: true }] } };
  const statusListeners = new Set<(c: StatusChange) => void>();
  const openingListeners = new Set<(c: { hrsId: string }) => void>();
  const stored: RecordedChange[] = [];
  const keys = new Set<string>();
  const logs = logCapture();
  const counts: Record<string, number> = {};
  const w = {
    down: false,
    kinds: new Set(options.kinds),
    stored,
    logs,
    counts,
    setNow: (iso: string) => (now = new Date(iso)),
    bumpRegistry: () => version++,
    listeners: () => statusListeners.size + openingListeners.size,
    change(datetime: number, cause: StatusChange['cause'] = 'signal', section: Record<string, unknown> | null = { datetime }) {
      for (const l of statusListeners) l({ hrsId: 'BERLA', category: 'usage', cause, previous: 'fresh', freshness: 'fresh', section, datetime, receivedAt: datetime, originatorId: 'mon-1' });
    },
    openingChanged: () => {
      for (const l of openingListeners) l({ hrsId: 'BERLA' });
    },
    recorder: undefined as unknown as ChangeRecorder,
  };
  w.recorder = new ChangeRecorder({
    stations: {
      station: (id) => (id === 'BERLA' ? station : undefined),
      stationIds: () => ['BERLA'][Symbol.iterator](),
      hasLiveSource: () => true,
      get loadedVersionUs() {
        return version;
      },
    },
    status: {
      published: () => ({ reading, freshness: 'fresh' }),
      availabilityVersion: 0,
      onChange: (l) => (statusListeners.add(l), () => statusListeners.delete(l)),
    },
    opening: { onChange: (l) => (openingListeners.add(l), () => openingListeners.delete(l)) },
    wantedKinds: async () => w.kinds,
    write: async (rows) => {
      if (w.down) throw new Error('connection refused');
      const written: Record<string, number> = {};
      for (const row of rows) {
        if (keys.has(row.change_key)) continue;
        keys.add(row.change_key);
        stored.push(row);
        written[row.topic] = (written[row.topic] ?? 0) + 1;
      }
      return written;
    },
    log: createLogger('info', logs.stream),
    counted: (topic, outcome, n) => void (counts[`${topic} ${outcome}`] = (counts[`${topic} ${outcome}`] ?? 0) + n),
    now: () => now,
    topicsEveryMs: 60_000,
    bufferRows: options.bufferRows,
  });
  return w;
}

const flushed = () => new Promise((resolve) => setTimeout(resolve, FLUSH_DELAY_MS + 30));

t.test('PostgreSQL failing: the rows wait in order, the oldest past the buffer are dropped and counted', async (t) => {
  const w = world({ bufferRows: 5, kinds: ['station_status'] });
  await w.recorder.start();
  t.teardown(() => w.recorder.close());
  w.down = true;
  for (let i = 1; i <= 3; i++) w.change(i);
  await flushed();
  t.same(w.stored, [], 'nothing written while it fails');
  t.equal(w.logs.lines.filter((l) => l.msg === 'recording webhook changes failed: they are kept and tried again').length, 1, 'warned once');
  for (let i = 4; i <= 8; i++) w.change(i);
  await until('the buffer to overflow', () => (w.counts['status dropped'] === 3 ? true : undefined), 5000);
  t.match(w.logs.lines.find((l) => l.msg === 'webhook changes dropped: PostgreSQL has not taken them and the buffer is full'), { level: 40, dropped: 3, kept: 5 });
  w.down = false;
  await until('the kept rows written', () => (w.stored.length === 5 ? true : undefined), RETRY_MS + 3000);
  t.same(w.stored.map((r) => r.payload.status), [4, 5, 6, 7, 8].map((datetime) => ({ datetime })), 'the newest five, in order');
  t.ok(w.logs.lines.some((l) => l.msg === 'webhook changes recorded again'), 'the recovery said');
  t.same(w.counts, { 'status dropped': 3, 'status written': 5, 'status duplicate': 0 });
  // The same change again (as another instance's recorder would make it): its key is taken.
  w.change(8);
  await flushed();
  t.equal(w.stored.length, 5, 'a change recorded already is not recorded again');
  t.equal(w.counts['status duplicate'], 1);
  // A registry change bringing back a section seen before is a change of its own.
  w.bumpRegistry();
  w.change(8, 'registry');
  await flushed();
  t.equal(w.stored.length, 6);
  t.match(w.stored[5]!.change_key, /\|r1001$/, 'the registry version in the key');
});

t.test('options: seeded without a row, a row per change of the opening period, none for what did not change', async (t) => {
  const w = world({ kinds: [] });
  await w.recorder.start();
  t.teardown(() => w.recorder.close());
  t.equal(w.listeners(), 0, 'no topic wanted: nothing listened to');
  w.kinds = new Set(['fuelling_options']);
  await w.recorder.refreshTopics();
  t.same([...w.recorder.topics], ['option']);
  t.equal(w.listeners(), 2, 'the live status and the opening clock');
  w.openingChanged();
  await flushed();
  t.same(w.stored, [], 'the value it started with is no change');
  w.change(Date.parse('2026-11-30T21:58:00Z'));
  await flushed();
  t.same(w.stored, [], 'a status change of another category leaves the options alone');

  const value = () => w.stored.map((r) => `${r.payload.status} ${r.payload.reason}`);
  w.setNow('2026-11-30T22:00:00Z');
  w.openingChanged();
  await flushed();
  w.setNow('2026-12-01T10:00:00Z');
  w.openingChanged();
  await flushed();
  w.openingChanged();
  await flushed();
  w.setNow('2026-12-01T22:00:00Z');
  w.openingChanged();
  await flushed();
  t.same(value(), ['CLOSED outside_opening_hours', 'AVAILABLE reported_available', 'CLOSED outside_opening_hours'], 'closed, open, closed again; nothing for a change that changed nothing');
  t.same(w.stored[0]!.payload, { fuelling_option: '700ld', status: 'CLOSED', reason: 'outside_opening_hours', datetime: '2026-11-30T21:58:00.000Z' });
  t.match(w.stored[0]!.change_key, `|p${Date.parse('2026-12-01T10:00:00Z')}|`, 'the period named by its end');
  t.equal(new Set(w.stored.map((r) => r.change_key)).size, 3, 'closed twice: two keys');
  t.same(w.stored.map((r) => r.entity), ['BERLA/700ld', 'BERLA/700ld', 'BERLA/700ld']);

  w.kinds = new Set();
  await w.recorder.refreshTopics();
  t.equal(w.listeners(), 0, 'no subscription any more: nothing listened to');
});
