import type { Selectable } from 'kysely';
import type { Deployment } from '../../../api/schemas/deployments.ts';
import type { DeploymentsTable, ProjectsTable } from '../../platform/store/schema.ts';
import type { Urls } from '../../platform/deps/urls.ts';

export type DeploymentRow = Selectable<DeploymentsTable>;

/**
 * A stored deployment as the wire shows it. With its project's row, it says whether its URLs are
 * protected (`protected`); without (the builder's own transitions), the field is left out.
 */
export function toDeployment(
  urls: Pick<Urls, 'forHost' | 'api'>,
  row: DeploymentRow,
  project?: Pick<ProjectsTable, 'protection'>,
): Deployment {
  return {
    id: row.id,
    projectId: row.project_id,
    status: row.status,
    target: row.target,
    branch: row.branch,
    commitHash: row.commit_hash,
    commitMessage: row.commit_message,
    author: row.author,
    message: row.message,
    buildDurationMs: row.build_duration_ms === null ? null : Number(row.build_duration_ms),
    deployDurationMs: row.deploy_duration_ms === null ? null : Number(row.deploy_duration_ms),
    url: urls.forHost(row.host),
    branchUrl: row.target === 'preview' && row.branch_host ? urls.forHost(row.branch_host) : null,
    errorMessage: row.error_message,
    rollbackFrom: row.rollback_from,
    rollbackTo: row.rollback_from ? row.source_deployment_id : null,
    createdAt: row.created_at,
    readyAt: row.ready_at,
    promotedAt: row.promoted_at,
    source: row.source,
    framework: row.framework,
    dashboardUrl: `${urls.api.replace(/\/+$/, '')}/deployments/${row.id}`,
    // A deployment's own URL and its branch URL are previews' hosts: `previews` and `all` protect them.
    ...(project ? { protected: project.protection !== 'none' } : {}),
  };
}
