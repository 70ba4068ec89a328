/**
 * CPU used by processes this benchmark did not start (PostgreSQL, Redis), read from /proc by command
 * name. Linux only; elsewhere, or when /proc cannot be read, the figures are unknown (NaN).
 */
import { readdirSync, readFileSync } from 'node:fs';

/** USER_HZ: the unit of the times in /proc/PID/stat, 100 on every Linux architecture Node runs on. */
const TICKS_PER_SECOND = 100;

/** CPU time in milliseconds of every running process named one of `names`, by pid; undefined without /proc. */
function sample(names: readonly string[]): Map<number, number> | undefined {
  let pids: string[];
  try {
    pids = readdirSync('/proc').filter((entry) => /^\d+$/.test(entry));
  } catch {
    return undefined;
  }
  const times = new Map<number, number>();
  for (const pid of pids) {
    let stat: string;
    try {
      stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
    } catch {
      continue; // gone meanwhile
    }
    // "pid (comm) state ppid …": comm may hold spaces and parentheses, so split at the last ")".
    const close = stat.lastIndexOf(')');
    const comm = stat.slice(stat.indexOf('(') + 1, close);
    if (!names.includes(comm)) continue;
    const fields = stat.slice(close + 2).split(' ');
    // fields[0] is field 3 (state); utime and stime are fields 14 and 15.
    const ticks = Number(fields[11]) + Number(fields[12]);
    if (Number.isFinite(ticks)) times.set(Number(pid), (ticks * 1000) / TICKS_PER_SECOND);
  }
  return times;
}

/** Samples the CPU of the processes named `names` between `start()` and `stop()`. */
export class ProcessCpu {
  private before: Map<number, number> | undefined;
  private started = 0;

  constructor(private readonly names: readonly string[]) {}

  start(): void {
    this.before = sample(this.names);
    this.started = performance.now();
  }

  /** Cores busy since `start()` (1.00 = one core all the time), over processes alive at both ends or started since. */
  stop(): number {
    const after = sample(this.names);
    const wallMs = performance.now() - this.started;
    if (!this.before || !after || wallMs <= 0) return Number.NaN;
    let used = 0;
    for (const [pid, ms] of after) used += ms - (this.before.get(pid) ?? 0);
    return Math.max(0, used) / wallMs;
  }
}
