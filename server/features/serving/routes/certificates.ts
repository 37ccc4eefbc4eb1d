import { certificates } from '../../../../api/routes/certificates.ts';
import { getDomainCertificate } from '../certificates/get-domain-certificate.ts';
import { route } from '../../../platform/http/route-spec.ts';

export const certificateRoutes = [
  route({
    ...certificates.get,
    handler: async ({ deps, actor, params }) => ({
      kind: 'data',
      data: await getDomainCertificate(deps, actor, params.projectId, params.domain),
    }),
  }),
];
