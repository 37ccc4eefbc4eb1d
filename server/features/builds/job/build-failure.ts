import { join } from 'node:path';
import { ApiError } from '../../../../api/errors.ts';
import { hideHostPaths } from '../../../platform/sandbox/build-error.ts';
import { markFailed } from '../../deployments/roles.ts';
import type { Deps } from '../../../platform/deps/deps.ts';

/** What tenants read of an error: no paths of the service's own directories. */
export function shown(deps: Deps, deploymentId: string, message: string): string {
  return hideHostPaths(message, [
    [join(deps.config.workspacesDir, deploymentId), '<workspace>'],
    [deps.config.workspacesDir, '<workspaces>'],
    [deps.config.artifactsDir, '<artifacts>'],
    [deps.config.dataDir, '<data>'],
  ]);
}

/** The last line of a failed deployment's log. */
export function failedLine(deps: Deps, deploymentId: string, message: string): string {
  return `==> Deployment failed: ${shown(deps, deploymentId, message)}`;
}

/** Fails the deployment, unless someone else (a cancel) moved it on already. */
export async function failQuietly(deps: Deps, deploymentId: string, message: string): Promise<void> {
  try {
    await markFailed(deps, deploymentId, shown(deps, deploymentId, message));
  } catch (err) {
    if (!(err instanceof ApiError)) throw err;
  }
}
