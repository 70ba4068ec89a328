import { AggregatorRegistry, type Registry } from 'prom-client';
import type { PlatformMetrics } from '../../api/metrics/index.js';
import type { Logger } from '../../config/log.js';
import { isMessage, type Message } from './messages.js';

/**
 * `/metrics` for every server process of `hrs serve --processes`: whichever process a scrape reaches
 * asks the supervisor, which collects each process's metrics over IPC and adds them up. Counters and
 * histograms are summed; gauges are given per process, with a `process` label (its slot, 1 to N),
 * except the ones every process reads alike from shared state (declared with the `first`
 * aggregator: queue jobs, DATEX II stations left out, the build), given once. The counts of a
 * process that died stay in the sums (`countsOf`).
 */

export type MetricsJson = Awaited<ReturnType<Registry['getMetricsAsJSON']>>;

/** How long the supervisor waits for a process's metrics, and a process for the supervisor's answer. */
export const GATHER_TIMEOUT_MS = 2000;

/** The exposition text for the processes' metrics, by slot, with the counts of processes that died (`retired`). */
export async function combinedText(bySlot: Map<number, MetricsJson>, retired: MetricsJson[] = []): Promise<string> {
  const labelled = [...bySlot].map(([slot, metrics]) =>
    metrics.map((metric) => {
      if (String(metric.type) !== 'gauge' || metric.aggregator === 'first') return metric;
      const values = metric.values.map((value) => ({ ...value, labels: { ...value.labels, process: String(slot) } }));
      return { ...metric, aggregator: 'sum' as const, values };
    }),
  );
  return AggregatorRegistry.aggregate([...labelled, ...retired]).metrics();
}

/**
 * What a process that died leaves to the sums: its counters and histograms as last collected, so a
 * restart does not make them fall (which rate() would take for a reset of the whole sum). What it
 * counted after its last scrape is lost with it.
 */
export function countsOf(metrics: MetricsJson): MetricsJson {
  return metrics.filter((metric) => ['counter', 'histogram'].includes(String(metric.type)));
}

/** Several processes' counts as one (the retired ones add up over many restarts). */
export function mergedCounts(sets: MetricsJson[]): Promise<MetricsJson> {
  return AggregatorRegistry.aggregate(sets).getMetricsAsJSON();
}

/**
 * In a server process: scrapes answer with the whole set's metrics (asked of the supervisor), and the
 * supervisor's requests for this process's own are answered. Should the supervisor not answer in
 * time, a scrape gets this process's metrics alone, logged.
 */
export function shareMetrics(metrics: PlatformMetrics, log: Logger): void {
  const send = process.send?.bind(process);
  if (!send) return;
  let next = 0;
  const waiting = new Map<number, (text: string | undefined) => void>();
  process.on('message', (message: unknown) => {
    if (!isMessage(message)) return;
    if (message.hrs === 'metrics:collect') {
      void metrics.registry.getMetricsAsJSON().then((own) => send({ hrs: 'metrics:collected', id: message.id, metrics: own } satisfies Message));
    } else if (message.hrs === 'metrics:gathered') {
      waiting.get(message.id)?.(message.text);
    }
  });
  metrics.gatherWith(async () => {
    const id = ++next;
    let timer: NodeJS.Timeout | undefined;
    const text = await new Promise<string | undefined>((resolve) => {
      waiting.set(id, resolve);
      timer = setTimeout(() => resolve(undefined), GATHER_TIMEOUT_MS);
      send({ hrs: 'metrics:gather', id } satisfies Message);
    }).finally(() => {
      clearTimeout(timer);
      waiting.delete(id);
    });
    if (text !== undefined) return text;
    log.warn('the other processes\' metrics did not come in time: this scrape has this process\'s alone');
    return metrics.registry.metrics();
  });
}
