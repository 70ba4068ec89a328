/**
 * Length limits come first. Every text field of every route's body and query (found from the routes'
 * contracts, and the schemas of the routes that read their own body), of the registry file and of the
 * legacy and import v2 transmissions is bounded by a length check that runs before anything else and
 * stops there (zod's `abort`): no pattern, format, parser or refinement, nor the checks of the object
 * around it, reads a value its limit refused. Opening hours are bounded before the `opening_hours`
 * package reads them (src/domain/opening-hours-bounds.ts). The event-loop guard reports a stall in the
 * log (with the request that caused it) and in `/metrics`.
 */
import t from 'tap';
import type { Logger } from 'pino';
import { Registry } from 'prom-client';
import { z } from 'zod';
import { EventLoopGuard } from '../../src/api/metrics/event-loop.js';
import { checkOpeningHours, nextChange } from '../../src/domain/opening-hours.js';
import { OPENING_HOURS_MAX_PARTS, openingHoursOutOfBounds } from '../../src/domain/opening-hours-bounds.js';
import { PROBLEM_ERRORS } from '../../src/http/errors.js';
import type { BlockingSection, HttpServer } from '../../src/http/server.js';
import { fixtureSchema, stationRecordSchema } from '../../src/registry/file/schema.js';
import { baseFixture } from '../helpers/fixtures.js';
import { rawBodySchema } from '../helpers/input-targets.js';
import { ADMIN_TOKEN, startTestPlatform } from '../helpers/platform.js';
import { textFields } from '../helpers/schema-fields.js';

t.test('every text field of every input is bounded first', async (t) => {
  let server: HttpServer | undefined;
  await startTestPlatform(t, { fixture: baseFixture(), routes: (s) => (server = s) });
  const schemas: [string, z.ZodType][] = [['registry file', fixtureSchema]];
  const unknownBodies: string[] = [];
  for (const route of server!.contracts()) {
    const body = route.body instanceof z.ZodType ? route.body : route.body === true ? rawBodySchema(route) : undefined;
    if (route.body === true && body === undefined) unknownBodies.push(`${route.method} ${route.path}`);
    if (body instanceof z.ZodType) schemas.push([`${route.method} ${route.path} body`, body]);
    if (route.query) schemas.push([`${route.method} ${route.path} query`, route.query]);
  }
  const unbounded = schemas.flatMap(([where, schema]) =>
    textFields(schema)
      .filter((field) => field.kind === 'string' && field.boundedFirst === undefined)
      .map((field) => `${where}: ${field.path.join('.') || '(the value)'}`),
  );
  t.same(unknownBodies, [], 'the schema of every route that reads its body itself is known (test/helpers/input-targets.ts)');
  t.same(unbounded, [], `no unbounded text field in ${schemas.length} schemas`);
  t.ok(schemas.length > 50, `the routes' schemas were found (${schemas.length})`);
});

t.test('a field its limit refused is read no further, nor the object around it', async (t) => {
  const long = 'Mo-Fr 08:00-18:00; '.repeat(1200);
  const parsed = stationRecordSchema.safeParse({ name: 'Berlin', opening_hours: long });
  t.same(parsed.error?.issues.map((i) => [i.path.join('.'), i.message]), [['opening_hours', 'must be at most 1000 characters']], 'the limit alone is reported');
  const phone = stationRecordSchema.safeParse({ name: 'Berlin', details: { contact_phone_number: '+4930'.padEnd(50_000, '1') } });
  t.same(phone.error?.issues.map((i) => i.path.join('.')), ['details.contact_phone_number'], 'one problem for a long phone number');
  t.notMatch(phone.error?.issues[0]?.message, /1111111111/, 'and its message does not repeat the value');
});

