import { Counter, Histogram, type MetricObjectWithValues, type MetricValueWithName, type Registry } from 'prom-client';

/**
 * The two metrics every answer feeds, `hrs_http_requests_total` (by family, route, method and status)
 * and `hrs_http_request_duration_seconds` (by family, route and method), kept in plain numbers and
 * handed to prom-client only when scraped. prom-client's own `inc` and `observe` check and hash their
 * label set on every call: about 1.1 µs per answer for the two, measured here, a twentieth of one
 * station's status. Here an answer costs three map lookups of strings the router and the families
 * hold once, and a few additions. The exposition (names, labels, order of `le`, sums) is prom-client's
 * own: the classes below are its Counter and Histogram with only `get` answered from these numbers, so
 * `hrs serve --processes` adds them up as before.
 */

const LATENCY_NAME = 'hrs_http_request_duration_seconds';
const LATENCY_HELP = 'Seconds from receipt to the answer written, by API family, route pattern and method.';

/** One family, route and method's answers. */
interface Series {
  readonly labels: { family: string; route: string; method: string };
  /** Answers per status code. */
  readonly statuses: Map<number, number>;
  /** Answers per latency bucket (not cumulative); the last counts those above every bound. */
  readonly buckets: Float64Array;
  sum: number;
  count: number;
}

export class AnswerMetrics {
  private readonly series = new Map<string, Map<string, Map<string, Series>>>();

  constructor(
    registry: Registry,
    private readonly bounds: readonly number[],
  ) {
    const answers = this;
    new (class extends Counter<'family' | 'route' | 'method' | 'status'> {
      override async get() {
        return { ...(await super.get()), values: answers.counts() };
      }
    })({
      name: 'hrs_http_requests_total',
      help: 'HTTP requests answered, by API family, route pattern (unmatched: no route took it), method and status.',
      labelNames: ['family', 'route', 'method', 'status'] as const,
      registers: [registry],
    });
    new (class extends Histogram<'family' | 'route' | 'method'> {
      // The text exposition reads `getForPromString`, the JSON one (and `--processes`) `get`.
      override async get() {
        const metric = { name: LATENCY_NAME, help: LATENCY_HELP, type: 'histogram', values: answers.latencies(LATENCY_NAME), aggregator: 'sum' };
        return metric as unknown as MetricObjectWithValues<MetricValueWithName<'family' | 'route' | 'method'>>;
      }
      getForPromString() {
        return this.get();
      }
    })({
      name: LATENCY_NAME,
      help: LATENCY_HELP,
      labelNames: ['family', 'route', 'method'] as const,
      buckets: [...bounds],
      registers: [registry],
    });
  }

  /** One answer: its family, route pattern (`unmatched` when none took it), method, status and seconds. */
  add(family: string, route: string, method: string, status: number, seconds: number): void {
    const series = this.of(family, route, method);
    series.statuses.set(status, (series.statuses.get(status) ?? 0) + 1);
    const bounds = this.bounds;
    let i = 0;
    while (i < bounds.length && seconds > bounds[i]!) i++;
    series.buckets[i]!++;
    series.sum += seconds;
    series.count++;
  }

  private of(family: string, route: string, method: string): Series {
    let routes = this.series.get(family);
    if (routes === undefined) this.series.set(family, (routes = new Map()));
    let methods = routes.get(route);
    if (methods === undefined) routes.set(route, (methods = new Map()));
    let series = methods.get(method);
    if (series === undefined) {
      series = { labels: { family, route, method }, statuses: new Map(), buckets: new Float64Array(this.bounds.length + 1), sum: 0, count: 0 };
      methods.set(method, series);
    }
    return series;
  }

  private *all(): Iterable<Series> {
    for (const routes of this.series.values()) for (const methods of routes.values()) yield* methods.values();
  }

  /** The counter's values, as prom-client's Counter gives them. */
  private counts() {
    const values: { labels: Record<string, string>; value: number }[] = [];
    for (const series of this.all()) {
      for (const [status, value] of series.statuses) values.push({ labels: { ...series.labels, status: String(status) }, value });
    }
    return values;
  }

  /** The histogram's values, as prom-client's Histogram gives them: cumulative buckets, `+Inf`, sum and count per series. */
  private latencies(name: string) {
    const values: { labels: Record<string, string | number>; value: number; metricName: string; exemplar: null | undefined }[] = [];
    for (const series of this.all()) {
      let cumulative = 0;
      this.bounds.forEach((le, i) => {
        cumulative += series.buckets[i]!;
        values.push({ labels: { le, ...series.labels }, value: cumulative, metricName: `${name}_bucket`, exemplar: null });
      });
      values.push({ labels: { le: '+Inf', ...series.labels }, value: series.count, metricName: `${name}_bucket`, exemplar: null });
      values.push({ labels: { ...series.labels }, value: series.sum, metricName: `${name}_sum`, exemplar: undefined });
      values.push({ labels: { ...series.labels }, value: series.count, metricName: `${name}_count`, exemplar: undefined });
    }
    return values;
  }
}

/**
 * A counter of two labels fed on a hot path (import v2's transmissions: twice per request), kept as
 * `AnswerMetrics` keeps its counts: plain numbers, handed to prom-client when scraped. A pair is
 * exposed from its first `add`, zero included, as prom-client's `inc` does.
 */
export class PairCounter<A extends string, B extends string> {
  private readonly counts = new Map<string, Map<string, { labels: Record<A | B, string>; value: number }>>();
  private readonly names: readonly [A, B];

  constructor(registry: Registry, options: { name: string; help: string; labelNames: readonly [A, B] }) {
    const counts = this.counts;
    new (class extends Counter<A | B> {
      override async get() {
        const values = [];
        for (const second of counts.values()) for (const { labels, value } of second.values()) values.push({ labels: { ...labels }, value });
        return { ...(await super.get()), values };
      }
    })({ ...options, labelNames: [...options.labelNames], registers: [registry] });
    this.names = options.labelNames;
  }

  add(first: string, second: string, n: number): void {
    let seconds = this.counts.get(first);
    if (seconds === undefined) this.counts.set(first, (seconds = new Map()));
    const entry = seconds.get(second);
    if (entry !== undefined) entry.value += n;
    else seconds.set(second, { labels: { [this.names[0]]: first, [this.names[1]]: second } as Record<A | B, string>, value: n });
  }
}
