import { Alert, Health, Metrics, MetricSeries } from '../schemas/monitoring.ts';
import { type Caller, seg } from './envelope.ts';
import type { CallOptions } from './http.ts';
import type { AlertsQueryInput, MetricSeriesQueryInput, MetricsQueryInput } from './inputs.ts';

const base = (projectId: string) => `/v1/projects/${seg(projectId)}`;

/** Traffic metrics, health and alerts of a project, as measured by the edge. */
export function monitoringApi(c: Caller) {
  return {
    /** Requests, errors, latency, bandwidth (and cpu, ram) over `period` (default 24h). */
    metrics: (projectId: string, query: MetricsQueryInput = {}, o?: CallOptions) =>
      c.data(Metrics, 'GET', `${base(projectId)}/metrics`, { ...o, query }),
    /** The same traffic as a time series over `period` (default 24h): requests, errors, bytes and latency per bucket. */
    series: (projectId: string, query: MetricSeriesQueryInput = {}, o?: CallOptions) =>
      c.data(MetricSeries, 'GET', `${base(projectId)}/metrics/series`, { ...o, query }),
    /** Result of the periodic probes of the production URL. */
    health: (projectId: string, o?: CallOptions) => c.data(Health, 'GET', `${base(projectId)}/health`, o),
    /** One page of alerts, newest first; filter by `status`. */
    alerts: (projectId: string, query: AlertsQueryInput = {}, o?: CallOptions) =>
      c.list(Alert, `${base(projectId)}/alerts`, { ...o, query }),
  };
}
