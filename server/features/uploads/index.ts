/**
 * The public entry of the uploads feature: uploaded files and their quota.
 * The rest of the service imports these (and roles.ts), never another file of the folder
 * (docs/architecture.md#features).
 */
export { checkDeploymentFiles } from './deployment-files.ts';
export { uploadRoutes } from './routes.ts';
export { uploadUsage } from './upload-quota.ts';
export { uploadStoreOf } from './upload-store.ts';
