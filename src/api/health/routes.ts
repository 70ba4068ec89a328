import { pingDatabase } from '../../../db/queries/health.js';
import { json } from '../../http/errors.js';
import type { HttpServer } from '../../http/server.js';
import type { Services } from '../../services.js';

const CHECK_TIMEOUT_MS = 2000;

async function check(probe: () => Promise<unknown>): Promise<string> {
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      probe(),
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no answer within ${CHECK_TIMEOUT_MS} ms`)), CHECK_TIMEOUT_MS);
      }),
    ]);
    return 'ok';
  } catch (err) {
    return (err as Error).message || 'unreachable';
  } finally {
    clearTimeout(timer);
  }
}

/** `/healthz`: the process answers. `/readyz`: PostgreSQL and Redis answer and we are not stopping. */
export function healthRoutes(server: HttpServer, services: Services): void {
  server.route({ method: 'GET', path: '/healthz', auth: 'none', handler: () => json(200, { status: 'ok' }) });
  server.route({
    method: 'GET',
    path: '/readyz',
    auth: 'none',
    handler: async () => {
      if (services.lifecycle.shuttingDown) return json(503, { status: 'shutting-down' }, { 'Retry-After': '5' });
      const [postgres, redis] = await Promise.all([check(() => pingDatabase(services.sql)), check(() => services.redis.ping())]);
      const ready = postgres === 'ok' && redis === 'ok';
      return json(ready ? 200 : 503, { status: ready ? 'ready' : 'not-ready', postgres, redis });
    },
  });
}
