import type { Readable } from 'node:stream';

/** tap's line for a finished test file: `ok 12 - test/platform/live-status.test.ts # time=8123.4ms`. */
const FILE_LINE = /^(?:not )?ok \d+ - (\S+)(?: .*)? # time=([\d.]+)ms$/;

/**
 * Passes tap's output through to `out` unchanged and notes how long each test file took, so that the
 * run can end with where its time went. Only top-level lines count: a subtest's own timing is indented.
 */
export function noteFileTimes(tapOutput: Readable, out: NodeJS.WritableStream): Map<string, number> {
  const times = new Map<string, number>();
  let partial = '';
  tapOutput.setEncoding('utf8');
  tapOutput.on('data', (chunk: string) => {
    out.write(chunk);
    const lines = (partial + chunk).split('\n');
    partial = lines.pop()!;
    for (const line of lines) {
      const found = FILE_LINE.exec(line);
      if (found) times.set(found[1]!, Number(found[2]));
    }
  });
  return times;
}

/**
 * The slowest `count` files as TAP comment lines, printed after tap's final summary: .ci/run reads that
 * summary line (`# { total: … }`), which these do not resemble.
 */
export function slowestFiles(times: Map<string, number>, count = 10): string {
  const slowest = [...times].sort(([, a], [, b]) => b - a).slice(0, count);
  if (slowest.length === 0) return '';
  const width = Math.max(...slowest.map(([, ms]) => (ms / 1000).toFixed(1).length));
  const lines = slowest.map(([file, ms]) => `#   ${(ms / 1000).toFixed(1).padStart(width)} s  ${file}`);
  const heading = slowest.length === 1 ? '# the one test file and its time:' : `# the ${slowest.length} slowest test files:`;
  return [heading, ...lines].join('\n') + '\n';
}
