import { z } from 'zod';
import {
  CreateTrustPolicyBody,
  ExchangedToken,
  ExchangeOidcBody,
  TrustPolicy,
} from '../../api/schemas/trust-policies.ts';
import { route } from '../http/route-spec.ts';
import { exchangeOidcToken } from '../services/trust/exchange.ts';
import { createTrustPolicy, deleteTrustPolicy, listTrustPolicies } from '../services/trust/policies.ts';

const ProjectParams = z.object({ projectId: z.string() });
const PolicyParams = ProjectParams.extend({ policyId: z.string() });

/** Keyless deploys from GitHub Actions (docs/api/trust-policies.md). */
export const trustRoutes = [
  route({
    method: 'POST',
    url: '/v1/projects/:projectId/trust-policies',
    tag: 'projects',
    summary: "Trust a GitHub repository's workflows to deploy the project without a stored token (admins)",
    params: ProjectParams,
    body: CreateTrustPolicyBody,
    response: TrustPolicy,
    successStatus: 201,
    handler: async ({ deps, actor, params, body }) => ({
      kind: 'data',
      data: await createTrustPolicy(deps, actor, params.projectId, body),
    }),
  }),
  route({
    method: 'GET',
    url: '/v1/projects/:projectId/trust-policies',
    tag: 'projects',
    summary: "The project's trust policies",
    params: ProjectParams,
    response: z.array(TrustPolicy),
    handler: async ({ deps, actor, params }) => ({
      kind: 'data',
      data: await listTrustPolicies(deps, actor, params.projectId),
    }),
  }),
  route({
    method: 'DELETE',
    url: '/v1/projects/:projectId/trust-policies/:policyId',
    tag: 'projects',
    summary: 'Remove a trust policy (admins); tokens it gave run out within minutes',
    params: PolicyParams,
    responseKind: 'deleted',
    handler: async ({ deps, actor, params }) => {
      await deleteTrustPolicy(deps, actor, params.projectId, params.policyId);
      return { kind: 'deleted', message: `Trust policy ${params.policyId} removed` };
    },
  }),
  route({
    method: 'POST',
    url: '/v1/oidc/token',
    tag: 'user',
    summary: "A GitHub Actions job's OIDC token for a short-lived token of one project (no stored secret)",
    auth: false,
    body: ExchangeOidcBody,
    response: ExchangedToken,
    successStatus: 201,
    handler: async ({ deps, body }) => ({ kind: 'data', data: await exchangeOidcToken(deps, body) }),
  }),
];
