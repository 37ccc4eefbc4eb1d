import type { Kysely } from 'kysely';
import { randomString } from '../../core/ids.ts';
import type { Database } from '../../platform/store/schema.ts';
import { branchLabelCandidates, withRandom } from './branch-label.ts';
import type { DeploymentRow } from './to-deployment.ts';

/**
 * True when `label` is another alias's, a live project's production host or any deployment's
 * host (of a deleted project too: the edge answers a deployment's host before an alias). The
 * unique index on aliases is the final word among them; production and deployment hosts check
 * aliases the same way when they are allocated (allocateProductionHost, allocateHost).
 */
export async function hostTaken(
  db: Kysely<Database>,
  label: string,
  except?: { projectId: string; branch: string },
): Promise<boolean> {
  let alias = db.selectFrom('branch_aliases').select('project_id').where('host', '=', label);
  if (except) {
    alias = alias.where((eb) =>
      eb.or([eb('project_id', '!=', except.projectId), eb('branch', '!=', except.branch)]),
    );
  }
  if (await alias.executeTakeFirst()) return true;
  const project = await db
    .selectFrom('projects')
    .select('id')
    .where('production_host', '=', label)
    .where('deleted_at', 'is', null)
    .executeTakeFirst();
  if (project) return true;
  return !!(await db.selectFrom('deployments').select('id').where('host', '=', label).executeTakeFirst());
}

/** True when `label` is some branch's URL label. */
export async function isBranchHost(db: Kysely<Database>, label: string): Promise<boolean> {
  return !!(await db
    .selectFrom('branch_aliases')
    .select('host')
    .where('host', '=', label)
    .executeTakeFirst());
}

/** The first free label of the branch-label rule (branch-label.ts). */
async function allocateBranchHost(
  db: Kysely<Database>,
  projectId: string,
  projectName: string,
  branch: string,
): Promise<string> {
  const except = { projectId, branch };
  for (const label of branchLabelCandidates(projectName, branch)) {
    if (!(await hostTaken(db, label, except))) return label;
  }
  for (;;) {
    const label = withRandom(projectName, branch, randomString(6));
    if (!(await hostTaken(db, label, except))) return label;
  }
}

/**
 * A new preview of `branch`: its branch URL's label and its number among the branch's previews
 * (`branch_seq`), giving the branch an alias (serving nothing yet) if it has none. In the caller's
 * transaction; the count's update holds the alias's row until commit, so previews queued at once
 * get distinct numbers in the order they commit, and two at once for one new branch insert one
 * row (the other does nothing and reads it).
 */
export async function reserveBranchAlias(
  tx: Kysely<Database>,
  now: string,
  project: { id: string; name: string },
  branch: string,
): Promise<{ host: string; seq: number }> {
  const existing = await tx
    .selectFrom('branch_aliases')
    .select('host')
    .where('project_id', '=', project.id)
    .where('branch', '=', branch)
    .executeTakeFirst();
  if (!existing) {
    const host = await allocateBranchHost(tx, project.id, project.name, branch);
    await tx
      .insertInto('branch_aliases')
      .values({
        project_id: project.id,
        branch,
        host,
        deployment_id: null,
        deployment_seq: null,
        created_at: now,
        updated_at: now,
      })
      .onConflict((oc) => oc.columns(['project_id', 'branch']).doNothing())
      .execute();
  }
  const row = await tx
    .updateTable('branch_aliases')
    .set((eb) => ({ previews: eb('previews', '+', 1) }))
    .where('project_id', '=', project.id)
    .where('branch', '=', branch)
    .returning(['host', 'previews'])
    .executeTakeFirstOrThrow();
  return { host: row.host, seq: Number(row.previews) };
}

/**
 * A preview went live: its branch's alias serves it, unless the alias already serves a preview
 * queued after it, so that an older build finishing last never takes the alias back. One
 * conditional update, in the transaction that makes the deployment live. Returns the alias's label.
 */
export async function advanceBranchAlias(
  tx: Kysely<Database>,
  now: string,
  row: Pick<DeploymentRow, 'id' | 'project_id' | 'branch' | 'branch_host' | 'branch_seq'>,
): Promise<string> {
  let host = row.branch_host;
  let seq = row.branch_seq;
  if (host === null || seq === null) {
    // Queued before branch URLs existed: numbered now, after every preview queued before it.
    const project = await tx
      .selectFrom('projects')
      .select(['id', 'name'])
      .where('id', '=', row.project_id)
      .executeTakeFirstOrThrow();
    ({ host, seq } = await reserveBranchAlias(tx, now, project, row.branch));
    await tx
      .updateTable('deployments')
      .set({ branch_host: host, branch_seq: seq })
      .where('id', '=', row.id)
      .execute();
  }
  await tx
    .updateTable('branch_aliases')
    .set({ deployment_id: row.id, deployment_seq: seq, updated_at: now })
    .where('project_id', '=', row.project_id)
    .where('branch', '=', row.branch)
    .where((eb) => eb.or([eb('deployment_seq', 'is', null), eb('deployment_seq', '<', seq)]))
    .execute();
  return host;
}

/**
 * A renamed project's branch URLs follow its name, as its production URL does: each alias gets
 * the label the rule gives under the new name, and its previews show it. The old labels stop
 * answering. In the rename's transaction.
 */
export async function relabelBranchAliases(
  tx: Kysely<Database>,
  now: string,
  projectId: string,
  newName: string,
): Promise<void> {
  const aliases = await tx
    .selectFrom('branch_aliases')
    .select(['branch', 'host'])
    .where('project_id', '=', projectId)
    .orderBy('created_at')
    .orderBy('branch')
    .execute();
  for (const alias of aliases) {
    const host = await allocateBranchHost(tx, projectId, newName, alias.branch);
    if (host === alias.host) continue;
    await tx
      .updateTable('branch_aliases')
      .set({ host, updated_at: now })
      .where('project_id', '=', projectId)
      .where('branch', '=', alias.branch)
      .execute();
    await tx
      .updateTable('deployments')
      .set({ branch_host: host })
      .where('project_id', '=', projectId)
      .where('branch', '=', alias.branch)
      .where('branch_host', 'is not', null)
      .execute();
  }
}
