/**
 * layout-confirm: confirming a layout change through the portal while signals flow. A registry of
 * 1,000 stations (each with a confirmed layout, one originator live for every signal type) is served by
 * two platform instances on one database and Redis; a load of single-transmission availability signals
 * for all stations goes to both in turn. Five times, a draft adding a nozzle to one station is saved and
 * confirmed through `POST /portal/v1/stations/{hrs_id}/layout/confirm` on the first instance, while each
 * instance is asked every few milliseconds to accept a signal naming the new nozzle: the time from the
 * confirmation's send until an instance accepts it is when that instance validates against the new
 * layout. Goals: under 1 s on every instance, and no request of the background load failing meanwhile
 * (every answer 204). The confirmation's own answer comes once every instance has acknowledged the
 * change (src/infra/registry-acks.ts), so its latency is printed beside them.
 */
import { createHash, randomBytes } from 'node:crypto';
import { connect, ensureDatabase } from '../../db/connect.js';
import { migrate } from '../../db/migrate.js';
import { Child } from './lib/child.js';
import type { BenchOptions, Scenario } from './lib/scenario.js';
import { benchHrsId, seedRegistry } from './lib/seed.js';
import { fixed, integer, table } from './lib/table.js';
import { tearDown, workspace } from './lib/workspace.js';
import { printGoals } from './lib/cpu-report.js';

const STATIONS = 1000;
const ROUNDS = 5;
const PROBE_EVERY_MS = 5;
const GOAL_MS = 1000;
/** Concurrent requests of the background load (half to each instance). */
const LOAD_CONCURRENCY = 16;
const IMPORT_TOKEN = `bench-layout-confirm-import-${randomBytes(8).toString('hex')}`;
const TARGET = benchHrsId(0);

const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest();

function signal(hrsId: string, nozzles: string[]) {
  return JSON.stringify([
    {
      hrs: hrsId,
      datetime: new Date().toISOString(),
      nozzles: nozzles.map((id) => ({ id, available: true })),
      station: { maintenance: false, limitedly_available: false },
    },
  ]);
}

