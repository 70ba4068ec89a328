import t from 'tap';
import { NGINX, badTokens, functional, killDuringImport, missing, setUp, startNginx } from '../helpers/deploy.js';
import { rawExchange } from '../helpers/raw-http.js';

/** deploy/nginx.conf in front of two `hrs serve` instances (see test/helpers/deploy.ts). */

/** How many times nginx has logged an instance closing a request's connection without an answer. */
const prematureCloses = (log: string) => log.split('upstream prematurely closed connection').length - 1;

t.test('nginx (deploy/nginx.conf) in front of two instances', { skip: missing(NGINX) }, async (t) => {
  const d = await setUp(t);
  const nginx = await startNginx(t, d);
  const { url, port } = nginx;

  // nginx passes HTTP/1.0 on as HTTP/1.1 (proxy_http_version): the platform's own answer.
  await t.test('import, export, status stream, portal, HTTP/1.0', (t) => functional(t, d, url, port, /^HTTP\/1\.1 200 /));
  await t.test('one instance killed while an importer posts', (t) => killDuringImport(t, d, url, nginx.output));
  await t.test('requests the platform cannot parse: refused, answered, or a 502 within its idle timeout', async (t) => {
    const request = (headers: string[]) => `GET /healthz HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n${headers.map((h) => `${h}\r\n`).join('')}\r\n`;
    // Names nginx finds invalid are dropped (its defaults), and so is a line without a colon: answered.
    const dropped = [..."_.~'|+^#&*!$%"].map((c) => ({ name: `header name with ${JSON.stringify(c)}`, bytes: request([`X${c}Y: 1`]) }));
    dropped.push({ name: 'a header line without a colon', bytes: request(['XA']) });
    // What nginx refuses itself: a folded line (obs-fold), white space before the colon, NUL or a bare CR in a value.
    const refused = [
      { name: 'a folded header line (obs-fold)', bytes: request(['X-A: a', ' b']) },
      { name: 'a space before the colon', bytes: request(['X-A : b']) },
      { name: 'a tab before the colon', bytes: request(['X-A\t: b']) },
      { name: 'NUL in a header value', bytes: request(['X-A: a\0b']) },
      { name: 'a bare CR in a header value', bytes: request(['X-A: a\rb']) },
    ];
    const [droppedAnswers, refusedAnswers] = await Promise.all([dropped, refused].map((cases) => Promise.all(cases.map((c) => rawExchange(url, c.bytes, 8_000)))));
    dropped.forEach((c, i) => t.equal(droppedAnswers![i]!.status, 200, `${c.name}: dropped by nginx, answered`));
    refused.forEach((c, i) => t.equal(refusedAnswers![i]!.status, 400, `${c.name}: 400 from nginx at once`));

    // Control characters in values and more than about 96 header lines pass nginx: the platform closes
    // after its idle timeout (8-12 s) and nginx answers 502, without trying the other instance
    // (proxy_next_upstream_timeout), so within the same 12 s. Six at once, then valid requests: both
    // instances are still in.
    const attemptsBefore = prematureCloses(nginx.output());
    const held = [
      ...Array.from({ length: 4 }, () => request(['X-A: a\x01b'])),
      ...Array.from({ length: 2 }, () => request(Array.from({ length: 118 }, (_, i) => `X-H${i}: v`))),
    ];
    const started = Date.now();
    const bad = Promise.all(held.map((bytes) => rawExchange(url, bytes, 40_000).then((answer) => ({ answer, seconds: (Date.now() - started) / 1000 }))));
    await new Promise((resolve) => setTimeout(resolve, 500));
    const during = await Promise.all(Array.from({ length: 4 }, () => fetch(`${url}/healthz`).then(async (r) => (await r.arrayBuffer(), r.status))));
    t.same(during, [200, 200, 200, 200], 'valid requests meanwhile are answered');
    const answers = await bad;
    const seconds = answers.map((a) => a.seconds.toFixed(1)).join(', ');
    t.same(answers.map((a) => a.answer.status), held.map(() => 502), `a control character in a value, 120 header lines: a 502, not silence (after ${seconds} s)`);
    t.ok(answers.every((a) => a.seconds < 14), `each within the platform's idle timeout, 12 s (not a second wait on the other instance): ${seconds} s`);
    t.equal(prematureCloses(nginx.output()) - attemptsBefore, held.length, 'each tried on one instance only');
    const after = await Promise.all(Array.from({ length: 4 }, () => fetch(`${url}/healthz`).then(async (r) => (await r.arrayBuffer(), r.status))));
    t.same(after, [200, 200, 200, 200], 'and afterwards: no instance was taken out');
  });
  await t.test('100 bad tokens from one client leave another client untouched', (t) => badTokens(t, url, '127.0.0.2', '127.0.0.3'));
});
