import { existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { stopOrphanPostgres } from './postgres.js';
import { stopOrphanRedis } from './redis.js';
import { StateInUseError, stateOwner } from './state.js';

/** What `hrs reset-local` deletes: the servers' data, passwords, logs and remembered ports. */
const DATA = [
  'postgres',
  'postgres.initdb',
  'postgres.password',
  'postgres.log',
  'redis',
  'redis.password',
  'redis.log',
  'ports.json',
  'servers.json',
  'owner.pid',
];

/**
 * Deletes the local servers' data so the next start begins afresh. Refused while an hrs process runs
 * them; servers a killed process left behind are stopped first. The binaries copied or built into the
 * folder (postgres-<version>/, redis-bin/) are kept: they hold no data and take long to make.
 */
export async function resetLocal(dir: string): Promise<string[]> {
  const owner = stateOwner(dir);
  if (owner !== undefined && owner !== process.pid) throw new StateInUseError(dir, owner);
  await stopOrphanPostgres(join(dir, 'postgres'));
  await stopOrphanRedis(join(dir, 'redis', 'redis.pid'));
  const removed: string[] = [];
  for (const name of DATA) {
    const path = join(dir, name);
    if (!existsSync(path)) continue;
    rmSync(path, { recursive: true, force: true });
    removed.push(path);
  }
  return removed;
}
