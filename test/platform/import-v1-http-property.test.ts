import t from 'tap';
import fc from 'fast-check';
import { legacyFixture, TOKENS } from '../helpers/fixtures.js';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.js';
import { runs } from '../helpers/scale.js';

/**
 * Import v1 and v1.1 over HTTP against one running platform, with generated bodies: valid signals,
 * signals with a field removed or retyped, wrong and unprovided codes, repeated entries and repeated
 * signals, unknown stations, stale and future times, non-lists, arbitrary JSON and text that is not
 * JSON. Whatever comes in: never a 5xx; a 400 for a list is a list aligned with it; exactly the
 * signals answered `{}` (all of them on a 204) are stored, each as often as it was accepted, and
 * nothing else. Every generated signal carries a transmission_id of its own, which is how its rows
 * are found; every station is live, so each accepted signal is one row of signal_history.
 */

const RUNS = Number(process.env.PROPERTY_RUNS ?? runs(100));

type Dialect = 'v1' | 'v1.1';
const CODES: Record<Dialect, string[]> = { v1: ['700car', '350car', '350bus'], 'v1.1': ['700ld', '350ld', '700hd', '350hd'] };
const OTHER: Record<Dialect, Dialect> = { v1: 'v1.1', 'v1.1': 'v1' };

/** The live stations and the codes each provides, per dialect (HAMBG has no confirmed layout: none). */
const PROVIDED: Record<string, Record<Dialect, string[]>> = {
  BERLA: { v1: ['700car', '350car'], 'v1.1': ['700ld', '350ld'] },
  TRUCK: { v1: ['700car', '350bus'], 'v1.1': ['700ld', '700hd', '350hd'] },
  HAMBG: { v1: [], 'v1.1': [] },
};
const STATIONS = Object.keys(PROVIDED);

/**
 * BERLA (700ld, 350ld; v1 700car, 350car), TRUCK heavy duty (700ld, 700hd, 350hd; v1 700car, 350bus)
 * and HAMBG (no confirmed layout), each live for mon-1 on v1.
 */
function fixture() {
  const f = legacyFixture();
  f.assignments.push(...STATIONS.map((hrs_id) => ({ originator: 'mon-1', hrs_id, signal_type: 'v1', state: 'live' })));
  return f;
}

/*
 * Generated signals: a valid signal described as data (its time as an age, turned into text only when
 * the request is sent) and at most one mutation that makes it invalid.
 */

type Available = boolean | null | 'omit';
const FLAGS = ['hrs', 'datetime', 'dispensers', 'maintenance', 'limitedly_available'] as const;
const FORMATS = ['Z', '+01:00', '-05:30', '+0200', 'z', 'minutes+01:00', 'millis-03:00'] as const;

const notOfType = (ok: (v: unknown) => boolean) => fc.jsonValue({ maxDepth: 2 }).filter((v) => !ok(v));
const isString = (v: unknown) => typeof v === 'string';
const isBoolean = (v: unknown) => typeof v === 'boolean';
const isPlainObject = (v: unknown) => v !== null && typeof v === 'object' && !Array.isArray(v);

type Mutation =
  | { op: 'remove'; field: (typeof FLAGS)[number] }
  | { op: 'retype'; field: string; value: unknown }
  | { op: 'code'; at: number; code: unknown }
  | { op: 'unprovided'; pick: number }
  | { op: 'repeat-entry'; at: number }
  | { op: 'no-fuel-type'; at: number }
  | { op: 'entry'; at: number; value: unknown }
  | { op: 'available'; at: number; value: unknown }
  | { op: 'station'; hrs: string }
  | { op: 'age'; seconds: number }
  | { op: 'datetime'; text: string }
  | { op: 'whole'; value: unknown };

interface SignalSpec {
  station: string;
  /** Indexes into the station's provided codes, each at most once, with what is sent as `available`. */
  entries: { pick: number; available: Available }[];
  maintenance: boolean;
  limited: boolean;
  ageSeconds: number;
  format: (typeof FORMATS)[number];
  /** A field v1 does not know, which is ignored. */
  extra?: [string, unknown];
  mutation?: Mutation;
}

