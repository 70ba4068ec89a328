// Module resolution hooks for the bench's platform processes: a module of the service's own folders
// (src, machines, workers, db) resolves to its compiled file under dist/, so what is measured is the
// code `hrs serve` runs (tsc's output on plain Node), not the sources as tsx transforms them. Registered
// by ./built.mjs after tsx; the bench builds dist/ first (./build.ts).
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = pathToFileURL(fileURLToPath(new URL('../../../', import.meta.url))).href;
const OWN = /^(src|machines|workers|db)\/.+\.ts$/;

export async function resolve(specifier, context, nextResolve) {
  const result = await nextResolve(specifier, context);
  if (result.url.startsWith(root)) {
    const rel = result.url.slice(root.length);
    if (OWN.test(rel)) return { ...result, url: `${root}dist/${rel.slice(0, -3)}.js`, format: 'module' };
  }
  return result;
}
