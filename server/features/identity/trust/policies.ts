import { ApiError } from '../../../../api/errors.ts';
import type { CreateTrustPolicyBody, TrustPolicy } from '../../../../api/schemas/trust-policies.ts';
import { newId } from '../../../core/ids.ts';
import type { TrustPoliciesTable } from '../../../platform/store/schema.ts';
import { requireProject } from '../access.ts';
import type { Actor, Deps } from '../../../platform/deps/deps.ts';
import { decodeJson } from '../../../core/json-column.ts';
import { z } from 'zod';

const json = (v: string[] | undefined) => (v ? JSON.stringify(v) : null);
/** A policy's list column (refs, environments, events): null means any. */
export const parseList = (v: string | null, what: string) =>
  v === null ? null : decodeJson(z.array(z.string()), v, what);

export function toTrustPolicy(row: TrustPoliciesTable): TrustPolicy {
  return {
    id: row.id,
    projectId: row.project_id,
    repository: row.repository,
    repositoryId: row.repository_id,
    refs: parseList(row.refs, `Trust policy ${row.id}'s refs`),
    environments: parseList(row.environments, `Trust policy ${row.id}'s environments`),
    workflow: row.workflow,
    events: parseList(row.events, `Trust policy ${row.id}'s events`),
    role: row.role,
    createdAt: row.created_at,
  };
}

/** Adds a trust policy (admins): its workflows act as the admin who made it, within the policy's role. */
export async function createTrustPolicy(
  deps: Deps,
  actor: Actor,
  projectId: string,
  body: CreateTrustPolicyBody,
): Promise<TrustPolicy> {
  const { project } = await requireProject(deps, actor, projectId, 'admin');
  const row: TrustPoliciesTable = {
    id: newId('tpo'),
    project_id: project.id,
    repository: body.repository,
    repository_id: body.repositoryId,
    refs: json(body.refs),
    environments: json(body.environments),
    workflow: body.workflow ?? null,
    events: json(body.events),
    role: body.role,
    created_by: actor.userId,
    created_at: deps.clock.now().toISOString(),
  };
  await deps.db.insertInto('trust_policies').values(row).execute();
  return toTrustPolicy(row);
}

export async function listTrustPolicies(deps: Deps, actor: Actor, projectId: string): Promise<TrustPolicy[]> {
  const { project } = await requireProject(deps, actor, projectId, 'viewer');
  const rows = await deps.db
    .selectFrom('trust_policies')
    .selectAll()
    .where('project_id', '=', project.id)
    .orderBy('created_at')
    .execute();
  return rows.map(toTrustPolicy);
}

export async function deleteTrustPolicy(
  deps: Deps,
  actor: Actor,
  projectId: string,
  policyId: string,
): Promise<void> {
  const { project } = await requireProject(deps, actor, projectId, 'admin');
  const r = await deps.db
    .deleteFrom('trust_policies')
    .where('id', '=', policyId)
    .where('project_id', '=', project.id)
    .executeTakeFirst();
  if (Number(r.numDeletedRows) === 0) throw ApiError.notFound(`Trust policy ${policyId}`);
}
