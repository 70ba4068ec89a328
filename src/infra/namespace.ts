import { createHash } from 'node:crypto';
import type { Config } from '../config/shape.js';

/**
 * Which platform a Redis key, channel, stream or queue belongs to. Redis pub/sub ignores the database
 * number, so two platforms on one Redis server hear each other unless their channels differ: every
 * platform has a namespace of its own, derived from its PostgreSQL database unless REDIS_PREFIX names
 * one.
 *
 * The platform id is a digest of the cluster's system identifier and the database's oid. Both stay what
 * they are across a failover to a physical replica and in a base backup restored (point-in-time recovery
 * included), so every instance of one platform, before and after such a change, agrees on it; a copy of
 * the database (CREATE DATABASE … TEMPLATE, a dump restored elsewhere, pg_upgrade) is another database and
 * gets another id. The default namespace is `hrs-` and the id; REDIS_PREFIX overrides the namespace
 * (the id still travels with every message on the bus, so two platforms given the same REDIS_PREFIX
 * still ignore each other's messages).
 */

/** The default namespace's stem, REDIS_PREFIX's former default. */
export const NAMESPACE_STEM = 'hrs';

/** What identifies a PostgreSQL database (read by db/queries/platform.ts). */
export interface DatabaseIdentity {
  systemIdentifier: string;
  databaseOid: string;
}

/** The platform id of a database identity: 16 hex digits. */
export function platformIdOf(identity: DatabaseIdentity): string {
  return createHash('sha256').update(`${identity.systemIdentifier}/${identity.databaseOid}`).digest('hex').slice(0, 16);
}

/**
 * The configuration with its namespace settled: `platformId` from the database's identity (`identity`
 * reads it: db/queries/platform.ts's databaseIdentity), `redisPrefix` REDIS_PREFIX or `hrs-<platform id>`.
 * Call once the database is open, before anything touches Redis.
 */
export async function resolveNamespace<C extends Pick<Config, 'redisPrefix' | 'redisPrefixSet' | 'platformId'>>(config: C, identity: () => Promise<DatabaseIdentity>): Promise<C> {
  const platformId = config.platformId ?? platformIdOf(await identity());
  const redisPrefix = config.redisPrefixSet ? config.redisPrefix : `${NAMESPACE_STEM}-${platformId}`;
  return { ...config, platformId, redisPrefix };
}

/** One line for the log: the namespace and where it came from. */
export function namespaceFields(config: Pick<Config, 'redisPrefix' | 'redisPrefixSet' | 'platformId'>): Record<string, string | undefined> {
  return { redis_namespace: config.redisPrefix, platform: config.platformId, from: config.redisPrefixSet ? 'REDIS_PREFIX' : 'the database (system identifier and oid)' };
}
