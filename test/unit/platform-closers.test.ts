import t from 'tap';
import { createLogger } from '../../src/config/log.js';
import { Closers } from '../../src/platform.js';
import { logCapture } from '../helpers/platform.js';

/** A list of closers over a captured log, and what each close did, in order. */
function closers() {
  const logs = logCapture();
  const list = new Closers(createLogger('info', logs.stream));
  const closed: string[] = [];
  const add = (what: string, fail?: Error) =>
    list.add(what, async () => {
      await new Promise((resolve) => setImmediate(resolve));
      closed.push(what);
      if (fail) throw fail;
    });
  return { list, closed, add, logs };
}

t.test('what started last stops first, each once', async (t) => {
  const { list, closed, add } = closers();
  for (const what of ['PostgreSQL', 'Redis', 'the bus', 'the workers', 'the listener']) add(what);
  await list.close();
  t.strictSame(closed, ['the listener', 'the workers', 'the bus', 'Redis', 'PostgreSQL']);
  await list.close();
  t.equal(closed.length, 5, 'a second close stops nothing again');
});

t.test('one stopped ahead of its turn is not stopped again in it', async (t) => {
  const { list, closed, add } = closers();
  add('Redis');
  const sockets = add('the status streams');
  add('the workers');
  await sockets();
  await sockets();
  t.strictSame(closed, ['the status streams'], 'stopped once, at once');
  await list.close();
  t.strictSame(closed, ['the status streams', 'the workers', 'Redis']);
});

t.test('a failure is logged, the rest still stopped, and the first failure thrown at the end', async (t) => {
  const { list, closed, add, logs } = closers();
  add('PostgreSQL');
  add('Redis', new Error('Redis would not close'));
  add('the bus', new Error('the bus would not close'));
  add('the listener');
  await t.rejects(list.close(), { message: 'the bus would not close' });
  t.strictSame(closed, ['the listener', 'the bus', 'Redis', 'PostgreSQL'], 'everything was stopped');
  t.strictSame(
    logs.lines.map((line) => line.msg),
    ['stopping the bus failed', 'stopping Redis failed'],
    'each failure logged',
  );
});
