/**
 * datex2: what the DATEX II v3.7 publications for National Access Points cost. Against a registry of
 * 1,000 stations (the `datex2` fixture: each publishable, with `cumulative_daily_hydrogen_capacity`,
 * coordinates, address and contacts in its details; laid out with two, three or four nozzles and two to
 * four products (lib/fixtures.ts `datex2Layout`); time zone Europe/Berlin; the even stations open 24/7,
 * the odd ones `Mo-Fr 06:00-22:00; Sa,Su 08:00-20:00`; live with mon-1 for all four signal types),
 * every station is first given one reading of each category (availability, usage, hydrogen storage,
 * pricing) by real import v2 requests (batches of STATIONS_PER_POST transmissions). Then, one after the
 * other under the same load: a hello-world uWS server (`GET /`, the floor); `GET /datex2/v3/table` in
 * identity encoding, asking for gzip, and conditionally (`If-Modified-Since` with its own
 * `Last-Modified`: 304); `GET /datex2/v3/status` in identity encoding and asking for gzip; and the
 * status asking for gzip again while availability and usage signals are posted through import v2 at
 * CHURN_PER_SECOND (each moves the live status, so the kept document is written again on the next
 * request, only the changed station's piece anew). Every server and the load generator run in
 * processes of their own; the signals are posted from this process.
 *
 * Both publications take the personal export v2 token and count against the export v2 limits, raised
 * out of reach (EXPORT_V2_RATE_LIMIT_MINUTE, EXPORT_V2_RATE_LIMIT_DAY) but still counted in Redis on
 * every request, as in service; hello world is the floor.
 *
 * Every answer is checked before its load: both documents are valid against the official 3.7 schema
 * set (test/helpers/datex2.ts, one call for both); the table holds all 1,000 sites with their capacity,
 * every nozzle as a refill point and every priced product as an energy rate; the status holds 1,000
 * site statuses referring to the table's version, and every refill point with the status the seeded
 * readings give it (unavailable exactly outside its hours, as a Berlin wall clock reads them); the gzip
 * answers decode to the identity ones; the conditional answer is a 304 without a body. Before the churn
 * target a posted signal must show in the status, and after it the last one posted.
 *
 * Before the churn target, without load, what a rebuild costs: REBUILD_ROUNDS times an availability
 * signal is posted and the status fetched twice (the first GET writes it again, the second is served
 * as kept), in identity and gzip; and REBUILD_ROUNDS times a pricing signal and the table fetched
 * twice the same way (a price is in the table: its version and Last-Modified move).
 *
 * PostgreSQL's statistics are left as loading the registry leaves them (on a server without autovacuum,
 * none): the table reads every station's version from PostgreSQL on every request, and that statement
 * must stay cheap however the planner guesses. The settings that would decide it (JIT) are printed.
 *
 * Goals: the status asking for gzip under 100 ms p99 at the configured connections (the issue's
 * target), also while signals are posted. Reported without a goal: the table's server CPU per request
 * and its size. wrk drives every target, and its latency covers the whole run (warm-up and drain
 * included): an upper bound of the measured seconds'. autocannon, which times the measured seconds only,
 * spends a whole core on the status' 150 kB gzip answers at a few hundred per second, so its p99 would
 * measure itself, not the server.
 */
import { request as httpRequest, Agent } from 'node:http';
import { availableParallelism, cpus } from 'node:os';
import { gunzipSync } from 'node:zlib';
import { connect } from '../../db/connect.js';
import { datex2Errors } from '../helpers/datex2.js';
import { TOKENS } from '../helpers/fixtures.js';
import { Child } from './lib/child.js';
import { berlin, weeklyOpen, weeklyOpenThrough } from './lib/berlin-clock.js';
import {
  DATEX2_HOURS,
  EXPORT_V1_TIME_ZONE,
  SIGNAL_TYPES,
  STATUS_STATIONS,
  WEEKLY_HOURS,
  datex2Capacity,
  datex2Hours,
  datex2Layout,
  stationIds,
} from './lib/fixtures.js';
import { measure, type Measurement, type MeasureHooks } from './lib/load.js';
import { MachineCpu } from './lib/machine-cpu.js';
import type { BenchOptions, Scenario } from './lib/scenario.js';
import { tearDown, workspace } from './lib/workspace.js';
import { fixed, integer, median, table } from './lib/table.js';
import { SignalChurn, postSignals, type SignalType } from './lib/status-seed.js';
import { CPU_HEADERS, CPU_LEGEND, cpuCells, loaderLine, printGoals, serverMicros } from './lib/cpu-report.js';
import { wrkVersion } from './lib/wrk.js';

/** Status p99 (gzip) the platform should stay under, in milliseconds: the issue's target. */
const GOAL_P99_MS = 100;
/** Availability and usage signals posted per second during the churn target (alternately). */
const CHURN_PER_SECOND = 20;
/** Unloaded rebuilds timed per document and encoding before the churn target. */
const REBUILD_ROUNDS = 20;
/** Transmissions per seeding POST (import v2 takes up to 1,000). */
const STATIONS_PER_POST = 500;

const STATIONS = stationIds(STATUS_STATIONS);
const INDEX = new Map(STATIONS.map((hrsId, i) => [hrsId, i]));
const LAYOUTS = STATIONS.map((_, i) => datex2Layout(i));
const REFILL_POINTS = LAYOUTS.reduce((n, l) => n + l.nozzles.length, 0);
const ENERGY_RATES = LAYOUTS.reduce((n, l) => n + l.products.length, 0);

