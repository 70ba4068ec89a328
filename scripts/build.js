// `npm run build`: compiles the service to dist/ with tsc, so `hrs` runs on plain Node (faster to
// start and lighter than the sources through tsx's loader; docs/dependencies.md gives the figures).
// dist/ mirrors the repository (dist/src, dist/db, …); every file the sources read beside themselves at
// run time comes along: all that is not TypeScript under the compiled folders (pages, styles, scripts,
// migrations, Lua), and the two things they read one level above src/: package.json and examples/photos.
import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const dist = join(root, 'dist');
const FOLDERS = ['src', 'machines', 'workers', 'db'];
const BESIDE = ['package.json', 'examples/photos'];

/** Every file under `folder` (relative to the root) that tsc does not compile. */
function assets(folder) {
  return readdirSync(join(root, folder), { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile() && !entry.name.endsWith('.ts'))
    .map((entry) => join(entry.parentPath ?? entry.path, entry.name).slice(root.length));
}

// Afresh each time: a source deleted since the last build must not live on in dist/.
rmSync(dist, { recursive: true, force: true });
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
execFileSync(process.execPath, [tsc, '-p', join(root, 'tsconfig.build.json')], { stdio: 'inherit' });
for (const file of FOLDERS.flatMap(assets)) {
  mkdirSync(dirname(join(dist, file)), { recursive: true });
  cpSync(join(root, file), join(dist, file));
}
for (const path of BESIDE) cpSync(join(root, path), join(dist, path), { recursive: true });
// Written last: bin/hrs.js runs dist/ only when this is newer than every source.
writeFileSync(join(dist, 'BUILT'), `${new Date().toISOString()}\n`);
