import { Billing, BillingQuery } from '../../api/schemas/billing.ts';
import { OrganizationParams } from '../../api/schemas/organizations.ts';
import { route } from '../http/route-spec.ts';
import { pageMeta } from '../services/pagination.ts';
import { getBilling } from '../payments/get-billing.ts';

export const billingRoutes = [
  route({
    method: 'GET',
    url: '/v1/organizations/:orgId/billing',
    tag: 'billing',
    summary: 'Prepaid balance of the organization and its charges (newest first, paginated)',
    params: OrganizationParams,
    query: BillingQuery,
    response: Billing,
    handler: async ({ deps, actor, params, query }) => {
      const { billing, page } = await getBilling(deps, actor, params.orgId, query);
      return { kind: 'data', data: billing, meta: pageMeta(query, page) };
    },
  }),
];