function post(base: string, body: string): Promise<number> {
  return fetch(`${base}/import/v2/signal/availability/`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${IMPORT_TOKEN}`, 'Content-Type': 'application/json' },
    body,
  }).then(async (res) => {
    await res.arrayBuffer();
    return res.status;
  });
}

/** Signals for every station in turn, to both instances, until stopped; counts answers by status. */
function backgroundLoad(bases: string[]) {
  const statuses = new Map<number, number>();
  let running = true;
  let next = 0;
  const worker = async (w: number) => {
    while (running) {
      const i = next++;
      const status = await post(bases[(i + w) % bases.length]!, signal(benchHrsId(1 + (i % (STATIONS - 1))), ['N1', 'N2'])).catch(() => 0);
      statuses.set(status, (statuses.get(status) ?? 0) + 1);
    }
  };
  const workers = Array.from({ length: LOAD_CONCURRENCY }, (_, w) => worker(w));
  return {
    statuses,
    async stop() {
      running = false;
      await Promise.all(workers);
    },
  };
}

/** Asks the instance to accept a signal naming `nozzle` every PROBE_EVERY_MS until it does; ms since `since`. */
async function acceptedAfter(base: string, nozzle: string, since: number, deadline: number): Promise<number> {
  for (;;) {
    const status = await post(base, signal(TARGET, ['N1', 'N2', nozzle]));
    if (status === 204) return performance.now() - since;
    if (status !== 400) throw new Error(`the probe answered ${status}`);
    if (performance.now() > deadline) return Number.POSITIVE_INFINITY;
    await new Promise((resolve) => setTimeout(resolve, PROBE_EVERY_MS));
  }
}

async function run(options: BenchOptions): Promise<void> {
  const space = workspace('layout_confirm');
  const { database, databaseUrl } = space;
  const servers: { child: Child; port: number }[] = [];
  try {
    await ensureDatabase(databaseUrl.toString());
    const sql = connect(databaseUrl.toString(), { max: 2 });
    const cookie = randomBytes(32).toString('base64url');
    try {
      await migrate(sql);
      await seedRegistry(sql, { stations: STATIONS });
      await sql`INSERT INTO tokens (generation, originator_id, name, hash) VALUES ('import_v2', 'bench-monitor', 'bench', ${sha256(IMPORT_TOKEN)})`;
      await sql`INSERT INTO users (id, email, is_admin) VALUES ('bench-admin', 'admin@bench.example', true)`;
      await sql`INSERT INTO portal_sessions (hash, user_id, expires_at) VALUES (${sha256(cookie)}, 'bench-admin', clock_timestamp() + interval '2 hours')`;
    } finally {
      await sql.end({ timeout: 5 });
    }
    for (const name of ['platform A', 'platform B']) {
      const started = await Child.start(name, new URL('./lib/platform-server.ts', import.meta.url), {
        env: {
          BENCH_DATABASE_URL: databaseUrl.toString(),
          BENCH_REDIS_PREFIX: database,
          BENCH_FIXTURE: 'base',
          BENCH_PLATFORM_ENV: JSON.stringify({ IMPORT_V2_RATE_LIMIT: '100000000' }),
        },
        readyTimeoutMs: 180_000,
      });
      servers.push({ child: started.child, port: started.ready.port as number });
    }
    const bases = servers.map((s) => `http://127.0.0.1:${s.port}`);
    const portal = (method: string, path: string, body?: unknown) =>
      fetch(`${bases[0]}/portal/v1/${path}`, {
        method,
        headers: { Cookie: `hrs_portal=${cookie}`, Origin: bases[0]!, 'Content-Type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      }).then(async (res) => ({ status: res.status, body: (await res.json().catch(() => null)) as any }));

    const load = backgroundLoad(bases);
    const started = performance.now();
    await new Promise((resolve) => setTimeout(resolve, options.warmupSeconds * 1000));
    const rounds: string[][] = [];
    const worst: number[] = [];
    const answers: number[] = [];
    for (let round = 1; round <= ROUNDS; round++) {
      const layout = (await portal('GET', `stations/${TARGET}/layout`)).body.confirmed;
      const nozzle = `NX${round}`;
      const draft = structuredClone(layout.layout);
      draft.dispensers[0].nozzles.push({ external_id: nozzle, connector_type: 'H70', vehicle_side: 'left', is_certified: true, fuelling_options: ['700ld'] });
      const saved = await portal('PUT', `stations/${TARGET}/layout/draft`, draft);
      if (saved.status !== 200) throw new Error(`saving the draft answered ${saved.status}: ${JSON.stringify(saved.body)}`);
      const sent = performance.now();
      const deadline = sent + 10_000;
      const [confirmed, ...instances] = await Promise.all([
        portal('POST', `stations/${TARGET}/layout/confirm`, { expected_version: layout.version }).then((r) => ({ ...r, ms: performance.now() - sent })),
        ...bases.map((base) => acceptedAfter(base, nozzle, sent, deadline)),
      ]);
      if (confirmed.status !== 200) throw new Error(`the confirmation answered ${confirmed.status}: ${JSON.stringify(confirmed.body)}`);
      answers.push(confirmed.ms);
      worst.push(Math.max(...instances));
      rounds.push([String(round), `v${confirmed.body.confirmed.version}`, fixed(confirmed.ms, 1), ...instances.map((ms) => fixed(ms, 1))]);
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
    await load.stop();
    const seconds = (performance.now() - started) / 1000;
    const total = [...load.statuses.values()].reduce((a, b) => a + b, 0);
    const failed = total - (load.statuses.get(204) ?? 0);

    options.print(table(['round', 'layout', 'confirm answered (ms)', 'instance A validates (ms)', 'instance B validates (ms)'], rounds));
    const sorted = [...worst].sort((a, b) => a - b);
    options.print();
    options.print(`background load: ${integer(total)} signals in ${fixed(seconds, 1)} s (${integer(total / seconds)}/s), answers ${JSON.stringify(Object.fromEntries(load.statuses))}`);
    options.print(`time until every instance validates against the new layout: min ${fixed(sorted[0]!, 1)} ms, median ${fixed(sorted[Math.floor(sorted.length / 2)]!, 1)} ms, max ${fixed(sorted.at(-1)!, 1)} ms`);
    printGoals(options.print, [
      { what: 'every instance validates against the new layout (the slowest of the rounds)', measured: `${fixed(sorted.at(-1)!, 1)} ms`, goal: `within ${GOAL_MS} ms`, met: sorted.at(-1)! < GOAL_MS },
      { what: 'requests of the background load that failed', measured: integer(failed), goal: 'none', met: failed === 0 },
    ]);
  } finally {
    await tearDown(space, servers);
  }
}

const scenario: Scenario = {
  description: `confirming a layout change through the portal while ${integer(STATIONS)} stations' signals flow to two instances`,
  run,
};
export default scenario;
