import type { Deps } from '../../../platform/deps/deps.ts';
import { OPEN } from '../../../platform/queue/queue.ts';
import { CERTIFICATE_JOB } from '../domains/verify-domain.ts';
import { isStale, type PeriodicJob } from '../../../platform/jobs/periodic-jobs.ts';
import { pruneChallenges } from './challenge-store.ts';

/** The daily renewal check. */
export const RENEWAL_JOB = 'certificates.renew';
export const RENEWAL_INTERVAL_MS = 24 * 3_600_000;
/** Certificates expiring within this are ordered again (Let's Encrypt's 90-day certificates: at 60 days). */
export const RENEW_BEFORE_MS = 30 * 24 * 3_600_000;

/**
 * Queues a certificate request for every verified domain whose certificate expires within 30
 * days, or that has none because its last request failed; skips domains with a request already
 * queued. Also forgets certificates of removed domains and stale ACME challenges.
 * Returns the domains queued.
 */
export async function renewCertificates(deps: Pick<Deps, 'db' | 'clock' | 'queue'>): Promise<string[]> {
  const now = deps.clock.now();
  await deps.db
    .deleteFrom('certificates')
    .where('domain_id', 'not in', (eb) => eb.selectFrom('domains').select('id'))
    .execute();
  await pruneChallenges(deps);
  const due = await deps.db
    .selectFrom('domains as d')
    .leftJoin('certificates as c', 'c.domain_id', 'd.id')
    .innerJoin('projects as p', 'p.id', 'd.project_id')
    .select('d.id')
    .where('d.status', '=', 'verified')
    .where('p.deleted_at', 'is', null)
    .where((eb) =>
      eb.or([
        eb('c.not_after', '<', new Date(now.getTime() + RENEW_BEFORE_MS).toISOString()),
        eb.and([eb('c.domain_id', 'is', null), eb('d.ssl_status', '=', 'failed')]),
      ]),
    )
    .execute();
  const queued: string[] = [];
  for (const { id } of due) {
    // The payload is written as JSON.stringify({ domainId }) everywhere, so text equality finds it.
    const payload = JSON.stringify({ domainId: id });
    const pending = await deps.db
      .selectFrom('jobs')
      .select('id')
      .where(OPEN)
      .where('kind', '=', CERTIFICATE_JOB)
      .where('payload', '=', payload)
      .executeTakeFirst();
    if (pending) continue;
    await deps.queue.enqueue(deps.db, CERTIFICATE_JOB, { domainId: id });
    queued.push(id);
  }
  if (queued.length > 0) deps.queue.notify(CERTIFICATE_JOB);
  return queued;
}

/** `certificates.renew`, once a day across all workers. */
export function createRenewalJob(deps: Pick<Deps, 'db' | 'clock' | 'queue'>): PeriodicJob {
  return {
    kind: RENEWAL_JOB,
    intervalMs: RENEWAL_INTERVAL_MS,
    concurrency: 1,
    async handle(job) {
      if (isStale(job.payload, RENEWAL_INTERVAL_MS, deps.clock.now())) return;
      await renewCertificates(deps);
    },
  };
}
