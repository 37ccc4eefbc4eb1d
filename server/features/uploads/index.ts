export { cleanUploads } from './clean-uploads.ts';
export { checkDeploymentFiles } from './deployment-files.ts';
export { materializeFiles } from './materialize.ts';
export { uploadRoutes } from './routes.ts';
export { uploadUsage } from './upload-quota.ts';
export { uploadStoreOf } from './upload-store.ts';
