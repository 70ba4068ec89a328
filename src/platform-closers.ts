import type { Logger } from 'pino';

/**
 * What the platform started, each with how it stops, in the order started: `close` stops them in the
 * reverse order. The shutdown and a start that fails half-way both stop through this one list, so the
 * order is written once: where each thing starts.
 */
export class Closers {
  private readonly started: { what: string; close: () => unknown }[] = [];

  constructor(private readonly log: Logger) {}

  /**
   * Adds what just started. Returns a function that stops it ahead of its turn (the WebSockets, told
   * as the listener stops); it is then not stopped again.
   */
  add(what: string, close: () => unknown): () => Promise<void> {
    const entry = { what, close };
    this.started.push(entry);
    return async () => {
      const at = this.started.indexOf(entry);
      if (at < 0) return;
      this.started.splice(at, 1);
      await entry.close();
    };
  }

  /**
   * Stops everything, the last started first. A failure is logged and the rest still stopped; the
   * first one is thrown at the end.
   */
  async close(): Promise<void> {
    let failed: { err: unknown } | undefined;
    for (let next = this.started.pop(); next; next = this.started.pop()) {
      try {
        await next.close();
      } catch (err) {
        this.log.error({ err }, `stopping ${next.what} failed`);
        failed ??= { err };
      }
    }
    if (failed) throw failed.err;
  }
}
