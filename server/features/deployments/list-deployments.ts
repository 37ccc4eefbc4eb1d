import type { Deployment, ListDeploymentsQuery } from '../../../api/schemas/deployments.ts';
import { requireProject } from '../identity/index.ts';
import { readPage, type ListPage } from '../../platform/http/pagination.ts';
import type { Actor, Deps } from '../../platform/deps/deps.ts';
import { deploymentShortcuts } from './deployment-totals.ts';
import { toDeployment } from './to-deployment.ts';

/** A project's deployments, newest first, filtered by status, branch, target and commit prefix. */
export async function listDeployments(
  deps: Deps,
  actor: Actor,
  projectId: string,
  q: ListDeploymentsQuery,
): Promise<ListPage<Deployment>> {
  const { project } = await requireProject(deps, actor, projectId, 'viewer');
  let base = deps.db.selectFrom('deployments').where('project_id', '=', project.id);
  if (q.status) base = base.where('status', '=', q.status);
  if (q.branch) base = base.where('branch', '=', q.branch);
  if (q.target) base = base.where('target', '=', q.target);
  // A prefix as a range on the index `deployments_commit`: hashes are stored as lowercase hex
  // digits (so is the filter), and every one that starts with the prefix sorts below prefix + 'g'.
  if (q.commitHash) {
    base = base.where('commit_hash', '>=', q.commitHash).where('commit_hash', '<', `${q.commitHash}g`);
  }
  const page = await readPage(
    base.selectAll(),
    base,
    q,
    { time: 'created_at', id: 'id', key: (r) => [r.created_at, r.id] },
    deploymentShortcuts(deps, project.id, q),
  );
  return { ...page, items: page.items.map((r) => toDeployment(deps.urls, r, project)) };
}
