/**
 * `GET /metrics`: the Prometheus text after real requests, imports, a stream and a rate-limit refusal,
 * parsed and checked counter by counter; and the tokens it takes (ADMIN_TOKEN always, METRICS_TOKEN
 * when set, neither: refused saying so).
 */
import t from 'tap';
import { METRICS_MESSAGES } from '../../src/api/metrics/family.js';
import { VERSION } from '../../src/config/version.js';
import { baseFixture, berlaAssignments, TOKENS } from '../helpers/fixtures.js';
import { ADMIN_TOKEN, get, startTestPlatform, type TestPlatform } from '../helpers/platform.js';
import { until } from '../helpers/wait.js';
import { WsClient } from '../helpers/ws.js';

const METRICS_TOKEN = 'test-metrics-token-0123456789';

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** The samples of a Prometheus text exposition (comments skipped). */
function parse(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const match = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match) throw new Error(`not a sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const [, key, value] of (match[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) labels[key!] = value!;
    samples.push({ name: match[1]!, labels, value: Number(match[3]) });
  }
  return samples;
}

/** The sum of the samples of `name` whose labels include `labels`; undefined when there is none. */
function value(samples: Sample[], name: string, labels: Record<string, string> = {}): number | undefined {
  const found = samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
  return found.length === 0 ? undefined : found.reduce((sum, s) => sum + s.value, 0);
}

async function scrape(p: TestPlatform, token = METRICS_TOKEN): Promise<Sample[]> {
  const res = await get(`${p.url}/metrics`, token);
  if (res.status !== 200) throw new Error(`/metrics answered ${res.status}: ${await res.text()}`);
  t.match(res.headers.get('content-type'), /^text\/plain; version=0\.0\.4/);
  return parse(await res.text());
}

const ago = (seconds: number) => new Date(Date.now() - seconds * 1000).toISOString();
const availability = (extra: Record<string, unknown> = {}) => ({
  hrs: 'BERLA',
  datetime: ago(5),
  nozzles: [{ id: 'N1', available: true }, { id: 'N2', available: false }],
  station: { maintenance: false, limitedly_available: true },
  ...extra,
});

function postImport(p: TestPlatform, category: string, body: unknown): Promise<Response> {
  return fetch(`${p.url}/import/v2/signal/${category}/`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${TOKENS.import_v2}`, 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
  });
}

