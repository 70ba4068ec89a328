import t from 'tap';
import { HAPROXY, badTokens, functional, killDuringImport, missing, setUp, startHaproxy } from '../helpers/deploy.js';
import { until } from '../helpers/wait.js';
import { rawExchange } from '../helpers/raw-http.js';

/** deploy/haproxy.cfg in front of two `hrs serve` instances (see test/helpers/deploy.ts). */

t.test('HAProxy (deploy/haproxy.cfg) in front of two instances', { skip: missing(HAPROXY) }, async (t) => {
  const d = await setUp(t);
  const haproxy = await startHaproxy(t, d);
  const { url, port } = haproxy;
  // Both servers pass their first checks (an HTTP/1.0 check would get no answer and mark them down).
  await new Promise((resolve) => setTimeout(resolve, 2500));
  t.notMatch(haproxy.output(), /is DOWN/, `the /readyz checks pass on both instances: ${haproxy.output()}`);

  // HAProxy would pass HTTP/1.0 on as it came, which the platform does not answer: it answers 505 itself.
  await t.test('import, export, status stream, portal, HTTP/1.0', (t) => functional(t, d, url, port, /^HTTP\/1\.1 505 /));
  await t.test('one instance killed while an importer posts', async (t) => {
    await killDuringImport(t, d, url, haproxy.output);
    t.match(haproxy.output(), /Server hrs\/hrs1 is DOWN/, 'the health check took the killed instance out');
    // Waited for: the next state HAProxy gives hrs1 after taking it out; asserted: that it is UP.
    const states = (): string[] => haproxy.output().match(/Server hrs\/hrs1 is \w+/g) ?? [];
    const out = states().lastIndexOf('Server hrs/hrs1 is DOWN');
    const next = await until('the next state of the restarted instance', () => states()[out + 1], 20_000);
    t.equal(next, 'Server hrs/hrs1 is UP', 'and brought it back once it was ready again');
  });
  await t.test('an instance stopped (SIGTERM) while an importer posts is drained first', async (t) => {
    const errors = await killDuringImport(t, d, url, haproxy.output, { index: 1, signal: 'SIGTERM' });
    t.match(haproxy.output(), /Server hrs\/hrs2 is DOWN, reason: Layer7 wrong status, code: 503/, 'taken out by its readiness (503), before its port closed');
    t.same(errors, [], 'drained: no client saw an error');
  });
  await t.test('requests the platform leaves unanswered are refused by HAProxy at once', async (t) => {
    const request = (headers: string[]) => `GET /healthz HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n${headers.map((h) => `${h}\r\n`).join('')}\r\n`;
    const cases = [
      ...[..."_.~'|+^#&*!$%"].map((c) => ({ name: `header name with ${JSON.stringify(c)}`, bytes: request([`X${c}Y: 1`]) })),
      { name: 'control character in a header value', bytes: request(['X-A: a\x01b']) },
      { name: 'NUL in a header value', bytes: request(['X-A: a\0b']) },
      { name: 'a bare CR in a header value', bytes: request(['X-A: a\rb']) },
      { name: 'DEL in a header value', bytes: request(['X-A: a\x7fb']) },
      { name: 'a space before the colon', bytes: request(['X-A : b']) },
      { name: 'a tab before the colon', bytes: request(['X-A\t: b']) },
      { name: 'a header line without a colon', bytes: request(['XA']) },
      { name: '99 headers', bytes: request(Array.from({ length: 97 }, (_, i) => `X-H${i}: v`)) },
      { name: '120 headers', bytes: request(Array.from({ length: 118 }, (_, i) => `X-H${i}: v`)) },
    ];
    // A generous wait as the failure: the platform behind would close after its idle timeout (about 10 s).
    const answers = await Promise.all(cases.map((c) => rawExchange(url, c.bytes, 8_000)));
    cases.forEach((c, i) => t.equal(answers[i]!.status, 400, `${c.name}: 400 from HAProxy`));
    const fine = await rawExchange(url, request(['X-A: a\tb', ...Array.from({ length: 40 }, (_, i) => `X-H${i}: v`)]), 8_000);
    t.equal(fine.status, 200, 'a tab in a value and 42 headers pass');
    // A folded line (obs-fold) is joined by HAProxy into one value (as RFC 9112 lets a proxy do): answered.
    const folded = await rawExchange(url, request(['X-A: a', ' b']), 8_000);
    t.equal(folded.status, 200, 'a folded header line (obs-fold) is unfolded by HAProxy and answered');
  });
  await t.test('100 bad tokens from one client leave another client untouched', (t) => badTokens(t, url, '127.0.0.4', '127.0.0.5'));
});
