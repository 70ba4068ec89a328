/**
 * Import v2 availability signals on a fixed schedule: signal n leaves n / rate seconds after the start
 * whether or not earlier ones were answered (keep-alive connections, as many as the schedule needs),
 * one transmission per request, the stations in turn, each with a `datetime` later than every one
 * before (the time of sending, to the millisecond) and N1's availability flipped on every visit, so
 * every signal changes its station's status. Times are `performance.timeOrigin + performance.now()`,
 * comparable across this machine's processes.
 */
import http from 'node:http';
import { TOKENS } from '../../helpers/fixtures.js';

const PATH = '/import/v2/signal/availability/';

export const clock = (): number => performance.timeOrigin + performance.now();

/** What was posted, by signal: its station, its `datetime` (epoch ms), when it left and when its 204 came (-1: none). */
export interface PacedSignals {
  hrsId: string[];
  datetime: number[];
  sentAt: number[];
  ackAt: number[];
  /** Answers other than 204, and requests that failed. */
  refused: number;
  errors: number;
  firstProblem: string | undefined;
  /** How late signals left against their schedule, at worst, in milliseconds. */
  maxLagMs: number;
}

/** The pacer's memory across runs: datetimes keep increasing, stations keep their turn. */
export class SignalPacer {
  private sequence = 0;
  private lastDatetime = 0;

  constructor(
    private readonly port: number,
    private readonly stations: readonly string[],
  ) {}

  /** Posts `rate` signals per second for `seconds`; resolves once every one is answered (or failed). */
  post(rate: number, seconds: number, stop: () => boolean = () => false): Promise<PacedSignals> {
    const count = Math.round(rate * seconds);
    const interval = 1000 / rate;
    const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });
    const out: PacedSignals = { hrsId: [], datetime: [], sentAt: [], ackAt: [], refused: 0, errors: 0, firstProblem: undefined, maxLagMs: 0 };
    return new Promise((resolve) => {
      let sent = 0;
      let answered = 0;
      let last = count;
      const start = performance.now() + 20;
      const done = () => {
        if (++answered >= last && sent >= last) {
          agent.destroy();
          resolve(out);
        }
      };
      const tick = () => {
        if (stop()) last = sent;
        while (sent < last && start + sent * interval <= performance.now()) {
          out.maxLagMs = Math.max(out.maxLagMs, performance.now() - (start + sent * interval));
          this.fire(sent++, agent, out, done);
        }
        if (sent < last) setTimeout(tick, Math.max(0, start + sent * interval - performance.now()));
        else if (answered >= last) {
          agent.destroy();
          resolve(out);
        }
      };
      setTimeout(tick, 20);
    });
  }

  private fire(j: number, agent: http.Agent, out: PacedSignals, done: () => void): void {
    const n = this.sequence++;
    const hrsId = this.stations[n % this.stations.length]!;
    const up = Math.floor(n / this.stations.length) % 2 === 0;
    const datetime = Math.max(Date.now(), this.lastDatetime + 1);
    this.lastDatetime = datetime;
    const body = JSON.stringify([
      { hrs: hrsId, datetime: new Date(datetime).toISOString(), nozzles: [{ id: 'N1', available: up }, { id: 'N2', available: true }], station: { maintenance: false, limitedly_available: false } },
    ]);
    out.hrsId[j] = hrsId;
    out.datetime[j] = datetime;
    out.ackAt[j] = -1;
    let finished = false;
    const finish = () => {
      if (finished) return;
      finished = true;
      done();
    };
    const problem = (what: string) => {
      out.firstProblem ??= what;
    };
    out.sentAt[j] = clock();
    const req = http.request(
      {
        host: '127.0.0.1',
        port: this.port,
        path: PATH,
        method: 'POST',
        agent,
        headers: { Authorization: `Bearer ${TOKENS.import_v2}`, 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) },
      },
      (res) => {
        const at = clock();
        if (res.statusCode === 204) out.ackAt[j] = at;
        else {
          out.refused++;
          problem(`answered ${res.statusCode}`);
        }
        res.resume();
        res.once('end', finish);
      },
    );
    req.setTimeout(10_000, () => req.destroy(new Error('no answer within 10 s')));
    req.once('error', (err) => {
      out.errors++;
      problem(err.message);
      finish();
    });
    req.end(body);
  }
}
