import t from 'tap';
import { createServer, type Socket } from 'node:net';
import { createClient } from 'redis';
import { DRF_ERRORS, HttpError, PROBLEM_ERRORS, json } from '../../src/http/errors.js';
import { rateLimitGuard } from '../../src/http/rate-limit-guard.js';
import { RateLimiter, type RateLimit } from '../../src/infra/rate-limit.js';
import type { Request } from '../../src/http/request.js';
import { openRedis, type Redis } from '../../src/infra/redis.js';
import { createLogger } from '../../src/config/log.js';
import { baseFixture, TOKENS } from '../helpers/fixtures.js';
import { get, logCapture, startTestPlatform, uniqueName } from '../helpers/platform.js';
import { until } from '../helpers/wait.js';
import { TEST_REDIS_URL } from '../helpers/services.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));

type Teardown = Parameters<typeof startTestPlatform>[0];

/** A limiter on the local Redis under a prefix of its own; its keys go when the test ends. */
async function limiter(t: Teardown, deadlineMs?: number): Promise<{ limiter: RateLimiter; redis: Redis; prefix: string }> {
  const redis = await openRedis(TEST_REDIS_URL, 'rate-limit-test');
  const prefix = uniqueName('rl');
  t.teardown(async () => {
    const keys = await redis.keys(`${prefix}:*`);
    if (keys.length > 0) await redis.del(keys);
    await redis.close();
  });
  return { limiter: new RateLimiter(redis, prefix, deadlineMs), redis, prefix };
}

/** Just enough of a request for a guard. */
function fakeRequest(id = 'mon-1'): Request {
  return {
    principal: { kind: 'originator', id, tokenId: '1', generation: 'import_v2' },
    responseHeaders: {},
  } as unknown as Request;
}

t.test('the limiter counts, and tells what is left and when it frees up', async (t) => {
  const { limiter: l, redis } = await limiter(t);
  const five: RateLimit[] = [{ limit: 5, windowSeconds: 60 }];
  for (let i = 1; i <= 5; i++) {
    const r = await l.hit('a', five);
    t.equal(r.allowed, true, `request ${i} is allowed`);
    t.equal(r.remaining, 5 - i, `${5 - i} left`);
    t.equal(r.limit.limit, 5);
    t.ok(r.resetSeconds >= 59 && r.resetSeconds <= 60, `reset ${r.resetSeconds} s: the oldest leaves a minute after it came`);
    t.equal(r.retryAfterSeconds, undefined);
  }
  const refused = await l.hit('a', five);
  t.equal(refused.allowed, false, 'the sixth is refused');
  t.equal(refused.remaining, 0);
  t.ok(refused.retryAfterSeconds! >= 59 && refused.retryAfterSeconds! <= 60, `Retry-After ${refused.retryAfterSeconds}`);
  t.equal(refused.resetSeconds, refused.retryAfterSeconds, 'with nothing left, reset is the wait');
  const key = l.redisKey('a', five[0]!);
  t.equal(await l.counted('a', five[0]!), 5, 'a refused request is not counted');
  const ttl = await redis.pTTL(key);
  t.ok(ttl > 0 && ttl <= 60_000, `the key expires (${ttl} ms)`);
  t.equal((await l.hit('b', five)).remaining, 4, 'another key has its own budget');
});

