/**
 * Every way of stopping `npx hrs demo` leaves no process of it behind: Ctrl-C (SIGINT to the process
 * group, as a terminal sends it), SIGTERM to the group (`kill -- -PGID`, a service manager), SIGHUP to
 * the group (a closing terminal), SIGTERM to npm alone and to node alone. Its PostgreSQL and Redis run
 * detached, so hrs stops them itself: PostgreSQL in order (a fast shutdown), never abandoned.
 */
import t, { type Test } from 'tap';
import { npmWrapper, type ProcessFacts } from '../src/cli/wrapper.js';
import { Demo, signal, stateFolder } from './helpers/demo-stop.js';

const state = stateFolder(t);

/** The demo stopped in order: PostgreSQL had a fast shutdown, and the state folder is released. */
async function stoppedInOrder(t: Test, demo: Demo): Promise<void> {
  await demo.launched.exited;
  t.same(await demo.leftAfter(20_000), [], 'no process of the demo is left');
  const log = demo.postgresLog();
  t.match(log, /received fast shutdown request/, 'PostgreSQL was stopped in order');
  t.notMatch(log, /immediate shutdown request/);
  t.notMatch(demo.launched.output(), /second signal/, 'no signal was taken for a second one');
}

t.test('through npx, a stop sent to the whole process group', async (t) => {
  const cases: { name: string; sent: NodeJS.Signals; shell: string }[] = [
    { name: 'Ctrl-C: SIGINT to the group', sent: 'SIGINT', shell: '/bin/sh' },
    { name: 'kill -- -PGID: SIGTERM to the group', sent: 'SIGTERM', shell: '/bin/sh' },
    // bash hands the shell's process over to node: npm's copy of the signal reaches node too.
    { name: 'SIGTERM to the group, npm running node itself (bash as its script shell)', sent: 'SIGTERM', shell: '/bin/bash' },
    { name: 'Ctrl-C, npm running node itself', sent: 'SIGINT', shell: '/bin/bash' },
    { name: 'a closing terminal: SIGHUP to the group', sent: 'SIGHUP', shell: '/bin/sh' },
  ];
  for (const c of cases) {
    await t.test(c.name, async (t) => {
      const demo = await Demo.start(t, state, { via: 'npx', shell: c.shell });
      const node = demo.node();
      t.equal(node.ppid === demo.group, c.shell === '/bin/bash', c.shell === '/bin/bash' ? 'node is npm\'s child' : 'a shell stands between npm and node');
      t.ok(demo.seen.size >= 5, `npm, node, PostgreSQL and Redis run (${demo.seen.size} processes)`);
      signal(-demo.group, c.sent);
      await stoppedInOrder(t, demo);
    });
  }
});

t.test('SIGTERM to npm alone: the shell between npm and node dies of it, and hrs stops as npm is gone', async (t) => {
  const demo = await Demo.start(t, state, { via: 'npx' });
  t.not(demo.node().ppid, demo.group, 'a shell stands between npm and node');
  signal(demo.group, 'SIGTERM');
  await stoppedInOrder(t, demo);
  t.match(demo.launched.output(), /"reason":"npm exited"/, 'hrs says why it stopped');
});

t.test('SIGTERM to npm alone, npm running node itself: npm passes it on', async (t) => {
  const demo = await Demo.start(t, state, { via: 'npx', shell: '/bin/bash' });
  signal(demo.group, 'SIGTERM');
  await stoppedInOrder(t, demo);
});

t.test('SIGKILL to npm: hrs stops as npm is gone', async (t) => {
  const demo = await Demo.start(t, state, { via: 'npx' });
  signal(demo.group, 'SIGKILL');
  await stoppedInOrder(t, demo);
});

t.test('SIGTERM to node alone: it stops, and npm with it', async (t) => {
  const demo = await Demo.start(t, state, { via: 'npx' });
  signal(demo.node().pid, 'SIGTERM');
  await stoppedInOrder(t, demo);
  t.match(demo.launched.output(), /"reason":"SIGTERM"/);
});

t.test('npm is recognised as the parent or behind its script shell, and only when npm says it runs hrs', async (t) => {
  const table: Record<number, { parent: number; args: string[] }> = {
    100: { parent: 90, args: ['node', '/x/bin/hrs', 'demo'] },
    90: { parent: 80, args: ['/bin/sh', '-c', 'hrs', 'demo'] },
    80: { parent: 70, args: ['npm exec hrs demo'] },
    70: { parent: 1, args: ['-bash'] },
    200: { parent: 80, args: ['node', '/x/bin/hrs', 'demo'] },
    300: { parent: 70, args: ['node', '/x/bin/hrs', 'demo'] },
    400: { parent: 410, args: ['node', '/x/bin/hrs', 'serve'] },
    410: { parent: 70, args: ['/usr/bin/node', '/usr/lib/node_modules/npm/bin/npm-cli.js', 'start'] },
  };
  const facts: ProcessFacts = { parentOf: (pid) => table[pid]?.parent, commandLine: (pid) => table[pid]?.args };
  const npm = { npm_execpath: '/usr/lib/node_modules/npm/bin/npm-cli.js', npm_command: 'exec' };
  t.same(npmWrapper(npm, 100, facts), { pids: [90, 80], direct: false }, 'npm → sh → hrs: both watched');
  t.same(npmWrapper(npm, 200, facts), { pids: [80], direct: true }, 'npm → hrs');
  t.same(npmWrapper(npm, 400, facts), { pids: [410], direct: true }, 'npm by its script\'s path');
  t.equal(npmWrapper(npm, 300, facts), undefined, 'a shell is no wrapper');
  t.equal(npmWrapper({}, 100, facts), undefined, 'without npm\'s variables nothing is watched');
});
