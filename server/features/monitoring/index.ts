/**
 * The public entry of the monitoring feature: metrics, health, probes and alerts.
 * The rest of the service imports these, never another file of the folder
 * (docs/architecture.md#features).
 */
export { evaluateDeploymentFailures } from './deployment-failed-alert.ts';
export { evaluateErrorRates } from './error-rate-alert.ts';
export { getHealth } from './get-health.ts';
export { getMetricSeries } from './get-metric-series.ts';
export { getMetrics } from './get-metrics.ts';
export { listAlerts } from './list-alerts.ts';
export { probeDeployment } from './probe-deployment.ts';
export { probeProductionUrls } from './probe-production.ts';
export { createProbeCheck, probeTokens } from './probe-token.ts';
export { pruneMonitoringData } from './prune.ts';
export { createRequestRecorder } from './request-recorder.ts';
export { monitoringRoutes } from './routes.ts';
export { startRuntimeSampler } from './runtime-sampler.ts';