t.test('checks asked for in one turn share one script call and keep their order', async (t) => {
  const { limiter: l, redis, prefix } = await limiter(t);
  const three: RateLimit[] = [{ limit: 3, windowSeconds: 60 }];
  const two: RateLimit[] = [{ limit: 2, windowSeconds: 60 }, { limit: 10, windowSeconds: 3600, name: 'hour' }];
  await l.hit('warm-up', three); // the script is cached in Redis from here on
  const monitor = await redis.duplicate().connect();
  const evals: string[] = [];
  await monitor.monitor((line) => {
    if (line.includes(prefix)) evals.push(line);
  });
  t.teardown(() => monitor.close());
  const results = await Promise.all([
    l.hit('a', three),
    l.hit('b', two),
    l.hit('a', three),
    l.hit('a', three),
    l.hit('b', two),
    l.hit('a', three),
    l.hit('b', two),
  ]);
  t.same(
    results.map((r) => [r.allowed, r.remaining]),
    [
      [true, 2],
      [true, 1],
      [true, 1],
      [true, 0],
      [true, 0],
      [false, 0],
      [false, 0],
    ],
    'each check sees the ones before it, key by key',
  );
  t.equal(results[6]!.limit.limit, 2, 'the refusal names the limit that was hit');
  t.equal(await l.counted('a', three[0]!), 3);
  t.equal(await l.counted('b', two[1]!), 2, 'a refused request is counted against no limit');
  t.equal(await redis.zCard(l.redisKey('a', three[0]!)), 1, "a's checks of one turn share one member");
  await until('the monitor to see the script call', () => (evals.length > 0 ? true : undefined));
  t.equal(evals.filter((line) => /"EVALSHA"/i.test(line)).length, 1, 'one script call for the seven checks');
});

t.test('while a call is out or within a millisecond of the last, checks wait and go together', async (t) => {
  // Redis is held 200 ms below: a deadline of seconds, so a loaded machine cannot turn the hold into a failure.
  const { limiter: l, redis, prefix } = await limiter(t, 5_000);
  const many: RateLimit[] = [{ limit: 1000, windowSeconds: 60 }];
  await l.hit('warm-up', many);
  const monitor = await redis.duplicate().connect();
  const evals: string[] = [];
  await monitor.monitor((line) => {
    if (line.includes(prefix) && /"EVALSHA"/i.test(line)) evals.push(line);
  });
  t.teardown(() => monitor.close());
  const calls = async (expected: number, what: string) => {
    await until(what, () => (evals.length >= expected ? true : undefined));
    await sleep(50);
    t.equal(evals.length, expected, what);
  };
  // One check goes at once (the warm-up was long enough ago); five more, one per turn while it is out,
  // share the next call. Redis holds the first call 200 ms (CLIENT PAUSE from a connection of its own),
  // so that the five turns come while it is out however slowly a loaded machine runs them.
  await sleep(5);
  const pauser = await redis.duplicate().connect();
  t.teardown(() => pauser.close());
  await pauser.sendCommand(['CLIENT', 'PAUSE', '200', 'ALL']);
  const first = l.hit('k', many);
  const later: Promise<unknown>[] = [];
  for (let i = 0; i < 5; i++) {
    await new Promise((resolve) => setImmediate(resolve));
    later.push(l.hit('k', many));
  }
  await Promise.all([first, ...later]);
  await calls(2, 'six checks asked for in six turns: two script calls');
  t.equal(await l.counted('k', many[0]!), 6, 'each counted');

  // Forty checks of one turn, more than a full batch: one call for all of them.
  await l.hit('k', many);
  await calls(3, 'a seventh check: a third call');
  await Promise.all(Array.from({ length: 40 }, () => l.hit('k', many)));
  await calls(4, 'forty checks of one turn: one more script call');
  t.equal(await l.counted('k', many[0]!), 47);
});

