/**
 * Stopping `npx hrs demo` by its npm process or its node process alone leaves no process of it behind
 * (see test/system/demo-stop.test.ts for the whole process group).
 */
import t from 'tap';
import { Demo, signal, stateFolder, stoppedInOrder, unsupported } from '../helpers/demo-stop.js';

const state = stateFolder(t);

t.test('SIGTERM to npm alone: the shell between npm and node dies of it, and hrs stops as they are gone', { skip: unsupported }, async (t) => {
  const demo = await Demo.start(t, state, { via: 'npx' });
  t.not(demo.node().ppid, demo.group, 'a shell stands between npm and node');
  signal(demo.group, 'SIGTERM');
  await stoppedInOrder(t, demo);
  t.match(demo.launched.output(), /"reason":"npm exited"/, 'hrs says why it stopped');
});

t.test('SIGTERM to npm alone, npm running node itself (bash as its script shell): npm passes it on', { skip: unsupported }, async (t) => {
  const demo = await Demo.start(t, state, { via: 'npx', shell: '/bin/bash' });
  t.equal(demo.node().ppid, demo.group);
  signal(demo.group, 'SIGTERM');
  await stoppedInOrder(t, demo);
  t.match(demo.launched.output(), /"reason":"SIGTERM"/);
});

t.test('SIGKILL to npm: the shell stays, and hrs stops as npm is gone', { skip: unsupported }, async (t) => {
  const demo = await Demo.start(t, state, { via: 'npx' });
  signal(demo.group, 'SIGKILL');
  await stoppedInOrder(t, demo);
  t.match(demo.launched.output(), /"reason":"npm exited"/);
});

t.test('SIGTERM to node alone: it stops, and npm with it', { skip: unsupported }, async (t) => {
  const demo = await Demo.start(t, state, { via: 'npx' });
  signal(demo.node().pid, 'SIGTERM');
  await stoppedInOrder(t, demo);
  t.match(demo.launched.output(), /"reason":"SIGTERM"/);
});
