/**
 * One import v2 client sending the largest requests the limits let through, at its rate limit: in
 * turn a body of 1,000 transmissions (the most one request may carry) that are all parsed and
 * validated, a 1 MiB array of empty objects, and a 1 MiB array of numbers (both refused whole). Runs
 * in the scenario's own process; sends one request at a time, one every `1 / perSecond` seconds.
 */
import { TOKENS } from '../../helpers/fixtures.js';

export interface AbuseCounts {
  sent: number;
  statusCodes: Record<string, number>;
  errors: number;
  /** Slowest answer to the abuser, in milliseconds. */
  maxMs: number;
  bodies: number[];
}

/** The abuser's bodies: `stations` are registered ids (the 1,000 transmissions cycle through them). */
export function abuseBodies(stations: readonly string[], maxBytes: number): string[] {
  const datetime = new Date().toISOString();
  const full = Array.from({ length: 1000 }, (_, i) => ({
    hrs: stations[i % stations.length],
    datetime,
    transmission_id: `abuse-${i}-${'x'.repeat(150)}`,
    dry_run: true,
    nozzles: [
      { id: 'N1', available: true },
      { id: 'N2', available: false },
    ],
    station: { maintenance: false, limitedly_available: false },
  }));
  const filler = (item: string) => `[${Array(Math.floor((maxBytes - 64) / (item.length + 1))).fill(item).join(',')}]`;
  return [JSON.stringify(full), filler('{}'), filler('1')];
}

/** Starts sending; `stop()` ends the loop after the request in flight and returns the counts. */
export function startAbuser(port: number, bodies: string[], perSecond: number): { stop(): Promise<AbuseCounts> } {
  const counts: AbuseCounts = { sent: 0, statusCodes: {}, errors: 0, maxMs: 0, bodies: bodies.map((b) => Buffer.byteLength(b)) };
  let running = true;
  const interval = 1000 / perSecond;
  const loop = (async () => {
    let next = performance.now();
    while (running) {
      const body = bodies[counts.sent % bodies.length]!;
      counts.sent++;
      const started = performance.now();
      try {
        const res = await fetch(`http://127.0.0.1:${port}/import/v2/signal/availability/`, {
          method: 'POST',
          body,
          headers: { Authorization: `Bearer ${TOKENS.import_v2}`, 'Content-Type': 'application/json' },
        });
        await res.arrayBuffer();
        counts.statusCodes[res.status] = (counts.statusCodes[res.status] ?? 0) + 1;
      } catch {
        counts.errors++;
      }
      counts.maxMs = Math.max(counts.maxMs, performance.now() - started);
      next += interval;
      const wait = next - performance.now();
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
      return counts;
    },
  };
}
