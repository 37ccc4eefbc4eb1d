import { monitoring } from '../routes/monitoring.ts';
import type { Caller } from './envelope.ts';
import type { CallOptions } from './http.ts';
import type { AlertsQueryInput, MetricSeriesQueryInput, MetricsQueryInput } from './inputs.ts';

/** Traffic metrics, health and alerts of a project, as measured by the edge. */
export function monitoringApi(c: Caller) {
  return {
    /** Requests, errors, latency, bandwidth (and cpu, ram) over `period` (default 24h). */
    metrics: (projectId: string, query: MetricsQueryInput = {}, o?: CallOptions) =>
      c.call(monitoring.metrics, { projectId }, { ...o, query }),
    /** The same traffic as a time series over `period` (default 24h): requests, errors, bytes and latency per bucket. */
    series: (projectId: string, query: MetricSeriesQueryInput = {}, o?: CallOptions) =>
      c.call(monitoring.series, { projectId }, { ...o, query }),
    /** Result of the periodic probes of the production URL. */
    health: (projectId: string, o?: CallOptions) => c.call(monitoring.health, { projectId }, o),
    /** One page of alerts, newest first; filter by `status`. */
    alerts: (projectId: string, query: AlertsQueryInput = {}, o?: CallOptions) =>
      c.call(monitoring.alerts, { projectId }, { ...o, query }),
  };
}
