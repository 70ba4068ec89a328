/**
 * The demo's simulated originator fails now and then (src/cli/demo/originator.ts): forced here with
 * means shorter than its interval, it sends a transmission the layout does not allow (answered 400,
 * kept in the call log and counted as refused) and goes silent for some stations (their status turns
 * stale, then unknown, while the others stay fresh, and comes back when the outage ends). With the
 * faults off, it sends nothing refused.
 */
import t from 'tap';
import { DEMO_LEGACY_STATIONS, DEMO_ORIGINATOR, DEMO_TOKENS, demoFixture } from '../../src/cli/demo/fixture.js';
import { DemoOriginator } from '../../src/cli/demo/originator.js';
import { createLogger } from '../../src/config/log.js';
import { startCallLogWorker } from '../../workers/call-log/processor.js';
import { ADMIN_TOKEN, get, startTestPlatform } from '../helpers/platform.js';
import { until } from '../helpers/wait.js';

const quiet = createLogger('silent');

t.test('refused transmissions reach the call log; an outage turns stations unknown until it ends', async (t) => {
  const fixture = demoFixture();
  const p = await startTestPlatform(t, { fixture, env: { STATUS_STALE_AFTER: '1', STATUS_UNKNOWN_AFTER: '2' } });
  const worker = startCallLogWorker({ redis: p.parts.redis, redisPrefix: p.parts.config.redisPrefix, sql: p.sql, log: quiet, maxWaitMs: 50 });
  t.teardown(() => worker.close());
  const originator = new DemoOriginator(p.url, DEMO_TOKENS.import_v2, fixture.stations, 250, quiet, DEMO_LEGACY_STATIONS, DEMO_TOKENS.import_v1, {
    seed: 7,
    refusedEveryMs: 1,
    outageEveryMs: 1,
    outageMs: 4000,
    outageStations: 3,
  });
  originator.start();
  t.teardown(() => originator.stop());

  await until('the first tick', async () => (originator.outage ? true : undefined));
  const silenced = originator.outage!.stations;
  t.equal(silenced.length, 3, 'an outage silences three stations');
  const others = fixture.stations.map((s) => s.hrs_id).filter((id) => !silenced.includes(id));
  await until('the silenced stations to turn unknown', async () =>
    silenced.every((id) => p.parts.status.freshness(id, 'availability') === 'unknown') ? true : undefined, 10_000);
  t.ok(silenced.every((id) => p.parts.status.freshness(id, 'usage') === 'unknown'), 'usage unknown too');
  t.ok(others.every((id) => p.parts.status.freshness(id, 'availability') === 'fresh'), 'the other stations stay fresh');

  // The next outage begins at once (its mean is shorter than the interval), with stations of its own.
  await until('the outage to end', async () => (originator.outages >= 2 ? true : undefined), 15_000);
  const back = silenced.filter((id) => !originator.outage!.stations.includes(id));
  t.ok(back.length > 0, `stations of the first outage report again (${back.join(', ')})`);
  const states = await until('them to leave unknown', async () => {
    const now = back.map((id) => p.parts.status.freshness(id, 'availability'));
    return now.includes('unknown') ? undefined : now;
  }, 10_000);
  t.same(states, back.map(() => 'fresh'), 'fresh again after the outage');

  t.ok(originator.refused >= 1, `transmissions refused (${originator.refused})`);
  const logs = await until('the refused calls in the call log', async () => {
    const res = await get(`${p.url}/admin/v1/call-logs?originator=${DEMO_ORIGINATOR}`, ADMIN_TOKEN);
    const body = await res.json();
    return body.call_logs.length > 0 ? body.call_logs : undefined;
  });
  t.match(logs[0], { status: 400, endpoint: 'POST /import/v2/signal/availability/', station_ids: [/^[A-Z]{5}$/], response_body: /nozzle/i }, 'a 400 naming the nozzle the layout does not have');
});

t.test('with the faults off, nothing is refused and no station goes silent', async (t) => {
  const fixture = demoFixture();
  const p = await startTestPlatform(t, { fixture });
  const log = { warned: 0 };
  const logger = createLogger('warn', { write: (line: string) => { if (line.includes('refused')) log.warned++; } } as never);
  const originator = new DemoOriginator(p.url, DEMO_TOKENS.import_v2, fixture.stations, 200, logger, DEMO_LEGACY_STATIONS, DEMO_TOKENS.import_v1, { refusedEveryMs: 0, outageEveryMs: 0 });
  originator.start();
  await until('a few ticks', async () => (originator.posted >= 12 * 4 * 3 ? true : undefined));
  await originator.stop();
  t.equal(originator.refused, 0, 'nothing refused');
  t.equal(originator.outages, 0, 'no outage');
  t.equal(log.warned, 0, 'no transmission refused by the platform');
});
