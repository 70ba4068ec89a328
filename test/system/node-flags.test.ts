/**
 * The service's V8 options (src/config/node-flags.ts) are the ones `bin/hrs.js` and `npm start` give Node,
 * and the command runs with them.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import t from 'tap';
import { NODE_FLAGS } from '../../src/config/node-flags.js';

t.test('bin/hrs.js and npm start run Node with the service\'s V8 options', async (t) => {
  const shebang = readFileSync(new URL('../../bin/hrs.js', import.meta.url), 'utf8').split('\n')[0];
  t.equal(shebang, `#!/usr/bin/env -S node ${NODE_FLAGS.join(' ')}`, 'the command\'s first line');
  const manifest = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { scripts: Record<string, string> };
  t.equal(manifest.scripts.start, `node ${NODE_FLAGS.join(' ')} bin/hrs.js serve`, 'npm start');
  // Executed as a program (as npx and a shell do): Node sees the options.
  const out = execFileSync(new URL('../../bin/hrs.js', import.meta.url).pathname, ['--help'], { encoding: 'utf8', env: { ...process.env, NODE_OPTIONS: '--require ./test/helpers/print-exec-argv.cjs' } });
  t.match(out, /execArgv: .*--max-semi-space-size=32/, 'the running command has them');
});
