/**
 * The push floor: a bare uWebSockets.js server with the status stream's path and topic layout and
 * nothing else. A WebSocket on `/v2/hrs/status/stream` is greeted with `authenticated` (no token is
 * checked); `{"type":"subscribe","hrs_ids":[...]}` subscribes it to `status/{hrs_id}` of each station
 * (`"*"`: to `status/*`) and is answered with `subscribed` and an empty `snapshot`. A POST to any path
 * carrying a JSON array of availability transmissions publishes, for each, one `status` message of the
 * platform's shape (the posted availability, then BENCH_PUBLISH_REST: the platform's other three
 * sections of one station, for the same message size) to `status/{hrs}` and `status/*`, then answers
 * 204. No validation, storage, live status or coalescing: the gap between this and the platform is
 * what those cost.
 */
import uWS from 'uWebSockets.js';
import './memory-probe.js';
import { readJsonBody } from './bare-body.js';
import { onStop, ready } from './ipc.js';

const PATH = '/v2/hrs/status/stream';
const rest = process.env.BENCH_PUBLISH_REST || '"usage":null,"hydrogen_storage":null,"pricing":null';

interface Transmission {
  hrs: string;
  datetime: string;
  station?: unknown;
  nozzles?: unknown;
}

const app = uWS.App();
app
  .ws<Record<string, never>>(PATH, {
    maxPayloadLength: 64 * 1024,
    idleTimeout: 60,
    sendPingsAutomatically: true,
    maxBackpressure: 16 * 1024 * 1024,
    open: (ws) => {
      ws.send('{"type":"authenticated","user":"bench"}');
    },
    message: (ws, data) => {
      const message = JSON.parse(Buffer.from(data).toString('utf8')) as { type?: string; hrs_ids?: string[] | '*' };
      if (message.type !== 'subscribe' || message.hrs_ids === undefined) return;
      if (message.hrs_ids === '*') ws.subscribe('status/*');
      else for (const id of message.hrs_ids) ws.subscribe(`status/${id}`);
      ws.send(JSON.stringify({ type: 'subscribed', hrs_ids: message.hrs_ids }));
      ws.send('{"type":"snapshot","stations":[]}');
    },
  })
  .post('/*', (res) =>
    readJsonBody<Transmission[]>(res, (transmissions, aborted) => {
      const receivedAt = new Date().toISOString();
      for (const t of transmissions) {
        const availability = JSON.stringify({ datetime: t.datetime, received_datetime: receivedAt, station: t.station, nozzles: t.nozzles });
        const message = `{"type":"status","station":{"hrs_id":${JSON.stringify(t.hrs)},"availability":${availability},${rest}}}`;
        app.publish(`status/${t.hrs}`, message);
        app.publish('status/*', message);
      }
      if (!aborted()) res.cork(() => res.writeStatus('204 No Content').endWithoutBody());
    }),
  );

app.listen('127.0.0.1', 0, (socket) => {
  if (!socket) {
    process.stderr.write('push floor: cannot listen on 127.0.0.1\n');
    process.exit(1);
  }
  onStop(() => uWS.us_listen_socket_close(socket));
  ready({ port: uWS.us_socket_local_port(socket as unknown as uWS.us_socket) });
});
