/**
 * Baseline: the smallest uWebSockets.js server there is. Answers `GET /` with a fixed text,
 * `GET /bytes/N` with N bytes made once (what sending a body of that size costs, and nothing else), and
 * `GET /page/fresh` and `GET /page/pooled` with a page made per request as a `near` page is: 100
 * records of 1.2 kB, picked in turn from 2,000 made apart, copied into a buffer of the page's size,
 * fresh (`Buffer.allocUnsafe`) or from the HTTP core's pool and given back once written
 * (src/http/body-pool.ts): what the pool saves, and nothing else.
 */
import uWS from 'uWebSockets.js';
import { BodyPool } from '../../../src/http/body-pool.js';
import { STREAMED_FROM } from '../../../src/http/respond.js';
import { onStop, ready } from './ipc.js';

if (typeof uWS.getParts !== 'function') {
  throw new Error('uWebSockets.js fell back to its JavaScript shim: no native build for this Node.js version');
}

const bodies = new Map<number, Buffer>();

/** The page's records: 2,000 of 1.2 kB, each made on its own (spread over the heap, as kept records are). */
export const PAGE_RECORDS = 100;
const RECORD_BYTES = 1200;
const records = Array.from({ length: 2000 }, (_, i) => Buffer.from(JSON.stringify({ id: i, text: '' }).replace('""', `"${'x'.repeat(RECORD_BYTES - 20 - String(i).length)}"`)));
const pool = new BodyPool(STREAMED_FROM);
let pages = 0;

/** The next page: its records, comma-separated, copied into memory `take` gives. */
function page(take: (length: number) => Buffer): Buffer {
  const first = (pages++ * 37) % records.length;
  let length = PAGE_RECORDS - 1;
  for (let k = 0; k < PAGE_RECORDS; k++) length += records[(first + k * 13) % records.length]!.length;
  const out = take(length);
  let at = 0;
  for (let k = 0; k < PAGE_RECORDS; k++) {
    if (k > 0) out[at++] = 0x2c;
    const record = records[(first + k * 13) % records.length]!;
    out.set(record, at);
    at += record.length;
  }
  return out;
}
const app = uWS
  .App()
  .get('/', (res) => {
    res.end('Hello World!');
  })
  .get('/bytes/:n', (res, req) => {
    const n = Math.min(Number(req.getParameter(0)) || 0, 16 * 1024 * 1024);
    let body = bodies.get(n);
    if (!body) bodies.set(n, (body = Buffer.alloc(n, 'x')));
    res.end(body);
  })
  .get('/page/fresh', (res) => {
    res.end(page((length) => Buffer.allocUnsafe(length)));
  })
  .get('/page/pooled', (res) => {
    const body = page((length) => pool.take(length));
    res.end(body);
    pool.give(body);
  });

app.listen('127.0.0.1', 0, (socket) => {
  if (!socket) {
    process.stderr.write('hello-world server: cannot listen on 127.0.0.1\n');
    process.exit(1);
  }
  onStop(() => uWS.us_listen_socket_close(socket));
  ready({ port: uWS.us_socket_local_port(socket as unknown as uWS.us_socket) });
});
