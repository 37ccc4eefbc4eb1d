import { domains } from '../../../../api/routes/domains.ts';
import { route } from '../../../platform/http/route-spec.ts';
import { pageMeta } from '../../../platform/http/pagination.ts';
import { addDomain } from '../domains/add-domain.ts';
import { deleteDomain } from '../domains/delete-domain.ts';
import { listDomains } from '../domains/list-domains.ts';
import { verifyDomain } from '../domains/verify-domain.ts';

export const domainRoutes = [
  route({
    ...domains.list,
    handler: async ({ deps, actor, params, query }) => {
      const page = await listDomains(deps, actor, params.projectId, query);
      return { kind: 'list', data: page.items, meta: pageMeta(query, page) };
    },
  }),
  route({
    ...domains.add,
    handler: async ({ deps, actor, params, body }) => ({
      kind: 'data',
      data: await addDomain(deps, actor, params.projectId, body),
    }),
  }),
  route({
    ...domains.verify,
    handler: async ({ deps, actor, params }) => ({
      kind: 'data',
      data: await verifyDomain(deps, actor, params.projectId, params.domain),
    }),
  }),
  route({
    ...domains.remove,
    handler: async ({ deps, actor, params }) => {
      const domain = await deleteDomain(deps, actor, params.projectId, params.domain);
      return { kind: 'deleted', message: `Domain ${domain} removed from project ${params.projectId}` };
    },
  }),
];
