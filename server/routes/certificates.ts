import { z } from 'zod';
import { DomainCertificate } from '../../api/schemas/certificates.ts';
import { getDomainCertificate } from '../certificates/get-domain-certificate.ts';
import { route } from '../http/route-spec.ts';

const DomainParams = z.object({ projectId: z.string(), domain: z.string() });

export const certificateRoutes = [
  route({
    method: 'GET',
    url: '/v1/projects/:projectId/domains/:domain/certificate',
    tag: 'domains',
    summary: "A custom domain's certificate: issuer, validity and PEM, or why the request failed",
    params: DomainParams,
    response: DomainCertificate,
    handler: async ({ deps, actor, params }) => ({
      kind: 'data',
      data: await getDomainCertificate(deps, actor, params.projectId, params.domain),
    }),
  }),
];
