import type { Insertable, Kysely } from 'kysely';
import { newId, randomString } from '../../core/ids.ts';
import type { Database, DeploymentsTable } from '../../platform/store/schema.ts';
import type { Deps } from '../../platform/deps/deps.ts';
import { isBranchHost, reserveBranchAlias } from './branch-alias.ts';
import { notifyDeliveries, recordDeploymentEvent } from './deployment-events.ts';
import type { DeploymentRow } from './to-deployment.ts';

/** The job the builder runs for every queued deployment; payload `{ deploymentId }`. */
export const BUILD_JOB = 'deployment.build';

/** What differs between a new deployment and a rollback's; the rest is filled in here. */
export type NewDeployment = Pick<Insertable<DeploymentsTable>, 'project_id' | 'target' | 'branch'> &
  Partial<
    Pick<
      Insertable<DeploymentsTable>,
      | 'commit_hash'
      | 'commit_message'
      | 'message'
      | 'author'
      | 'rollback_from'
      | 'source_deployment_id'
      | 'artifact_id'
      | 'created_by'
      | 'source'
      | 'build_spec'
    >
  >;

/**
 * A host label of its own, `<project name>-<8 random>`, kept within DNS's 63 characters. The
 * unique index is the final word; checking first makes a collision (1 in 36^8) cost a retry
 * rather than the caller's whole transaction, which PostgreSQL aborts on a violation. A branch
 * URL's label is avoided too (branch-alias.ts): the edge would answer the deployment's first.
 */
async function allocateHost(tx: Kysely<Database>, projectName: string): Promise<string> {
  const base = projectName.slice(0, 50).replace(/-+$/, '');
  for (;;) {
    const host = `${base}-${randomString(8)}`;
    const taken = await tx.selectFrom('deployments').select('id').where('host', '=', host).executeTakeFirst();
    if (!taken && !(await isBranchHost(tx, host))) return host;
  }
}

/**
 * Inserts a queued deployment, enqueues its build job and records `deployment.created`, all in
 * `tx`: the deployment, its job and its webhook deliveries exist together or not at all. A
 * preview gets its branch's URL label (the branch's alias is made if it has none).
 * Call `afterQueued` with the result once the transaction has committed.
 */
export async function queueDeployment(
  tx: Kysely<Database>,
  deps: Pick<Deps, 'clock' | 'queue' | 'urls'>,
  project: { name: string; organization_id: string },
  values: NewDeployment,
): Promise<{ row: DeploymentRow; deliveries: number }> {
  const now = deps.clock.now().toISOString();
  const branch =
    values.target === 'preview'
      ? await reserveBranchAlias(tx, now, { id: values.project_id, name: project.name }, values.branch)
      : null;
  const row: DeploymentRow = {
    id: newId('dpl'),
    status: 'queued',
    commit_hash: null,
    commit_message: null,
    message: null,
    author: null,
    rollback_from: null,
    source_deployment_id: null,
    artifact_id: null,
    runtime: null,
    created_by: null,
    source: 'git',
    build_spec: null,
    framework: null,
    ...values,
    host: await allocateHost(tx, project.name),
    branch_host: branch?.host ?? null,
    branch_seq: branch?.seq ?? null,
    build_duration_ms: null,
    deploy_duration_ms: null,
    error_message: null,
    created_at: now,
    updated_at: now,
    started_at: null,
    ready_at: null,
    promoted_at: null,
    // Its place in the project's list: given by the insert's trigger (migration 026).
    list_seq: null,
  };
  await tx.insertInto('deployments').values(row).execute();
  // Builds take turns by organization (platform/queue/fair-claim.ts).
  await deps.queue.enqueue(tx, BUILD_JOB, { deploymentId: row.id }, { fairKey: project.organization_id });
  const deliveries = await recordDeploymentEvent(tx, deps, row, 'deployment.created');
  return { row, deliveries };
}

/** Wakes the builder and the webhook deliverers after the queuing transaction committed. */
export function afterQueued(deps: Pick<Deps, 'queue'>, deliveries: number): void {
  deps.queue.notify(BUILD_JOB);
  notifyDeliveries(deps, deliveries);
}
