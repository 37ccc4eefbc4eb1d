import { z } from 'zod';
import { DomainCertificate } from '../schemas/certificates.ts';
import { contract } from './contract.ts';

const DomainParams = z.object({ projectId: z.string(), domain: z.string() });

export const certificates = {
  get: contract({
    method: 'GET',
    url: '/v1/projects/:projectId/domains/:domain/certificate',
    tag: 'domains',
    summary: "A custom domain's certificate: issuer, validity and PEM, or why the request failed",
    params: DomainParams,
    response: DomainCertificate,
  }),
};