const AUTH = { Authorization: `Bearer ${TOKENS.export_v2}` };
const GZIP = { ...AUTH, 'Accept-Encoding': 'gzip' };
const TABLE_PATH = '/datex2/v3/table';
const STATUS_PATH = '/datex2/v3/status';


/* ---- The signals ---------------------------------------------------------------------------------- */

/** Thousandths of a euro: the gross price of station i's product k in variant n. */
const grossThousandths = (i: number, k: number, n: number) => 11_000 + ((i * 7 + k * 31 + n * 13) % 4000);
const decimal3 = (thousandths: number) => (thousandths / 1000).toFixed(3);
/** As DATEX writes it: rounded half up to the cent (written out independently of the platform's). */
const cents = (thousandths: number) => {
  const c = Math.floor(thousandths / 10) + (thousandths % 10 >= 5 ? 1 : 0);
  return `${Math.floor(c / 100)}.${String(c % 100).padStart(2, '0')}`;
};

/** Whether station i's availability reading in variant n reports maintenance, limited availability, nozzle k available. */
const maintenance = (i: number, n: number) => (i + n) % 97 === 0;
const limited = (i: number, n: number) => (i + n) % 41 === 0;
const available = (i: number, k: number, n: number) => (i + 2 * k + n) % 9 !== 0;
/** Nozzle k's usage in station i's usage reading of variant n. */
function usage(i: number, k: number, n: number): 'free' | 'in-use' | 'reserved' {
  const m = i + 3 * k + n;
  return m % 5 === 0 ? 'in-use' : m % 13 === 0 ? 'reserved' : 'free';
}

/** One transmission of `type` for station i (its whole layout), variant n, dated `datetime`. */
function transmission(type: SignalType, i: number, n: number, datetime: string): Record<string, unknown> {
  const hrs = STATIONS[i]!;
  const layout = LAYOUTS[i]!;
  switch (type) {
    case 'availability':
      return {
        hrs,
        datetime,
        nozzles: layout.nozzles.map((nozzle, k) => ({ id: nozzle.id, available: available(i, k, n) })),
        station: { maintenance: maintenance(i, n), limitedly_available: limited(i, n) },
      };
    case 'usage':
      return { hrs, datetime, nozzles: layout.nozzles.map((nozzle, k) => ({ id: nozzle.id, usage_status: usage(i, k, n) })) };
    case 'hydrogen-storage':
      return { hrs, datetime, storages: layout.storages.map((id, k) => ({ id, remaining_kg: (20 + ((i * 37 + k * 101 + n) % 600)).toFixed(2) })) };
    case 'pricing':
      return {
        hrs,
        datetime,
        products: layout.products.map((product, k) => {
          const gross = grossThousandths(i, k, n);
          return { id: product.id, gross_price: decimal3(gross), net_price: decimal3(Math.floor(gross / 1.19)), currency: 'EUR' };
        }),
      };
  }
}

/** Gives every station one reading of each category (variant 0), dated a second ago; batches of STATIONS_PER_POST. */
async function seedReadings(port: number): Promise<number> {
  const datetime = new Date(Date.now() - 1000).toISOString();
  let posts = 0;
  for (const type of SIGNAL_TYPES) {
    for (let from = 0; from < STATIONS.length; from += STATIONS_PER_POST) {
      const to = Math.min(from + STATIONS_PER_POST, STATIONS.length);
      await postSignals(port, type, Array.from({ length: to - from }, (_, k) => transmission(type, from + k, 0, datetime)));
      posts++;
    }
  }
  return posts;
}

/* ---- Fetching ------------------------------------------------------------------------------------- */

const agent = new Agent({ keepAlive: true, maxSockets: 4 });

interface Fetched {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  /** The body as sent (gzip-encoded when it was). */
  raw: Buffer;
  /** Milliseconds from sending the request to the last byte of the answer. */
  ms: number;
}

