import { z } from 'zod';
import {
  Alert,
  AlertsQuery,
  Health,
  Metrics,
  MetricSeries,
  MetricSeriesQuery,
  MetricsQuery,
} from '../../api/schemas/monitoring.ts';
import { route } from '../http/route-spec.ts';
import { pageMeta } from '../services/pagination.ts';
import { getHealth } from '../services/monitoring/get-health.ts';
import { getMetrics } from '../services/monitoring/get-metrics.ts';
import { getMetricSeries } from '../services/monitoring/get-metric-series.ts';
import { listAlerts } from '../services/monitoring/list-alerts.ts';

const ProjectParams = z.object({ projectId: z.string() });

export const monitoringRoutes = [
  route({
    method: 'GET',
    url: '/v1/projects/:projectId/metrics',
    tag: 'monitoring',
    summary: 'Traffic metrics measured by the edge over a period (1h, 24h, 7d, 30d)',
    params: ProjectParams,
    query: MetricsQuery,
    response: Metrics,
    handler: async ({ deps, actor, params, query }) => ({
      kind: 'data',
      data: await getMetrics(deps, actor, params.projectId, query),
    }),
  }),
  route({
    method: 'GET',
    url: '/v1/projects/:projectId/metrics/series',
    tag: 'monitoring',
    summary:
      'Traffic as a time series over a period: one point a minute (1h), an hour (24h, 7d) or a day (30d)',
    params: ProjectParams,
    query: MetricSeriesQuery,
    response: MetricSeries,
    handler: async ({ deps, actor, params, query }) => ({
      kind: 'data',
      data: await getMetricSeries(deps, actor, params.projectId, query.period),
    }),
  }),
  route({
    method: 'GET',
    url: '/v1/projects/:projectId/health',
    tag: 'monitoring',
    summary: 'Health of the production URL from the probes of the last 24 hours',
    params: ProjectParams,
    response: Health,
    handler: async ({ deps, actor, params }) => ({
      kind: 'data',
      data: await getHealth(deps, actor, params.projectId),
    }),
  }),
  route({
    method: 'GET',
    url: '/v1/projects/:projectId/alerts',
    tag: 'monitoring',
    summary: 'Alerts of the project, newest first; filter by status',
    params: ProjectParams,
    query: AlertsQuery,
    response: Alert,
    responseKind: 'list',
    handler: async ({ deps, actor, params, query }) => {
      const page = await listAlerts(deps, actor, params.projectId, query);
      return { kind: 'list', data: page.items, meta: pageMeta(query, page) };
    },
  }),
];
