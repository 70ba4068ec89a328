/** Baseline: the smallest uWebSockets.js server there is. Answers `GET /` with a fixed text. */
import uWS from 'uWebSockets.js';
import { onStop, ready } from './ipc.js';

if (typeof uWS.getParts !== 'function') {
  throw new Error('uWebSockets.js fell back to its JavaScript shim: no native build for this Node.js version');
}

const app = uWS.App().get('/', (res) => {
  res.end('Hello World!');
});

app.listen('127.0.0.1', 0, (socket) => {
  if (!socket) {
    process.stderr.write('hello-world server: cannot listen on 127.0.0.1\n');
    process.exit(1);
  }
  onStop(() => uWS.us_listen_socket_close(socket));
  ready({ port: uWS.us_socket_local_port(socket as unknown as uWS.us_socket) });
});
