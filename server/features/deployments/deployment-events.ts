import type { Kysely } from 'kysely';
import type { WebhookEvent } from '../../../api/schemas/webhooks.ts';
import type { Database } from '../../platform/store/schema.ts';
import { DELIVERY_JOB, recordEvent } from '../webhooks/index.ts';
import type { Deps } from '../../platform/deps/deps.ts';
import type { DeploymentRow } from './to-deployment.ts';

/** Deployment events of the webhook contract, the ones this module emits. */
export type DeploymentEvent = Extract<WebhookEvent, `deployment.${string}`>;

/**
 * Writes the webhook deliveries of a deployment event in the caller's transaction, with the
 * contract's payload `{ deploymentId, projectId, status, url, target, branch, commitHash }`.
 * Returns how many deliveries were written: pass it to `notifyDeliveries` after commit.
 */
export function recordDeploymentEvent(
  tx: Kysely<Database>,
  deps: Pick<Deps, 'clock' | 'urls' | 'queue'>,
  row: DeploymentRow,
  event: DeploymentEvent,
): Promise<number> {
  return recordEvent(tx, deps, row.project_id, event, {
    deploymentId: row.id,
    projectId: row.project_id,
    status: row.status,
    url: deps.urls.forHost(row.host),
    target: row.target,
    branch: row.branch,
    commitHash: row.commit_hash,
  });
}

/** Wakes the delivery workers once the transaction that wrote deliveries has committed. */
export function notifyDeliveries(deps: Pick<Deps, 'queue'>, written: number): void {
  if (written > 0) deps.queue.notify(DELIVERY_JOB);
}
