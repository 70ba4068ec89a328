/**
 * Every way of stopping `npx hrs demo` leaves no process of it behind (this file: a signal to its whole
 * process group; test/system/demo-stop-npm.test.ts: to npm or node alone; test/system/demo-stop-hurry.test.ts: a
 * second signal, a signal while it starts, SIGKILL). Its PostgreSQL and Redis run detached, out of the
 * group's reach, so hrs stops them itself: PostgreSQL in order (a fast shutdown), never abandoned.
 */
import t from 'tap';
import { npmWrapper, type ProcessFacts } from '../../src/cli/wrapper.js';
import { Demo, signal, stateFolder, stoppedInOrder, unsupported } from '../helpers/demo-stop.js';

const state = stateFolder(t);

const cases: { name: string; sent: NodeJS.Signals; shell: string }[] = [
  { name: 'Ctrl-C: SIGINT to the group', sent: 'SIGINT', shell: '/bin/sh' },
  { name: 'kill -- -PGID, a service manager: SIGTERM to the group', sent: 'SIGTERM', shell: '/bin/sh' },
  // bash hands its process over to node: npm's copy of the group's signal reaches node as well.
  { name: 'SIGTERM to the group, npm running node itself (bash as its script shell): npm\'s copy is no second signal', sent: 'SIGTERM', shell: '/bin/bash' },
  { name: 'a closing terminal: SIGHUP to the group', sent: 'SIGHUP', shell: '/bin/sh' },
];
for (const c of cases) {
  t.test(`npx hrs demo, ${c.name}`, { skip: unsupported }, async (t) => {
    const demo = await Demo.start(t, state, { via: 'npx', shell: c.shell });
    const node = demo.node();
    t.equal(node.ppid === demo.group, c.shell === '/bin/bash', c.shell === '/bin/bash' ? 'node is npm\'s child' : 'a shell stands between npm and node');
    t.ok(demo.seen.size >= 5, `npm, node, PostgreSQL and Redis run (${demo.seen.size} processes)`);
    signal(-demo.group, c.sent);
    await stoppedInOrder(t, demo);
    t.match(demo.launched.output(), new RegExp(`"reason":"${c.sent}"`), 'hrs says why it stopped');
  });
}

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
