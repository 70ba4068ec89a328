/**
 * The storage floor: a bare uWebSockets.js endpoint that does only what no signal endpoint can skip.
 * `POST /` parses the JSON array it is sent and stores each element as a live availability
 * transmission of the originator `mon-1` through the platform's own group-commit writer (the same
 * statement, the same PostgreSQL durability), answering 204 after COMMIT. No token check, rate limit,
 * validation, call log or announcement: the gap between this and the platform is what those cost.
 * BENCH_DATABASE_URL names a database the platform child has already migrated and loaded.
 */
import uWS from 'uWebSockets.js';
import { connect } from '../../../db/connect.js';
import { SignalWriter } from '../../../db/queries/signals.js';
import { readJsonBody } from './bare-body.js';
import { onStop, ready } from './ipc.js';

const sql = connect(process.env.BENCH_DATABASE_URL!);
const writer = new SignalWriter(sql);

const app = uWS.App().post('/', (res) =>
  readJsonBody<{ hrs: string; datetime: string }[]>(res, (body, aborted) => {
    const receivedAt = new Date();
    const rows = body.map((t) => ({
      originatorId: 'mon-1',
      hrsId: t.hrs,
      category: 'availability',
      state: 'live' as const,
      measuredAt: new Date(t.datetime),
      receivedAt,
      transmissionId: null,
      payload: t as unknown as Record<string, unknown>,
    }));
    writer.write(rows).then(
      () => {
        if (!aborted()) res.cork(() => res.writeStatus('204 No Content').endWithoutBody());
      },
      (err: unknown) => {
        process.stderr.write(`floor server: storing failed: ${(err as Error).message}\n`);
        if (!aborted()) res.cork(() => res.writeStatus('500 Internal Server Error').end());
      },
    );
  }),
);

app.listen('127.0.0.1', 0, (socket) => {
  if (!socket) {
    process.stderr.write('floor server: cannot listen on 127.0.0.1\n');
    process.exit(1);
  }
  onStop(async () => {
    uWS.us_listen_socket_close(socket);
    await sql.end({ timeout: 5 });
  });
  ready({ port: uWS.us_socket_local_port(socket as unknown as uWS.us_socket) });
});
