import t from 'tap';
import { createHash, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { openRedis } from '../../src/infra/redis.js';
import { loadScript, runScript, scriptOf } from '../../src/infra/scripts.js';
import { TEST_REDIS_URL } from '../helpers/services.js';

/** Whether Redis holds the script with this SHA1 (SCRIPT EXISTS). */
const held = async (redis: Awaited<ReturnType<typeof openRedis>>, sha: string) => {
  const [exists] = (await redis.sendCommand(['SCRIPT', 'EXISTS', sha])) as number[];
  return exists === 1;
};

t.test('every script is read from its .lua file beside the modules, named by its SHA1', async (t) => {
  for (const file of ['rate-limit.lua', 'stream-slot-take.lua', 'stream-slot-renew.lua']) {
    const script = loadScript(file);
    const text = readFileSync(new URL(`../../src/infra/${file}`, import.meta.url), 'utf8');
    t.equal(script.source, text, `${file}: its text`);
    t.equal(script.sha, createHash('sha1').update(text).digest('hex'), `${file}: its SHA1`);
  }
  t.throws(() => loadScript('no-such-script.lua'), { code: 'ENOENT' }, 'a missing file fails at once');
});

t.test('a script Redis does not hold (NOSCRIPT) is sent whole once, then run by its SHA1', async (t) => {
  const redis = await openRedis(TEST_REDIS_URL, 'scripts-test');
  t.teardown(() => redis.close());
  // A text no other run has sent: Redis cannot hold it yet.
  const script = scriptOf('echo', `-- ${randomUUID()}\nreturn {KEYS[1], ARGV[1]}`);
  t.notOk(await held(redis, script.sha), 'not held before');
  t.strictSame(await runScript(redis, script, ['k'], ['a']), ['k', 'a'], 'the first run answers');
  t.ok(await held(redis, script.sha), 'held after the first run');
  t.strictSame(await runScript(redis, script, ['k2'], ['b']), ['k2', 'b'], 'the next run answers by its SHA1');
});

t.test('a script\'s own failure is thrown to the caller, whether it was sent whole or by its SHA1', async (t) => {
  const redis = await openRedis(TEST_REDIS_URL, 'scripts-test');
  t.teardown(() => redis.close());
  const script = scriptOf('broken', `-- ${randomUUID()}\nreturn redis.call('NO-SUCH-COMMAND')`);
  await t.rejects(runScript(redis, script, [], []), /unknown command|Unknown Redis command/i, 'the failure of the first run (EVAL)');
  t.ok(await held(redis, script.sha), 'held all the same');
  await t.rejects(runScript(redis, script, [], []), /unknown command|Unknown Redis command/i, 'and of a run by its SHA1');
});
