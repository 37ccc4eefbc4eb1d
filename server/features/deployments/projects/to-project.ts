import type { Project } from '../../../../api/schemas/projects.ts';
import type { ProjectRow } from '../../../platform/deps/project-with-role.ts';
import type { Deps } from '../../../platform/deps/deps.ts';
import { maskedRepositoryUrl } from '../../github/index.ts';
import { NO_REPOSITORY } from './stored-repository.ts';

/** A stored project as the wire shows it: credentials masked, the production URL once it has one. */
export function toProject(deps: Pick<Deps, 'urls'>, row: ProjectRow): Project {
  return {
    id: row.id,
    name: row.name,
    repositoryUrl:
      row.repository_url === NO_REPOSITORY
        ? null
        : maskedRepositoryUrl(row.repository_url, row.repository_credentials !== null),
    branch: row.branch,
    // The setting, else what the newest build detected (the seed: auto-detected when omitted).
    framework: row.framework ?? row.detected_framework,
    frameworkSetting: row.framework,
    organizationId: row.organization_id,
    status: row.status,
    deploymentUrl: row.production_deployment_id ? deps.urls.forHost(row.production_host) : null,
    productionDeploymentId: row.production_deployment_id,
    installCommand: row.install_command,
    buildCommand: row.build_command,
    outputDirectory: row.output_directory,
    rootDirectory: row.root_directory,
    protection: row.protection,
    protectionBypassCreatedAt: row.protection_bypass_created_at,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}
