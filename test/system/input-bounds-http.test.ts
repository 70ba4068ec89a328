/**
 * One request cannot freeze an instance: every text field of every route (each body field, each query
 * parameter, found from the routes' own schemas: test/helpers/input-targets.ts) is sent a value of
 * about 1 MB (a body fits under MAX_BODY_BYTES; a query value has 60 kB, under the request-line limit
 * of uWS, about 120 kB), one at a time, to an `hrs serve` process of its own, while another client polls its
 * `/healthz`. Each gets a 4xx in its family's error format within 1 s, and every `/healthz` answer
 * comes within 1 s too. Before the length limits came first, a station's `opening_hours` of 1 MB held
 * the event loop (and `/healthz`) for more than twelve minutes.
 */
import t from 'tap';
import { PROBLEM_ERRORS } from '../../src/http/errors.js';
import type { AnyRoute } from '../../src/http/contract.js';
import type { HttpServer } from '../../src/http/server.js';
import { TOKENS } from '../helpers/fixtures.js';
import { targetsOf, type InputTarget } from '../helpers/input-targets.js';
import { ADMIN_TOKEN, startTestPlatform } from '../helpers/platform.js';
import { ACCOUNTS, grantPortalRoles, portalFixture, signedIn } from '../helpers/portal.js';
import { freePort, HRS, start, waitFor } from '../helpers/process.js';

/** The bound the answers are held to. */
const ANSWER_MS = 1000;
/** What a request waits before it is counted as unanswered (the instance is then taken as frozen). */
const GIVE_UP_MS = 5000;
const BODY_VALUE = 1_000_000;
const QUERY_VALUE = 60_000;

let server: HttpServer | undefined;
const p = await startTestPlatform(t, { fixture: portalFixture(), routes: (s) => (server = s) });
await grantPortalRoles(p);
const { cookie } = await signedIn(p, ACCOUNTS.admin);

// The instance under test: a process of its own on the same database and Redis, so that this process
// (its client, its clock) keeps running whatever the instance does.
const { config } = p.parts;
const port = await freePort();
const url = `http://127.0.0.1:${port}`;
const instance = start(process.execPath, [HRS, 'serve', '--no-workers'], {
  DATABASE_URL: config.databaseUrl, REDIS_URL: config.redisUrl, REDIS_PREFIX: config.redisPrefix,
  HOST: '127.0.0.1', PORT: String(port), LOG_LEVEL: 'warn', ADMIN_TOKEN, SANDBOX: 'off',
  // Webhooks answer 503 without a key, before they read a body.
  WEBHOOK_SECRET_KEY: 'q3Jd0vXkZr8mWb2Yt5LpN7aHc4UeS1fGx6iKo9RwE-s',
});
t.teardown(() => void instance.child.kill('SIGKILL'));
await waitFor(`${url}/healthz`, 200, 120_000).catch((err: Error) => {
  throw new Error(`${err.message}; its output: ${instance.output()}`);
});

/** Path parameters that name what the fixture has. */
function pathOf(route: AnyRoute): string {
  const named: Record<string, string> = { hrs_id: 'BERLA', originator_id: 'mon-1', operator_id: 'h2-demo', signal_type: 'availability', event_id: 'ev-1', name: 'swagger-ui.css' };
  const id = route.path.startsWith('/admin/v1/users/') ? 'root' : route.path.startsWith('/admin/v1/originators/') ? 'mon-1' : route.path.startsWith('/portal/v1/webhooks/') ? 'wh_0000000000000000' : '1';
  return route.path.replace(/:([a-z_]+)/g, (_, name: string) => named[name] ?? id);
}

/** What a PUT or PATCH route's resource is now (its GET's answer), as the rest of a body; else undefined. */
async function current(route: AnyRoute): Promise<unknown> {
  if (route.method !== 'PUT' && route.method !== 'PATCH') return undefined;
  const res = await fetch(`${url}${pathOf(route)}`, { headers: credential(route) });
  const body = res.status === 200 && res.headers.get('content-type')?.startsWith('application/json') ? await res.json() : undefined;
  return body !== null && typeof body === 'object' && !Array.isArray(body) ? body : undefined;
}

/** The credential of the route's family. */
function credential(route: AnyRoute): Record<string, string> {
  if (route.public) return {};
  const bearer: Record<string, string> = {
    import_v2: TOKENS.import_v2, import_v1: TOKENS.import_v1, 'import_v1.1': TOKENS.import_v1,
    export_v2: TOKENS.export_v2, export_v1: TOKENS.export_v1, 'export_v1.1': TOKENS.export_v1, admin: ADMIN_TOKEN, metrics: ADMIN_TOKEN,
  };
  if (route.family.name === 'portal') return { Cookie: cookie!, Origin: url };
  return bearer[route.family.name] ? { Authorization: `Bearer ${bearer[route.family.name]}` } : {};
}

interface Answer {
  status: number;
  type: string;
  text: string;
  ms: number;
}

