/**
 * The public entry of the serving feature: the edge, domains, certificates and preview protection.
 * The rest of the service imports these (and roles.ts), never another file of the folder
 * (docs/architecture.md#features).
 */
export { addDomain } from './domains/add-domain.ts';
export { deleteExpiredClaims } from './domains/claim-expiry.ts';
export { deleteDomain } from './domains/delete-domain.ts';
export { listDomains } from './domains/list-domains.ts';
export { verifyDomain } from './domains/verify-domain.ts';
export { freshResolver, issueProtectionCode } from './edge/protection-code.ts';
export { rotateBypassSecret } from './protection/bypass-secret.ts';
export { protectionKeyOf } from './protection/protection-cookie.ts';
export { createShareLink, deleteShareLink, listShareLinks } from './protection/share-links.ts';
export { certificateRoutes } from './routes/certificates.ts';
export { domainRoutes } from './routes/domains.ts';
export { protectionRoutes } from './routes/protection.ts';
