/**
 * Imported by a benchmark child (next to ./ipc.ts): from then on it answers `memory` queries with its
 * resident set size now and at its peak, and its V8 heap in use, all in bytes. Run with --expose-gc
 * (through NODE_OPTIONS), it first collects garbage fully, so figures taken at different moments
 * compare (otherwise they include whatever garbage awaits collection).
 */
import type { ChildMessage } from './child.js';
import { send } from './ipc.js';

export interface MemorySample {
  rss: number;
  /** Largest resident set size of the process so far. */
  peakRss: number;
  heapUsed: number;
  /** V8 heap reserved (its young generation grows under load and shrinks when idle). */
  heapTotal: number;
  /** Whether a full collection ran first. */
  collected: boolean;
}

const gc = (globalThis as { gc?: () => void }).gc;

process.on('message', (message: ChildMessage) => {
  if (message?.type !== 'memory') return;
  if (gc) {
    // The second collection picks up what the first one's finalisers freed.
    gc();
    gc();
  }
  const { rss, heapUsed, heapTotal } = process.memoryUsage();
  send({ type: 'memory', rss, heapUsed, heapTotal, peakRss: process.resourceUsage().maxRSS * 1024, collected: gc !== undefined });
});
