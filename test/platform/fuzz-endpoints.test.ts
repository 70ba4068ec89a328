import t from 'tap';
import fc from 'fast-check';
import type { RouteInfo } from '../../src/http/server.js';
import { baseFixture, TOKENS } from '../helpers/fixtures.js';
import { ADMIN_TOKEN, startTestPlatform } from '../helpers/platform.js';
import { runs } from '../helpers/scale.js';

/**
 * Every registered endpoint against arbitrary input: paths whose parameters are arbitrary Unicode
 * (NUL and lone surrogates included, percent-encoded byte by byte, and broken encodings), query
 * strings, headers and bodies. Whatever comes in, the answer is never a 5xx and always arrives.
 */

const ANSWER_WITHIN_MS = 10_000;
const RUNS = Number(process.env.FUZZ_RUNS ?? runs(500));

/** Text with what breaks naive handling mixed in: NUL, lone surrogates, pairs, controls, long runs. */
const text = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 20 }),
  fc.constantFrom('\u0000', 'a\u0000b', '\ud800', 'x\udfffy', '\ud83d\ude00', '%', '%zz', '..', '*', ' ', '\u202e', 'BERLA', 'mon-1'),
  fc.string({ unit: 'binary-ascii', minLength: 200, maxLength: 2000 }),
);

/** UTF-8 percent-encoding of every code unit, a lone surrogate as its 3-byte form (which is not UTF-8). */
function percentEncode(value: string): string {
  let out = '';
  for (let i = 0; i < value.length; i++) {
    const unit = value.charCodeAt(i);
    const pair = unit >= 0xd800 && unit <= 0xdbff && i + 1 < value.length && (value.charCodeAt(i + 1) & 0xfc00) === 0xdc00;
    if (pair) {
      out += encodeURIComponent(value.slice(i, i + 2));
      i++;
    } else if (unit >= 0xd800 && unit <= 0xdfff) {
      out += ['%' + (0xe0 | (unit >> 12)).toString(16), '%' + (0x80 | ((unit >> 6) & 0x3f)).toString(16), '%' + (0x80 | (unit & 0x3f)).toString(16)].join('').toUpperCase();
    } else {
      out += encodeURIComponent(value[i]!);
    }
  }
  return out;
}

/** A segment as sent: percent-encoded, raw garbage encoding, or left as it was. */
const segment = fc.oneof(
  text.map(percentEncode),
  fc.constantFrom('%', '%0', '%zz', '%E0%A4%A', '%ED%A0%80', '%C0%80', '%FF', '%00'),
);

const query = fc.array(fc.tuple(fc.oneof(fc.constantFrom('limit', 'offset', 'originator', 'hrs_id', 'since', 'status'), text), text), { maxLength: 4 }).map((pairs) =>
  pairs.map(([name, value]) => `${percentEncode(name)}=${percentEncode(value)}`).join('&'),
);

const headerValue = fc.string({ unit: 'binary-ascii', maxLength: 60 }).map((s) => s.replace(/[^\x20-\x7e]/g, ''));
const token = fc.oneof({ arbitrary: fc.constantFrom(...Object.values(TOKENS), ADMIN_TOKEN), weight: 4 }, headerValue);
const authorization = fc.oneof({ arbitrary: token.map((v) => `Bearer ${v}`), weight: 4 }, headerValue, fc.constant(undefined));
const contentType = fc.oneof({ arbitrary: fc.constant('application/json'), weight: 3 }, fc.constantFrom('application/json', 'application/json; charset=utf-8', 'text/plain', 'application/x-www-form-urlencoded'), headerValue, fc.constant(undefined));

const body = fc.oneof(
  fc.json({ maxDepth: 4 }).map((j) => Buffer.from(j, 'utf8')),
  fc.jsonValue({ maxDepth: 3 }).map((v) => Buffer.from(JSON.stringify([v]), 'utf8')),
  text.map((s) => Buffer.from(JSON.stringify({ transmission_id: s, hrs: s, datetime: s, dry_run: true }), 'utf8')),
  fc.uint8Array({ maxLength: 300 }).map((b) => Buffer.from(b)),
  fc.constant(undefined),
);

const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'] as const;

t.test('every endpoint: arbitrary paths, queries, headers and bodies never get a 5xx and are always answered', async (t) => {
  let routes: readonly RouteInfo[] = [];
  const p = await startTestPlatform(t, {
    fixture: baseFixture(),
    env: { EXPORT_V2_RATE_LIMIT_MINUTE: '1000000', EXPORT_V2_RATE_LIMIT_DAY: '1000000', IMPORT_V2_RATE_LIMIT: '1000000' },
    routes: (server) => {
      routes = server.routes();
      // Reach the handlers: the limit on failed authentications is tested on its own (auth.test.ts).
      server.watchAuthentication({ failed: () => undefined });
    },
  });
  t.ok(routes.length > 20, `${routes.length} endpoints`);
  const request = fc.record({
    route: fc.constantFrom(...routes),
    params: fc.array(segment, { minLength: 4, maxLength: 4 }),
    method: fc.oneof(fc.constant(undefined), fc.constantFrom(...METHODS)),
    query,
    authorization,
    contentType,
    body,
  });
  const seen = new Map<number, number>();
  await fc.assert(
    fc.asyncProperty(request, async (r) => {
      let i = 0;
      const path = r.route.path.split('/').map((part) => (part.startsWith(':') ? r.params[i++ % r.params.length]! : part)).join('/');
      const method = r.method ?? r.route.method;
      const headers: Record<string, string> = {};
      if (r.authorization !== undefined) headers.Authorization = r.authorization;
      if (r.contentType !== undefined) headers['Content-Type'] = r.contentType;
      const withBody = r.body !== undefined && method !== 'GET' && method !== 'HEAD';
      const url = `${p.url}${path}${r.query ? `?${r.query}` : ''}`;
      let res: Response;
      try {
        res = await fetch(url, { method, headers, body: withBody ? r.body : undefined, signal: AbortSignal.timeout(ANSWER_WITHIN_MS) });
        await res.arrayBuffer();
      } catch (err) {
        throw new Error(`${method} ${url}: no answer within ${ANSWER_WITHIN_MS} ms (${(err as Error).message})`);
      }
      seen.set(res.status, (seen.get(res.status) ?? 0) + 1);
      if (res.status >= 500) throw new Error(`${method} ${url}: ${res.status}`);
    }),
    { numRuns: RUNS, interruptAfterTimeLimit: 25_000, markInterruptAsFailure: false },
  );
  t.comment(`statuses: ${[...seen].sort(([a], [b]) => a - b).map(([s, n]) => `${s}×${n}`).join(' ')}`);
  t.ok([...seen.keys()].some((s) => s < 300), 'some requests got through to a handler');
  const errors = p.logs.lines.filter((l) => (l.level as number) >= 50);
  t.same(errors.map((l) => l.msg), [], 'nothing logged as an error');
});