const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  fc.record({ op: fc.constant('remove' as const), field: fc.constantFrom(...FLAGS) }),
  fc.oneof(
    fc.record({ op: fc.constant('retype' as const), field: fc.constantFrom('hrs', 'datetime'), value: notOfType(isString) }),
    fc.record({ op: fc.constant('retype' as const), field: fc.constantFrom('maintenance', 'limitedly_available'), value: notOfType(isBoolean) }),
    fc.record({ op: fc.constant('retype' as const), field: fc.constant('dispensers'), value: notOfType(Array.isArray) }),
    fc.record({
      op: fc.constant('retype' as const),
      field: fc.constant('transmission_id'),
      value: fc.oneof(notOfType((v) => isString(v) || v === null), fc.constantFrom('', 'x'.repeat(201), 'a\u0000b', '\ud800')),
    }),
    fc.record({ op: fc.constant('retype' as const), field: fc.constant('hrs'), value: fc.constantFrom('', 'BER\u0000A', 'B'.repeat(201)) }),
  ),
  fc.record({
    op: fc.constant('code' as const),
    at: fc.nat(),
    code: fc.oneof(fc.constantFrom('700car', '350bus', '700ld', '350hd', '700', '700LD', ' 700ld', '', 'H70'), fc.string({ maxLength: 8 }), notOfType(isString)),
  }),
  fc.record({ op: fc.constant('unprovided' as const), pick: fc.nat() }),
  fc.record({ op: fc.constant('repeat-entry' as const), at: fc.nat() }),
  fc.record({ op: fc.constant('no-fuel-type' as const), at: fc.nat() }),
  fc.record({ op: fc.constant('entry' as const), at: fc.nat(), value: notOfType(isPlainObject) }),
  fc.record({ op: fc.constant('available' as const), at: fc.nat(), value: notOfType((v) => isBoolean(v) || v === null) }),
  fc.record({ op: fc.constant('station' as const), hrs: fc.oneof(fc.constantFrom('NOPEA', 'berla', 'BERL', 'BERLAA', 'OSLO1'), fc.string({ maxLength: 7 })).filter((s) => !STATIONS.includes(s)) }),
  fc.record({ op: fc.constant('age' as const), seconds: fc.oneof(fc.integer({ min: 330, max: 7 * 86_400 }), fc.integer({ min: -86_400, max: -60 })) }),
  fc.record({
    op: fc.constant('datetime' as const),
    text: fc.constantFrom('yesterday', '2026-13-01T00:00:00Z', '2026-02-30T10:00:00Z', '@now-without-offset', '@now-date-only', '@now-space', 'now', ''),
  }),
  fc.record({ op: fc.constant('whole' as const), value: notOfType(isPlainObject) }),
);

const signalSpec: fc.Arbitrary<SignalSpec> = fc.record(
  {
    station: fc.constantFrom(...STATIONS),
    entries: fc.uniqueArray(fc.record({ pick: fc.nat({ max: 3 }), available: fc.constantFrom<Available>(true, false, null, 'omit') }), {
      maxLength: 4,
      selector: (e) => e.pick,
    }),
    maintenance: fc.boolean(),
    limited: fc.boolean(),
    ageSeconds: fc.integer({ min: 1, max: 200 }),
    format: fc.constantFrom(...FORMATS),
    extra: fc.option(fc.tuple(fc.constantFrom('comment', 'nozzles', 'station', 'dry_run', 'fuel_types', 'x_vendor'), fc.jsonValue({ maxDepth: 2 })), {
      nil: undefined,
      freq: 3,
    }),
    // Most signals are left valid, so that many lists are partly or wholly accepted.
    mutation: fc.oneof({ weight: 3, arbitrary: fc.constant(undefined) }, { weight: 2, arbitrary: mutation }),
  },
  { noNullPrototype: true },
);

/** Not JSON, or JSON the server does not read: a repeated key, nesting deeper than it takes. */
const JUNK = ['[', '[{"hrs":', '[1,]', 'NaN', '', 'null x', '\u0000', '{"a":1,"a":2}', '[{"hrs":"BERLA","hrs":"BERLA"}]', '['.repeat(40) + ']'.repeat(40)];

/** Body kinds: mostly generated batches; also a bare signal, arbitrary JSON, and text that is not JSON. */
type BodySpec =
  | { kind: 'batch'; signals: SignalSpec[]; repeats: number[] }
  | { kind: 'bare'; signal: SignalSpec }
  | { kind: 'json'; value: unknown }
  | { kind: 'text'; text: string };

