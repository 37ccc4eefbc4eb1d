/**
 * The public entry of the deployments feature: projects, their env vars and deploy hooks, and deployments.
 * The rest of the service imports these (and roles.ts), never another file of the folder
 * (docs/architecture.md#features).
 */
export { createDeployment } from './create-deployment.ts';
export { createDeployHook } from './deploy-hooks/create-deploy-hook.ts';
export { deleteDeployHook } from './deploy-hooks/delete-deploy-hook.ts';
export { listDeployHooks } from './deploy-hooks/list-deploy-hooks.ts';
export { appendLog, tailLines } from './deployment-logs.ts';
export type { LogLine } from './deployment-logs.ts';
export { createEnvVar } from './env/create-env-var.ts';
export { deleteEnvVar } from './env/delete-env-var.ts';
export { listEnvVars } from './env/list-env-vars.ts';
export { updateEnvVar } from './env/update-env-var.ts';
export { requireDeployment } from './find-deployment.ts';
export { logEvents, parseLastEventId } from './follow-logs.ts';
export { getDeployment } from './get-deployment.ts';
export { listDeployments } from './list-deployments.ts';
export { logFrames } from './log-frames.ts';
export { checkRepositoryUrl } from './projects/check-repository-url.ts';
export { createProject } from './projects/create-project.ts';
export { getProject } from './projects/get-project.ts';
export { listProjects } from './projects/list-projects.ts';
export { setProjectStatus } from './projects/set-project-status.ts';
export { updateProject } from './projects/update-project.ts';
export { promoteDeployment } from './promote-deployment.ts';
export { BUILD_JOB } from './queue-deployment.ts';
export { redeployDeployment } from './redeploy-deployment.ts';
export { rollbackDeployment } from './rollback-deployment.ts';
export { deployHookRoutes } from './routes/deploy-hooks.ts';
export { deploymentRoutes } from './routes/deployments.ts';
export { envRoutes } from './routes/env.ts';
export { projectRoutes } from './routes/projects.ts';
export type { SettleHook } from './settle-hook.ts';
export type { DeploymentRow } from './to-deployment.ts';
