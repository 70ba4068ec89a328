import type { Worker } from 'bullmq';
import type { Logger } from 'pino';
import type { Redis } from '../src/infra/redis.js';
import { isConnectionError } from '../src/infra/redis-outage.js';

export { isConnectionError } from '../src/infra/redis-outage.js';

/**
 * Logs a BullMQ worker's 'error' events. Each of its connections (the command one and the blocking one)
 * emits one per reconnect attempt while Redis is away, every worker of the process alike: those are
 * debug lines, as the process's Redis client reports the outage once (watchRedis: one warning when it
 * starts, one info line when it ends). Any other error, or one while Redis is connected, is an error line.
 */
export function logWorkerErrors(worker: Worker, redis: Redis, log: Logger, what: string): void {
  worker.on('error', (err) => {
    if (isConnectionError(err) || !redis.isReady) log.debug({ err }, `${what} error: Redis connection`);
    else log.error({ err }, `${what} error`);
  });
}

/**
 * How to close a BullMQ worker, made when it starts. Closed while its blocking connection is still
 * opening, a worker can leave that connection open (and the process running): a worker not yet ready
 * is let finish opening first, briefly, so an unreachable Redis does not hold up a shutdown. A worker
 * that was ready closes at once (its Redis may be stopping with the rest).
 */
export function closerOf(worker: Worker, waitMs = 2000): () => Promise<void> {
  let ready = false;
  const opened = worker.waitUntilReady().then(
    () => void (ready = true),
    () => undefined,
  );
  return async () => {
    if (!ready) {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([opened, new Promise((resolve) => (timer = setTimeout(resolve, waitMs)))]);
      clearTimeout(timer);
    }
    await worker.close();
  };
}
