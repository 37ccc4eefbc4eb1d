import { z } from 'zod';
import {
  CreateTrustPolicyBody,
  ExchangedToken,
  ExchangeOidcBody,
  TrustPolicy,
} from '../schemas/trust-policies.ts';
import { ProjectParams } from './params.ts';
import { contract } from './contract.ts';

const PolicyParams = ProjectParams.extend({ policyId: z.string() });

/** Keyless deploys from GitHub Actions (docs/api/trust-policies.md). */
export const trust = {
  createPolicy: contract({
    method: 'POST',
    url: '/v1/projects/:projectId/trust-policies',
    tag: 'projects',
    summary: "Trust a GitHub repository's workflows to deploy the project without a stored token (admins)",
    params: ProjectParams,
    body: CreateTrustPolicyBody,
    response: TrustPolicy,
    successStatus: 201,
  }),
  listPolicies: contract({
    method: 'GET',
    url: '/v1/projects/:projectId/trust-policies',
    tag: 'projects',
    summary: "The project's trust policies",
    params: ProjectParams,
    response: z.array(TrustPolicy),
  }),
  deletePolicy: contract({
    method: 'DELETE',
    url: '/v1/projects/:projectId/trust-policies/:policyId',
    tag: 'projects',
    summary: 'Remove a trust policy (admins); tokens it gave run out within minutes',
    params: PolicyParams,
    responseKind: 'deleted',
  }),
  exchange: contract({
    method: 'POST',
    url: '/v1/oidc/token',
    tag: 'user',
    summary: "A GitHub Actions job's OIDC token for a short-lived token of one project (no stored secret)",
    auth: false,
    body: ExchangeOidcBody,
    response: ExchangedToken,
    successStatus: 201,
  }),
};