const bodySpec: fc.Arbitrary<BodySpec> = fc.oneof(
  { weight: 6, arbitrary: fc.record({ kind: fc.constant('batch' as const), signals: fc.array(signalSpec, { maxLength: 6 }), repeats: fc.array(fc.nat(), { maxLength: 2 }) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('bare' as const), signal: signalSpec }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('json' as const), value: fc.oneof(fc.jsonValue({ maxDepth: 3 }), fc.array(fc.jsonValue({ maxDepth: 2 }), { maxLength: 4 })) }) },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('text' as const),
      text: fc.oneof(
        fc.constantFrom(...JUNK),
        fc.string({ unit: 'binary', maxLength: 40 }),
      ),
    }),
  },
);

/** `at` in the time zone `offset` (minutes east of UTC), written as ISO 8601 with that offset. */
function withOffset(at: number, offsetMinutes: number, compact = false): string {
  const local = new Date(at + offsetMinutes * 60_000).toISOString().slice(0, 19);
  const sign = offsetMinutes < 0 ? '-' : '+';
  const abs = Math.abs(offsetMinutes);
  const hh = String(Math.floor(abs / 60)).padStart(2, '0');
  const mm = String(abs % 60).padStart(2, '0');
  return `${local}${sign}${hh}${compact ? '' : ':'}${mm}`;
}

function datetime(ageSeconds: number, format: SignalSpec['format']): string {
  const at = Date.now() - ageSeconds * 1000;
  switch (format) {
    case 'Z':
      return new Date(at).toISOString();
    case 'z':
      return new Date(at).toISOString().replace('T', 't').replace('Z', 'z');
    case '+01:00':
      return withOffset(at, 60);
    case '-05:30':
      return withOffset(at, -330);
    case '+0200':
      return withOffset(at, 120, true);
    case 'minutes+01:00':
      return withOffset(at, 60).replace(/:\d\d\+/, '+');
    case 'millis-03:00': {
      const text = withOffset(at, -180);
      return `${text.slice(0, 19)}.${String(at % 1000).padStart(3, '0')}${text.slice(19)}`;
    }
  }
}

let serial = 0;

/** A signal as sent, its transmission_id when it still carries its own, and whether it is meant to pass. */
interface Built {
  value: unknown;
  id?: string;
  valid: boolean;
  station?: string;
}

function build(spec: SignalSpec, dialect: Dialect): Built {
  const id = `prop-${process.pid}-${++serial}`;
  const provided = PROVIDED[spec.station]![dialect];
  const dispensers: Record<string, unknown>[] = spec.entries
    .filter((e) => e.pick < provided.length)
    .map((e) => (e.available === 'omit' ? { fuel_type: provided[e.pick] } : { fuel_type: provided[e.pick], available: e.available }));
  const signal: Record<string, unknown> = {
    hrs: spec.station,
    datetime: datetime(spec.ageSeconds, spec.format),
    dispensers,
    maintenance: spec.maintenance,
    limitedly_available: spec.limited,
    transmission_id: id,
  };
  if (spec.extra) signal[spec.extra[0]] = spec.extra[1];
  const m = spec.mutation;
  if (m === undefined) return { value: signal, id, valid: true, station: spec.station };
  /** An entry to change: an existing one, or a provided (or any) code added when there is none. */
  const entry = (at: number): number => {
    if (dispensers.length === 0) dispensers.push({ fuel_type: provided[0] ?? CODES[dialect][0], available: true });
    return at % dispensers.length;
  };
  let tagged = true;
  switch (m.op) {
    case 'remove':
      delete signal[m.field];
      break;
    case 'retype':
      signal[m.field] = m.value;
      if (m.field === 'transmission_id') tagged = false;
      break;
    case 'code': {
      const code = m.code;
      if (typeof code === 'string' && CODES[dialect].includes(code)) dispensers[entry(m.at)]!.fuel_type = CODES[OTHER[dialect]][0];
      else dispensers[entry(m.at)]!.fuel_type = code;
      break;
    }
    case 'unprovided': {
      // An option the station does not provide: the signal is refused (and the entry named), nothing of it stored.
      const missing = CODES[dialect].filter((code) => !provided.includes(code));
      dispensers.push({ fuel_type: missing[m.pick % missing.length], available: true });
      return { value: signal, id, valid: false, station: spec.station };
    }
    case 'repeat-entry':
      dispensers.push({ ...dispensers[entry(m.at)]!, available: false });
      break;
    case 'no-fuel-type':
      delete dispensers[entry(m.at)]!.fuel_type;
      break;
    case 'entry':
      dispensers.splice(m.at % (dispensers.length + 1), 0, m.value as Record<string, unknown>);
      break;
    case 'available':
      dispensers[entry(m.at)]!.available = m.value;
      break;
    case 'station':
      signal.hrs = m.hrs;
      break;
    case 'age':
      signal.datetime = datetime(m.seconds, 'Z');
      break;
    case 'datetime': {
      const now = new Date().toISOString();
      signal.datetime = { '@now-without-offset': now.slice(0, 19), '@now-date-only': now.slice(0, 10), '@now-space': now.replace('T', ' ') }[m.text] ?? m.text;
      break;
    }
    case 'whole':
      return { value: m.value, valid: false };
  }
  return { value: signal, id: tagged ? id : undefined, valid: false, station: spec.station };
}

