/**
 * delta: what export v2's delta (extension) costs. A throwaway database gets 10,000 stations with
 * confirmed layouts (set-based SQL, ./lib/seed.ts: each creation is a change of the log), then 1,000 of
 * them change (one statement, one change each). The platform serves them; each target is asked
 * sequentially (one request at a time: the delta is a mirror's periodic call, not a crawl) and its
 * latency taken: the plain list's page of 100 (baseline), the delta of those 1,000 changes from the
 * token read before them, 100 and 500 a page, its last page (from the position of its 900th change),
 * an empty delta (nothing since), the worst case (every change since the log started, 11,000 rows:
 * 10,000 stations), the events' delta, and the delta's statement alone in PostgreSQL.
 */
import { connect, ensureDatabase } from '../../db/connect.js';
import { migrate } from '../../db/migrate.js';
import { stationChanges } from '../../db/queries/change-log.js';
import { syncToken } from '../../src/domain/export-v2/delta.js';
import { TOKENS } from '../helpers/fixtures.js';
import { Child } from './lib/child.js';
import type { BenchOptions, Scenario } from './lib/scenario.js';
import { tearDown, workspace } from './lib/workspace.js';
import { seedRegistry } from './lib/seed.js';
import { fixed, integer, table } from './lib/table.js';

const STATIONS = 10_000;
const CHANGES = 1_000;
const ROUNDS = 40;
const LIMITS = { EXPORT_V2_RATE_LIMIT_MINUTE: '100000000', EXPORT_V2_RATE_LIMIT_DAY: '100000000' };
const AUTH = { Authorization: `Bearer ${TOKENS.export_v2}` };

/** Percentile of sorted values. */
const at = (sorted: number[], q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;

async function timed(rounds: number, call: () => Promise<number>): Promise<{ p50: number; p95: number; bytes: number }> {
  const ms: number[] = [];
  let bytes = 0;
  for (let i = 0; i < 3; i++) await call();
  for (let i = 0; i < rounds; i++) {
    const started = performance.now();
    bytes = await call();
    ms.push(performance.now() - started);
  }
  ms.sort((a, b) => a - b);
  return { p50: at(ms, 0.5), p95: at(ms, 0.95), bytes };
}

async function run(options: BenchOptions): Promise<void> {
  const space = workspace('delta');
  const { database, databaseUrl } = space;
  const servers: { child: Child; port: number }[] = [];
  const sql = connect(databaseUrl.toString(), { max: 2 });
  try {
    await ensureDatabase(databaseUrl.toString());
    await migrate(sql);
    await seedRegistry(sql, { stations: STATIONS });
    // The seeding skips triggers: the log gets each station's creation as the registry's writers would write it.
    await sql`SELECT hrs_log_change('station', hrs_id, hrs_id, 'created', NULL) FROM (SELECT hrs_id FROM stations WHERE NOT sandbox ORDER BY hrs_id) s`;
    const platform = await Child.start('platform', new URL('./lib/platform-server.ts', import.meta.url), {
      env: { BENCH_DATABASE_URL: databaseUrl.toString(), BENCH_REDIS_PREFIX: database, BENCH_FIXTURE: 'export-token', BENCH_PLATFORM_ENV: JSON.stringify(LIMITS) },
      readyTimeoutMs: 180_000,
    });
    servers.push({ child: platform.child, port: platform.ready.port as number });
    const base = `http://127.0.0.1:${servers[0]!.port}`;
    const json = async (path: string) => {
      const res = await fetch(`${base}${path}`, { headers: AUTH });
      const text = await res.text();
      if (res.status !== 200) throw new Error(`GET ${path} answered ${res.status}: ${text.slice(0, 300)}`);
      return { body: JSON.parse(text) as { sync_token: string; next: string | null; results: unknown[] }, bytes: Buffer.byteLength(text) };
    };
    const before = (await json('/v2/hrs?limit=1')).body.sync_token;
    await sql`UPDATE stations SET static_modified_at = clock_timestamp()
              WHERE hrs_id IN (SELECT hrs_id FROM stations WHERE NOT sandbox ORDER BY md5(hrs_id) LIMIT ${CHANGES})`;
    await sql`INSERT INTO station_events (hrs_id, id, kind, starts_at, ends_at, description)
              SELECT hrs_id, 'bench', 'maintenance', now() + interval '1 day', NULL, '' FROM stations WHERE NOT sandbox ORDER BY hrs_id LIMIT ${CHANGES}`;
    const [headRow] = await sql<{ head: string }[]>`SELECT max(seq)::text AS head FROM change_log`;
    const head = headRow!.head;
    const first = await json(`/v2/hrs?since=${before}&limit=100`);
    if (first.body.results.length !== 100 || first.body.next === null) throw new Error('the delta\'s first page is not a full page with a next one');
    const [{ ninehundredth }] = (await sql<{ ninehundredth: string }[]>`
      SELECT seq::text AS ninehundredth FROM change_log WHERE topic = 'station' AND seq > ${Number(Buffer.from(before, 'base64url').toString().split(':').pop())}
      ORDER BY seq OFFSET 899 LIMIT 1`) as unknown as [{ ninehundredth: string }];
    const now = (await json('/v2/hrs?limit=1')).body.sync_token;
    const targets: [string, string][] = [
      ['plain list, limit=100 (baseline)', '/v2/hrs?limit=100'],
      [`delta of ${integer(CHANGES)} changes, limit=100 (first page)`, `/v2/hrs?since=${before}&limit=100`],
      [`delta of ${integer(CHANGES)} changes, limit=500`, `/v2/hrs?since=${before}&limit=500`],
      ['delta, its last page (100 left)', `/v2/hrs?since=${syncToken(Number(ninehundredth))}&limit=100`],
      ['delta, nothing since', `/v2/hrs?since=${now}&limit=100`],
      [`delta from the log's start (${integer(STATIONS + CHANGES)} station rows), limit=100`, `/v2/hrs?since=${syncToken(0)}&limit=100`],
      [`events delta of ${integer(CHANGES)} creations, limit=100`, `/v2/hrs/events?since=${before}&limit=100`],
    ];
    const rows: string[][] = [];
    for (const [label, path] of targets) {
      const r = await timed(ROUNDS, async () => (await json(path)).bytes);
      rows.push([label, fixed(r.p50, 1), fixed(r.p95, 1), integer(r.bytes)]);
    }
    const after = Number(Buffer.from(before, 'base64url').toString().split(':').pop());
    const statement = await timed(ROUNDS, async () => (await stationChanges(sql, after, 100)).changes.length);
    rows.push([`the delta's statement alone (${integer(CHANGES)} changes, 100 a page)`, fixed(statement.p50, 1), fixed(statement.p95, 1), '']);
    const whole = await timed(10, async () => (await stationChanges(sql, 0, 100)).changes.length);
    rows.push([`the statement from the log's start`, fixed(whole.p50, 1), fixed(whole.p95, 1), '']);
    options.print(`${integer(STATIONS)} stations, ${integer(CHANGES)} changed and ${integer(CHANGES)} events created; log head ${head}; ${ROUNDS} sequential requests each`);
    options.print(table(['target', 'p50 (ms)', 'p95 (ms)', 'bytes'], rows));
  } finally {
    await sql.end({ timeout: 5 });
    await tearDown(space, servers);
  }
}

const scenario: Scenario = {
  description: `the delta's cost: ${integer(STATIONS)} stations, ${integer(CHANGES)} changes, a page of it against a page of the list`,
  run,
};
export default scenario;