t.test('opening hours are bounded before the package reads them', async (t) => {
  t.equal(openingHoursOutOfBounds('Mo-Fr 06:00-22:00; Sa,Su,PH 08:00-20:00; Dec 24 06:00-14:00; Dec 25,26 off'), undefined, 'real hours are within the bounds');
  t.equal(openingHoursOutOfBounds(`Mo-Fr 08:00-18:00 "${'a long note for drivers '.repeat(35)}"`), undefined, 'a long comment is one part');
  t.match(checkOpeningHours(`24/7${'x'.repeat(16_000)}`), /at most 1000 characters/, 'past 1,000 characters: the limit');
  t.match(checkOpeningHours(`24/7${'x'.repeat(500)}`), /^24\/7x{500} <--- \("x{20}…" is not a word of opening hours \(500 letters\)\)$/, 'a long unknown word: named, the package not asked');
  t.match(checkOpeningHours('Montag Dienstag Mittwoch Donnerstag 08:00-18:00'), /^Montag Dienstag Mittwoch Donnerstag <--- \("Donnerstag" is not understood here/, 'a fourth unknown word: named');
  t.match(checkOpeningHours('weekdays 9 to 5'), /write "Mo-Fr" instead of "weekdays"/, 'a few unknown words: the package\'s advice');
  const many = 'Mo-Fr 08:00-18:00; '.repeat(50);
  t.match(checkOpeningHours(many), new RegExp(`<--- \\(opening hours are read up to ${OPENING_HOURS_MAX_PARTS} parts`), 'too many parts: said so');
  t.equal(checkOpeningHours('Mo-Fr 08:00-18:00; PH off', 'DE'), undefined, 'public holidays with a country');
  t.equal(checkOpeningHours('PH off', 'DE'), undefined, 'closed on public holidays alone (the package searched five years for a change)');
  t.equal(nextChange('PH off', 'Europe/Berlin', new Date('2026-06-01T12:00:00Z'), 'DE'), null, 'and it never changes: null');
  t.same(nextChange('24/7; PH off', 'Europe/Berlin', new Date('2026-12-01T12:00:00Z'), 'DE'), new Date('2026-12-24T23:00:00Z'), 'open until the next holiday, found a month of searching at a time');
});

t.test('a stall of the event loop: one warning naming the request, and the metrics', async (t) => {
  const family = { name: 'stalling', prefix: '/stall', errors: PROBLEM_ERRORS };
  const p = await startTestPlatform(t, {
    env: { EVENT_LOOP_STALL: '0.1' },
    routes: (server) =>
      server.route({
        family, method: 'GET', path: '/stall', public: true,
        handler: () => {
          // What a request that holds the event loop does: nothing else runs meanwhile.
          const until = performance.now() + 300;
          while (performance.now() < until);
          return { status: 204 };
        },
      }),
  });
  t.equal((await fetch(`${p.url}/stall`)).status, 204);
  const line = await waitForLine(p.logs.lines, (l) => typeof l.stall_ms === 'number' && l.route === '/stall');
  t.equal(line.level, 40, 'a warning');
  t.ok((line.stall_ms as number) >= 250, `with its length (${String(line.stall_ms)} ms)`);
  t.match(line, { method: 'GET', route: '/stall', msg: /^the event loop was blocked for \d+ ms while GET \/stall was being handled/ });
  const metrics = await (await fetch(`${p.url}/metrics`, { headers: { Authorization: `Bearer ${ADMIN_TOKEN}` } })).text();
  t.match(metrics, /^hrs_event_loop_stalls_total [1-9]\d*$/m, 'counted');
  const longest = Number(/^hrs_event_loop_delay_max_seconds ([\d.e-]+)$/m.exec(metrics)?.[1]);
  t.ok(longest >= 0.25, `the longest delay: ${longest} s`);
});

t.test('a stall that ends just before the guard looks is reported then, with its request, and once', async (t) => {
  // The moment that lost a stall: the guard's check running after the stall and before the event loop's
  // own timers have recorded it (here: at once, in the same turn of the loop).
  const warnings: { obj: Record<string, unknown>; msg: string }[] = [];
  const log = { warn: (obj: Record<string, unknown>, msg: string) => warnings.push({ obj, msg }) } as unknown as Logger;
  let section: BlockingSection | undefined;
  const registry = new Registry();
  const guard = new EventLoopGuard({ log, thresholdMs: 100, registry, sections: { takeLongestSection: () => { const s = section; section = undefined; return s; } } });
  t.teardown(() => guard.stop());
  await new Promise((resolve) => setTimeout(resolve, 30));
  const start = performance.now();
  while (performance.now() < start + 300);
  section = { method: 'GET', route: '/stall', ms: performance.now() - start };
  guard.check();
  t.equal(warnings.length, 1, 'the check right after the stall reports it');
  t.match(warnings[0]?.obj, { method: 'GET', route: '/stall' }, 'with the request');
  t.ok((warnings[0]?.obj.stall_ms as number) >= 250, `with its length (${String(warnings[0]?.obj.stall_ms)} ms)`);
  await new Promise((resolve) => setTimeout(resolve, 200));
  t.equal(warnings.length, 1, 'and the checks after it do not report it again');
  t.match(await registry.getSingleMetricAsString('hrs_event_loop_stalls_total'), /^hrs_event_loop_stalls_total 1$/m, 'counted once');
});

async function waitForLine(lines: Record<string, unknown>[], match: (line: Record<string, unknown>) => boolean): Promise<Record<string, unknown>> {
  for (let i = 0; i < 100; i++) {
    const found = lines.find(match);
    if (found) return found;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`no such log line; the warnings: ${JSON.stringify(lines.filter((l) => (l.level as number) >= 40))}`);
}
