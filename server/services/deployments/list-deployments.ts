import type { Deployment, ListDeploymentsQuery } from '../../../api/schemas/deployments.ts';
import { requireProject } from '../access.ts';
import type { Actor, Deps } from '../deps.ts';
import { toDeployment } from './to-deployment.ts';

/** A project's deployments, newest first, filtered by status, branch, target and commit prefix. */
export async function listDeployments(
  deps: Deps,
  actor: Actor,
  projectId: string,
  q: ListDeploymentsQuery,
): Promise<{ items: Deployment[]; total: number }> {
  const { project } = await requireProject(deps, actor, projectId, 'viewer');
  let base = deps.db.selectFrom('deployments').where('project_id', '=', project.id);
  if (q.status) base = base.where('status', '=', q.status);
  if (q.branch) base = base.where('branch', '=', q.branch);
  if (q.target) base = base.where('target', '=', q.target);
  // Hashes are stored lowercase and the schema allows only hex digits, so no LIKE wildcard can sneak in.
  if (q.commitHash) base = base.where('commit_hash', 'like', `${q.commitHash}%`);
  const [rows, count] = await Promise.all([
    base
      .selectAll()
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .limit(q.limit)
      .offset((q.page - 1) * q.limit)
      .execute(),
    base.select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow(),
  ]);
  return { items: rows.map((r) => toDeployment(deps.urls, r)), total: Number(count.n) };
}
