import type { z } from 'zod';
import { domains } from '../routes/domains.ts';
import type { AddDomainBody } from '../schemas/domains.ts';
import type { Caller } from './envelope.ts';
import type { CallOptions } from './http.ts';
import type { PageInput } from './inputs.ts';

/** Custom domains of a project; the path parameter is the host name. */
export function domainsApi(c: Caller) {
  return {
    list: (projectId: string, query: PageInput = {}, o?: CallOptions) =>
      c.call(domains.list, { projectId }, { ...o, query }),
    /** Adds a domain (201, `pending`) with the `dnsRecords` to configure. */
    add: (projectId: string, body: z.input<typeof AddDomainBody>, o?: CallOptions) =>
      c.call(domains.add, { projectId }, { ...o, body }),
    /** Looks the TXT record up: `verified`, or still `pending` with `verification` saying what was seen. */
    verify: (projectId: string, domain: string, o?: CallOptions) =>
      c.call(domains.verify, { projectId, domain }, o),
    remove: (projectId: string, domain: string, o?: CallOptions) =>
      c.call(domains.remove, { projectId, domain }, o),
  };
}
