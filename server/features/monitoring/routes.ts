import { monitoring } from '../../../api/routes/monitoring.ts';
import { route } from '../../platform/http/route-spec.ts';
import { pageMeta } from '../../platform/http/pagination.ts';
import { getHealth } from './get-health.ts';
import { getMetrics } from './get-metrics.ts';
import { getMetricSeries } from './get-metric-series.ts';
import { listAlerts } from './list-alerts.ts';

export const monitoringRoutes = [
  route({
    ...monitoring.metrics,
    handler: async ({ deps, actor, params, query }) => ({
      kind: 'data',
      data: await getMetrics(deps, actor, params.projectId, query),
    }),
  }),
  route({
    ...monitoring.series,
    handler: async ({ deps, actor, params, query }) => ({
      kind: 'data',
      data: await getMetricSeries(deps, actor, params.projectId, query.period),
    }),
  }),
  route({
    ...monitoring.health,
    handler: async ({ deps, actor, params }) => ({
      kind: 'data',
      data: await getHealth(deps, actor, params.projectId),
    }),
  }),
  route({
    ...monitoring.alerts,
    handler: async ({ deps, actor, params, query }) => {
      const page = await listAlerts(deps, actor, params.projectId, query);
      return { kind: 'list', data: page.items, meta: pageMeta(query, page) };
    },
  }),
];