async function send(target: InputTarget): Promise<Answer | undefined> {
  const { route } = target;
  const started = performance.now();
  try {
    const res = await fetch(`${url}${pathOf(route)}${target.query ? `?${target.query}` : ''}`, {
      method: route.method,
      headers: { ...credential(route), ...(target.body ? { 'Content-Type': 'application/json' } : {}) },
      body: target.body,
      signal: AbortSignal.timeout(GIVE_UP_MS),
    });
    const text = await res.text();
    return { status: res.status, type: res.headers.get('content-type') ?? '', text, ms: performance.now() - started };
  } catch {
    return undefined;
  }
}

/** Whether the instance answers `/healthz` within a few seconds (it may have been busy with a request that gave up). */
async function answersHealth(): Promise<boolean> {
  const res = await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(2 * GIVE_UP_MS) }).catch(() => undefined);
  await res?.arrayBuffer();
  return res?.status === 200;
}

/** `/healthz` asked every 50 ms from here until stopped: how long each answer took. */
function pollHealth(): { stop: () => Promise<number[]> } {
  const times: number[] = [];
  let running = true;
  const loop = (async () => {
    while (running) {
      const started = performance.now();
      const res = await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(GIVE_UP_MS) }).catch(() => undefined);
      await res?.arrayBuffer();
      times.push(res?.status === 200 ? performance.now() - started : Number.POSITIVE_INFINITY);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  })();
  return { stop: async () => ((running = false), await loop, times) };
}

t.test('every text field of every family, about 1 MB: a 4xx in the family\'s format within 1 s, /healthz answered meanwhile', async (t) => {
  const routes = server!.contracts().filter((route) => route.method !== 'HEAD');
  const targets: InputTarget[] = [];
  for (const route of routes) targets.push(...targetsOf(route, { body: BODY_VALUE, query: QUERY_VALUE }, await current(route)));
  const families = new Set(targets.map((target) => target.route.family.name));
  for (const family of ['import_v1', 'import_v1.1', 'import_v2', 'export_v1', 'export_v1.1', 'export_v2', 'portal', 'admin', 'map']) {
    t.ok(families.has(family), `${family} has text inputs in the list`);
  }
  const hours = targets.find((target) => target.what === 'body opening_hours' && target.route.path === '/portal/v1/stations/:hrs_id');
  t.match(JSON.parse(hours?.body ?? '{}'), { hrs_id: 'BERLA', name: 'Berlin Airport' }, 'the portal station PUT\'s opening_hours is one of them, in the station as it is');
  const health = pollHealth();
  const slow: string[] = [];
  for (const target of targets) {
    const where = `${target.route.method} ${target.route.path} ${target.what}`;
    const answer = await send(target);
    if (answer === undefined) {
      t.fail(`${where}: no answer within ${GIVE_UP_MS} ms`);
      if (await answersHealth()) continue;
      t.fail(`the instance stopped answering /healthz after ${where}`);
      break;
    }
    if (answer.ms > ANSWER_MS) slow.push(`${where}: ${Math.round(answer.ms)} ms`);
    const problem = target.route.family.errors === PROBLEM_ERRORS;
    const formatted = problem ? answer.type.startsWith('application/problem+json') && 'detail' in JSON.parse(answer.text) : answer.type.startsWith('application/json');
    if (answer.status < 400 || answer.status > 499 || !formatted) t.fail(`${where}: ${answer.status} ${answer.type} ${answer.text.slice(0, 200)}`);
  }
  const times = await health.stop();
  t.same(slow, [], `every one of ${targets.length} requests answered within ${ANSWER_MS} ms`);
  t.ok(times.length > 0, `/healthz was asked ${times.length} times meanwhile`);
  t.ok(Math.max(...times) <= ANSWER_MS, `every /healthz answer within ${ANSWER_MS} ms (the slowest: ${Math.round(Math.max(...times))} ms)`);
});

t.test('opening hours the package would take minutes over are answered at once', async (t) => {
  // Closed on public holidays and nothing else: the package searched five years of holidays, day by day.
  const route = server!.contracts().find((r) => r.method === 'PUT' && r.path === '/portal/v1/stations/:hrs_id')!;
  const station = await (await fetch(`${url}/portal/v1/stations/BERLA`, { headers: credential(route) })).json() as Record<string, unknown>;
  const details = { ...(station.details as object), country: 'DE' };
  for (const [hours, status] of [['PH off', 200], ['24/7' + 'x'.repeat(16_000 - 4), 400], ['Mo-Fr 08:00-18:00; '.repeat(52), 400]] as const) {
    const answer = await send({ route, what: 'opening_hours', body: JSON.stringify({ name: station.name, opening_hours: hours, details }) });
    t.equal(answer?.status, status, `${hours.slice(0, 30)}… (${hours.length} characters): ${status}`);
    t.ok(answer !== undefined && answer.ms <= ANSWER_MS, `within ${ANSWER_MS} ms (${Math.round(answer?.ms ?? Infinity)} ms)`);
  }
});
