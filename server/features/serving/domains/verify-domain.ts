import { ApiError } from '../../../../api/errors.ts';
import type { Domain } from '../../../../api/schemas/domains.ts';
import { isUniqueViolation } from '../../../platform/store/errors.ts';
import { DELIVERY_JOB, recordEvent } from '../../webhooks/index.ts';
import { requireProject } from '../../identity/index.ts';
import type { Actor, Deps } from '../../../platform/deps/deps.ts';
import { signalRoutingChange } from '../../../platform/deps/routing-signal.ts';
import { challengeName } from './dns-records.ts';
import { findDomain } from './find-domain.ts';
import { lookupChallenge } from './lookup-challenge.ts';
import { toDomain } from './to-domain.ts';

/** Job that requests the certificate of a newly verified domain; payload `{ domainId }`. */
export const CERTIFICATE_JOB = 'domain.certificate';

/**
 * Looks the ownership TXT record up (this claim's own value: several projects may claim a name,
 * each with its own token). A match makes the domain `verified`, emits `domain.verified`
 * and queues the certificate request, all in one transaction; otherwise the domain stays `pending`
 * and the answer says what the resolver saw. An already verified domain is answered unchanged.
 */
export async function verifyDomain(
  deps: Deps,
  actor: Actor,
  projectId: string,
  host: string,
): Promise<Domain> {
  const { project } = await requireProject(deps, actor, projectId, 'developer');
  const row = await findDomain(deps, project.id, host);
  if (row.status === 'verified') return toDomain(deps, project, row);

  const lookup = await lookupChallenge(deps.dns, challengeName(row.domain), row.verification_token);
  if (!lookup.matched) {
    if (lookup.failure)
      deps.log.warn({ domain: row.domain, code: lookup.failure }, 'domain TXT lookup failed');
    return {
      ...toDomain(deps, project, row),
      verification: { expected: row.verification_token, found: lookup.found, message: lookup.message },
    };
  }

  const now = deps.clock.now().toISOString();
  const outcome = await deps.db.transaction().execute(async (tx) => {
    // Only the pending -> verified change emits: two concurrent verifies make one event and one job.
    // A host name is verified for one project at most (a unique index): the first to prove it wins.
    const res = await tx
      .updateTable('domains')
      .set({ status: 'verified', verified_at: now, updated_at: now })
      .where('id', '=', row.id)
      .where('status', '=', 'pending')
      .executeTakeFirst()
      .catch((err: unknown) => {
        if (!isUniqueViolation(err)) throw err;
        throw ApiError.conflict(
          `Domain ${row.domain} is already verified for another project; it must be removed there before it can be verified here`,
        );
      });
    if (Number(res.numUpdatedRows) !== 1) return { changed: false, deliveries: 0 };
    const deliveries = await recordEvent(tx, deps, project.id, 'domain.verified', {
      domainId: row.id,
      projectId: project.id,
      domain: row.domain,
      status: 'verified',
      sslStatus: row.ssl_status,
    });
    await deps.queue.enqueue(tx, CERTIFICATE_JOB, { domainId: row.id });
    return { changed: true, deliveries };
  });
  if (outcome.changed) {
    deps.queue.notify(CERTIFICATE_JOB);
    signalRoutingChange(deps, project.id);
  }
  if (outcome.deliveries > 0) deps.queue.notify(DELIVERY_JOB);
  return toDomain(deps, project, await findDomain(deps, project.id, row.domain));
}