t.test('after real requests the counters moved, with the right labels', async (t) => {
  const p = await startTestPlatform(t, {
    fixture: { ...baseFixture(), assignments: berlaAssignments() },
    env: { METRICS_TOKEN, IMPORT_V2_RATE_LIMIT: '6' },
  });
  t.equal((await get(`${p.url}/v2/hrs/BERLA`, TOKENS.export_v2)).status, 200);
  t.equal((await get(`${p.url}/v2/hrs/NOPE1`, TOKENS.export_v2)).status, 404);
  t.equal((await get(`${p.url}/no/such/page`)).status, 404);
  t.equal((await postImport(p, 'availability', [availability(), availability({ nozzles: [{ id: 'N9', available: true }] })])).status, 400, 'one bad transmission rejects both');
  t.equal((await postImport(p, 'availability', [availability()])).status, 204);
  t.equal((await postImport(p, 'availability', [availability({ dry_run: true })])).status, 204);
  t.equal((await postImport(p, 'usage', [{ hrs: 'BERLA', datetime: ago(5), nozzles: [{ dispenser_id: 'D1', usage_status: 'in-use' }] }])).status, 204);
  let throttled = 0;
  for (let i = 0; i < 6 && throttled === 0; i++) if ((await postImport(p, 'availability', 'not a list')).status === 429) throttled++;
  t.equal(throttled, 1, 'the import budget ran out');
  const stream = await WsClient.connect(`${p.url.replace('http', 'ws')}/v2/hrs/status/stream`, { Authorization: `Bearer ${TOKENS.export_v2}` });
  t.teardown(() => stream.close());
  await stream.nextOf('authenticated');

  const samples = await scrape(p);
  const requests = (labels: Record<string, string>) => value(samples, 'hrs_http_requests_total', labels);
  t.equal(requests({ family: 'export_v2', route: '/v2/hrs/:hrs_id', method: 'GET', status: '200' }), 1);
  t.equal(requests({ family: 'export_v2', route: '/v2/hrs/:hrs_id', method: 'GET', status: '404' }), 1);
  t.equal(requests({ family: 'root', route: 'unmatched', method: 'GET', status: '404' }), 1, 'unknown paths are one series, not one per path');
  t.equal(requests({ family: 'import_v2', route: '/import/v2/signal/availability/', status: '204' }), 2);
  t.equal(requests({ family: 'import_v2', route: '/import/v2/signal/availability/', status: '429' }), 1);
  t.equal(value(samples, 'hrs_http_request_duration_seconds_count', { family: 'import_v2', route: '/import/v2/signal/usage/', method: 'POST' }), 1);
  t.ok(value(samples, 'hrs_http_request_duration_seconds_sum', { family: 'export_v2' })! > 0, 'latency is measured');

  const transmissions = (category: string, outcome: string) => value(samples, 'hrs_import_v2_transmissions_total', { category, outcome });
  t.equal(transmissions('availability', 'rejected'), 2, 'both transmissions of the refused request');
  t.equal(transmissions('availability', 'accepted'), 1);
  t.equal(transmissions('availability', 'dry_run'), 1);
  t.equal(transmissions('usage', 'accepted'), 1);
  t.equal(value(samples, 'hrs_signal_commit_rows_count'), 2, 'two commits');
  t.equal(value(samples, 'hrs_signal_commit_rows_sum'), 2, 'of one row each');
  t.equal(value(samples, 'hrs_signal_commit_duration_seconds_count'), 2);

  t.equal(value(samples, 'hrs_rate_limit_refusals_total', { family: 'import_v2' }), 1);
  t.equal(value(samples, 'hrs_status_actors', { freshness: 'fresh' }), 2, 'BERLA availability and usage');
  t.equal(value(samples, 'hrs_status_actors', { freshness: 'stale' }), 0);
  t.equal(value(samples, 'hrs_push_sockets', { kind: 'stream' }), 1);
  t.equal(value(samples, 'hrs_push_sockets', { kind: 'admin' }), 0);
  t.equal(value(samples, 'hrs_push_closed_slow_total'), 0);
  t.equal(value(samples, 'hrs_queue_jobs', { queue: 'call-log', state: 'failed' }), 0);
  t.ok(value(samples, 'hrs_queue_jobs', { queue: 'call-log', state: 'waiting' })! >= 1, 'the refused import waits for the call-log worker (none runs here)');
  t.equal(value(samples, 'hrs_queue_jobs', { queue: 'mail', state: 'waiting' }), 0);
  t.equal(value(samples, 'hrs_build_info', { version: VERSION }), 1);
  t.ok(value(samples, 'process_resident_memory_bytes')! > 0, 'process metrics too');

  stream.close();
  const later = await until('the stream counted as closed', async () => {
    const s = await scrape(p, ADMIN_TOKEN);
    return value(s, 'hrs_push_sockets', { kind: 'stream' }) === 0 ? s : undefined;
  });
  t.equal(value(later, 'hrs_http_requests_total', { family: 'metrics', route: '/metrics', status: '200' }), 1, 'the first scrape is counted by the next');
});

t.test('/metrics takes ADMIN_TOKEN and METRICS_TOKEN, and nothing else', async (t) => {
  const p = await startTestPlatform(t, { env: { METRICS_TOKEN } });
  t.equal((await get(`${p.url}/metrics`, METRICS_TOKEN)).status, 200, 'the metrics token');
  t.equal((await get(`${p.url}/metrics`, ADMIN_TOKEN)).status, 200, 'the admin token');
  const missing = await get(`${p.url}/metrics`);
  t.equal(missing.status, 401);
  t.equal(missing.headers.get('www-authenticate'), 'Bearer');
  t.match(missing.headers.get('content-type'), /application\/problem\+json/);
  const wrong = await get(`${p.url}/metrics`, 'not-the-metrics-token-000');
  t.equal(wrong.status, 401);
  t.equal((await wrong.json()).detail, METRICS_MESSAGES.unknown);
  t.equal((await get(`${p.url}/metrics`, TOKENS.export_v2)).status, 401, 'an API token is no metrics token');
});

t.test('with only ADMIN_TOKEN set, it alone opens /metrics', async (t) => {
  const p = await startTestPlatform(t);
  t.equal((await get(`${p.url}/metrics`, ADMIN_TOKEN)).status, 200);
  t.equal((await get(`${p.url}/metrics`, METRICS_TOKEN)).status, 401);
});

t.test('with neither token set, /metrics is refused saying why', async (t) => {
  const p = await startTestPlatform(t, { env: { ADMIN_TOKEN: '' } });
  const res = await get(`${p.url}/metrics`, METRICS_TOKEN);
  t.equal(res.status, 401);
  t.equal((await res.json()).detail, METRICS_MESSAGES.disabled);
});

t.test('two platforms in one process count apart', async (t) => {
  const a = await startTestPlatform(t, { env: { METRICS_TOKEN } });
  const b = await startTestPlatform(t, { env: { METRICS_TOKEN } });
  await get(`${a.url}/healthz`);
  await get(`${a.url}/healthz`);
  t.equal(value(await scrape(a), 'hrs_http_requests_total', { route: '/healthz' }), 2);
  t.equal(value(await scrape(b), 'hrs_http_requests_total', { route: '/healthz' }), undefined);
});
