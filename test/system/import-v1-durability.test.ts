import t from 'tap';
import { loadFixture } from '../../src/registry/file/load.js';
import { baseFixture, TOKENS } from '../helpers/fixtures.js';
import { freshDatabase } from '../helpers/platform.js';
import { HRS, freePort, start, waitFor } from '../helpers/process.js';

/**
 * Import v1.1 under SIGKILL: the valid signals of a request are stored even when the answer is a 400,
 * so an acknowledgement is a 204 (every signal) or a `{}` in the 400 body (that signal). Whatever was
 * acknowledged before the kill is in signal_history; nothing refused is stored anywhere; and the
 * accepted signals of one request are stored all together or not at all.
 */

const STATIONS = Array.from({ length: 20 }, (_, i) => `DV${String.fromCharCode(65 + Math.floor(i / 26))}${String.fromCharCode(65 + (i % 26))}A`);

/** Signals per request. */
const PER_REQUEST = 3;

/**
 * Which signals of request `r` are valid, by r % 4: all (a 204), the outer two, the middle one, none
 * (a 400 that acknowledges nothing).
 */
const PATTERNS: boolean[][] = [
  [true, true, true],
  [true, false, true],
  [false, true, false],
  [false, false, false],
];

const ago = (seconds: number) => new Date(Date.now() - seconds * 1000).toISOString();

/** A valid v1.1 signal for a station with BERLA's layout (700ld and 350ld). */
function validSignal(hrs: string, id: string, request: number) {
  return {
    hrs,
    datetime: new Date().toISOString(),
    transmission_id: id,
    dispensers: [
      { fuel_type: '700ld', available: request % 2 === 0 },
      { fuel_type: '350ld', available: true },
    ],
    maintenance: false,
    limitedly_available: request % 3 === 0,
  };
}

/** Ways a v1.1 signal is refused, each on its own. */
const BREAKAGES: ((s: ReturnType<typeof validSignal>) => Record<string, unknown>)[] = [
  (s) => ({ ...s, dispensers: [{ fuel_type: '700car', available: true }] }), // a v1 code
  (s) => ({ ...s, dispensers: [{ fuel_type: '700hd', available: true }, { fuel_type: '700hd', available: false }] }), // not provided, twice
  (s) => ({ ...s, dispensers: [{ fuel_type: '350ld', available: true }, { fuel_type: '350ld', available: false }] }), // twice
  (s) => ({ ...s, hrs: 'NOPEA' }), // unknown station
  (s) => ({ ...s, datetime: ago(600) }), // too old
  (s) => ({ ...s, maintenance: undefined }), // required
  (s) => ({ ...s, limitedly_available: 'no' }), // not a boolean
];

function request(r: number) {
  return PATTERNS[r % PATTERNS.length]!.map((valid, k) => {
    const id = `req-${r}-${k}`;
    const signal = validSignal(STATIONS[(r * PER_REQUEST + k) % STATIONS.length]!, id, r);
    return { id, valid, body: valid ? signal : BREAKAGES[(r + k) % BREAKAGES.length]!(signal) };
  });
}

