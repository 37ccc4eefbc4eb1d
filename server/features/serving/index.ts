/**
 * The public entry of the serving feature: the edge, domains, certificates and preview protection.
 * The rest of the service imports these, never another file of the folder
 * (docs/architecture.md#features).
 */
export { createCertificateJob } from './certificates/certificate-job.ts';
export { findChallenge } from './certificates/challenge-store.ts';
export { createRenewalJob } from './certificates/renew-certificates.ts';
export { addDomain } from './domains/add-domain.ts';
export { deleteExpiredClaims } from './domains/claim-expiry.ts';
export { deleteDomain } from './domains/delete-domain.ts';
export { listDomains } from './domains/list-domains.ts';
export { verifyDomain } from './domains/verify-domain.ts';
export { createArtifactReader } from './edge/artifact-reader.ts';
export { createRuntimeLauncher } from './edge/launcher.ts';
export { freshResolver, issueProtectionCode } from './edge/protection-code.ts';
export { createProtectionGate } from './edge/protection-gate.ts';
export { protectionGateDeps, pruneProtection } from './edge/protection-lookups.ts';
export { proxyFor } from './edge/proxy.ts';
export { createHostResolver } from './edge/resolve-host.ts';
export { createRuntimeLogSink } from './edge/runtime-log.ts';
export { createRuntimeSupervisor } from './edge/runtime.ts';
export type { RuntimeSupervisor } from './edge/runtime.ts';
export { createEdgeServer } from './edge/server.ts';
export type { EdgeServerOptions, RequestRecord } from './edge/server.ts';
export { startInactiveAppStopper } from './edge/stop-inactive-apps.ts';
export { startTlsListener } from './edge/tls.ts';
export type { TlsListener } from './edge/tls.ts';
export { watchOtherWriters } from './edge/watch-other-writers.ts';
export { rotateBypassSecret } from './protection/bypass-secret.ts';
export { protectionKeyOf } from './protection/protection-cookie.ts';
export { createShareLink, deleteShareLink, listShareLinks } from './protection/share-links.ts';
export { certificateRoutes } from './routes/certificates.ts';
export { domainRoutes } from './routes/domains.ts';
export { protectionRoutes } from './routes/protection.ts';