interface Sent {
  text: string;
  /** The signals of a list body, in order (undefined when the body is not a generated list). */
  signals?: Built[];
  /** Whether the body is a JSON array. */
  isList: boolean;
  length: number;
}

function prepare(spec: BodySpec, dialect: Dialect): Sent {
  switch (spec.kind) {
    case 'batch': {
      const signals = spec.signals.map((s) => build(s, dialect));
      // The same signal again, transmission_id and all: each copy is a signal of its own.
      for (const r of spec.repeats) if (signals.length > 0) signals.push(signals[r % signals.length]!);
      return { text: JSON.stringify(signals.map((s) => s.value)), signals, isList: true, length: signals.length };
    }
    case 'bare': {
      const signal = build(spec.signal, dialect);
      return { text: JSON.stringify(signal.value), isList: Array.isArray(signal.value), length: Array.isArray(signal.value) ? signal.value.length : 0 };
    }
    case 'json':
      return { text: JSON.stringify(spec.value), isList: Array.isArray(spec.value), length: Array.isArray(spec.value) ? spec.value.length : 0 };
    case 'text': {
      let isList = false;
      let length = 0;
      try {
        const parsed = JSON.parse(spec.text) as unknown;
        isList = Array.isArray(parsed) && !JUNK.includes(spec.text);
        length = Array.isArray(parsed) ? parsed.length : 0;
      } catch {
        // not JSON
      }
      return { text: spec.text, isList, length };
    }
  }
}

const isEmptyObject = (v: unknown) => isPlainObject(v) && Object.keys(v as object).length === 0;

/** An entry of a 400 body for a stored signal: `{}` (any message is a signal that was not stored). */
const isStoredEntry = isEmptyObject;

