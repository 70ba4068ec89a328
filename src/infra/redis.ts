import { createClient, type RedisClientType } from 'redis';
import { redactUrl } from '../config.js';

export type Redis = RedisClientType;

/** Raised when Redis cannot be reached at start. */
export class RedisUnavailableError extends Error {
  readonly code = 'REDIS_UNAVAILABLE';
}

const HOW_TO_START =
  'start one with `redis-server --daemonize yes`, `docker compose up -d redis`, or point REDIS_URL at a running server';

/**
 * Connects and proves the server answers. At start an unreachable Redis is an error; once running,
 * the client reconnects by itself with a capped backoff.
 */
export async function openRedis(url: string, name: string): Promise<Redis> {
  let started = false;
  const client = createClient({
    url,
    name,
    socket: {
      connectTimeout: 5000,
      reconnectStrategy: (retries: number, cause: Error) => (started ? Math.min(retries * 100, 3000) : cause),
    },
  }) as unknown as Redis;
  // node-redis emits 'error' for every failed reconnect; the owner logs them.
  client.on('error', () => {});
  try {
    await client.connect();
    await client.ping();
  } catch (err) {
    await client.destroy();
    const reason = err instanceof Error ? err.message || err.constructor.name : String(err);
    throw new RedisUnavailableError(`Redis at ${redactUrl(url)} is not reachable (${reason}); ${HOW_TO_START}`);
  }
  started = true;
  return client;
}

export async function closeRedis(client: Redis): Promise<void> {
  if (!client.isOpen) return;
  try {
    await client.close();
  } catch {
    client.destroy();
  }
}
