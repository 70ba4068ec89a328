/**
 * Baseline: the smallest uWebSockets.js server there is. Answers `GET /` with a fixed text, and
 * `GET /bytes/N` with N bytes made once (what sending a body of that size costs, and nothing else).
 */
import uWS from 'uWebSockets.js';
import { onStop, ready } from './ipc.js';

if (typeof uWS.getParts !== 'function') {
  throw new Error('uWebSockets.js fell back to its JavaScript shim: no native build for this Node.js version');
}

const bodies = new Map<number, Buffer>();
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
  });

app.listen('127.0.0.1', 0, (socket) => {
  if (!socket) {
    process.stderr.write('hello-world server: cannot listen on 127.0.0.1\n');
    process.exit(1);
  }
  onStop(() => uWS.us_listen_socket_close(socket));
  ready({ port: uWS.us_socket_local_port(socket as unknown as uWS.us_socket) });
});
