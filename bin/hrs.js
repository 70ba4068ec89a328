#!/usr/bin/env -S node --max-semi-space-size=32
// The `hrs` command. It runs the build in dist/ (`npm run build`) when there is one newer than every
// source; otherwise the TypeScript sources directly through tsx's loader, so it works right after
// `npm ci` with no build step, and a source edited after a build never runs stale.
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
/** What a build is made from (package.json too: the version comes from there). */
const SOURCES = ['src', 'machines', 'workers', 'db', 'package.json'];

/** When the last build finished (scripts/build.js writes dist/BUILT last), or 0 without one. */
function builtAt() {
  try {
    return statSync(join(root, 'dist', 'BUILT')).mtimeMs;
  } catch {
    return 0;
  }
}

/** The latest change to a source: a few hundred files, a few milliseconds. */
function sourcesChangedAt() {
  const paths = SOURCES.flatMap((source) => {
    const path = join(root, source);
    return statSync(path).isDirectory() ? readdirSync(path, { recursive: true }).map((name) => join(path, name)) : [path];
  });
  return Math.max(...paths.map((path) => statSync(path).mtimeMs));
}

async function load() {
  const built = builtAt();
  if (built > 0 && built >= sourcesChangedAt()) return import('../dist/src/cli/main.js');
  if (built > 0) process.stderr.write('hrs: the build in dist/ is older than the sources, so they run through tsx (`npm run build` updates it)\n');
  const { register } = await import('tsx/esm/api');
  register();
  return import('../src/cli/main.ts');
}

const { main } = await load();
const code = await main(process.argv.slice(2));
// Everything was closed in order by then; idle keep-alive connections must not keep the process alive.
process.exit(code);