t.test('several limits: counted against all only when all allow', async (t) => {
  const { limiter: l, redis } = await limiter(t);
  const limits: RateLimit[] = [
    { limit: 3, windowSeconds: 60, name: 'burst' },
    { limit: 5, windowSeconds: 3600, name: 'sustained' },
  ];
  const [burst, sustained] = limits.map((x) => l.redisKey('u', x)) as [string, string];

  let r = await l.hit('u', limits);
  t.equal(r.limit.name, 'burst', 'the tightest limit is reported');
  t.equal(r.remaining, 2);
  t.same(r.limits.map((s) => s.remaining), [2, 4], 'and every limit\'s state');
  await l.hit('u', limits);
  await l.hit('u', limits);
  r = await l.hit('u', limits);
  t.equal(r.allowed, false, 'the burst limit refuses the fourth');
  t.equal(r.limit.name, 'burst');
  t.ok(r.retryAfterSeconds! <= 60 && r.retryAfterSeconds! >= 59);
  t.equal(await l.counted('u', limits[0]!), 3);
  t.equal(await l.counted('u', limits[1]!), 3, 'the refused request is not counted by the limit that allowed it');

  // The longer limit runs out first.
  const wide: RateLimit[] = [
    { limit: 10, windowSeconds: 60, name: 'burst' },
    { limit: 2, windowSeconds: 3600, name: 'sustained' },
  ];
  t.equal((await l.hit('v', wide)).limit.name, 'sustained', 'tightest: fewest left');
  t.equal((await l.hit('v', wide)).remaining, 0);
  r = await l.hit('v', wide);
  t.equal(r.allowed, false);
  t.equal(r.limit.name, 'sustained', 'refused by the exhausted limit');
  t.ok(r.retryAfterSeconds! > 3590 && r.retryAfterSeconds! <= 3600, `Retry-After ${r.retryAfterSeconds} s`);
  t.equal(await l.counted('v', wide[0]!), 2, 'the other limit does not count it');

  // Both exhausted: the wait is the longer one, and names its limit.
  const both: RateLimit[] = [
    { limit: 1, windowSeconds: 3600, name: 'hour' },
    { limit: 1, windowSeconds: 60, name: 'minute' },
  ];
  await l.hit('w', both);
  r = await l.hit('w', both);
  t.equal(r.limit.name, 'hour');
  t.ok(r.retryAfterSeconds! > 3590);
});

t.test('requests counted together: exact waits under a lowered limit, a lost counter recounted', async (t) => {
  const { limiter: l, redis } = await limiter(t);
  const ten: RateLimit[] = [{ limit: 10, windowSeconds: 60, name: 'minute' }];
  const all = (n: number, limits: RateLimit[]) => Promise.all(Array.from({ length: n }, () => l.hit('w', limits)));
  await all(4, ten);
  await sleep(300);
  await all(4, ten);
  t.equal(await redis.zCard(l.redisKey('w', ten[0]!)), 2, 'two turns, two members');
  t.equal(await l.counted('w', ten[0]!), 8);

  // An operator lowers the limit: the request that must leave first is then deeper in the log.
  const asked = performance.now();
  const five = await l.hit('w', [{ limit: 5, windowSeconds: 60, name: 'minute' }]);
  const three = await l.hit('w', [{ limit: 3, windowSeconds: 60, name: 'minute' }]);
  const between = performance.now() - asked;
  t.equal(five.allowed, false);
  t.equal(three.allowed, false);
  // Under 5, the 4th oldest (first turn) must leave; under 3, the 6th (second turn, 300 ms later).
  // The second wait is measured later, by however long the two calls took apart (a busy machine).
  const gap = three.retryAfterMs! - five.retryAfterMs!;
  t.ok(gap > 250 - between && gap < 400, `the waits are the two turns' ages apart (${gap.toFixed(0)} ms, ${between.toFixed(0)} ms between the calls)`);
  t.ok(five.retryAfterMs! > 59_000 && five.retryAfterMs! <= 60_000, `${five.retryAfterMs} ms`);

  await redis.del(l.counterKey('w', ten[0]!));
  await redis.zAdd(l.redisKey('w', ten[0]!), { score: Date.now() * 1000, value: 'an-entry-without-a-count' });
  const after = await l.hit('w', ten);
  t.equal(after.remaining, 0, 'the lost counter is recounted from the set (8 + 1 without a count + this one)');
  t.equal(await l.counted('w', ten[0]!), 10);
  t.equal((await l.hit('w', ten)).allowed, false);
});

