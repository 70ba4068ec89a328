import t from 'tap';
import { fileURLToPath } from 'node:url';
import { baseFixture, TOKENS } from '../helpers/fixtures.js';
import { startTestPlatform } from '../helpers/platform.js';
import { run } from '../helpers/process.js';
import { MAX_PHOTO_BYTES } from '../../src/registry/file/photo.js';

/**
 * A body past the cap is answered 413 and the client reads that answer, even while it is still
 * sending: the server goes on reading (and discarding) the rest after the answer instead of closing
 * at once, which resets the connection under a client still writing (Node's fetch then reports EPIPE
 * and never sees the 413). The client runs in a process of its own (see helpers/too-large-client.ts).
 */

const TRIES = Number(process.env.TOO_LARGE_TRIES ?? 10);
const CAP = 1024 * 1024;
const CLIENT = fileURLToPath(new URL('../helpers/too-large-client.ts', import.meta.url));

interface Result {
  name: string;
  received: number;
  failures: Record<string, number>;
}

t.test('a body past the cap: every try of a separate fetch client reads its 413', async (t) => {
  const p = await startTestPlatform(t, { env: { MAX_BODY_BYTES: String(CAP), LOG_LEVEL: 'warn' }, fixture: baseFixture() });
  const importV2 = { url: `${p.url}/import/v2/signal/availability/`, method: 'POST', headers: { Authorization: `Bearer ${TOKENS.import_v2}`, 'Content-Type': 'application/json' } };
  const photo = { url: `${p.url}/portal/v1/stations/BERLA/photo`, method: 'PUT', headers: { 'Content-Type': 'image/png' } };
  const cases = [
    { name: 'import v2, 4 MB', size: 4_000_000, ...importV2 },
    { name: 'import v2, 20 MB', size: 20_000_000, ...importV2 },
    { name: 'import v2, cap + 1 byte', size: CAP + 1, ...importV2 },
    { name: 'import v2, 2.4 MB chunked', size: 2_400_000, chunked: true, ...importV2 },
    { name: `portal photo, ${MAX_PHOTO_BYTES} + 1 bytes`, size: MAX_PHOTO_BYTES + 1, ...photo },
  ];
  const { code, stdout, stderr } = await run(process.execPath, ['--import', 'tsx', CLIENT, JSON.stringify({ tries: TRIES, cases })], {}, 600_000);
  t.equal(code, 0, stderr);
  for (const result of JSON.parse(stdout) as Result[]) {
    t.comment(`${result.name}: 413 read in ${result.received} of ${TRIES} tries ${JSON.stringify(result.failures)}`);
    t.equal(result.received, TRIES, `${result.name}: every try reads the 413`);
  }
  t.equal((await fetch(`${p.url}/healthz`)).status, 200, 'and the server goes on');
});

t.test('a body declared far past the cap is answered 413 and its connection closed at once', async (t) => {
  const p = await startTestPlatform(t, { env: { MAX_BODY_BYTES: String(CAP) }, fixture: baseFixture() });
  const { rawRequest } = await import('../helpers/raw-http.js');
  const res = await rawRequest(p.url, 'POST', '/import/v2/signal/availability/', {
    Authorization: `Bearer ${TOKENS.import_v2}`,
    'Content-Type': 'application/json',
    'Content-Length': String(CAP + 65 * 1024 * 1024),
  });
  t.equal(res.status, 413);
  t.match(res.body, /exceeds the limit/);
});