t.test('import v1.1, SIGKILL in the middle of a burst of partly valid requests: every acknowledged signal is stored, nothing refused', async (t) => {
  const { sql, config } = await freshDatabase(t);
  const f = baseFixture();
  const layout = (f.stations[0] as { layout: unknown }).layout;
  f.stations.push(...STATIONS.map((hrs_id) => ({ hrs_id, operator: 'h2-demo', name: `Station ${hrs_id}`, layout }) as never));
  f.assignments.push(...STATIONS.map((hrs_id) => ({ originator: 'mon-1', hrs_id, signal_type: 'v1', state: 'live' })));
  await loadFixture(sql, f, { baseDir: '.' });

  const port = await freePort();
  const server = start(process.execPath, [HRS, 'serve', '--no-workers'], {
    DATABASE_URL: config.databaseUrl,
    REDIS_PREFIX: config.redisPrefix,
    PORT: String(port),
    LOG_LEVEL: 'warn',
  });
  t.teardown(() => server.child.kill('SIGKILL'));
  const url = `http://127.0.0.1:${port}/import/v1.1/hrs-availability`;
  await waitFor(`http://127.0.0.1:${port}/readyz`);

  const acknowledged = new Set<string>();
  const refused = new Set<string>();
  /** Request number → the ids of its valid signals. */
  const validOf = new Map<number, string[]>();
  const answered = { requests: 0, whole: 0, partial: 0 };
  let next = 0;
  const worker = async () => {
    for (;;) {
      const r = next++;
      const signals = request(r);
      validOf.set(r, signals.filter((s) => s.valid).map((s) => s.id));
      for (const s of signals) if (!s.valid) refused.add(s.id);
      let res: Response;
      let text: string;
      try {
        res = await fetch(url, {
          method: 'POST',
          headers: { Authorization: `Bearer ${TOKENS.import_v1}`, 'Content-Type': 'application/json' },
          body: JSON.stringify(signals.map((s) => s.body)),
        });
        text = await res.text();
      } catch {
        return; // the server is gone
      }
      if (res.status === 429) continue;
      if (res.status === 204 && signals.every((s) => s.valid)) {
        for (const s of signals) acknowledged.add(s.id);
        answered.whole++;
      } else if (res.status === 400) {
        const body = JSON.parse(text) as unknown;
        // The answer must be aligned with the request and agree with which signals were built valid.
        const aligned =
          Array.isArray(body) &&
          body.length === signals.length &&
          body.every((entry, k) => entry !== null && typeof entry === 'object' && (Object.keys(entry).length === 0) === signals[k]!.valid);
        if (!aligned) throw new Error(`unexpected 400 for request ${r}: ${text}`);
        for (const s of signals) if (s.valid) acknowledged.add(s.id);
        if (signals.some((s) => s.valid)) answered.partial++;
      } else {
        throw new Error(`unexpected ${res.status} for request ${r}: ${text}`);
      }
      answered.requests++;
    }
  };
  let failure: Error | undefined;
  const workers = Array.from({ length: 16 }, () => worker().catch((err: Error) => void (failure ??= err)));
  // Kill once a good part of the burst is answered, well before the 300-per-minute limit.
  while (answered.requests < 120 && failure === undefined) await new Promise((resolve) => setTimeout(resolve, 5));
  server.child.kill('SIGKILL');
  await Promise.all(workers);
  await server.exited;
  if (failure) throw failure;

  const history = await sql<{ transmission_id: string; n: number }[]>`
    SELECT transmission_id, count(*)::int AS n FROM signal_history GROUP BY transmission_id`;
  const stored = new Map(history.map((row) => [row.transmission_id, row.n]));
  const anywhere = await sql<{ transmission_id: string }[]>`
    SELECT transmission_id FROM signal_history
    UNION SELECT transmission_id FROM signal_latest WHERE transmission_id IS NOT NULL
    UNION SELECT transmission_id FROM published_signals WHERE transmission_id IS NOT NULL`;

  t.ok(answered.whole > 10, `whole requests were acknowledged with a 204 before the kill (${answered.whole})`);
  t.ok(answered.partial > 10, `partly valid requests were acknowledged in a 400 before the kill (${answered.partial})`);
  t.ok(acknowledged.size > 100, `${acknowledged.size} signals acknowledged of ${next * PER_REQUEST} sent in ${next} requests`);
  const lost = [...acknowledged].filter((id) => stored.get(id) !== 1);
  t.same(lost, [], 'every acknowledged signal is in signal_history, once');
  const leaked = anywhere.map((row) => row.transmission_id).filter((id) => refused.has(id));
  t.same(leaked, [], 'no refused signal is stored, in the history, the latest readings or the published ones');
  const strangers = [...stored.keys()].filter((id) => !/^req-\d+-\d$/.test(id) || refused.has(id));
  t.same(strangers, [], 'the history holds only signals that were sent valid');
  const half = [...validOf].filter(([, ids]) => {
    const n = ids.filter((id) => stored.has(id)).length;
    return n !== 0 && n !== ids.length;
  });
  t.same(half, [], 'the valid signals of a request are stored all together or not at all');
});
