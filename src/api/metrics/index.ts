import type { Family } from '../../http/family.js';
import type { HttpServer } from '../../http/server.js';
import { metricsFamily, type MetricsTokens } from './family.js';
import type { PlatformMetrics } from './metrics.js';

export { PlatformMetrics, QUEUE_STATES, type MetricSources, type TransmissionOutcome } from './metrics.js';
export { EventLoopGuard } from './event-loop.js';

export interface MetricsDeps extends MetricsTokens {
  metrics: PlatformMetrics;
}

/** `GET /metrics`: the Prometheus exposition text, for ADMIN_TOKEN or METRICS_TOKEN (./family.ts). */
export function metricsApi(server: HttpServer, deps: MetricsDeps): Family {
  const family = metricsFamily(deps);
  server.route({
    family,
    method: 'GET',
    path: '/metrics',
    handler: async () => ({
      status: 200,
      headers: { 'Content-Type': deps.metrics.contentType, 'Cache-Control': 'no-store' },
      body: await deps.metrics.text(),
    }),
  });
  return family;
}
