import t from 'tap';
import fc from 'fast-check';
import { baseFixture, TOKENS } from '../helpers/fixtures.js';
import { startTestPlatform } from '../helpers/platform.js';
import { runs } from '../helpers/scale.js';
import { holds } from '../helpers/property.js';

const CATEGORIES = ['availability', 'usage', 'hydrogen-storage', 'pricing'] as const;

function validBatch(category: (typeof CATEGORIES)[number]) {
  const envelope = { hrs: 'BERLA', datetime: new Date().toISOString(), dry_run: true };
  switch (category) {
    case 'availability':
      return [{ ...envelope, nozzles: [{ id: 'N1', available: true }, { dispenser_id: 'D1', available: false }], station: { maintenance: false, limitedly_available: false } }];
    case 'usage':
      return [{ ...envelope, nozzles: [{ id: 'N1', usage_status: 'free' }] }];
    case 'hydrogen-storage':
      return [{ ...envelope, storages: [{ id: 'S1', remaining_kg: '120.5', low_h2_storage: false }] }];
    case 'pricing':
      return [{ ...envelope, products: [{ id: 'P700', gross_price: '13.850', net_price: '11.640', currency: 'EUR' }] }];
  }
}

function paths(value: unknown, prefix: (string | number)[] = []): (string | number)[][] {
  const here = prefix.length > 0 ? [prefix] : [];
  if (Array.isArray(value)) return [...here, ...value.flatMap((v, i) => paths(v, [...prefix, i]))];
  if (value !== null && typeof value === 'object') return [...here, ...Object.entries(value).flatMap(([k, v]) => paths(v, [...prefix, k]))];
  return here;
}

function mutate(root: any, path: (string | number)[], value: unknown, remove: boolean): void {
  let node = root;
  for (const key of path.slice(0, -1)) node = node[key];
  const last = path[path.length - 1]!;
  if (remove && !Array.isArray(node)) delete node[last];
  else node[last] = value;
}

/** A 400 body is the non_field_errors object, or an array aligned with the request of objects. */
function wellFormed(sent: unknown, status: number, body: unknown): boolean {
  if (status === 204) return body === '';
  if (status !== 400) return false;
  const b = body as any;
  if (!Array.isArray(sent)) return Array.isArray(b?.non_field_errors) && b.non_field_errors.length === 1;
  if (sent.length === 0) return Array.isArray(b?.non_field_errors);
  return Array.isArray(b) && b.length === sent.length && b.every((x) => x !== null && typeof x === 'object' && !Array.isArray(x)) && b.some((x) => Object.keys(x).length > 0);
}

t.test('arbitrary and mutated bodies: never a 5xx, every 400 well formed', async (t) => {
  const f = baseFixture();
  f.originators.push({ id: 'mon-2', name: 'Monitoring Two', call_log_mode: 'disabled' });
  f.tokens.push({ generation: 'import_v2', originator: 'mon-2', value: 'test-import-v2-token-0002' });
  const p = await startTestPlatform(t, { fixture: f });
  const post = async (category: string, body: unknown, token: string) => {
    const res = await fetch(`${p.url}/import/v2/signal/${category}/`, {
      method: 'POST',
      body: JSON.stringify(body),
      headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
    });
    const text = await res.text();
    return { status: res.status, body: res.status === 204 ? '' : JSON.parse(text) };
  };

  // One originator's budget is 300 requests a minute: each property uses its own originator.
  await holds(
    t,
    fc.asyncProperty(fc.constantFrom(...CATEGORIES), fc.jsonValue(), async (category, body) => {
      const res = await post(category, body, TOKENS.import_v2);
      if (!wellFormed(body, res.status, res.body)) throw new Error(`${res.status} ${JSON.stringify(res.body)} for ${JSON.stringify(body)}`);
    }),
    { numRuns: runs(140) },
    `no 5xx and no malformed 400 in ${runs(140)} requests of any JSON`,
  );
  await holds(
    t,
    fc.asyncProperty(
      fc.constantFrom(...CATEGORIES).chain((category) =>
        fc.tuple(fc.constant(category), fc.constantFrom(...paths(validBatch(category))), fc.jsonValue({ maxDepth: 2 }), fc.boolean()),
      ),
      async ([category, path, value, remove]) => {
        const batch = validBatch(category);
        mutate(batch, path, value, remove);
        const res = await post(category, batch, 'test-import-v2-token-0002');
        if (!wellFormed(batch, res.status, res.body)) throw new Error(`${res.status} ${JSON.stringify(res.body)} for ${JSON.stringify(batch)}`);
      },
    ),
    { numRuns: runs(280) },
    `nor in ${runs(280)} valid batches with one value replaced or removed`,
  );
});
