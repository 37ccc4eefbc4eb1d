import { ApiError } from '../../../../api/errors.ts';
import type { CreateProjectBody, Project } from '../../../../api/schemas/projects.ts';
import { newId } from '../../../core/ids.ts';
import type { SettleHook } from '../settle-hook.ts';
import { isUniqueViolation } from '../../../platform/store/errors.ts';
import type { Actor, Deps } from '../../../platform/deps/deps.ts';
import { allocateProductionHost } from './allocate-production-host.ts';
import { buildSettingsOf } from './build-settings-of.ts';
import { checkRepositoryUrl } from './check-repository-url.ts';
import { requireOrganization } from '../../identity/index.ts';
import { NO_REPOSITORY, storedRepository } from './stored-repository.ts';
import { toProject } from './to-project.ts';

/** `settle` (paid operations) runs inside the transaction, so the payment commits with the project. */
export async function createProject(
  deps: Deps,
  actor: Actor,
  body: CreateProjectBody,
  settle?: SettleHook,
): Promise<Project> {
  const { org } = await requireOrganization(deps, actor, body.organizationId, 'developer');
  let repository = { repository_url: NO_REPOSITORY, repository_credentials: null as string | null };
  if (body.repositoryUrl !== undefined) {
    await checkRepositoryUrl(deps, body.repositoryUrl);
    repository = storedRepository(deps, body.repositoryUrl, null);
  }
  const now = deps.clock.now().toISOString();
  try {
    const row = await deps.db.transaction().execute(async (tx) => {
      await settle?.before(tx);
      const values = {
        id: newId('prj'),
        organization_id: org.id,
        name: body.name,
        ...repository,
        branch: body.branch ?? 'main',
        framework: body.framework ?? null,
        detected_framework: null,
        install_command: null,
        build_command: null,
        output_directory: null,
        root_directory: null,
        ...buildSettingsOf(body),
        status: 'active' as const,
        production_host: await allocateProductionHost(tx, body.name, org.name),
        production_deployment_id: null,
        protection: body.protection ?? deps.config.defaultProtection,
        protection_bypass_hash: null,
        protection_bypass_created_at: null,
        created_at: now,
        updated_at: now,
        deleted_at: null,
      };
      await tx.insertInto('projects').values(values).execute();
      await settle?.after(tx, values.id);
      return values;
    });
    return toProject(deps, row);
  } catch (err) {
    if (isUniqueViolation(err)) {
      throw ApiError.conflict(`A project named "${body.name}" already exists in organization ${org.name}`);
    }
    throw err;
  }
}