/** A GET with node:http: the bytes as sent (nothing decoded), timed to the last byte. */
function get(url: string, headers: Record<string, string> = {}): Promise<Fetched> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const req = httpRequest(url, { agent, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, raw: Buffer.concat(chunks), ms: performance.now() - started }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

/** The body as text, decoded when gzip-encoded; checks the encoding is the one asked for. */
function bodyText(label: string, res: Fetched, asked: Record<string, string>): string {
  const gzip = res.headers['content-encoding'] === 'gzip';
  if (('Accept-Encoding' in asked) !== gzip) throw new Error(`${label}: ${gzip ? 'gzip-encoded although not asked for' : 'not gzip-encoded although asked for'}`);
  return (gzip ? gunzipSync(res.raw) : res.raw).toString('utf8');
}

function expectStatus(label: string, res: Fetched, status = 200): void {
  if (res.status !== status) throw new Error(`${label} answered ${res.status} ${res.raw.toString('utf8', 0, 300)}; not benchmarking that`);
  if (status === 200 && !String(res.headers['content-type']).startsWith('application/xml')) {
    throw new Error(`${label} answered with Content-Type ${String(res.headers['content-type'])}, not XML`);
  }
}

async function getDocument(base: string, path: string, headers: Record<string, string>): Promise<{ res: Fetched; xml: string }> {
  const res = await get(`${base}${path}`, headers);
  expectStatus(`GET ${path}`, res);
  return { res, xml: bodyText(`GET ${path}`, res, headers) };
}

/* ---- What the documents must say ------------------------------------------------------------------ */

const all = (xml: string, re: RegExp, group = 1) => [...xml.matchAll(re)].map((m) => m[group]!);
const sameList = (a: readonly string[], b: readonly string[]) => a.length === b.length && a.every((x, k) => x === b[k]);

/** The table's version, from either document (the table's own id, or the status' reference to it). */
const tableVersionIn = (xml: string) => /id="hrs-energy-infrastructure" version="([0-9a-f]+)"/.exec(xml)?.[1];

interface TableFacts {
  sites: number;
  refillPoints: number;
  rates: number;
  version: string;
}

/** Checks the table: every station a site with its capacity, refill points and priced products (seeded prices, variant 0). */
function checkTable(xml: string): TableFacts {
  const blocks = xml.split('<aegi:energyInfrastructureSite ').slice(1);
  if (blocks.length !== STATIONS.length) throw new Error(`the table holds ${blocks.length} sites, ${STATIONS.length} stations are registered and publishable`);
  let refillPoints = 0;
  let rates = 0;
  const seen = new Set<string>();
  for (const block of blocks) {
    const hrsId = /^id="([A-Z]{5})"/.exec(block)?.[1];
    const i = hrsId === undefined ? undefined : INDEX.get(hrsId);
    if (hrsId === undefined || i === undefined) throw new Error(`the table holds a site that is no registered station: ${block.slice(0, 80)}`);
    if (seen.has(hrsId)) throw new Error(`the table holds ${hrsId} twice`);
    seen.add(hrsId);
    const layout = LAYOUTS[i]!;
    const capacity = /<aegi:cumulativeCapacityperDay>([^<]+)</.exec(block)?.[1];
    if (capacity !== String(datex2Capacity(i))) throw new Error(`${hrsId}: daily capacity ${String(capacity)}, registered ${datex2Capacity(i)}`);
    const points = all(block, /<aegi:refillPoint xsi:type="aegi:AlternativeFuelsRefillPoint" id="([^"]+)"/g);
    const expectedPoints = layout.nozzles.map((n) => `${hrsId}-N-${n.id}`);
    if (!sameList(points, expectedPoints)) throw new Error(`${hrsId}: refill points ${points.join(', ')}, expected ${expectedPoints.join(', ')}`);
    const count = /<aegi:numberOfRefillPoints>(\d+)</.exec(block)?.[1];
    if (count !== String(expectedPoints.length)) throw new Error(`${hrsId}: numberOfRefillPoints ${String(count)}, expected ${expectedPoints.length}`);
    const rateIds = all(block, /<aegi:energyRate id="([^"]+)"/g);
    const expectedRates = layout.products.map((p) => `${hrsId}-R-${p.id}`);
    if (!sameList(rateIds, expectedRates)) throw new Error(`${hrsId}: energy rates ${rateIds.join(', ')}, expected ${expectedRates.join(', ')}`);
    // 24/7 is afac:OpenAllHours; other hours a specification labelled with the registry's text.
    const hours = datex2Hours(i) === '24/7' ? 'xsi:type="afac:OpenAllHours"' : `<afac:label>${datex2Hours(i)}</afac:label>`;
    if (!block.includes(hours)) throw new Error(`${hrsId}: its opening hours "${datex2Hours(i)}" are not in its site (no ${hours})`);
    refillPoints += points.length;
    rates += rateIds.length;
  }
  if (refillPoints !== REFILL_POINTS) throw new Error(`the table holds ${refillPoints} refill points, the layouts ${REFILL_POINTS} nozzles`);
  const version = tableVersionIn(xml);
  if (version === undefined) throw new Error('the table has no id and version');
  return { sites: blocks.length, refillPoints, rates, version };
}

/** The price the table gives `rateId` (its energy rate's value). */
function tablePrice(xml: string, rateId: string): string | undefined {
  return new RegExp(`<aegi:energyRate id="${rateId}">[\\s\\S]*?<aegi:value>([^<]+)</aegi:value>`).exec(xml)?.[1];
}

type PointState = 'available' | 'occupied' | 'reserved' | 'outOfOrder' | 'unavailable' | 'unknown';
const POINT_STATES: readonly PointState[] = ['available', 'occupied', 'reserved', 'outOfOrder', 'unavailable', 'unknown'];

/** The status nozzle k of station i should have after variant-0 readings (the precedence of src/domain/datex2/status.ts, written out). */
function expectedPoint(i: number, k: number, open: boolean): PointState {
  if (!open) return 'unavailable';
  if (maintenance(i, 0)) return 'outOfOrder';
  if (limited(i, 0)) return 'available';
  if (!available(i, k, 0)) return 'outOfOrder';
  const u = usage(i, k, 0);
  return u === 'in-use' ? 'occupied' : u === 'reserved' ? 'reserved' : 'available';
}

/** One site's status element, as written; undefined when absent. */
function siteStatusBlock(xml: string, hrsId: string): string | undefined {
  const start = xml.indexOf(`<aegi:energyInfrastructureSiteStatus><afac:reference id="${hrsId}"`);
  if (start < 0) return undefined;
  const end = xml.indexOf('</aegi:energyInfrastructureSiteStatus>', start);
  return end < 0 ? undefined : xml.slice(start, end);
}

type Tally = Record<PointState, number>;

/**
 * Checks the status: a site status per station referring to the table's version, each refill point
 * with the status the seeded readings give it (`weekly`: whether WEEKLY_HOURS stations are open;
 * undefined: not known, their points only checked to be a status at all). Returns the statuses, counted.
 */
