import { Counter, type Metric, type Registry } from 'prom-client';

/** Status classes the edge counts by; anything else is counted as `other`. */
const CLASSES = ['other', '1xx', '2xx', '3xx', '4xx', '5xx'] as const;
/** Seconds: a warm static file takes well under a millisecond, a cold server app seconds. */
const BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

const DURATION = 'slipway_edge_request_duration_seconds';
const DURATION_HELP = 'Edge requests from arrival until the response was written out, by status class.';

/**
 * The edge's per-request recording, kept to a few additions into arrays on the request path;
 * prom-client's own counter and histogram hash their labels on every call (about a microsecond,
 * measured by bench/ops-metrics.ts), so the arrays are turned into its text only when scraped.
 */
export function createEdgeRequests(registry: Registry): (status: number, durationMs: number) => void {
  const n = CLASSES.length;
  const b = BUCKETS.length;
  const counts = new Float64Array(n);
  const sums = new Float64Array(n);
  /** Per class, observations per bucket (not cumulative); past the last bound only in `counts`. */
  const inBucket = new Float64Array(n * b);

  new Counter({
    name: 'slipway_edge_requests_total',
    help: 'Requests the edge answered, by status class (health probes of the service are not counted).',
    labelNames: ['class'],
    registers: [registry],
    collect() {
      this.reset();
      CLASSES.forEach((c, i) => this.inc({ class: c }, counts[i]));
    },
  });
  const histogram = {
    name: DURATION,
    help: DURATION_HELP,
    type: 'histogram',
    aggregator: 'sum',
    get: async () => ({
      name: DURATION,
      help: DURATION_HELP,
      type: 'histogram',
      aggregator: 'sum',
      values: CLASSES.flatMap((c, i) => {
        let cumulative = 0;
        return [
          ...BUCKETS.map((le, j) => {
            cumulative += inBucket[i * b + j]!;
            return { metricName: `${DURATION}_bucket`, labels: { le, class: c }, value: cumulative };
          }),
          { metricName: `${DURATION}_bucket`, labels: { le: '+Inf', class: c }, value: counts[i]! },
          { metricName: `${DURATION}_sum`, labels: { class: c }, value: sums[i]! },
          { metricName: `${DURATION}_count`, labels: { class: c }, value: counts[i]! },
        ];
      }),
    }),
  };
  registry.registerMetric(histogram as unknown as Metric);

  return (status, durationMs) => {
    const i = status >= 100 && status < 600 ? (status / 100) | 0 : 0;
    const seconds = durationMs / 1000;
    counts[i]!++;
    sums[i]! += seconds;
    let j = 0;
    while (j < b && seconds > BUCKETS[j]!) j++;
    if (j < b) inBucket[i * b + j]!++;
  };
}
