/**
 * The monitoring feature's second public entry: what the process roles start: the edge's request recorder and runtime sampler, and the deployment probe.
 * Apart from index.ts so that the API, which loads index.ts, does not load them
 * (docs/architecture.md#features).
 */
export { probeDeployment } from './probe-deployment.ts';
export { createProbeCheck, probeTokens } from './probe-token.ts';
export { createRequestRecorder } from './request-recorder.ts';
export { startRuntimeSampler } from './runtime-sampler.ts';
export { evaluateDeploymentFailures } from './deployment-failed-alert.ts';
export { evaluateErrorRates } from './error-rate-alert.ts';
export { probeProductionUrls } from './probe-production.ts';
export { pruneMonitoringData } from './prune.ts';
