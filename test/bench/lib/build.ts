import { spawn } from 'node:child_process';
import { ROOT } from './child.js';

/**
 * Builds dist/ as `npm run build` does, then has every child process of the run take the service's
 * own modules from it (BENCH_BUILT, read by ./child.ts; ./built-hooks.mjs): the figures are those of
 * the code `hrs serve` runs. tsx's transform keeps function names by defining a `name` on every
 * closure it creates (`__name`), which a request path pays per request: measured on one station's
 * status, 58 µs per request from the sources against 43 µs built in the same hour. `BENCH_SOURCES=1`
 * measures the sources instead (no build; quicker while changing them, not comparable).
 */
export async function buildForBench(print: (line: string) => void): Promise<void> {
  if (process.env.BENCH_SOURCES === '1') {
    print('BENCH_SOURCES=1: the platform runs its TypeScript sources through tsx (figures not comparable with a built run)');
    return;
  }
  const started = performance.now();
  await new Promise<void>((resolve, reject) => {
    const build = spawn(process.execPath, ['scripts/build.js'], { cwd: ROOT, stdio: ['ignore', 'ignore', 'inherit'] });
    build.once('error', reject);
    build.once('exit', (code) => (code === 0 ? resolve() : reject(new Error(`npm run build exited with code ${code}`))));
  });
  process.env.BENCH_BUILT = '1';
  print(`built dist/ in ${((performance.now() - started) / 1000).toFixed(1)} s: the platform's processes run it, as hrs serve does`);
}
