import { z } from 'zod';
import { AddDomainBody, Domain, ListDomainsQuery } from '../../api/schemas/domains.ts';
import { route } from '../http/route-spec.ts';
import { pageMeta } from '../services/pagination.ts';
import { addDomain } from '../services/domains/add-domain.ts';
import { deleteDomain } from '../services/domains/delete-domain.ts';
import { listDomains } from '../services/domains/list-domains.ts';
import { verifyDomain } from '../services/domains/verify-domain.ts';

const ProjectParams = z.object({ projectId: z.string() });
const DomainParams = z.object({ projectId: z.string(), domain: z.string() });

export const domainRoutes = [
  route({
    method: 'GET',
    url: '/v1/projects/:projectId/domains',
    tag: 'domains',
    summary: "List a project's custom domains (newest first), with the DNS records to set",
    params: ProjectParams,
    query: ListDomainsQuery,
    response: Domain,
    responseKind: 'list',
    handler: async ({ deps, actor, params, query }) => {
      const page = await listDomains(deps, actor, params.projectId, query);
      return { kind: 'list', data: page.items, meta: pageMeta(query, page) };
    },
  }),
  route({
    method: 'POST',
    url: '/v1/projects/:projectId/domains',
    tag: 'domains',
    summary: 'Add a custom domain; answers the TXT and CNAME or A records to set',
    params: ProjectParams,
    body: AddDomainBody,
    response: Domain,
    successStatus: 201,
    handler: async ({ deps, actor, params, body }) => ({
      kind: 'data',
      data: await addDomain(deps, actor, params.projectId, body),
    }),
  }),
  route({
    method: 'POST',
    url: '/v1/projects/:projectId/domains/:domain/verify',
    tag: 'domains',
    summary: 'Look up the ownership TXT record: verified when it matches, else pending with what was found',
    params: DomainParams,
    response: Domain,
    handler: async ({ deps, actor, params }) => ({
      kind: 'data',
      data: await verifyDomain(deps, actor, params.projectId, params.domain),
    }),
  }),
  route({
    method: 'DELETE',
    url: '/v1/projects/:projectId/domains/:domain',
    tag: 'domains',
    summary: 'Remove a custom domain',
    params: DomainParams,
    responseKind: 'deleted',
    handler: async ({ deps, actor, params }) => {
      const domain = await deleteDomain(deps, actor, params.projectId, params.domain);
      return { kind: 'deleted', message: `Domain ${domain} removed from project ${params.projectId}` };
    },
  }),
];