function checkStatus(xml: string, tableVersion: string, weekly: boolean | undefined): { sites: number; refillPoints: number; rateUpdates: number; tally: Tally } {
  const reference = /<aegi:tableReference id="hrs-energy-infrastructure" version="([0-9a-f]+)"/.exec(xml)?.[1];
  if (reference !== tableVersion) throw new Error(`the status refers to table version ${String(reference)}, the table is ${tableVersion}`);
  const blocks = xml.split('<aegi:energyInfrastructureSiteStatus>').slice(1);
  if (blocks.length !== STATIONS.length) throw new Error(`the status holds ${blocks.length} site statuses, ${STATIONS.length} stations are in the table`);
  const tally = Object.fromEntries(POINT_STATES.map((s) => [s, 0])) as Tally;
  let refillPoints = 0;
  let rateUpdates = 0;
  const seen = new Set<string>();
  for (const block of blocks) {
    const hrsId = /^<afac:reference id="([A-Z]{5})"/.exec(block)?.[1];
    const i = hrsId === undefined ? undefined : INDEX.get(hrsId);
    if (hrsId === undefined || i === undefined) throw new Error(`the status holds a site that is no registered station: ${block.slice(0, 80)}`);
    if (seen.has(hrsId)) throw new Error(`the status holds ${hrsId} twice`);
    seen.add(hrsId);
    const points = [...block.matchAll(/<aegi:refillPointStatus><afac:reference id="([^"]+)"[\s\S]*?<aegi:status>([^<]+)<\/aegi:status>/g)];
    const layout = LAYOUTS[i]!;
    const ids = points.map((m) => m[1]!);
    const expectedIds = layout.nozzles.map((n) => `${hrsId}-N-${n.id}`);
    if (!sameList(ids, expectedIds)) throw new Error(`${hrsId}: refill point statuses ${ids.join(', ')}, expected ${expectedIds.join(', ')}`);
    const open = datex2Hours(i) === '24/7' ? true : weekly;
    points.forEach((m, k) => {
      const state = m[2] as PointState;
      if (!POINT_STATES.includes(state)) throw new Error(`${m[1]}: status "${state}"`);
      if (open !== undefined) {
        const expected = expectedPoint(i, k, open);
        if (state !== expected) throw new Error(`${m[1]} (${datex2Hours(i)}, ${open ? 'open' : 'closed'}): status ${state}, expected ${expected} from its readings`);
      }
      tally[state]++;
    });
    const updates = all(block, /<aegi:energyRateReference id="([^"]+)"/g);
    if (updates.length !== layout.products.length) throw new Error(`${hrsId}: ${updates.length} energy rate updates, ${layout.products.length} products priced`);
    refillPoints += points.length;
    rateUpdates += updates.length;
  }
  if (refillPoints !== REFILL_POINTS) throw new Error(`the status holds ${refillPoints} refill point statuses, the layouts ${REFILL_POINTS} nozzles`);
  return { sites: blocks.length, refillPoints, rateUpdates, tally };
}

/** Whether the status shows station `hrsId`'s reading of `datetime` (its site's lastUpdated). */
function statusShows(xml: string, hrsId: string, datetime: string): boolean {
  return siteStatusBlock(xml, hrsId)?.includes(`<afac:lastUpdated>${datetime}</afac:lastUpdated>`) === true;
}

