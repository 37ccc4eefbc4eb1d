import { z } from 'zod';
import { AddDomainBody, Domain, ListDomainsQuery } from '../schemas/domains.ts';
import { ProjectParams } from './params.ts';
import { contract } from './contract.ts';

const DomainParams = z.object({ projectId: z.string(), domain: z.string() });

export const domains = {
  list: contract({
    method: 'GET',
    url: '/v1/projects/:projectId/domains',
    tag: 'domains',
    summary: "List a project's custom domains (newest first), with the DNS records to set",
    params: ProjectParams,
    query: ListDomainsQuery,
    response: Domain,
    responseKind: 'list',
  }),
  add: contract({
    method: 'POST',
    url: '/v1/projects/:projectId/domains',
    tag: 'domains',
    summary: 'Add a custom domain; answers the TXT and CNAME or A records to set',
    params: ProjectParams,
    body: AddDomainBody,
    response: Domain,
    successStatus: 201,
  }),
  verify: contract({
    method: 'POST',
    url: '/v1/projects/:projectId/domains/:domain/verify',
    tag: 'domains',
    summary: 'Look up the ownership TXT record: verified when it matches, else pending with what was found',
    params: DomainParams,
    response: Domain,
  }),
  remove: contract({
    method: 'DELETE',
    url: '/v1/projects/:projectId/domains/:domain',
    tag: 'domains',
    summary: 'Remove a custom domain',
    params: DomainParams,
    responseKind: 'deleted',
  }),
};
