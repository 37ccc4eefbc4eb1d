import { billing } from '../../api/routes/billing.ts';
import { route } from '../http/route-spec.ts';
import { pageMeta } from '../services/pagination.ts';
import { getBilling } from '../payments/get-billing.ts';

export const billingRoutes = [
  route({
    ...billing.get,
    handler: async ({ deps, actor, params, query }) => {
      const { billing, page } = await getBilling(deps, actor, params.orgId, query);
      return { kind: 'data', data: billing, meta: pageMeta(query, page) };
    },
  }),
];
