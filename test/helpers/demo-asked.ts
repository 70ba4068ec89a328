/**
 * A program for test/system/demo-terminal.test.ts: listens as `hrs demo` does for a request to print its banner
 * again (Enter on its terminal, SIGUSR2), says ASKED for each, and exits after a few seconds.
 */
import { whenAsked } from '../../src/cli/demo/terminal.js';

const stop = whenAsked(() => process.stdout.write('ASKED\n'));
process.stdout.write(`LISTENING ${process.pid}\n`);
setTimeout(() => {
  stop();
  process.stdout.write('DONE\n');
  process.exit(0);
}, Number(process.argv[2] ?? 4000));
