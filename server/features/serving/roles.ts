/**
 * The serving feature's second public entry: what the process roles start: the edge (its server, the proxy, the sandboxed runtime, TLS, the protection gate) and the certificate jobs.
 * Apart from index.ts so that the API, which loads index.ts, does not load them
 * (docs/architecture.md#features).
 */
export { createCertificateJob } from './certificates/certificate-job.ts';
export { findChallenge } from './certificates/challenge-store.ts';
export { createRenewalJob } from './certificates/renew-certificates.ts';
export { createArtifactReader } from './edge/artifact-reader.ts';
export { createRuntimeLauncher } from './edge/launcher.ts';
export { createProtectionGate } from './edge/protection-gate.ts';
export { protectionGateDeps, pruneProtection } from './edge/protection-lookups.ts';
export { proxyFor } from './edge/proxy.ts';
export { createHostResolver } from './edge/resolve-host.ts';
export { createRuntimeLogSink } from './edge/runtime-log.ts';
export { createRuntimeSupervisor } from './edge/runtime.ts';
export { createServingLoad } from './edge/serving-load.ts';
export type { RuntimeSupervisor } from './edge/runtime.ts';
export { createEdgeServer } from './edge/server.ts';
export type { EdgeServerOptions, RequestRecord } from './edge/server.ts';
export { startInactiveAppStopper } from './edge/stop-inactive-apps.ts';
export { startTlsListener } from './edge/tls.ts';
export type { TlsListener } from './edge/tls.ts';
export { watchOtherWriters } from './edge/watch-other-writers.ts';
