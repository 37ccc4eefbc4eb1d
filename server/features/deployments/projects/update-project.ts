import { ApiError } from '../../../../api/errors.ts';
import type { Project, UpdateProjectBody } from '../../../../api/schemas/projects.ts';
import { isUniqueViolation } from '../../../platform/store/errors.ts';
import { requireProject, roleAtLeast } from '../../identity/index.ts';
import { relabelBranchAliases } from '../branch-alias.ts';
import type { Actor, Deps } from '../../../platform/deps/deps.ts';
import { signalRoutingChange } from '../../../platform/deps/routing-signal.ts';
import { allocateProductionHost } from './allocate-production-host.ts';
import { buildSettingsOf } from './build-settings-of.ts';
import { checkRepositoryUrl } from './check-repository-url.ts';
import { getProject } from './get-project.ts';
import { storedRepository } from './stored-repository.ts';

/** Developers change a project's settings; a new name also moves its production host and branch URLs. */
export async function updateProject(
  deps: Deps,
  actor: Actor,
  projectId: string,
  body: UpdateProjectBody,
): Promise<Project> {
  const { project, role } = await requireProject(deps, actor, projectId, 'developer');
  // Who may see the previews is an admin's call, as who is a member is.
  if (body.protection !== undefined && body.protection !== project.protection && !roleAtLeast(role, 'admin'))
    throw ApiError.forbidden(
      `Changing preview protection needs the role of admin or owner in the organization; you are ${role}`,
    );
  let repository = {};
  if (body.repositoryUrl !== undefined) {
    await checkRepositoryUrl(deps, body.repositoryUrl);
    repository = storedRepository(deps, body.repositoryUrl, project.repository_credentials);
  }
  const now = deps.clock.now().toISOString();
  try {
    await deps.db.transaction().execute(async (tx) => {
      let productionHost = project.production_host;
      if (body.name && body.name !== project.name) {
        const org = await tx
          .selectFrom('organizations')
          .select('name')
          .where('id', '=', project.organization_id)
          .executeTakeFirstOrThrow();
        // Branch URLs first: the production host then avoids their new labels, not their old.
        await relabelBranchAliases(tx, now, project.id, body.name);
        productionHost = await allocateProductionHost(tx, body.name, org.name, project.id);
      }
      await tx
        .updateTable('projects')
        .set({
          ...(body.name === undefined ? {} : { name: body.name, production_host: productionHost }),
          ...(body.branch === undefined ? {} : { branch: body.branch }),
          ...(body.framework === undefined ? {} : { framework: body.framework }),
          ...buildSettingsOf(body),
          ...(body.protection === undefined ? {} : { protection: body.protection }),
          ...repository,
          updated_at: now,
        })
        .where('id', '=', project.id)
        .execute();
    });
  } catch (err) {
    if (isUniqueViolation(err))
      throw ApiError.conflict(`A project named "${body.name}" already exists in this organization`);
    throw err;
  }
  // A new name moves the production host; the framework decides how older builds are served.
  // Protection is decided by the edge from its cached route.
  if (body.name !== undefined || body.framework !== undefined || body.protection !== undefined)
    signalRoutingChange(deps, project.id);
  return getProject(deps, actor, projectId);
}
