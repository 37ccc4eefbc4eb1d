import { z } from 'zod';
import {
  CreateDeploymentBody,
  Deployment,
  DeploymentLogs,
  ListDeploymentsQuery,
  LogsQuery,
  RollbackBody,
} from '../../api/schemas/deployments.ts';
import { logFrames } from '../http/log-frames.ts';
import { route } from '../http/route-spec.ts';
import { pageMeta } from '../services/pagination.ts';
import { createDeployment } from '../services/deployments/create-deployment.ts';
import { readLogs } from '../services/deployments/deployment-logs.ts';
import { followLogs, parseLastEventId } from '../services/deployments/follow-logs.ts';
import { getDeployment } from '../services/deployments/get-deployment.ts';
import { listDeployments } from '../services/deployments/list-deployments.ts';
import { promoteDeployment } from '../services/deployments/promote-deployment.ts';
import { redeployDeployment } from '../services/deployments/redeploy-deployment.ts';
import { rollbackDeployment } from '../services/deployments/rollback-deployment.ts';

const ProjectParams = z.object({ projectId: z.string() });
const DeploymentParams = z.object({ deploymentId: z.string() });

export const deploymentRoutes = [
  route({
    method: 'POST',
    url: '/v1/projects/:projectId/deployments',
    scoped: 'write',
    tag: 'deployments',
    summary: 'Start a deployment (queued); target defaults by branch',
    params: ProjectParams,
    body: CreateDeploymentBody,
    response: Deployment,
    successStatus: 201,
    // A list of uploaded files can be long: 100,000 entries of about 150 bytes.
    bodyLimit: 32 * 1024 * 1024,
    handler: async ({ deps, actor, params, body }) => ({
      kind: 'data',
      data: await createDeployment(deps, actor, params.projectId, body),
    }),
  }),
  route({
    method: 'GET',
    url: '/v1/projects/:projectId/deployments',
    scoped: 'read',
    tag: 'deployments',
    summary: 'List deployments (newest first); filter by status, branch, target and commit',
    params: ProjectParams,
    query: ListDeploymentsQuery,
    response: Deployment,
    responseKind: 'list',
    handler: async ({ deps, actor, params, query }) => {
      const page = await listDeployments(deps, actor, params.projectId, query);
      return { kind: 'list', data: page.items, meta: pageMeta(query, page) };
    },
  }),
  route({
    method: 'GET',
    url: '/v1/deployments/:deploymentId',
    scoped: 'read',
    tag: 'deployments',
    summary: 'Get a deployment',
    params: DeploymentParams,
    response: Deployment,
    handler: async ({ deps, actor, params }) => ({
      kind: 'data',
      data: await getDeployment(deps, actor, params.deploymentId),
    }),
  }),
  route({
    method: 'GET',
    url: '/v1/deployments/:deploymentId/logs',
    scoped: 'read',
    tag: 'deployments',
    summary: 'Last lines of a log; with follow=true a text/event-stream until the deployment ends',
    params: DeploymentParams,
    query: LogsQuery,
    response: DeploymentLogs,
    handler: async ({ deps, actor, params, query, req }) => {
      if (!query.follow) {
        return { kind: 'data', data: await readLogs(deps, actor, params.deploymentId, query) };
      }
      const afterId = parseLastEventId(req.headers['last-event-id']);
      const events = await followLogs(deps, actor, params.deploymentId, { ...query, afterId });
      return { kind: 'events', events: (signal) => logFrames(events(signal)) };
    },
  }),
  route({
    method: 'POST',
    url: '/v1/deployments/:deploymentId/promote',
    scoped: 'write',
    tag: 'deployments',
    summary: 'Make a live preview the production deployment, without a rebuild',
    params: DeploymentParams,
    response: Deployment,
    handler: async ({ deps, actor, params }) => ({
      kind: 'data',
      data: await promoteDeployment(deps, actor, params.deploymentId),
    }),
  }),
  route({
    method: 'POST',
    url: '/v1/deployments/:deploymentId/rollback',
    scoped: 'write',
    tag: 'deployments',
    summary:
      'Roll production back from this deployment to the previous live one, or to `to` (new deployment)',
    params: DeploymentParams,
    body: RollbackBody,
    response: Deployment,
    successStatus: 201,
    handler: async ({ deps, actor, params, body }) => ({
      kind: 'data',
      data: await rollbackDeployment(deps, actor, params.deploymentId, body),
    }),
  }),
  route({
    method: 'POST',
    url: '/v1/deployments/:deploymentId/redeploy',
    scoped: 'write',
    tag: 'deployments',
    summary:
      'Build this deployment again as it was built: its commit and its build settings (new deployment, extension)',
    params: DeploymentParams,
    response: Deployment,
    successStatus: 201,
    handler: async ({ deps, actor, params }) => ({
      kind: 'data',
      data: await redeployDeployment(deps, actor, params.deploymentId),
    }),
  }),
];