t.test('Retry-After is exact: a request waiting it passes, one waiting less does not', async (t) => {
  const { limiter: l } = await limiter(t);
  const limits: RateLimit[] = [{ limit: 3, windowSeconds: 2 }];
  await l.hit('k', limits);
  await sleep(1200);
  await l.hit('k', limits);
  await l.hit('k', limits);
  const refused = await l.hit('k', limits);
  const at = Date.now();
  t.equal(refused.allowed, false);
  t.ok(refused.retryAfterMs! > 500 && refused.retryAfterMs! <= 800, `the first request leaves in ${refused.retryAfterMs} ms`);
  t.equal(refused.retryAfterSeconds, Math.ceil(refused.retryAfterMs! / 1000));
  t.equal(refused.retryAfterSeconds, 1);

  await sleep(at + refused.retryAfterMs! - 150 - Date.now());
  const early = await l.hit('k', limits);
  t.equal(early.allowed, false, 'just before the wait is over: still refused');
  t.equal(early.retryAfterSeconds, 1, 'and told to wait the rest, rounded up');

  await sleep(at + refused.retryAfterSeconds! * 1000 - Date.now());
  const late = await l.hit('k', limits);
  t.equal(late.allowed, true, 'after Retry-After seconds: allowed');
  t.equal(late.remaining, 0, 'the window slides: the two later requests still count');
  const next = await l.hit('k', limits);
  t.equal(next.allowed, false);
  t.ok(next.retryAfterMs! > 0 && next.retryAfterMs! < 1000, 'until the second request leaves the window');
});