async function historyCount(p: TestPlatform): Promise<number> {
  const [row] = await p.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM signal_history`;
  return row!.n;
}

t.test('import v1 and v1.1, generated bodies: never a 5xx, aligned 400s, exactly the accepted signals stored', async (t) => {
  const p = await startTestPlatform(t, { fixture: fixture(), env: { IMPORT_V1_RATE_LIMIT: '1000000' } });
  const refusedIds = new Set<string>();
  const statuses = new Map<string, number>();
  const tally = { accepted: 0, refused: 0 };

  await fc.assert(
    fc.asyncProperty(fc.constantFrom<Dialect>('v1', 'v1.1'), bodySpec, async (dialect, spec) => {
      const before = await historyCount(p);
      const sent = prepare(spec, dialect);
      const res = await fetch(`${p.url}/import/${dialect}/hrs-availability`, {
        method: 'POST',
        body: sent.text,
        headers: { Authorization: `Bearer ${TOKENS.import_v1}`, 'Content-Type': 'application/json' },
      });
      const text = await res.text();
      const where = `${dialect} ${spec.kind}: ${res.status} ${text.slice(0, 500)} for ${sent.text.slice(0, 500)}`;
      statuses.set(`${spec.kind} ${res.status}`, (statuses.get(`${spec.kind} ${res.status}`) ?? 0) + 1);
      if (res.status >= 500) throw new Error(`a 5xx: ${where}`);
      if (res.status !== 204 && res.status !== 400) throw new Error(`neither 204 nor 400: ${where}`);

      // Which entries were accepted (a 204 accepts all; only a list can be accepted at all).
      let accepted: boolean[] = [];
      if (res.status === 204) {
        if (!sent.isList) throw new Error(`a 204 for a body that is not a list: ${where}`);
        if (text !== '') throw new Error(`a 204 with a body: ${where}`);
        accepted = Array.from({ length: sent.length }, () => true);
      } else if (sent.isList) {
        const body = JSON.parse(text) as unknown;
        if (!Array.isArray(body) || body.length !== sent.length || !body.every(isPlainObject)) throw new Error(`a 400 not aligned with the list: ${where}`);
        if (!body.some((entry) => !isEmptyObject(entry))) throw new Error(`a 400 saying nothing: ${where}`);
        accepted = body.map(isStoredEntry);
      }

      // The generated signals are accepted exactly when they were built valid.
      const signals = sent.signals ?? [];
      signals.forEach((s, i) => {
        if (accepted[i] !== s.valid) throw new Error(`signal ${i} built ${s.valid ? 'valid' : 'invalid'} but ${accepted[i] ? 'accepted' : 'refused'}: ${where}`);
      });

      // Stored: each tagged signal as often as it was accepted, and nothing besides the accepted ones.
      const expected = new Map<string, number>();
      signals.forEach((s, i) => {
        if (s.id === undefined) return;
        expected.set(s.id, (expected.get(s.id) ?? 0) + (accepted[i] ? 1 : 0));
        if (!accepted[i]) refusedIds.add(s.id);
      });
      const ids = [...expected.keys()];
      const rows = ids.length === 0 ? [] : await p.sql<{ transmission_id: string; n: number }[]>`
        SELECT transmission_id, count(*)::int AS n FROM signal_history WHERE transmission_id IN ${p.sql(ids)} GROUP BY transmission_id`;
      const stored = new Map(rows.map((r) => [r.transmission_id, r.n]));
      for (const [id, n] of expected) {
        if ((stored.get(id) ?? 0) !== n) throw new Error(`${id} stored ${stored.get(id) ?? 0} times, accepted ${n} times: ${where}`);
      }
      const added = (await historyCount(p)) - before;
      const acceptedCount = accepted.filter(Boolean).length;
      if (added !== acceptedCount) throw new Error(`signal_history gained ${added} rows for ${acceptedCount} accepted signals: ${where}`);

      // The latest reading of each station named by an accepted signal is the last one accepted for it.
      const last = new Map<string, string>();
      signals.forEach((s, i) => {
        if (accepted[i] && s.station !== undefined && s.id !== undefined) last.set(s.station, s.id);
      });
      if (last.size > 0) {
        const latest = await p.sql<{ hrs_id: string; transmission_id: string | null }[]>`
          SELECT hrs_id, transmission_id FROM signal_latest
          WHERE originator_id = 'mon-1' AND category = 'availability' AND hrs_id IN ${p.sql([...last.keys()])}`;
        for (const [station, id] of last) {
          const found = latest.find((r) => r.hrs_id === station)?.transmission_id;
          if (found !== id) throw new Error(`signal_latest of ${station} is ${found}, not the last accepted ${id}: ${where}`);
        }
      }
      tally.accepted += acceptedCount;
      tally.refused += signals.length - signals.filter((_, i) => accepted[i]).length;
    }),
    { numRuns: RUNS },
  );

  t.comment(`statuses: ${[...statuses].sort().map(([k, n]) => `${k}×${n}`).join(', ')}`);
  t.comment(`generated signals: ${tally.accepted} accepted, ${tally.refused} refused`);
  t.ok(tally.accepted > 0 && tally.refused > 0, 'both accepted and refused signals were generated');
  const leaked = await p.sql<{ transmission_id: string }[]>`
    SELECT transmission_id FROM signal_history WHERE transmission_id IN ${p.sql([...refusedIds, '-'])}
    UNION SELECT transmission_id FROM signal_latest WHERE transmission_id IN ${p.sql([...refusedIds, '-'])}
    UNION SELECT transmission_id FROM published_signals WHERE transmission_id IN ${p.sql([...refusedIds, '-'])}`;
  t.same(leaked.map((r) => r.transmission_id), [], `none of the ${refusedIds.size} refused signals is stored anywhere`);
  const errors = p.logs.lines.filter((l) => (l.level as number) >= 50);
  t.same(errors.map((l) => l.msg), [], 'nothing logged as an error');
});
