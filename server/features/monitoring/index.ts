/**
 * The public entry of the monitoring feature: metrics, health, probes and alerts.
 * The rest of the service imports these (and roles.ts), never another file of the folder
 * (docs/architecture.md#features).
 */
export { getHealth } from './get-health.ts';
export { getMetricSeries } from './get-metric-series.ts';
export { getMetrics } from './get-metrics.ts';
export { listAlerts } from './list-alerts.ts';
export { monitoringRoutes } from './routes.ts';
