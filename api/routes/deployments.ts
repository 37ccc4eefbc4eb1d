import { z } from 'zod';
import {
  CreateDeploymentBody,
  Deployment,
  DeploymentLogs,
  ListDeploymentsQuery,
  LogsQuery,
  RollbackBody,
} from '../schemas/deployments.ts';
import { ProjectParams } from './params.ts';
import { contract } from './contract.ts';

const DeploymentParams = z.object({ deploymentId: z.string() });

export const deployments = {
  create: contract({
    method: 'POST',
    url: '/v1/projects/:projectId/deployments',
    tag: 'deployments',
    summary: 'Start a deployment (queued); target defaults by branch',
    params: ProjectParams,
    body: CreateDeploymentBody,
    response: Deployment,
    successStatus: 201,
    // A list of uploaded files can be long: 100,000 entries of about 150 bytes.
  }),
  list: contract({
    method: 'GET',
    url: '/v1/projects/:projectId/deployments',
    tag: 'deployments',
    summary: 'List deployments (newest first); filter by status, branch, target and commit',
    params: ProjectParams,
    query: ListDeploymentsQuery,
    response: Deployment,
    responseKind: 'list',
  }),
  get: contract({
    method: 'GET',
    url: '/v1/deployments/:deploymentId',
    tag: 'deployments',
    summary: 'Get a deployment',
    params: DeploymentParams,
    response: Deployment,
  }),
  logs: contract({
    method: 'GET',
    url: '/v1/deployments/:deploymentId/logs',
    tag: 'deployments',
    summary: 'Last lines of a log; with follow=true a text/event-stream until the deployment ends',
    params: DeploymentParams,
    query: LogsQuery,
    response: DeploymentLogs,
  }),
  promote: contract({
    method: 'POST',
    url: '/v1/deployments/:deploymentId/promote',
    tag: 'deployments',
    summary: 'Make a live preview the production deployment, without a rebuild',
    params: DeploymentParams,
    response: Deployment,
  }),
  rollback: contract({
    method: 'POST',
    url: '/v1/deployments/:deploymentId/rollback',
    tag: 'deployments',
    summary:
      'Roll production back from this deployment to the previous live one, or to `to` (new deployment)',
    params: DeploymentParams,
    body: RollbackBody,
    response: Deployment,
    successStatus: 201,
  }),
  redeploy: contract({
    method: 'POST',
    url: '/v1/deployments/:deploymentId/redeploy',
    tag: 'deployments',
    summary:
      'Build this deployment again as it was built: its commit and its build settings (new deployment, extension)',
    params: DeploymentParams,
    response: Deployment,
    successStatus: 201,
  }),
};
