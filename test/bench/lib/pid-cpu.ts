/**
 * CPU time of given processes, and the children of a process, read from /proc (Linux): for servers
 * this benchmark runs as `hrs` commands rather than as ./child.ts children with an IPC channel.
 */
import { readdirSync, readFileSync } from 'node:fs';

/** USER_HZ: the unit of the times in /proc/PID/stat. */
const TICKS_PER_SECOND = 100;

/** The fields of /proc/PID/stat after "(comm)": [0] is field 3 (state), [1] the parent pid, [11] and [12] utime and stime. */
function statFields(pid: number): string[] | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  } catch {
    return undefined;
  }
}

/** User and system CPU time of `pid` so far, in milliseconds (NaN once it is gone). */
export function cpuMillis(pid: number): number {
  const fields = statFields(pid);
  return fields ? ((Number(fields[11]) + Number(fields[12])) * 1000) / TICKS_PER_SECOND : Number.NaN;
}

/** The pids whose parent is `pid`. */
export function childrenOf(pid: number): number[] {
  return readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .map(Number)
    .filter((candidate) => statFields(candidate)?.[1] === String(pid));
}

/** Resident memory of `pid` in megabytes (VmRSS), NaN once it is gone. */
export function residentMegabytes(pid: number): number {
  try {
    const kb = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'latin1'))?.[1];
    return kb === undefined ? Number.NaN : Number(kb) / 1024;
  } catch {
    return Number.NaN;
  }
}
