import type { FastifyInstance } from 'fastify';
import { MetricsQuery } from '../../../api/schemas/monitoring.ts';
import { parseOrThrow } from '../../platform/http/validation.ts';
import { getHealth, getMetricSeries, getMetrics, listAlerts } from '../../features/monitoring/index.ts';
import { projectContext } from '../context.ts';
import type { Kit } from '../kit.ts';
import { metricsPage } from '../pages/metrics.ts';
import { params } from './project-tab.ts';

/** Metrics, health and alerts of a project over a period. */
export function projectMetricRoutes(scope: FastifyInstance, kit: Kit): void {
  const { deps } = kit;
  scope.get(
    '/projects/:projectId/metrics',
    kit.page(async ({ req, view, session }) => {
      const ctx = await projectContext(deps, session.actor, params(req).projectId!);
      const period = (req.query as { period?: string }).period;
      const q = parseOrThrow(MetricsQuery, period ? { period } : {}, 'query');
      const [metrics, series, health, alerts] = await Promise.all([
        getMetrics(deps, session.actor, ctx.project.id, q),
        getMetricSeries(deps, session.actor, ctx.project.id, q.period),
        getHealth(deps, session.actor, ctx.project.id),
        listAlerts(deps, session.actor, ctx.project.id, { page: 1, limit: 20 }),
      ]);
      return metricsPage(view, {
        ...ctx,
        metrics,
        series,
        health,
        alerts: alerts.items,
        now: deps.clock.now(),
      });
    }),
  );
}
