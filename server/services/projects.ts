import type { Kysely } from 'kysely';
import { ApiError } from '../../api/errors.ts';
import type {
  BuildSettings,
  CreateProjectBody,
  ListProjectsQuery,
  Project,
  UpdateProjectBody,
} from '../../api/schemas/projects.ts';
import { staticRepositoryRefusal, repositorySettings } from '../builder/repository-policy.ts';
import { newId, randomString } from '../lib/ids.ts';
import type { SettleHook } from '../payments/method.ts';
import { isUniqueViolation } from '../store/errors.ts';
import type { Database } from '../store/schema.ts';
import { requireProject, requireRole, type ProjectRow } from './access.ts';
import type { Actor, Deps } from './deps.ts';
import { readPage, type ListPage } from './pagination.ts';
import {
  MASK,
  maskedRepositoryUrl,
  sealCredentials,
  splitRepositoryCredentials,
} from './repository-credentials.ts';
import { signalRoutingChange } from './routing-signal.ts';

export function toProject(deps: Pick<Deps, 'urls'>, row: ProjectRow): Project {
  return {
    id: row.id,
    name: row.name,
    repositoryUrl: maskedRepositoryUrl(row.repository_url, row.repository_credentials !== null),
    branch: row.branch,
    framework: row.framework,
    organizationId: row.organization_id,
    status: row.status,
    deploymentUrl: row.production_deployment_id ? deps.urls.forHost(row.production_host) : null,
    productionDeploymentId: row.production_deployment_id,
    installCommand: row.install_command,
    buildCommand: row.build_command,
    outputDirectory: row.output_directory,
    rootDirectory: row.root_directory,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

/**
 * The production host label: the project's name when free across the service, else the name
 * with the organization's, else with a random suffix. Labels stay within DNS's 63 characters.
 */
async function allocateProductionHost(
  db: Kysely<Database>,
  name: string,
  orgName: string,
  projectId?: string,
) {
  const candidates = [
    name,
    `${name}-${orgName}`.slice(0, 63).replace(/-+$/, ''),
    `${name.slice(0, 55)}-${randomString(7)}`,
  ];
  for (const host of candidates) {
    let q = db
      .selectFrom('projects')
      .select('id')
      .where('production_host', '=', host)
      .where('deleted_at', 'is', null);
    if (projectId) q = q.where('id', '!=', projectId);
    if (!(await q.executeTakeFirst())) return host;
  }
  return `${name.slice(0, 50)}-${randomString(12)}`;
}

/** Resolves `org` given as an id or a name to an organization the caller belongs to. */
async function resolveOrganization(deps: Deps, actor: Actor, idOrName: string) {
  const org = await deps.db
    .selectFrom('organizations')
    .select(['id', 'name'])
    .where((eb) => eb.or([eb('id', '=', idOrName), eb('name', '=', idOrName)]))
    .executeTakeFirst();
  if (!org) throw ApiError.notFound(`Organization ${idOrName}`);
  return org;
}

/**
 * The repository rules that need no DNS (local paths, addresses written out), as a
 * VALIDATION_ERROR on `repositoryUrl`. Every build checks again, in full, before its checkout.
 */
export async function checkRepositoryUrl(deps: Pick<Deps, 'config'>, url: string): Promise<void> {
  const refusal = await staticRepositoryRefusal(url, repositorySettings(deps.config));
  if (refusal) throw ApiError.validation([{ path: 'repositoryUrl', message: refusal }]);
}

/**
 * The repository URL as stored: credentials split off and encrypted. `***` in place of
 * credentials means "keep the stored ones" (what a client read back from the API); there must be
 * some to keep.
 */
function storedRepository(
  deps: Pick<Deps, 'cipher'>,
  url: string,
  current: string | null,
): { repository_url: string; repository_credentials: string | null } {
  const split = splitRepositoryCredentials(url);
  if (split.credentials !== MASK) {
    return {
      repository_url: split.url,
      repository_credentials: sealCredentials(deps.cipher, split.credentials),
    };
  }
  if (current === null) {
    throw ApiError.validation([
      {
        path: 'repositoryUrl',
        message: `${MASK} stands for the credentials stored with the project, and it has none: give the URL with its credentials, or without any`,
      },
    ]);
  }
  return { repository_url: split.url, repository_credentials: current };
}

/**
 * The build settings a body gives, as columns: absent ones are left out (on update, unchanged),
 * and a root directory of `.` is the root, stored as null.
 */
function buildSettingsOf(body: Partial<Pick<CreateProjectBody, keyof typeof BuildSettings>>) {
  const out: Partial<
    Record<'install_command' | 'build_command' | 'output_directory' | 'root_directory', string | null>
  > = {};
  if (body.installCommand !== undefined) out.install_command = body.installCommand;
  if (body.buildCommand !== undefined) out.build_command = body.buildCommand;
  if (body.outputDirectory !== undefined) out.output_directory = body.outputDirectory;
  if (body.rootDirectory !== undefined)
    out.root_directory = body.rootDirectory === '.' ? null : body.rootDirectory;
  return out;
}

/** `settle` (paid operations) runs inside the transaction, so the payment commits with the project. */
export async function createProject(
  deps: Deps,
  actor: Actor,
  body: CreateProjectBody,
  settle?: SettleHook,
): Promise<Project> {
  const org = await resolveOrganization(deps, actor, body.organizationId);
  await requireRole(deps, actor, org.id, 'developer', `Organization ${body.organizationId}`);
  await checkRepositoryUrl(deps, body.repositoryUrl);
  const repository = storedRepository(deps, body.repositoryUrl, null);
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
        install_command: null,
        build_command: null,
        output_directory: null,
        root_directory: null,
        ...buildSettingsOf(body),
        status: 'active' as const,
        production_host: await allocateProductionHost(tx, body.name, org.name),
        production_deployment_id: null,
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

export async function listProjects(
  deps: Deps,
  actor: Actor,
  q: ListProjectsQuery,
): Promise<ListPage<Project>> {
  let orgIds: string[];
  if (q.org) {
    const org = await resolveOrganization(deps, actor, q.org);
    await requireRole(deps, actor, org.id, 'viewer', `Organization ${q.org}`);
    orgIds = [org.id];
  } else {
    const rows = await deps.db
      .selectFrom('memberships')
      .select('organization_id')
      .where('user_id', '=', actor.userId)
      .execute();
    orgIds = rows.map((r) => r.organization_id);
  }
  if (orgIds.length === 0) return { items: [], total: 0, next: null };
  let base = deps.db.selectFrom('projects').where('organization_id', 'in', orgIds);
  base = q.status ? base.where('status', '=', q.status) : base.where('status', '!=', 'deleted');
  const page = await readPage(base.selectAll(), base, q, {
    time: 'created_at',
    id: 'id',
    key: (r) => [r.created_at, r.id],
  });
  return { ...page, items: page.items.map((r) => toProject(deps, r)) };
}

export async function getProject(deps: Deps, actor: Actor, projectId: string): Promise<Project> {
  const { project } = await requireProject(deps, actor, projectId, 'viewer');
  return toProject(deps, project);
}

export async function updateProject(
  deps: Deps,
  actor: Actor,
  projectId: string,
  body: UpdateProjectBody,
): Promise<Project> {
  const { project } = await requireProject(deps, actor, projectId, 'developer');
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
        productionHost = await allocateProductionHost(tx, body.name, org.name, project.id);
      }
      await tx
        .updateTable('projects')
        .set({
          ...(body.name === undefined ? {} : { name: body.name, production_host: productionHost }),
          ...(body.branch === undefined ? {} : { branch: body.branch }),
          ...(body.framework === undefined ? {} : { framework: body.framework }),
          ...buildSettingsOf(body),
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
  if (body.name !== undefined || body.framework !== undefined) signalRoutingChange(deps, project.id);
  return getProject(deps, actor, projectId);
}

/** Soft delete: the project stops serving, its domains are released, reads answer 404. */
export async function deleteProject(deps: Deps, actor: Actor, projectId: string): Promise<void> {
  const { project } = await requireProject(deps, actor, projectId, 'admin');
  const now = deps.clock.now().toISOString();
  await deps.db.transaction().execute(async (tx) => {
    await tx
      .updateTable('projects')
      .set({ status: 'deleted', deleted_at: now, updated_at: now })
      .where('id', '=', project.id)
      .execute();
    await tx.deleteFrom('domains').where('project_id', '=', project.id).execute();
  });
  signalRoutingChange(deps, project.id);
}

/** Suspend or resume (CLI). */
export async function setProjectStatus(
  deps: Deps,
  projectId: string,
  status: 'active' | 'suspended',
): Promise<void> {
  const rows = await deps.db
    .updateTable('projects')
    .set({ status, updated_at: deps.clock.now().toISOString() })
    .where((eb) => eb.or([eb('id', '=', projectId), eb('name', '=', projectId)]))
    .where('deleted_at', 'is', null)
    .returning('id')
    .execute();
  if (rows.length === 0) throw ApiError.notFound(`Project ${projectId}`);
  // A name may be the same in several organizations: each of them changed.
  for (const row of rows) signalRoutingChange(deps, row.id);
}
