import {
  Alert,
  AlertsQuery,
  Health,
  Metrics,
  MetricSeries,
  MetricSeriesQuery,
  MetricsQuery,
} from '../schemas/monitoring.ts';
import { ProjectParams } from './params.ts';
import { contract } from './contract.ts';

export const monitoring = {
  metrics: contract({
    method: 'GET',
    url: '/v1/projects/:projectId/metrics',
    tag: 'monitoring',
    summary: 'Traffic metrics measured by the edge over a period (1h, 24h, 7d, 30d)',
    params: ProjectParams,
    query: MetricsQuery,
    response: Metrics,
  }),
  series: contract({
    method: 'GET',
    url: '/v1/projects/:projectId/metrics/series',
    tag: 'monitoring',
    summary:
      'Traffic as a time series over a period: one point a minute (1h), an hour (24h, 7d) or a day (30d)',
    params: ProjectParams,
    query: MetricSeriesQuery,
    response: MetricSeries,
  }),
  health: contract({
    method: 'GET',
    url: '/v1/projects/:projectId/health',
    tag: 'monitoring',
    summary: 'Health of the production URL from the probes of the last 24 hours',
    params: ProjectParams,
    response: Health,
  }),
  alerts: contract({
    method: 'GET',
    url: '/v1/projects/:projectId/alerts',
    tag: 'monitoring',
    summary: 'Alerts of the project, newest first; filter by status',
    params: ProjectParams,
    query: AlertsQuery,
    response: Alert,
    responseKind: 'list',
  }),
};
