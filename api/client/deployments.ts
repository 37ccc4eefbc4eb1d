import type { z } from 'zod';
import { deployments } from '../routes/deployments.ts';
import type { CreateDeploymentBody, RollbackBody } from '../schemas/deployments.ts';
import type { Caller } from './envelope.ts';
import { type FollowOptions, followLogEvents, followLogLines } from './follow-logs.ts';
import type { CallOptions, Http } from './http.ts';
import type { DeploymentsQueryInput, LogsQueryInput } from './inputs.ts';

/** Deployments: create, read, logs, rollback and promote. */
export function deploymentsApi(c: Caller, http: Http) {
  return {
    /** One page of a project's deployments, newest first; filter by status, branch, target, commitHash. */
    list: (projectId: string, query: DeploymentsQueryInput = {}, o?: CallOptions) =>
      c.call(deployments.list, { projectId }, { ...o, query }),
    /** Starts a deployment (201, `queued`); branch and target default from the project. */
    create: (projectId: string, body: z.input<typeof CreateDeploymentBody> = {}, o?: CallOptions) =>
      c.call(deployments.create, { projectId }, { ...o, body }),
    get: (deploymentId: string, o?: CallOptions) => c.call(deployments.get, { deploymentId }, o),
    /** The last `tail` lines (default 100) of the `build` (default), `runtime` or `error` log. */
    logs: (deploymentId: string, query: LogsQueryInput = {}, o?: CallOptions) =>
      c.call(deployments.logs, { deploymentId }, { ...o, query }),
    /** Streams log lines until the deployment ends; the generator returns the end state. */
    followLogs: (deploymentId: string, opts?: FollowOptions) => followLogLines(http, c, deploymentId, opts),
    /** Like followLogs, with the end state as a last `{ kind: 'end' }` event. */
    followLogEvents: (deploymentId: string, opts?: FollowOptions) =>
      followLogEvents(http, c, deploymentId, opts),
    /**
     * Rolls production back from this deployment to the previous live one, or to `body.to` (an
     * earlier production deployment): a new deployment (201) reusing that build.
     */
    rollback: (deploymentId: string, body: z.input<typeof RollbackBody> = {}, o?: CallOptions) =>
      c.call(
        deployments.rollback,
        { deploymentId },
        {
          ...o,
          ...(Object.keys(body).length ? { body } : {}),
        },
      ),
    /** Builds a deployment again with its commit and the build settings it was built with: a new deployment (201). */
    redeploy: (deploymentId: string, o?: CallOptions) => c.call(deployments.redeploy, { deploymentId }, o),
    /** Makes a live preview (or an earlier production deployment) the production deployment, without a rebuild. */
    promote: (deploymentId: string, o?: CallOptions) => c.call(deployments.promote, { deploymentId }, o),
  };
}
