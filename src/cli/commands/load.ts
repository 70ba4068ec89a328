import { openMigrated } from '../../../db/migrate.js';
import type { Config } from '../../config/config.js';
import { Bus, registryMessage } from '../../infra/bus.js';
import { resolveNamespace } from '../../infra/namespace.js';
import { databaseIdentity } from '../../../db/queries/platform.js';
import { closeRedis, openRedis } from '../../infra/redis.js';
import { loadFixtureFile, type LoadSummary } from '../../registry/file/load.js';
import type { Command, Io } from '../command.js';
import { configInUse } from '../servers.js';

/** `hrs load FILE`: a fixture file applied in one transaction, running instances told. */
export const load: Command = {
  summary: 'load a fixture file (operators, stations, layouts, originators, tokens) in one transaction',
  usage: 'hrs load FILE',
  help:
    'Validates FILE completely, then applies it in one transaction: a bad file changes nothing and every\n' +
    'problem names its JSON path. Loading the same file twice changes nothing. The format: docs/registry-file.md.',
  positionals: 1,
  async run({ positionals }, io) {
    const given = await configInUse(io, io.err);
    const { sql } = await openMigrated(given.databaseUrl);
    let summary: LoadSummary;
    let config: Config;
    try {
      // Running instances listen on the platform's namespace, derived from the database unless REDIS_PREFIX names it.
      config = await resolveNamespace(given, () => databaseIdentity(sql));
      summary = await loadFixtureFile(sql, positionals[0]!);
    } finally {
      await sql.end({ timeout: 5 });
    }
    await announce(config, summary, io);
    io.out(describe(positionals[0]!, summary));
    return 0;
  },
};

/** Tells running instances that the registry changed, so caches and actors follow at once. */
async function announce(config: Config, summary: LoadSummary, io: Io): Promise<void> {
  let redis;
  try {
    redis = await openRedis(config.redisUrl, 'hrs-load', { sentinel: config.redisSentinel });
  } catch (err) {
    io.err(`warning: loaded, but running instances were not told (${(err as Error).message})`);
    return;
  }
  try {
    await new Bus(redis, config.redisPrefix, config.platformId!).publish(registryMessage({ hrsIds: summary.changedStations, tokens: true }));
  } finally {
    await closeRedis(redis);
  }
}

function describe(file: string, s: LoadSummary): string {
  const part = (name: string, c: LoadSummary['stations']) =>
    `${name} +${c.added} ~${c.changed} -${c.removed} =${c.unchanged}`;
  return `loaded ${file}: ${[
    part('operators', s.operators),
    part('stations', s.stations),
    part('originators', s.originators),
    part('assignments', s.assignments),
    part('users', s.users),
    part('tokens', s.tokens),
  ].join(', ')} (+added ~changed -removed =unchanged)`;
}
