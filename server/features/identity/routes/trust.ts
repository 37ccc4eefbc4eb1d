import { trust } from '../../../../api/routes/trust.ts';
import { route } from '../../../platform/http/route-spec.ts';
import { exchangeOidcToken } from '../trust/exchange.ts';
import { createTrustPolicy, deleteTrustPolicy, listTrustPolicies } from '../trust/policies.ts';

/** Keyless deploys from GitHub Actions (docs/api/trust-policies.md). */
export const trustRoutes = [
  route({
    ...trust.createPolicy,
    handler: async ({ deps, actor, params, body }) => ({
      kind: 'data',
      data: await createTrustPolicy(deps, actor, params.projectId, body),
    }),
  }),
  route({
    ...trust.listPolicies,
    handler: async ({ deps, actor, params }) => ({
      kind: 'data',
      data: await listTrustPolicies(deps, actor, params.projectId),
    }),
  }),
  route({
    ...trust.deletePolicy,
    handler: async ({ deps, actor, params }) => {
      await deleteTrustPolicy(deps, actor, params.projectId, params.policyId);
      return { kind: 'deleted', message: `Trust policy ${params.policyId} removed` };
    },
  }),
  route({
    ...trust.exchange,
    handler: async ({ deps, body }) => ({ kind: 'data', data: await exchangeOidcToken(deps, body) }),
  }),
];