t.test('the guard lets requests through when Redis is unavailable, and warns once per outage', async (t) => {
  const logs = logCapture();
  const log = createLogger('warn', logs.stream);

  await t.test('a closed client', async (t) => {
    const redis = await openRedis(TEST_REDIS_URL, 'rate-limit-test');
    await redis.close();
    const guard = rateLimitGuard(new RateLimiter(redis, uniqueName('rl')), {
      limits: [{ limit: 1, windowSeconds: 60 }],
      key: () => 'x',
      style: DRF_ERRORS,
      log,
    });
    for (let i = 0; i < 3; i++) {
      const req = fakeRequest();
      await guard(req);
      t.same(req.responseHeaders, {}, 'passes, without rate-limit headers');
    }
    // A client that is not connected is the connection's outage, which watchRedis warns of once.
    t.equal(logs.lines.filter((l) => l.level === 40).length, 0, 'no warning of its own, whatever the number of requests');
  });

  await t.test('a Redis that stops answering', async (t) => {
    // Answers the client's handshake, then swallows every script call.
    const sockets = new Set<Socket>();
    const server = createServer((socket) => {
      sockets.add(socket);
      socket.on('data', (chunk) => {
        for (const [, name] of String(chunk).matchAll(/(?:^|\r\n)\*\d+\r\n\$\d+\r\n([A-Za-z]+)/g)) {
          if (!/^EVAL/i.test(name!)) socket.write('+OK\r\n');
        }
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as { port: number }).port;
    const redis = createClient({ url: `redis://127.0.0.1:${port}` }) as unknown as Redis;
    redis.on('error', () => {});
    await redis.connect();
    t.teardown(async () => {
      redis.destroy();
      for (const s of sockets) s.destroy();
      await new Promise((resolve) => server.close(resolve));
    });
    const warnings = logCapture();
    const guard = rateLimitGuard(new RateLimiter(redis, 'silent', 100), {
      limits: [{ limit: 1, windowSeconds: 60 }],
      key: () => 'x',
      style: DRF_ERRORS,
      log: createLogger('info', warnings.stream),
    });
    const started = Date.now();
    const req = fakeRequest();
    await guard(req);
    t.ok(Date.now() - started < 1000, 'does not wait longer than the timeout');
    t.same(req.responseHeaders, {});
    await guard(fakeRequest());
    t.match(warnings.lines, [{ level: 40, err: { message: /deadline \(100 ms\) passed before Redis answered/ } }], 'one warning for the outage');
    t.equal(warnings.lines.length, 1, 'and only one');
  });
});

/** The standard fixture plus a second originator with its own import v2 token. */
function twoOriginators() {
  const fixture = baseFixture();
  fixture.originators.push({ id: 'mon-2', name: 'Monitoring Two', call_log_mode: 'errors' });
  fixture.tokens.push({ generation: 'import_v2', originator: 'mon-2', value: 'test-import-v2-token-0002' });
  return fixture;
}

const ACTIVE = '/import/v2/active-stations/';

t.test('import v2 responses carry the rate-limit headers', async (t) => {
  const p = await startTestPlatform(t, {
    fixture: baseFixture(),
    routes: (server, { families }) => {
      server.route({
        method: 'GET',
        path: '/import/v2/refuse/',
        family: families.import_v2,
        handler: () => {
          throw new HttpError(400, 'invalid', 'Refused for the test.');
        },
      });
    },
  });
  for (let i = 1; i <= 3; i++) {
    const res = await get(`${p.url}${ACTIVE}`, TOKENS.import_v2);
    t.equal(res.status, 200);
    t.equal(res.headers.get('ratelimit-limit'), '300');
    t.equal(res.headers.get('ratelimit-remaining'), String(300 - i), 'remaining goes down');
    const reset = Number(res.headers.get('ratelimit-reset'));
    t.ok(reset >= 59 && reset <= 60, `reset ${reset}`);
    t.equal(res.headers.get('retry-after'), null);
    await res.arrayBuffer();
  }
  const error = await get(`${p.url}/import/v2/refuse/`, TOKENS.import_v2);
  t.equal(error.status, 400);
  t.equal(error.headers.get('ratelimit-remaining'), '296', 'errors after authentication carry them too, and count');
  t.same(await error.json(), { detail: 'Refused for the test.' });

  // Refused authentication is not counted, and says nothing about limits.
  for (const token of [undefined, 'no-such-token-anywhere', TOKENS.import_v1, TOKENS.export_v2]) {
    const res = await get(`${p.url}${ACTIVE}`, token);
    t.equal(res.status, 401);
    t.equal(res.headers.get('ratelimit-remaining'), null);
    await res.arrayBuffer();
  }
  const after = await get(`${p.url}${ACTIVE}`, TOKENS.import_v2);
  t.equal(after.headers.get('ratelimit-remaining'), '295', '401s were not counted');
  await after.arrayBuffer();

  // Other generations have budgets of their own: import v1/v1.1 (one for both), export v2 (export-policies.test.ts).
  const other = await get(`${p.url}/import/v1/fuel-type`, TOKENS.import_v1);
  t.equal(other.status, 200);
  t.equal(other.headers.get('ratelimit-limit'), '3000', 'import v1: its own limit, ten times v2\'s (legacy originators were never told of one)');
  t.equal(other.headers.get('ratelimit-remaining'), '2999', 'and its own budget, untouched by the import v2 requests');
  await other.arrayBuffer();
  const exportV2 = await get(`${p.url}/v2/fuel-type`, TOKENS.export_v2);
  t.equal(exportV2.headers.get('ratelimit-limit'), '60', 'export v2: its own limit, not the import one');
  await exportV2.arrayBuffer();
});

t.test('300 requests per minute per originator, across instances sharing Redis', async (t) => {
  const a = await startTestPlatform(t, { fixture: twoOriginators() });
  const b = await startTestPlatform(t, { sameStoreAs: a });
  const instances = [a, b];
  const remaining: number[] = [];
  const statuses = new Set<number>();
  for (let i = 0; i < 300; i++) {
    const res = await get(`${instances[i % 2]!.url}${ACTIVE}`, TOKENS.import_v2);
    statuses.add(res.status);
    remaining.push(Number(res.headers.get('ratelimit-remaining')));
    await res.arrayBuffer();
  }
  t.same([...statuses], [200], '300 requests alternating between two instances all pass');
  t.same(remaining, Array.from({ length: 300 }, (_, i) => 299 - i), 'one budget: remaining counts down 299 … 0');

  for (const p of [a, b]) {
    const res = await get(`${p.url}${ACTIVE}`, TOKENS.import_v2);
    t.equal(res.status, 429, 'the next request is throttled, whichever instance gets it');
    const retryAfter = Number(res.headers.get('retry-after'));
    t.ok(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 60, `Retry-After ${retryAfter}`);
    t.equal(res.headers.get('content-type'), 'application/json; charset=utf-8');
    t.same(await res.json(), {
      detail: `Request was throttled: at most 300 requests per minute per signal originator. Expected available in ${retryAfter} seconds.`,
    });
    t.equal(res.headers.get('ratelimit-limit'), '300');
    t.equal(res.headers.get('ratelimit-remaining'), '0');
    t.equal(res.headers.get('ratelimit-reset'), String(retryAfter));
  }

  const other = await get(`${b.url}${ACTIVE}`, 'test-import-v2-token-0002');
  t.equal(other.status, 200, 'another originator has its own budget');
  t.equal(other.headers.get('ratelimit-remaining'), '299');
  await other.arrayBuffer();

  const keys = await a.parts.redis.keys(`${a.parts.config.redisPrefix}:rl:*`);
  t.same(keys.sort(), [
    `${a.parts.config.redisPrefix}:rl:{import_v2:originator:mon-1}:minute`,
    `${a.parts.config.redisPrefix}:rl:{import_v2:originator:mon-1}:minute:n`,
    `${a.parts.config.redisPrefix}:rl:{import_v2:originator:mon-2}:minute`,
    `${a.parts.config.redisPrefix}:rl:{import_v2:originator:mon-2}:minute:n`,
  ]);
  t.equal(Number(await a.parts.redis.get(keys.sort()[1]!)), 300, 'throttled requests were not counted');
});

t.test('a small limit over HTTP: problem bodies, and waiting Retry-After is enough', async (t) => {
  const p = await startTestPlatform(t, {
    fixture: baseFixture(),
    routes: (server, services) => {
      const limiter = new RateLimiter(services.redis, services.config.redisPrefix);
      server.guard(
        services.families.export_v1,
        rateLimitGuard(limiter, {
          limits: [
            { limit: 3, windowSeconds: 2, name: 'burst' },
            { limit: 5, windowSeconds: 60, name: 'sustained' },
          ],
          key: (req) => (req.principal?.kind === 'client' ? `export_v1:token:${req.principal.tokenId}` : undefined),
          style: PROBLEM_ERRORS,
          per: 'token',
          log: services.log,
        }),
      );
      server.route({ method: 'GET', path: '/v1/ping', family: services.families.export_v1, handler: () => json(200, { pong: true }) });
    },
  });
  const hit = async (path = '/v1/fuel-type') => {
    const res = await get(`${p.url}${path}`, TOKENS.export_v1);
    return { res, body: await res.json() };
  };
  for (let i = 1; i <= 3; i++) {
    const { res } = await hit(i === 2 ? '/v1/ping' : '/v1/fuel-type');
    t.equal(res.status, 200);
    t.equal(res.headers.get('ratelimit-limit'), '3', 'the burst limit is the tightest');
    t.equal(res.headers.get('ratelimit-remaining'), String(3 - i), 'one budget across the family\'s routes');
  }
  let { res, body } = await hit();
  t.equal(res.status, 429);
  t.equal(res.headers.get('content-type'), 'application/problem+json; charset=utf-8');
  const wait = Number(res.headers.get('retry-after'));
  t.ok(wait === 1 || wait === 2, `Retry-After ${wait}`);
  t.match(body, {
    status: 429,
    code: 'throttled',
    title: 'Too Many Requests',
    detail: `Rate limit exceeded: at most 3 requests per 2 seconds per token. Retry in ${wait} second${wait === 1 ? '' : 's'}.`,
  });
  await sleep(wait * 1000);
  ({ res } = await hit());
  t.equal(res.status, 200, 'after Retry-After seconds the request passes');
  await sleep(2100);
  ({ res } = await hit());
  t.equal(res.status, 200);
  t.equal(res.headers.get('ratelimit-limit'), '5', 'the burst window is empty: the sustained limit is the tightest');
  t.equal(res.headers.get('ratelimit-remaining'), '0');
  ({ res, body } = await hit());
  t.equal(res.status, 429, 'the sustained limit refuses');
  const long = Number(res.headers.get('retry-after'));
  t.ok(long > 50 && long <= 60, `Retry-After ${long}`);
  t.equal(body.detail, `Rate limit exceeded: at most 5 requests per minute per token. Retry in ${long} seconds.`);
});
