import { z } from 'zod';
import type { JobHandler } from '../../../platform/jobs/worker.ts';
import type { Deps } from '../../../platform/deps/deps.ts';
import { CERTIFICATE_JOB } from '../domains/verify-domain.ts';
import {
  defaultSource,
  issueCertificate,
  recordFailure,
  type CertificateSource,
} from './issue-certificate.ts';

const Payload = z.object({
  /** The domain to get a certificate for. */
  domainId: z.string().min(1),
});

/**
 * The `domain.certificate` job (queued by verify and by the renewal check). A failed request is
 * recorded on the domain rather than retried by the queue: a CA that refused once refuses again
 * seconds later, and the daily renewal check retries failed domains.
 */
export function createCertificateJob(deps: Deps, source: CertificateSource = defaultSource): JobHandler {
  return {
    kind: CERTIFICATE_JOB,
    concurrency: 2,
    async handle(job) {
      const { domainId } = Payload.parse(JSON.parse(job.payload));
      await issueCertificate(deps, domainId, source);
    },
    async onExhausted(job, reason) {
      const parsed = Payload.safeParse(JSON.parse(job.payload));
      if (parsed.success)
        await recordFailure(deps, parsed.data.domainId, `The certificate request failed: ${reason}`);
    },
  };
}
