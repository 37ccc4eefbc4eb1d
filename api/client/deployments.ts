import type { z } from 'zod';
import {
  type CreateDeploymentBody,
  Deployment,
  DeploymentLogs,
  type RollbackBody,
} from '../schemas/deployments.ts';
import { type Caller, seg } from './envelope.ts';
import { type FollowOptions, followLogEvents, followLogLines } from './follow-logs.ts';
import type { CallOptions, Http } from './http.ts';
import type { DeploymentsQueryInput, LogsQueryInput } from './inputs.ts';

const dpl = (deploymentId: string) => `/v1/deployments/${seg(deploymentId)}`;

/** Deployments: create, read, logs, rollback and promote. */
export function deploymentsApi(c: Caller, http: Http) {
  return {
    /** One page of a project's deployments, newest first; filter by status, branch, target, commitHash. */
    list: (projectId: string, query: DeploymentsQueryInput = {}, o?: CallOptions) =>
      c.list(Deployment, `/v1/projects/${seg(projectId)}/deployments`, { ...o, query }),
    /** Starts a deployment (201, `queued`); branch and target default from the project. */
    create: (projectId: string, body: z.input<typeof CreateDeploymentBody> = {}, o?: CallOptions) =>
      c.data(Deployment, 'POST', `/v1/projects/${seg(projectId)}/deployments`, { ...o, body }),
    get: (deploymentId: string, o?: CallOptions) => c.data(Deployment, 'GET', dpl(deploymentId), o),
    /** The last `tail` lines (default 100) of the `build` (default), `runtime` or `error` log. */
    logs: (deploymentId: string, query: LogsQueryInput = {}, o?: CallOptions) =>
      c.data(DeploymentLogs, 'GET', `${dpl(deploymentId)}/logs`, { ...o, query }),
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
      c.data(Deployment, 'POST', `${dpl(deploymentId)}/rollback`, {
        ...o,
        ...(Object.keys(body).length ? { body } : {}),
      }),
    /** Builds a deployment again with its commit and the build settings it was built with: a new deployment (201). */
    redeploy: (deploymentId: string, o?: CallOptions) =>
      c.data(Deployment, 'POST', `${dpl(deploymentId)}/redeploy`, o),
    /** Makes a live preview (or an earlier production deployment) the production deployment, without a rebuild. */
    promote: (deploymentId: string, o?: CallOptions) =>
      c.data(Deployment, 'POST', `${dpl(deploymentId)}/promote`, o),
  };
}
