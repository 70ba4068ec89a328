import { json } from '../../http/errors.js';
import type { Family } from '../../http/family.js';
import type { HttpServer } from '../../http/server.js';

const CHECK_TIMEOUT_MS = 2000;


export interface HealthDeps {
  /** True once shutdown has begun: readiness turns 503 so load balancers stop sending. */
  isStopping: () => boolean;
  pingDatabase: () => Promise<unknown>;
  pingRedis: () => Promise<unknown>;
}

/**
 * `ok` or `unavailable`: the probe's own error is never shown (it may carry addresses or internal
 * text, and readiness is public); the process's log has it.
 */
async function check(probe: () => Promise<unknown>): Promise<'ok' | 'unavailable'> {
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      probe(),
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no answer within ${CHECK_TIMEOUT_MS} ms`)), CHECK_TIMEOUT_MS);
      }),
    ]);
    return 'ok';
  } catch {
    return 'unavailable';
  } finally {
    clearTimeout(timer);
  }
}

/**
 * `/healthz`: the process answers. `/readyz`: PostgreSQL and Redis answer and we are not stopping;
 * otherwise 503 with `Retry-After`, naming each dependency `ok` or `unavailable`.
 */
export function healthRoutes(server: HttpServer, family: Family, deps: HealthDeps): void {
  server.route({ family, public: true, method: 'GET', path: '/healthz', handler: () => json(200, { status: 'ok' }) });
  server.route({
    family,
    public: true,
    method: 'GET',
    path: '/readyz',
    handler: async () => {
      // Not ready is readiness working as designed (the dependency's own outage is logged once): an info line.
      if (deps.isStopping()) return { ...json(503, { status: 'shutting-down' }, { 'Retry-After': '5' }), asConfigured: true };
      const [postgres, redis] = await Promise.all([check(deps.pingDatabase), check(deps.pingRedis)]);
      const ready = postgres === 'ok' && redis === 'ok';
      const body = { status: ready ? 'ready' : 'not-ready', postgres, redis };
      return ready ? json(200, body) : { ...json(503, body, { 'Retry-After': '5' }), asConfigured: true };
    },
  });
}
