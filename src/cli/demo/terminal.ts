import { fstatSync } from 'node:fs';
import { isatty } from 'node:tty';
import { stationStateOf, type StationState, type StationVerdict } from '../../domain/status/verdict.js';
import { procStat } from '../../local/processes.js';

/**
 * What `hrs demo` says in its terminal while it runs, besides warnings: a one-line summary every
 * interval (signals the platform accepted and refused, its stations by state), the banner again when
 * asked (Enter on its terminal, or SIGUSR2), and each portal sign-in link its mail sink receives.
 */

export type { StationState };

/** The platform's own count of import signals so far, from its /metrics text. */
export interface SignalCounts {
  accepted: number;
  refused: number;
}

/**
 * Accepted and refused import signals in the metrics exposition: import v2 transmissions
 * (`hrs_import_v2_transmissions_total`, outcome accepted or rejected; dry runs are neither) and legacy
 * import signals (`hrs_import_v1_signals_total`).
 */
export function signalCounts(metrics: string): SignalCounts {
  const counts = { accepted: 0, refused: 0 };
  const line = /^hrs_import_v(?:2_transmissions|1_signals)_total\{([^}]*)\} (\S+)$/gm;
  for (const m of metrics.matchAll(line)) {
    const outcome = /outcome="([^"]*)"/.exec(m[1]!)?.[1];
    const n = Number(m[2]);
    if (!Number.isFinite(n)) continue;
    if (outcome === 'accepted') counts.accepted += n;
    if (outcome === 'rejected') counts.refused += n;
  }
  return counts;
}

const STATE_WORDS: [StationState, string][] = [
  ['available', 'available'],
  ['limited', 'limitedly available'],
  ['unavailable', 'unavailable'],
  ['unknown', 'unknown'],
  ['closed', 'closed'],
];

/** `every` as words: "minute", "5 minutes", "30 s". */
function period(seconds: number): string {
  if (seconds === 60) return 'minute';
  if (seconds % 60 === 0) return `${seconds / 60} minutes`;
  return `${seconds} s`;
}

/**
 * One summary line: `12:03 last minute: 48 signals accepted, 2 refused · 12 stations: 9 available,
 * 1 unavailable, 2 unknown` (local time; seconds shown when the interval is under a minute; a state no
 * station is in is left out; `signals: not counted` when the counts could not be read).
 */
export function summaryLine(at: Date, everySeconds: number, signals: SignalCounts | undefined, states: StationState[]): string {
  const clock = at.toTimeString().slice(0, everySeconds < 60 ? 8 : 5);
  const counted = signals
    ? `${signals.accepted} ${signals.accepted === 1 ? 'signal' : 'signals'} accepted, ${signals.refused} refused`
    : 'signals not counted';
  const byState = STATE_WORDS.map(([state, words]) => [states.filter((s) => s === state).length, words] as const)
    .filter(([n]) => n > 0)
    .map(([n, words]) => `${n} ${words}`);
  const stations = `${states.length} ${states.length === 1 ? 'station' : 'stations'}${byState.length > 0 ? `: ${byState.join(', ')}` : ''}`;
  return `${clock} last ${period(everySeconds)}: ${counted} · ${stations}`;
}

export interface SummarySources {
  /** The metrics exposition of the running platform. */
  metrics: () => Promise<string>;
  /** The verdict of every station the summary counts (the sandbox's sample stations left out), as the dashboard shows it. */
  verdicts: () => (StationVerdict | undefined)[];
}

/**
 * Every `everySeconds`, one summary line: the signals the platform accepted and refused since the
 * previous line (its own metrics, counted from its start) and its stations by state now.
 */
export function startSummaries(everySeconds: number, sources: SummarySources, out: (line: string) => void): () => void {
  let previous: SignalCounts = { accepted: 0, refused: 0 };
  let busy = false;
  const tick = async () => {
    if (busy) return;
    busy = true;
    try {
      const now = await sources.metrics().then(signalCounts, () => undefined);
      const since = now && { accepted: Math.max(0, now.accepted - previous.accepted), refused: Math.max(0, now.refused - previous.refused) };
      if (now) previous = now;
      out(summaryLine(new Date(), everySeconds, since, sources.verdicts().map(stationStateOf)));
    } finally {
      busy = false;
    }
  };
  const timer = setInterval(() => void tick(), everySeconds * 1000);
  return () => clearInterval(timer);
}

/**
 * Whether this process is in its terminal's foreground process group, where Linux says (the pgrp and
 * tpgid fields of /proc/self/stat); true where it cannot tell. A background job (`hrs demo &`) that
 * read its terminal would be stopped by SIGTTIN.
 */
function inForeground(): boolean {
  const fields = procStat('self');
  if (!fields) return true;
  const [, , pgrp, , , tpgid] = fields;
  return pgrp === tpgid;
}

/** Whether file descriptor 0 is a terminal in the foreground or a pipe (so lines typed or written to it arrive). */
function stdinReadable(): boolean {
  try {
    if (isatty(0)) return inForeground();
    const stat = fstatSync(0);
    return stat.isFIFO() || stat.isSocket();
  } catch {
    return false;
  }
}

/**
 * Calls `ask` on SIGUSR2, and on every line read from standard input when that is a terminal or a pipe
 * (once per chunk read, however many lines it holds). Returns what stops listening.
 */
export function whenAsked(ask: () => void): () => void {
  const onSignal = () => ask();
  process.on('SIGUSR2', onSignal);
  const reading = stdinReadable();
  const onData = (chunk: string) => {
    if (chunk.includes('\n')) ask();
  };
  const onError = () => process.stdin.off('data', onData);
  if (reading) {
    process.stdin.setEncoding('utf8');
    process.stdin.on('data', onData);
    process.stdin.on('error', onError);
  }
  return () => {
    process.off('SIGUSR2', onSignal);
    if (!reading) return;
    process.stdin.off('data', onData);
    process.stdin.off('error', onError);
    process.stdin.pause();
  };
}
