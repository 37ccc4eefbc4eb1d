import { billing } from '../../../api/routes/billing.ts';
import { route } from '../../platform/http/route-spec.ts';
import { pageMeta } from '../../platform/http/pagination.ts';
import { organizations } from '../../../api/routes/organizations.ts';
import { getBilling } from './get-billing.ts';
import { getUsage } from './get-usage.ts';

/** The organization's usage against its plan, and its billing. */
export const billingRoutes = [
  route({
    ...organizations.usage,
    handler: async ({ deps, actor, params }) => ({
      kind: 'data',
      data: await getUsage(deps, actor, params.orgId),
    }),
  }),
  route({
    ...billing.get,
    handler: async ({ deps, actor, params, query }) => {
      const { billing, page } = await getBilling(deps, actor, params.orgId, query);
      return { kind: 'data', data: billing, meta: pageMeta(query, page) };
    },
  }),
];
