/** Valid wire objects for stub servers to answer with; every id matches the contract's format. */
export const ids = {
  project: 'prj_aaaaaaaaaaaaaaaaaaaa',
  org: 'org_aaaaaaaaaaaaaaaaaaaa',
  deployment: 'dpl_aaaaaaaaaaaaaaaaaaaa',
  domain: 'dom_aaaaaaaaaaaaaaaaaaaa',
  webhook: 'whk_aaaaaaaaaaaaaaaaaaaa',
  delivery: 'whd_aaaaaaaaaaaaaaaaaaaa',
  alert: 'alt_aaaaaaaaaaaaaaaaaaaa',
  user: 'usr_aaaaaaaaaaaaaaaaaaaa',
  token: 'tok_aaaaaaaaaaaaaaaaaaaa',
};

const at = '2026-11-22T10:00:00.000Z';

export const project = (over: Record<string, unknown> = {}) => ({
  id: ids.project,
  name: 'web',
  repositoryUrl: 'https://example.com/repo.git',
  branch: 'main',
  framework: null,
  organizationId: ids.org,
  status: 'active',
  deploymentUrl: null,
  productionDeploymentId: null,
  createdAt: at,
  updatedAt: at,
  ...over,
});

export const deployment = (over: Record<string, unknown> = {}) => ({
  id: ids.deployment,
  projectId: ids.project,
  status: 'queued',
  target: 'production',
  branch: 'main',
  commitHash: null,
  commitMessage: null,
  author: null,
  message: null,
  buildDurationMs: null,
  deployDurationMs: null,
  url: 'http://web-abcdefgh.localhost:3001',
  errorMessage: null,
  rollbackFrom: null,
  createdAt: at,
  readyAt: null,
  promotedAt: null,
  ...over,
});

export const domain = (over: Record<string, unknown> = {}) => ({
  id: ids.domain,
  projectId: ids.project,
  domain: 'www.example.com',
  status: 'pending',
  sslStatus: 'pending',
  verifiedAt: null,
  createdAt: at,
  dnsRecords: [{ type: 'TXT', name: '_slipway-challenge.www.example.com', value: 'abc' }],
  ...over,
});

export const envVar = (over: Record<string, unknown> = {}) => ({
  key: 'API_URL',
  value: 'https://api.example.com',
  encrypted: false,
  environment: 'production',
  createdAt: at,
  updatedAt: at,
  ...over,
});

export const organization = (over: Record<string, unknown> = {}) => ({
  id: ids.org,
  name: 'acme',
  displayName: 'Acme',
  plan: 'free',
  memberCount: 1,
  projectCount: 0,
  personal: false,
  createdAt: at,
  role: 'owner',
  ...over,
});

export const member = (over: Record<string, unknown> = {}) => ({
  email: 'dev@example.com',
  role: 'developer',
  status: 'invited',
  invitedAt: at,
  joinedAt: null,
  ...over,
});

export const webhook = (over: Record<string, unknown> = {}) => ({
  id: ids.webhook,
  url: 'https://hooks.example.com/slipway',
  events: ['deployment.success'],
  active: true,
  createdAt: at,
  ...over,
});

export const delivery = (over: Record<string, unknown> = {}) => ({
  id: ids.delivery,
  webhookId: ids.webhook,
  event: 'deployment.success',
  status: 'pending',
  attempts: [],
  nextAttemptAt: at,
  payload: { event: 'deployment.success', timestamp: at, data: { deploymentId: ids.deployment } },
  createdAt: at,
  ...over,
});

export const alert = (over: Record<string, unknown> = {}) => ({
  id: ids.alert,
  projectId: ids.project,
  type: 'high_error_rate',
  status: 'active',
  message: '12% of 40 requests failed',
  createdAt: at,
  resolvedAt: null,
  ...over,
});

export const ok = (data: unknown) => ({ success: true, data });
export const list = (data: unknown[], meta: object = { page: 1, limit: 10, total: data.length }) => ({
  success: true,
  data,
  meta,
});
export const failure = (code: string, message: string, details?: unknown) => ({
  success: false,
  error: { code, message, ...(details === undefined ? {} : { details }) },
});