/** Milliseconds until the status shows `hrsId`'s reading of `datetime`; throws after `timeoutMs`. */
async function untilShown(base: string, hrsId: string, datetime: string, since: number, timeoutMs = 5000): Promise<number> {
  for (;;) {
    const { xml } = await getDocument(base, STATUS_PATH, GZIP);
    if (statusShows(xml, hrsId, datetime)) return performance.now() - since;
    if (performance.now() - since > timeoutMs) {
      throw new Error(`the status still shows ${hrsId} as ${String(siteStatusBlock(xml, hrsId)?.slice(0, 400))} ${timeoutMs} ms after its reading of ${datetime} was posted`);
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/* ---- Rebuilds, unloaded --------------------------------------------------------------------------- */

interface Timed {
  first: number[];
  again: number[];
}

/**
 * `rounds` times an availability signal to a station, then the status fetched twice: the first GET
 * writes it again (and must show the reading), the second is served as kept. Client-side ms to the last byte.
 */
async function statusRebuilds(port: number, base: string, headers: Record<string, string>, rounds: number, variant: number): Promise<Timed> {
  const times: Timed = { first: [], again: [] };
  for (let r = 0; r < rounds; r++) {
    const i = (r * 101 + variant * 7) % STATIONS.length;
    const datetime = new Date().toISOString();
    await postSignals(port, 'availability', [transmission('availability', i, variant + r, datetime)]);
    for (const list of [times.first, times.again]) {
      const { res, xml } = await getDocument(base, STATUS_PATH, headers);
      list.push(res.ms);
      if (!statusShows(xml, STATIONS[i]!, datetime)) throw new Error(`the status does not show ${STATIONS[i]}'s reading of ${datetime} right after it was accepted`);
    }
  }
  return times;
}

/**
 * `rounds` times a pricing signal to a station, then the table fetched twice: the first GET writes it
 * again (and must show the new price and a later Last-Modified), the second is served as kept.
 */
async function tableRebuilds(port: number, base: string, headers: Record<string, string>, rounds: number, variant: number): Promise<Timed> {
  const times: Timed = { first: [], again: [] };
  for (let r = 0; r < rounds; r++) {
    const i = (r * 103 + variant * 11) % STATIONS.length;
    const n = variant + r + 1;
    const before = (await get(`${base}${TABLE_PATH}`, AUTH)).headers['last-modified'];
    await postSignals(port, 'pricing', [transmission('pricing', i, n, new Date().toISOString())]);
    for (const list of [times.first, times.again]) {
      const { res, xml } = await getDocument(base, TABLE_PATH, headers);
      list.push(res.ms);
      const rateId = `${STATIONS[i]}-R-${LAYOUTS[i]!.products[0]!.id}`;
      const expected = cents(grossThousandths(i, 0, n));
      if (tablePrice(xml, rateId) !== expected) throw new Error(`the table prices ${rateId} at ${String(tablePrice(xml, rateId))} right after a price of ${expected} was accepted`);
      if (Date.parse(String(res.headers['last-modified'])) < Date.parse(String(before))) throw new Error(`the table's Last-Modified went back after a price (${String(before)} → ${String(res.headers['last-modified'])})`);
    }
  }
  return times;
}

/* ---- The live status kept moving ------------------------------------------------------------------ */

/**
 * The churn: one transmission a request, availability and usage in turn, stations far apart in the
 * document from one signal to the next (a stride through them).
 */
function churnSignal(variant: number) {
  return (n: number, datetime: string) => {
    const i = (n * 37 + 500) % STATIONS.length;
    const type: SignalType = n % 2 === 0 ? 'availability' : 'usage';
    return { type, hrsId: STATIONS[i]!, transmission: transmission(type, i, variant + n, datetime) };
  };
}

/* ---- The run -------------------------------------------------------------------------------------- */

interface Target {
  label: string;
  server: 'hello' | 'platform';
  path: string;
  headers?: Record<string, string>;
  /** `If-Modified-Since` with the table's own Last-Modified: expects a 304. */
  conditional?: boolean;
  /** Signals posted during the load. */
  churn?: boolean;
}

const TABLE_LABEL = `platform GET ${TABLE_PATH} (${STATIONS.length} sites)`;
const STATUS_LABEL = `platform GET ${STATUS_PATH} (${STATIONS.length} sites)`;
const GZIP_NOTE = ', Accept-Encoding: gzip';
const CHURN_NOTE = `, ${CHURN_PER_SECOND} signals/s posted`;
const TARGETS: Target[] = [
  { label: 'hello world GET /', server: 'hello', path: '/' },
  { label: TABLE_LABEL, server: 'platform', path: TABLE_PATH, headers: AUTH },
  { label: `${TABLE_LABEL}${GZIP_NOTE}`, server: 'platform', path: TABLE_PATH, headers: GZIP },
  { label: `${TABLE_LABEL}, If-Modified-Since (304)`, server: 'platform', path: TABLE_PATH, headers: AUTH, conditional: true },
  { label: STATUS_LABEL, server: 'platform', path: STATUS_PATH, headers: AUTH },
  { label: `${STATUS_LABEL}${GZIP_NOTE}`, server: 'platform', path: STATUS_PATH, headers: GZIP },
  { label: `${STATUS_LABEL}${GZIP_NOTE}${CHURN_NOTE}`, server: 'platform', path: STATUS_PATH, headers: GZIP, churn: true },
];

interface Row {
  target: Target;
  result: Measurement;
  bytes: number;
  /** Cores busy on the whole machine during the measured load (every process). */
  machineCpu: number;
  /** The churn target: signals accepted during the measured load, how long that was, and all posted and accepted. */
  churn?: { accepted: number; seconds: number; postedTotal: number; acceptedTotal: number };
}

interface Seen {
  at: Date;
  table: TableFacts & { bytes: number; gzipBytes: number };
  status: { sites: number; refillPoints: number; rateUpdates: number; tally: Tally; bytes: number; gzipBytes: number };
  validateMs: number;
}

async function run(options: BenchOptions): Promise<void> {
  const space = workspace('datex2');
  const { database, databaseUrl } = space;
  const servers: Partial<Record<Target['server'], { child: Child; port: number }>> = {};
  const rows: Row[] = [];
  let seedMs = 0;
  let seedPosts = 0;
  let seen: Seen | undefined;
  const propagation: { label: string; ms: number }[] = [];
  let rebuild: { label: string; times: Timed }[] | undefined;
  /** Cores the platform process used while the hello world target ran (nothing asked of it). */
  let platformIdle = Number.NaN;
  let postgresSettings = '';
  try {
    const hello = await Child.start('hello-world server', new URL('./lib/hello-server.ts', import.meta.url));
    servers.hello = { child: hello.child, port: hello.ready.port as number };
    const platform = await Child.start('platform', new URL('./lib/platform-server.ts', import.meta.url), {
      env: {
        BENCH_DATABASE_URL: databaseUrl.toString(),
        BENCH_REDIS_PREFIX: database,
        BENCH_FIXTURE: 'datex2',
        // The churn posts beyond import v2's per-minute limit; the load goes far beyond export v2's.
        BENCH_PLATFORM_ENV: JSON.stringify({
          IMPORT_V2_RATE_LIMIT: '100000000',
          EXPORT_V2_RATE_LIMIT_MINUTE: '1000000000',
          EXPORT_V2_RATE_LIMIT_DAY: '1000000000',
        }),
      },
      readyTimeoutMs: 240_000,
    });
    servers.platform = { child: platform.child, port: platform.ready.port as number };
    const platformChild = platform.child;
    const port = servers.platform.port;
    const base = `http://127.0.0.1:${port}`;

    const seedStarted = performance.now();
    seedPosts = await seedReadings(port);
    seedMs = performance.now() - seedStarted;
    const sql = connect(databaseUrl.toString(), { max: 1 });
    try {
      const settings = await sql<{ name: string; setting: string }[]>`
        SELECT name, setting FROM pg_settings WHERE name IN ('autovacuum', 'jit', 'jit_above_cost') ORDER BY name`;
      const [stats] = await sql<{ analyzed: string; tables: string }[]>`
        SELECT count(*) FILTER (WHERE last_analyze IS NOT NULL OR last_autoanalyze IS NOT NULL) AS analyzed, count(*) AS tables FROM pg_stat_user_tables`;
      postgresSettings =
        `PostgreSQL: ${settings.map((r) => `${r.name} ${r.setting}`).join(', ')}; ${stats?.analyzed ?? '?'} of ${stats?.tables ?? '?'} tables analyzed ` +
        '(statistics as loading the registry left them)';
    } finally {
      await sql.end({ timeout: 1 });
    }

    // Both documents, both encodings, checked; then both validated in one call.
    const before = new Date();
    const tableId = await getDocument(base, TABLE_PATH, AUTH);
    const statusId = await getDocument(base, STATUS_PATH, AUTH);
    const after = new Date();
    const tableGz = await getDocument(base, TABLE_PATH, GZIP);
    const statusGz = await getDocument(base, STATUS_PATH, GZIP);
    if (tableGz.xml !== tableId.xml) throw new Error('the gzip-encoded table decodes to another document than the identity one');
    const tableFacts = checkTable(tableId.xml);
    if (tableFacts.rates !== ENERGY_RATES) throw new Error(`the table holds ${tableFacts.rates} energy rates, ${ENERGY_RATES} products were priced`);
    const statusFacts = checkStatus(statusId.xml, tableFacts.version, weeklyOpenThrough(before, after));
    checkStatus(statusGz.xml, tableFacts.version, undefined);
    const validateStarted = performance.now();
    const errors = await datex2Errors(tableId.xml, statusId.xml);
    const validateMs = performance.now() - validateStarted;
    if (errors.length > 0) throw new Error(`the documents are not valid DATEX II 3.7 (${errors.length} errors):\n${errors.slice(0, 20).join('\n')}`);
    seen = {
      at: before,
      table: { ...tableFacts, bytes: tableId.res.raw.length, gzipBytes: tableGz.res.raw.length },
      status: { ...statusFacts, bytes: statusId.res.raw.length, gzipBytes: statusGz.res.raw.length },
      validateMs,
    };

    for (const target of TARGETS) {
      const server = servers[target.server]!;
      const url = `http://127.0.0.1:${server.port}${target.path}`;
      let headers = target.headers;
      let bytes: number;
      if (target.server === 'hello') {
        const res = await get(url);
        if (res.status !== 200 || res.raw.toString() !== 'Hello World!') throw new Error(`hello world answered ${res.status} ${res.raw.toString('utf8', 0, 100)}`);
        bytes = res.raw.length;
      } else if (target.conditional) {
        const full = await get(url, AUTH);
        expectStatus(`GET ${target.path}`, full);
        const modified = full.headers['last-modified'];
        if (typeof modified !== 'string') throw new Error(`GET ${target.path}: no Last-Modified`);
        headers = { ...AUTH, 'If-Modified-Since': modified };
        const res = await get(url, headers);
        expectStatus(`GET ${target.path} If-Modified-Since ${modified}`, res, 304);
        if (res.raw.length !== 0) throw new Error(`GET ${target.path}: a 304 with a body of ${res.raw.length} bytes`);
        if (res.headers['last-modified'] !== modified) throw new Error(`GET ${target.path}: the 304 says Last-Modified ${String(res.headers['last-modified'])}, the document ${modified}`);
        bytes = 0;
      } else {
        const { res, xml } = await getDocument(base, target.path, headers!);
        if (target.path === TABLE_PATH) checkTable(xml);
        else if (target.path === STATUS_PATH && !rebuild) checkStatus(xml, tableFacts.version, undefined);
        bytes = res.raw.length;
      }

      const machine = new MachineCpu();
      let machineCpu = Number.NaN;
      /** Machine CPU sampled over the measured load, plus `also` at both ends. */
      const hooks = (also: { before?: () => void; after?: () => void } = {}): MeasureHooks => ({
        windowStart: () => {
          also.before?.();
          machine.start();
        },
        windowEnd: () => {
          machineCpu = machine.stop();
          also.after?.();
        },
      });
      const load = { url, headers, label: target.label };
      if (!target.churn) {
        let idle: { cpu: Promise<number>; at: number } | undefined;
        let idleEnd: typeof idle;
        const result = await measure(
          server.child,
          load,
          options,
          target.server === 'hello'
            ? hooks({
                before: () => (idle = { cpu: platformChild.cpuMicros().catch(() => Number.NaN), at: performance.now() }),
                after: () => (idleEnd = { cpu: platformChild.cpuMicros().catch(() => Number.NaN), at: performance.now() }),
              })
            : hooks(),
        );
        if (idle && idleEnd) platformIdle = ((await idleEnd.cpu) - (await idle.cpu)) / 1000 / (idleEnd.at - idle.at);
        rows.push({ target, result, bytes, machineCpu });
        continue;
      }

      rebuild ??= [
        { label: 'status after an availability signal (identity)', times: await statusRebuilds(port, base, AUTH, REBUILD_ROUNDS, 1000) },
        { label: 'status after an availability signal (gzip)', times: await statusRebuilds(port, base, GZIP, REBUILD_ROUNDS, 2000) },
        { label: 'table after a pricing signal (identity)', times: await tableRebuilds(port, base, AUTH, REBUILD_ROUNDS, 3000) },
        { label: 'table after a pricing signal (gzip)', times: await tableRebuilds(port, base, GZIP, REBUILD_ROUNDS, 4000) },
      ];
      // The kept status must follow the live status: a posted reading shows at once.
      const probe = STATIONS.length - 1;
      const datetime = new Date().toISOString();
      const posted = performance.now();
      await postSignals(port, 'availability', [transmission('availability', probe, 5000, datetime)]);
      propagation.push({ label: `before: ${STATIONS[probe]}`, ms: await untilShown(base, STATIONS[probe]!, datetime, posted) });

      const churn = new SignalChurn(port, CHURN_PER_SECOND, churnSignal(6000 + 1000 * rows.length));
      let from = { accepted: 0, at: 0 };
      let to = from;
      churn.start();
      let result: Measurement;
      try {
        result = await measure(
          server.child,
          load,
          options,
          hooks({
            before: () => (from = { accepted: churn.accepted, at: performance.now() }),
            after: () => (to = { accepted: churn.accepted, at: performance.now() }),
          }),
        );
      } finally {
        await churn.stop();
      }
      if (churn.failures.length > 0) throw new Error(`posting signals during the load failed: ${churn.failures.join('; ')}`);
      const last = churn.last;
      if (!last) throw new Error('no signal was accepted during the load');
      // The last reading posted must be in the status.
      propagation.push({ label: `after: ${last.hrsId}`, ms: await untilShown(base, last.hrsId, last.datetime, performance.now()) });
      rows.push({
        target,
        result,
        bytes,
        machineCpu,
        churn: { accepted: to.accepted - from.accepted, seconds: (to.at - from.at) / 1000, postedTotal: churn.posted, acceptedTotal: churn.accepted },
      });
    }
  } finally {
    agent.destroy();
    await tearDown(space, Object.values(servers));
  }

  const weeklyCount = STATIONS.filter((_, i) => datex2Hours(i) !== '24/7').length;
  const byNozzles = [2, 3, 4].map((n) => `${LAYOUTS.filter((l) => l.nozzles.length === n).length} with ${n}`).join(', ');
  options.print(loaderLine(`wrk ${wrkVersion()}`, options.connections, options.durationSeconds, options.warmupSeconds));
  options.print(`machine: ${availableParallelism()} CPUs (${cpus()[0]?.model.trim() ?? 'unknown'}), Node.js ${process.version}`);
  if (postgresSettings) options.print(postgresSettings);
  options.print(
    `platform: ${STATIONS.length} registered stations, each with capacity and coordinates in its details (nozzles: ${byNozzles}; ` +
      `${REFILL_POINTS} in all; ${ENERGY_RATES} products; ${EXPORT_V1_TIME_ZONE}; ${STATIONS.length - weeklyCount} open ${DATEX2_HOURS[0]}, ` +
      `${weeklyCount} "${WEEKLY_HOURS}"), each given one reading of each of the four categories before the load by ${seedPosts} real import v2 ` +
      `requests (${fixed(seedMs, 0)} ms); export v2 token, its rate limits counted on every request but out of reach`,
  );
  if (seen) {
    const weekly = weeklyOpen(seen.at);
    options.print(
      `table: ${integer(seen.table.sites)} sites, ${integer(seen.table.refillPoints)} refill points, ${integer(seen.table.rates)} energy rates; ` +
        `${integer(seen.table.bytes)} bytes, ${integer(seen.table.gzipBytes)} gzip-encoded`,
    );
    options.print(
      `status at ${berlin(seen.at).text} Berlin time (the "${WEEKLY_HOURS}" stations ${weekly ? 'open' : 'closed'}): ${integer(seen.status.sites)} site statuses, ` +
        `${integer(seen.status.refillPoints)} refill point statuses (` +
        POINT_STATES.map((s) => `${s} ${integer(seen!.status.tally[s])}`).join(', ') +
        `), ${integer(seen.status.rateUpdates)} energy rate updates; ${integer(seen.status.bytes)} bytes, ${integer(seen.status.gzipBytes)} gzip-encoded`,
    );
    options.print(`both documents valid against the DATEX II 3.7 schema set (xmllint-wasm, one call: ${fixed(seen.validateMs, 0)} ms)`);
    options.print(`the platform process used ${fixed(platformIdle, 2)} cores while nothing was asked of it (during the hello world target)`);
  }
  for (const { target, churn } of rows) {
    if (!churn) continue;
    options.print(
      `${target.label}: ${integer(churn.accepted)} signals accepted during the measured ${fixed(churn.seconds, 1)} s ` +
        `(${fixed(churn.accepted / churn.seconds, 1)}/s, availability and usage in turn, one transmission per POST, each moving the live status); ` +
        `${integer(churn.acceptedTotal)} of ${integer(churn.postedTotal)} posted from warm-up to end accepted`,
    );
  }
  if (propagation.length > 0) {
    options.print(
      `a posted reading was in the status after: ${propagation.map(({ label, ms }) => `${fixed(ms, 1)} ms (${label})`).join(', ')} ` +
        '(from the POST, resp. from the end of the load, to a GET showing it)',
    );
  }
  if (rebuild) {
    options.print();
    options.print(`each document fetched alone (no load) right after a signal / once more, ${REBUILD_ROUNDS} rounds each (client-side ms to the last byte; a difference is the rebuild):`);
    options.print(
      table(
        ['after', 'first median', 'first max', 'again median', 'again max'],
        rebuild.map(({ label, times }) => [label, fixed(median(times.first), 1), fixed(Math.max(...times.first), 1), fixed(median(times.again), 1), fixed(Math.max(...times.again), 1)]),
      ),
    );
  }
  options.print();
  options.print(
    table(
      ['target', 'loader', 'body bytes', 'req/s', 'MB/s', 'p50 ms', 'p99 ms', 'non-2xx', 'errors', ...CPU_HEADERS, 'machine CPU'],
      rows.map(({ target, result: r, bytes, machineCpu }) => [
        target.label,
        r.generator,
        integer(bytes),
        integer(r.requestsPerSecond),
        fixed((r.requestsPerSecond * bytes) / 1e6, 1),
        fixed(r.p50Ms, 3),
        fixed(r.p99Ms, 3),
        integer(r.non2xx),
        integer(r.errors),
        ...cpuCells(r),
        fixed(machineCpu, 2),
      ]),
    ),
  );
  options.print();
  options.print('body bytes: as sent (gzip-encoded where asked for; the 304 has none; the churn row: as before its load). MB/s: req/s x body bytes. non-2xx: 304 counts as success.');
  options.print("Latency: wrk's, over every request of the run (warm-up and drain included): an upper bound of the measured seconds'.");
  options.print(`${CPU_LEGEND} machine CPU: every process, the kernel included (n/a without /proc).`);
  options.print(`The signals rows' server CPU includes taking the signals (${CHURN_PER_SECOND}/s through import v2: token, validation, storage, publication).`);

  const row = (label: string) => rows.find((r) => r.target.label === label);
  options.print();
  const goals = [`${STATUS_LABEL}${GZIP_NOTE}`, `${STATUS_LABEL}${GZIP_NOTE}${CHURN_NOTE}`].flatMap((label) => {
    const r = row(label);
    return r
      ? [{
          what: `DATEX II status p99, gzip${r.churn ? `, ${CHURN_PER_SECOND} signals/s posted` : ''}`,
          measured: `${fixed(r.result.p99Ms, 1)} ms (wrk, over the whole run; ${integer(r.result.requestsPerSecond)} req/s, the server ${fixed(r.result.serverCpu, 2)} cores)`,
          goal: `under ${GOAL_P99_MS} ms`,
          met: r.result.p99Ms < GOAL_P99_MS,
        }]
      : [];
  });
  printGoals(options.print, goals);
  const hello = row(TARGETS[0]!.label)?.result;
  for (const label of [TABLE_LABEL, `${TABLE_LABEL}${GZIP_NOTE}`, `${TABLE_LABEL}, If-Modified-Since (304)`]) {
    const r = row(label);
    if (!r) continue;
    options.print(
      `${label.slice('platform '.length)}: ${fixed(serverMicros(r.result), 0)} µs server CPU per request, ${integer(r.bytes)} bytes per answer` +
        (hello ? ` (hello world: ${fixed(serverMicros(hello), 1)} µs)` : '') +
        ' (reported, no goal)',
    );
  }
  const busy = rows.flatMap(({ target, result, machineCpu }) => {
    const others = machineCpu - result.serverCpu - result.loaderCpu;
    return others >= 0.25 ? [`${target.label} (${others.toFixed(2)} cores)`] : [];
  });
  if (busy.length > 0) {
    options.print(
      `Note: processes other than the server and the load generator (PostgreSQL, Redis and this process included) kept the machine busy during ` +
        `${busy.join('; ')}: the rates are lower than on a quiet machine and vary from run to run; CPU per request is the steadier comparison.`,
    );
  }
  const bound = rows.flatMap(({ target, result }) => (result.loaderCpu >= 0.9 ? [target.label] : []));
  if (bound.length > 0) {
    options.print(`Note: the load generator used a whole core for ${bound.join('; ')}: that figure is bounded by the generator, not by the server.`);
  }
  for (const { target, result } of rows) {
    if (result.non2xx === 0 && result.errors === 0) continue;
    const codes = Object.entries(result.statusCodes)
      .filter(([code]) => !code.startsWith('2') && code !== '304')
      .map(([code, n]) => `${code}: ${n}`)
      .join(', ');
    options.print(`Note: ${target.label} got non-2xx answers or errors (${codes || 'none'}; ${result.errors} errors, ${result.timeouts} timeouts).`);
  }
  const failedTargets = rows.filter(({ result }) => result.non2xx > 0);
  if (failedTargets.length > 0) {
    throw new Error(`answers other than 200/304 under load: ${failedTargets.map(({ target }) => target.label).join('; ')}`);
  }
}

const scenario: Scenario = {
  description:
    `DATEX II v3.7 publications: GET /datex2/v3/table (identity, gzip, If-Modified-Since) and GET /datex2/v3/status (identity, gzip, ` +
    `also while ${CHURN_PER_SECOND} signals/s move the live status) over ${STATUS_STATIONS} stations, against a bare uWebSockets.js hello world`,
  run,
};
export default scenario;
