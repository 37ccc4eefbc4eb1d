import type { z } from 'zod';
import { type AddDomainBody, Domain } from '../schemas/domains.ts';
import { type Caller, seg } from './envelope.ts';
import type { CallOptions } from './http.ts';
import type { PageInput } from './inputs.ts';

const base = (projectId: string) => `/v1/projects/${seg(projectId)}/domains`;

/** Custom domains of a project; the path parameter is the host name. */
export function domainsApi(c: Caller) {
  return {
    list: (projectId: string, query: PageInput = {}, o?: CallOptions) =>
      c.list(Domain, base(projectId), { ...o, query }),
    /** Adds a domain (201, `pending`) with the `dnsRecords` to configure. */
    add: (projectId: string, body: z.input<typeof AddDomainBody>, o?: CallOptions) =>
      c.data(Domain, 'POST', base(projectId), { ...o, body }),
    /** Looks the TXT record up: `verified`, or still `pending` with `verification` saying what was seen. */
    verify: (projectId: string, domain: string, o?: CallOptions) =>
      c.data(Domain, 'POST', `${base(projectId)}/${seg(domain)}/verify`, o),
    remove: (projectId: string, domain: string, o?: CallOptions) =>
      c.deleted(`${base(projectId)}/${seg(domain)}`, o),
  };
}
