import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { Redis } from './redis.js';

/**
 * The platform's Lua scripts for Redis, each in a `.lua` file of its own beside this module (where its
 * KEYS, ARGV and reply are described): read once at start from beside the module (`import.meta.url`),
 * so they are found from the sources and from a build that copies the `.lua` files beside the modules
 * it emits (scripts/build.js), and run by their SHA1.
 */

/** One script: its file's name, its text and its SHA1 (what EVALSHA names it by). */
export interface RedisScript {
  readonly file: string;
  readonly source: string;
  readonly sha: string;
}

/** A script from its text (`file` names where it came from). */
export function scriptOf(file: string, source: string): RedisScript {
  return { file, source, sha: createHash('sha1').update(source).digest('hex') };
}

/** Reads the script in `file` (e.g. `rate-limit.lua`) beside this module. */
export function loadScript(file: string): RedisScript {
  return scriptOf(file, readFileSync(new URL(`./${file}`, import.meta.url), 'utf8'));
}

/**
 * Runs a script by its SHA1; when Redis does not hold it (not loaded yet, or gone after SCRIPT FLUSH,
 * a restart or a failover: NOSCRIPT) it is sent whole once, which runs it and caches it.
 */
export async function runScript(redis: Redis, script: RedisScript, keys: string[], args: string[]): Promise<unknown> {
  try {
    return await redis.evalSha(script.sha, { keys, arguments: args });
  } catch (err) {
    if (!(err instanceof Error && err.message.startsWith('NOSCRIPT'))) throw err;
    return redis.eval(script.source, { keys, arguments: args });
  }
}
