import { Queue, createNodeRedisClient, type JobType } from 'bullmq';
import type { Logger } from 'pino';
import type { Redis } from '../src/infra/redis.js';

/** The platform's BullMQ queues; their keys live under `${REDIS_PREFIX}:bull`. */
export const QUEUES = { mail: 'mail', callLog: 'call-log', sandbox: 'sandbox', history: 'history', changeLog: 'change-log' } as const;
export type QueueName = (typeof QUEUES)[keyof typeof QUEUES];

export function bullPrefix(redisPrefix: string): string {
  return `${redisPrefix}:bull`;
}

type BullConnection = ReturnType<typeof createNodeRedisClient>;
const bullConnections = new WeakMap<Redis, BullConnection>();

/**
 * BullMQ's wrapper of a client, one per client for every queue and worker of the process: each wrapper
 * loads BullMQ's 220 Lua scripts into Redis (`SCRIPT LOAD`) on the client's connection, and with one
 * per queue and worker `hrs serve` sent some 2,000 of them at start, ahead of everything else on that
 * connection (the readiness check's PING waited seconds behind them). The client is shared: closing a
 * queue or worker never closes it.
 */
export function bullConnection(redis: Redis): BullConnection {
  let connection = bullConnections.get(redis);
  if (!connection) {
    connection = createNodeRedisClient(redis);
    bullConnections.set(redis, connection);
  }
  return connection;
}

/**
 * A producer's queue. Its connection's errors (one per reconnect attempt while Redis is down) go to
 * `log` at debug (watchRedis reports the outage once); without a listener BullMQ prints them as text.
 */
export function openQueue(name: QueueName, redis: Redis, redisPrefix: string, log?: Logger): Queue {
  const queue = new Queue(name, {
    connection: bullConnection(redis),
    prefix: bullPrefix(redisPrefix),
    defaultJobOptions: {
      attempts: 8,
      backoff: { type: 'exponential', delay: 5000 },
      removeOnComplete: { age: 24 * 3600, count: 10_000 },
      removeOnFail: { age: 14 * 24 * 3600 },
    },
  });
  queue.on('error', (err) => log?.debug({ err, queue: name }, 'queue connection error'));
  return queue;
}

type BulkJob = Parameters<Queue['addBulk']>[0][number];

/** Whether Redis refused a script it does not hold (NOSCRIPT), alone or as one reply of a MULTI. */
function lacksScripts(err: unknown): boolean {
  const replies = (err as { replies?: unknown[] }).replies ?? [];
  return [err, ...replies].some((e) => e instanceof Error && e.message.startsWith('NOSCRIPT'));
}

/**
 * The jobs added as one bulk (one round trip), or one by one when Redis lacks BullMQ's scripts: its
 * bulk add sends them as EVALSHA inside a MULTI, where a NOSCRIPT cannot be answered by loading the
 * script, so it fails for good against a Redis restarted (or a replica promoted by Sentinel) since
 * they were loaded; a single add loads them again. Job ids are deterministic, so jobs the bulk did add
 * are not added twice.
 */
export async function addJobs(queue: Queue, jobs: BulkJob[]): Promise<void> {
  try {
    await queue.addBulk(jobs);
  } catch (err) {
    if (!lacksScripts(err)) throw err;
    for (const job of jobs) await queue.add(job.name, job.data, job.opts);
  }
}

/** The platform's queues, one of each, opened together. */
export interface OpenQueues {
  /** Jobs per queue name and state (BullMQ `getJobCounts`). */
  counts(states: readonly JobType[]): Promise<Record<string, Record<string, number>>>;
  /** The queue of that name (producers that need no queue of their own use it). */
  get(name: QueueName): Queue;
  close(): Promise<void>;
}

export function openQueues(redis: Redis, redisPrefix: string): OpenQueues {
  const queues = Object.values(QUEUES).map((name) => openQueue(name, redis, redisPrefix));
  return {
    counts: async (states) => Object.fromEntries(await Promise.all(queues.map(async (q) => [q.name, await q.getJobCounts(...states)]))),
    get: (name) => queues.find((q) => q.name === name)!,
    close: async () => void (await Promise.all(queues.map((q) => q.close()))),
  };
}
