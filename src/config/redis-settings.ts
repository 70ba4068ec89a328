import { z } from 'zod';

/**
 * The Redis Sentinel settings, part of the one environment schema (src/config/config.ts). With
 * REDIS_SENTINELS set, every Redis client asks these Sentinels which server is the master of the
 * group REDIS_SENTINEL_NAME and follows it through a failover; REDIS_URL then gives only what the
 * master needs besides its address (user name, password, database number, `rediss:` for TLS).
 * node-redis reads no Sentinel URL form (its URLs are `redis:` and `rediss:` to one server), so these
 * are settings of their own.
 */

/** A Sentinel's address. */
export interface SentinelNode {
  host: string;
  port: number;
}

/** Where the master is found: the Sentinels and the master group they watch. */
export interface RedisSentinelSettings {
  nodes: SentinelNode[];
  /** The group's name in their `sentinel monitor NAME host port quorum` line. */
  name: string;
}

/** Redis Sentinel's own default port, for an address given without one. */
export const SENTINEL_PORT = 26379;

/** The group name of the sentinel.conf Redis ships (and Debian's redis-sentinel package installs). */
export const DEFAULT_SENTINEL_NAME = 'mymaster';

/** `10.0.0.1:26379`, `sentinel-a` (port 26379), `[fd00::1]:26379`; undefined when it is none of these. */
function sentinelNode(text: string): SentinelNode | undefined {
  const match = /^(?:\[([0-9A-Fa-f:.]+)\]|([A-Za-z0-9.-]+))(?::(\d{1,5}))?$/.exec(text.trim());
  if (!match) return undefined;
  const port = match[3] === undefined ? SENTINEL_PORT : Number(match[3]);
  if (port < 1 || port > 65535) return undefined;
  return { host: match[1] ?? match[2]!, port };
}

/** The Sentinels of a REDIS_SENTINELS value, or undefined when one of them is not an address. */
export function sentinelNodes(text: string): SentinelNode[] | undefined {
  const parts = text.split(',').filter((part) => part.trim() !== '');
  const nodes = parts.map(sentinelNode);
  return nodes.length > 0 && nodes.every((node) => node !== undefined) ? (nodes as SentinelNode[]) : undefined;
}

const blankAsUnset = (value: unknown) => (typeof value === 'string' && value.trim() === '' ? undefined : value);

/** The settings' entries in the environment schema. */
export const redisSentinelEnv = {
  REDIS_SENTINELS: z.preprocess(
    blankAsUnset,
    z
      .string()
      .refine((text) => sentinelNodes(text) !== undefined, 'must list Sentinels as host:port separated by commas, e.g. "10.0.0.1:26379,10.0.0.2:26379,10.0.0.3:26379"')
      .optional(),
  ),
  REDIS_SENTINEL_NAME: z
    .string()
    .regex(/^[A-Za-z0-9_.:-]+$/, 'must be the master group name of the Sentinels\' `sentinel monitor` line (letters, digits, ".", "_", ":" and "-")')
    .default(DEFAULT_SENTINEL_NAME),
};

/** The Sentinel settings of a parsed environment, or undefined when REDIS_SENTINELS is unset (one Redis at REDIS_URL). */
export function redisSentinelOf(env: { REDIS_SENTINELS?: string; REDIS_SENTINEL_NAME: string }): RedisSentinelSettings | undefined {
  if (env.REDIS_SENTINELS === undefined) return undefined;
  return { nodes: sentinelNodes(env.REDIS_SENTINELS)!, name: env.REDIS_SENTINEL_NAME };
}

/** `10.0.0.1:26379,10.0.0.2:26379 (master group mymaster)`, for messages and logs. */
export function describeSentinels(settings: RedisSentinelSettings): string {
  const nodes = settings.nodes.map(({ host, port }) => (host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`));
  return `the Redis Sentinels ${nodes.join(',')} (master group ${settings.name})`;
}
