/**
 * Stopping `hrs demo` the hard ways leaves no process of it behind either: a second signal during the
 * shutdown hurries it (PostgreSQL stops immediately instead of being abandoned), a signal while it starts
 * stops what it started, and a SIGKILLed hrs has its servers stopped by their watchdogs.
 */
import t from 'tap';
import { Demo, signal, stateFolder, unsupported } from '../helpers/demo-stop.js';
import { until } from '../helpers/wait.js';

const state = stateFolder(t);

t.test('a second signal during the shutdown: PostgreSQL and Redis stopped at once, exit code 1', { skip: unsupported }, async (t) => {
  // Readiness says 503 for 60 s before the listener closes: a shutdown that takes its time.
  const demo = await Demo.start(t, state, { via: 'node', env: { SHUTDOWN_DELAY: '60' } });
  signal(-demo.group, 'SIGINT');
  await until('the shutdown to begin', () => (/"msg":"shutting down"/.test(demo.launched.output()) ? true : undefined));
  await new Promise((resolve) => setTimeout(resolve, 1500));
  const started = Date.now();
  signal(-demo.group, 'SIGINT');
  const exit = await demo.launched.exited;
  t.equal(exit.code, 1);
  t.ok(Date.now() - started < 15_000, `without waiting for the 60 s (${Date.now() - started} ms)`);
  t.match(demo.launched.output(), /second signal: exiting at once/);
  t.same(await demo.leftAfter(20_000), [], 'no process of the demo is left');
  t.match(demo.postgresLog(), /received immediate shutdown request/, 'PostgreSQL was stopped at once, as `pg_ctl stop -m immediate` does');
});

t.test('a signal while the demo starts: what it started is stopped, exit code 1', { skip: unsupported }, async (t) => {
  const demo = await Demo.start(t, state, { via: 'node', ready: /^Started PostgreSQL/m });
  signal(-demo.group, 'SIGINT');
  const exit = await demo.launched.exited;
  t.equal(exit.code, 1);
  t.match(demo.launched.output(), /stopping while starting/);
  t.same(await demo.leftAfter(20_000), [], 'no process of the demo is left');
  t.match(demo.postgresLog(), /received fast shutdown request/, 'PostgreSQL was stopped in order');
});

t.test('SIGKILL to hrs: the watchdogs stop PostgreSQL and Redis, and the next start takes the folder over', { skip: unsupported }, async (t) => {
  const demo = await Demo.start(t, state, { via: 'node' });
  signal(demo.node().pid, 'SIGKILL');
  t.same(await demo.launched.exited, { code: null, signal: 'SIGKILL' });
  t.same(await demo.leftAfter(20_000), [], 'no process of the demo is left');
  t.match(demo.postgresLog(), /received fast shutdown request/, 'PostgreSQL was stopped in order');
  const again = await Demo.start(t, state, { via: 'node' });
  signal(again.node().pid, 'SIGTERM');
  t.same(await again.launched.exited, { code: 0, signal: null });
  t.same(await again.leftAfter(20_000), [], 'and stops cleanly');
});
