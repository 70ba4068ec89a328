/**
 * CPU used by the whole machine (every process, the kernel included), read from /proc/stat: beside the
 * benchmark's own processes it shows how much else ran meanwhile. Linux only; elsewhere, or when
 * /proc/stat cannot be read, the figure is unknown (NaN).
 */
import { readFileSync } from 'node:fs';

/** USER_HZ: the unit of the times in /proc/stat, 100 on every Linux architecture Node runs on. */
const TICKS_PER_SECOND = 100;

/** Busy and total CPU time of all cores so far, in ticks; undefined without /proc/stat. */
function sample(): { busy: number; total: number } | undefined {
  let line: string | undefined;
  try {
    line = readFileSync('/proc/stat', 'latin1').split('\n')[0];
  } catch {
    return undefined;
  }
  if (!line?.startsWith('cpu ')) return undefined;
  // user nice system idle iowait irq softirq steal (guest time is counted in user already)
  const ticks = line.trim().split(/\s+/).slice(1, 9).map(Number);
  if (ticks.length < 8 || ticks.some((n) => !Number.isFinite(n))) return undefined;
  const total = ticks.reduce((sum, n) => sum + n, 0);
  return { busy: total - ticks[3]! - ticks[4]!, total };
}

/** Samples the machine's busy CPU between `start()` and `stop()`. */
export class MachineCpu {
  private before: { busy: number; total: number } | undefined;
  private started = 0;

  start(): void {
    this.before = sample();
    this.started = performance.now();
  }

  /** Cores busy since `start()` (1.00 = one core all the time), over every process. */
  stop(): number {
    const after = sample();
    const wallMs = performance.now() - this.started;
    if (!this.before || !after || wallMs <= 0) return Number.NaN;
    return ((after.busy - this.before.busy) * 1000) / TICKS_PER_SECOND / wallMs;
  }
}
