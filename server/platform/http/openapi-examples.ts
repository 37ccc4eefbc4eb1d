/**
 * Examples shown in the API reference (/docs), by route (`METHOD url` as in the route tables).
 * A test parses each one with its route's own schemas, so they cannot drift from the API.
 */
export interface OperationExamples {
  /** A request body. */
  request?: unknown;
  /** The success answer's `data` (a list's items for a list). */
  response?: unknown;
}

const at = '2026-11-24T10:00:00.000Z';
const later = '2026-11-24T10:00:07.000Z';

const project = {
  id: 'prj_k2m9x7q4w8e5r1t6',
  name: 'web',
  repositoryUrl: 'https://github.com/acme/web.git',
  branch: 'main',
  framework: null,
  organizationId: 'org_a8d3f6h2j5l9n4p7',
  status: 'active',
  deploymentUrl: 'https://web.apps.example.com',
  productionDeploymentId: 'dpl_3vb7n1m5c9x2z6a4',
  installCommand: null,
  buildCommand: null,
  outputDirectory: null,
  rootDirectory: null,
  createdAt: at,
  updatedAt: at,
};

const deployment = {
  id: 'dpl_3vb7n1m5c9x2z6a4',
  projectId: project.id,
  status: 'live',
  target: 'production',
  branch: 'main',
  commitHash: '4f2a9c1e8b7d6a5f4e3d2c1b0a9f8e7d6c5b4a39',
  commitMessage: 'Add the pricing page',
  author: 'ada@example.com',
  message: null,
  buildDurationMs: 5120,
  deployDurationMs: 41,
  url: 'https://web-3vb7n1m5.apps.example.com',
  errorMessage: null,
  rollbackFrom: null,
  rollbackTo: null,
  createdAt: at,
  readyAt: later,
  source: 'git',
  promotedAt: later,
  framework: 'vite',
};

export const operationExamples: Record<string, OperationExamples> = {
  'POST /v1/projects': {
    request: {
      name: 'web',
      repositoryUrl: 'https://github.com/acme/web.git',
      organizationId: project.organizationId,
    },
    response: { ...project, deploymentUrl: null, productionDeploymentId: null },
  },
  'GET /v1/projects': { response: project },
  'GET /v1/projects/:projectId': { response: project },
  'PATCH /v1/projects/:projectId': {
    request: { rootDirectory: 'apps/web', buildCommand: 'npm run build:prod', outputDirectory: 'dist' },
    response: {
      ...project,
      rootDirectory: 'apps/web',
      buildCommand: 'npm run build:prod',
      outputDirectory: 'dist',
    },
  },
  'POST /v1/projects/:projectId/deployments': {
    request: { branch: 'main', message: 'Release 1.4' },
    response: {
      ...deployment,
      status: 'queued',
      commitHash: null,
      commitMessage: null,
      author: null,
      message: 'Release 1.4',
      buildDurationMs: null,
      deployDurationMs: null,
      readyAt: null,
      promotedAt: null,
      framework: null,
    },
  },
  'GET /v1/projects/:projectId/deployments': { response: deployment },
  'GET /v1/deployments/:deploymentId': { response: deployment },
  'POST /v1/deployments/:deploymentId/promote': {
    response: { ...deployment, target: 'production', promotedAt: later },
  },
  'POST /v1/deployments/:deploymentId/rollback': {
    request: { to: 'dpl_8qw2e4r6t8y1u3i5' },
    response: {
      ...deployment,
      id: 'dpl_5ht9j3k7l1z4x8c2',
      rollbackFrom: deployment.id,
      rollbackTo: 'dpl_8qw2e4r6t8y1u3i5',
    },
  },
};

/** The answer every operation may give instead: here, a body that failed validation. */
export const errorExample = {
  success: false,
  error: {
    code: 'VALIDATION_ERROR',
    message: 'Invalid request: repositoryUrl: must be a git URL (https://, ssh://, git@host:path or file://)',
    details: [
      { path: 'repositoryUrl', message: 'must be a git URL (https://, ssh://, git@host:path or file://)' },
    ],
  },
};
