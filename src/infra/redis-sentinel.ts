import { ClientClosedError, createSentinel, type RedisClientType, type RedisSentinelType } from '@redis/client';
import type { RedisSentinelSettings } from '../config/redis-settings.js';

/**
 * A Redis client that follows the master of a Sentinel group (REDIS_SENTINELS), node-redis's own
 * RedisSentinel: it asks the Sentinels for the master, listens to them for `+switch-master`, and on a
 * failover moves its connections, its subscriptions included, to the new master by itself. It has the
 * client's commands, `multi`, scripts, pub/sub, `duplicate()`, `isReady`/`isOpen` and its lifecycle
 * events, so the platform and BullMQ's node-redis wrapper use it as they use a client of one server;
 * `sentinelClient` fills in the four differences they meet (below).
 */

/** The platform's client type (./redis.ts names it `Redis`), which the Sentinel client stands in for. */
type Redis = RedisClientType;

/** What a client of one Redis is told by REDIS_URL, applied to the master the Sentinels name. */
export interface MasterOptions {
  username?: string;
  password?: string;
  database?: number;
  tls: boolean;
}

/** REDIS_URL's user name, password, database number and `rediss:` (its host and port are the Sentinels' to say). */
export function masterOptionsOf(url: string): MasterOptions {
  const parsed = new URL(url);
  const path = parsed.pathname.replace(/^\//, '');
  return {
    ...(parsed.username ? { username: decodeURIComponent(parsed.username) } : {}),
    ...(parsed.password ? { password: decodeURIComponent(parsed.password) } : {}),
    ...(path ? { database: Number(path) } : {}),
    tls: parsed.protocol === 'rediss:',
  };
}

/**
 * Errors of its connections to one of the Sentinels (`Sentinel Client (host:port): …`, with
 * passthroughClientErrorEvents): another Sentinel is asked meanwhile, so Redis itself is not down.
 */
export function isSentinelNodeError(err: unknown): boolean {
  return err instanceof Error && err.message.startsWith('Sentinel Client (');
}

/** Errors of its connections to the master (`Master Client (host:port): …`): it is gone or unreachable from here. */
function isMasterError(err: unknown): boolean {
  return err instanceof Error && err.message.startsWith('Master Client (');
}

export interface SentinelClientOptions {
  /** The connection name (CLIENT SETNAME) of its connections to the master. */
  name: string;
  connectTimeoutMs: number;
  /** Called on every failed command connection to the master (it is gone, or unreachable from here). */
  onMasterLost: (client: Redis) => void;
  /** Listeners it may have before Node warns (see REDIS_LISTENERS). */
  maxListeners: number;
}

/** A client (not yet connected) of the master the Sentinels name. */
export function sentinelClient(url: string, settings: RedisSentinelSettings, options: SentinelClientOptions): Redis {
  const { tls, ...master } = masterOptionsOf(url);
  const sentinel = createSentinel({
    name: settings.name,
    sentinelRootNodes: settings.nodes,
    nodeClientOptions: {
      ...master,
      name: options.name,
      socket: {
        connectTimeout: options.connectTimeoutMs,
        ...(tls ? { tls: true as const } : {}),
        // Until the Sentinels name another master: the same capped backoff as a client of one server.
        reconnectStrategy: (retries: number) => Math.min(retries * 100, 3000),
      },
    },
    sentinelClientOptions: { socket: { connectTimeout: options.connectTimeoutMs } },
    // Its connections' errors as `error` events, which it otherwise keeps to itself (an internal
    // `client-error` it does not pass on): the owner learns of a lost master at once.
    passthroughClientErrorEvents: true,
  });
  return following(sentinel, options);
}

function following(sentinel: RedisSentinelType, options: SentinelClientOptions): Redis {
  const client = sentinel as unknown as Redis;
  client.on('error', () => {});
  client.setMaxListeners(options.maxListeners);
  // A lost master connection leaves the Sentinel ready (isReady) until the Sentinels have agreed on
  // a new master (down-after-milliseconds plus the election): `onMasterLost` lets requests fail at
  // once meanwhile, as with a client of one server that is disconnected, instead of each waiting
  // REDIS_TIMEOUT for a command sent to nobody.
  client.on('error', (err: unknown) => {
    if (isMasterError(err)) options.onMasterLost(client);
  });
  // BullMQ's wrapper closes the connections it owns (a worker's blocking one, a duplicate) with
  // quit(), which RedisSentinel lacks: QUIT is a command of one connection, and it holds several.
  Object.assign(client, { quit: () => sentinel.close() });
  // Its sendCommand takes first whether the command only reads (it may then go to a replica), the
  // client's takes the arguments first: BullMQ's wrapper sends CLIENT LIST and CLIENT INFO with it.
  const send = sentinel.sendCommand.bind(sentinel);
  Object.assign(client, { sendCommand: (args: string[], commandOptions?: object) => send(false, args, commandOptions) });
  // A command still waiting for its turn on the connection when the client is closed (BullMQ's
  // blocking BZPOPMIN as its worker closes) finds no connection, and RedisSentinel fails it with a
  // TypeError; a client of one server says it is closed, which BullMQ takes as the end of a close.
  const self = (sentinel as unknown as { _self: { _execute: (readonly: unknown, fn: unknown) => Promise<unknown> } })._self;
  const execute = self._execute.bind(self);
  self._execute = async (readonly, fn) => {
    try {
      return await execute(readonly, fn);
    } catch (err) {
      if (err instanceof TypeError && !sentinel.isOpen) throw new ClientClosedError();
      throw err;
    }
  };
  // Duplicates (the bus's subscriber, BullMQ's blocking connections) follow the master the same way.
  const duplicate = sentinel.duplicate.bind(sentinel);
  // Only the client itself is asked whether Redis is usable (redisUsable), so only it is marked.
  Object.assign(client, { duplicate: () => following(duplicate(), { ...options, onMasterLost: () => {} }) });
  return client;
}
