import { createClient } from '@redis/client';

/** Removes every Redis key under a benchmark platform's REDIS_PREFIX (rate-limit logs, queue metadata). */
export async function dropRedisKeys(prefix: string): Promise<void> {
  const client = createClient({ url: process.env.REDIS_URL || 'redis://127.0.0.1:6379' });
  client.on('error', () => {});
  await client.connect();
  try {
    for await (const found of client.scanIterator({ MATCH: `${prefix}:*`, COUNT: 1000 })) {
      const keys = (Array.isArray(found) ? found : [found]) as string[];
      if (keys.length > 0) await client.del(keys);
    }
  } finally {
    await client.close();
  }
}
