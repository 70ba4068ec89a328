import t from 'tap';
import { loadFixture } from '../../src/registry/file/load.js';
import { baseFixture, TOKENS } from '../helpers/fixtures.js';
import { freshDatabase } from '../helpers/platform.js';
import { HRS, freePort, start, waitFor } from '../helpers/process.js';

const STATIONS = Array.from({ length: 20 }, (_, i) => `DUR${String.fromCharCode(65 + Math.floor(i / 26))}${String.fromCharCode(65 + (i % 26))}`);

t.test('SIGKILL in the middle of a burst: every 204 is stored, no request is half-stored', async (t) => {
  const { sql, config } = await freshDatabase(t);
  const f = baseFixture();
  const layout = (f.stations[0] as { layout: unknown }).layout;
  f.stations.push(...STATIONS.map((hrs_id) => ({ hrs_id, operator: 'h2-demo', name: `Station ${hrs_id}`, layout }) as never));
  f.assignments.push(...STATIONS.map((hrs_id) => ({ originator: 'mon-1', hrs_id, signal_type: 'availability', state: 'live' })));
  await loadFixture(sql, f, { baseDir: '.' });

  const port = await freePort();
  const server = start(process.execPath, [HRS, 'serve', '--no-workers'], {
    DATABASE_URL: config.databaseUrl,
    REDIS_PREFIX: config.redisPrefix,
    PORT: String(port),
    LOG_LEVEL: 'warn',
  });
  t.teardown(() => server.child.kill('SIGKILL'));
  const url = `http://127.0.0.1:${port}/import/v2/signal/availability/`;
  await waitFor(`http://127.0.0.1:${port}/readyz`);

  // Each request carries two transmissions (two stations), tagged with the request number.
  const acknowledged = new Set<number>();
  const sent = new Set<number>();
  let next = 0;
  const transmission = (hrs: string, request: number) => ({
    hrs,
    datetime: new Date().toISOString(),
    transmission_id: `req-${request}`,
    nozzles: [{ id: 'N1', available: request % 2 === 0 }],
    station: { maintenance: false, limitedly_available: false },
  });
  const worker = async () => {
    for (;;) {
      const request = next++;
      sent.add(request);
      const pair = [STATIONS[request % 20]!, STATIONS[(request + 7) % 20]!];
      try {
        const res = await fetch(url, {
          method: 'POST',
          headers: { Authorization: `Bearer ${TOKENS.import_v2}`, 'Content-Type': 'application/json' },
          body: JSON.stringify(pair.map((hrs) => transmission(hrs, request))),
        });
        if (res.status === 204) acknowledged.add(request);
        else if (res.status !== 429) throw new Error(`unexpected ${res.status}: ${await res.text()}`);
      } catch (err) {
        if ((err as Error).message.startsWith('unexpected')) throw err;
        return; // the server is gone
      }
    }
  };
  const workers = Array.from({ length: 16 }, worker);
  // Kill once a good part of the burst is acknowledged, well before the 300-per-minute limit.
  while (acknowledged.size < 120) await new Promise((resolve) => setTimeout(resolve, 5));
  server.child.kill('SIGKILL');
  await Promise.all(workers);
  await server.exited;

  const rows = await sql<{ transmission_id: string; n: number }[]>`
    SELECT transmission_id, count(*)::int AS n FROM signal_history GROUP BY transmission_id`;
  const stored = new Map(rows.map((r) => [Number(r.transmission_id.slice(4)), r.n]));
  t.ok(acknowledged.size > 20, `a real burst was acknowledged before the kill (${acknowledged.size} of ${sent.size} requests)`);
  const lost = [...acknowledged].filter((r) => stored.get(r) !== 2);
  t.same(lost, [], 'every acknowledged request is stored, both of its transmissions');
  const half = [...stored].filter(([, n]) => n !== 2);
  t.same(half, [], 'no request is half-stored');
});
