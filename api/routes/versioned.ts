import {
  CreateDeploymentV1Body,
  CreateProjectV1Body,
  DeploymentV1,
  ProjectV1,
} from '../schemas/versioned.ts';
import { contract } from './contract.ts';

/** The versioned description (`/api/v1`): two paid operations, answered without the envelope. */
export const versioned = {
  createProject: contract({
    method: 'POST',
    url: '/api/v1/projects',
    tag: 'versioned',
    summary: "Create a project in the caller's personal organization (paid: 1.00 USD)",
    body: CreateProjectV1Body,
    response: ProjectV1,
    responseKind: 'bare',
    successStatus: 201,
  }),
  createDeployment: contract({
    method: 'POST',
    url: '/api/v1/deployments',
    tag: 'versioned',
    summary: 'Start a deployment of a project (paid: 1.00 USD)',
    body: CreateDeploymentV1Body,
    response: DeploymentV1,
    responseKind: 'bare',
    successStatus: 201,
  }),
};
