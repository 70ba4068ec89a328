import type { Logger } from 'pino';
import type { Connections, Socket } from './connections.js';

/**
 * Backpressure: a socket whose unsent bytes exceed PUSH_MAX_BACKLOG (beyond the snapshot it was last
 * sent) is closed with 4000; uWS's own limit sits far above, as a last resort that never silently
 * drops a message (it closes instead). Sockets are checked soon after messages are published, a
 * batch at a time.
 */

/** How often, at most, open sockets are checked for backlog while messages are being published. */
const SCAN_EVERY_MS = 100;
/**
 * Sockets checked per scan: with many connections a pass over all of them is spread over several
 * scans (2,000 per 100 ms: 100,000 sockets in 5 s), so the check costs a bounded sliver of a core;
 * uWS's own limit, far above PUSH_MAX_BACKLOG, still bounds what one socket can hold meanwhile.
 */
const SCAN_BATCH = 2000;

export interface BacklogDeps {
  connections: Connections;
  log: Logger;
  maxBacklogBytes: number;
}

export class Backlog {
  private timer: NodeJS.Timeout | undefined;
  /** Sockets the current pass has still to check. */
  private queue: Socket[] = [];
  private stopped = false;

  constructor(private readonly deps: BacklogDeps) {}

  /** Checks every socket's backlog soon (at most every SCAN_EVERY_MS while publishing). */
  schedule(): void {
    if (this.timer !== undefined || this.stopped) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.scan();
    }, SCAN_EVERY_MS);
  }

  /** Checks no more. */
  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
  }

  private scan(): void {
    const { connections, log, maxBacklogBytes: limit } = this.deps;
    if (this.queue.length === 0) this.queue = [...connections.all.keys()];
    const batch = this.queue.splice(0, SCAN_BATCH);
    // A pass still under way keeps the scans going even when nothing more is published.
    if (this.queue.length > 0) this.schedule();
    for (const ws of batch) {
      const connection = connections.all.get(ws);
      if (!connection || connection.closed) continue;
      const buffered = ws.getBufferedAmount();
      if (buffered <= limit + connection.allowance) continue;
      log.warn({ buffered, limit, kind: ws.getUserData().state?.kind }, 'closing a subscriber that fell too far behind');
      connections.end(ws, connection, 'tooSlow');
    }
  }
}
