import { ApiError } from '../../../../api/errors.ts';
import type { Deps } from '../../../platform/deps/deps.ts';
import { roleAtLeast } from '../access.ts';
import type { TrustPoliciesTable } from '../../../platform/store/schema.ts';

/**
 * A policy's token acts as the admin who made it: refuses the exchange, saying why, when that
 * person has left the project's organization or now holds a role below the policy's (the token
 * would otherwise be given and then refused on every call).
 */
export async function requirePolicyAuthor(
  deps: Deps,
  policy: Pick<TrustPoliciesTable, 'id' | 'created_by' | 'role' | 'project_id'>,
  project: { name: string; organizationId: string },
): Promise<void> {
  const author = await deps.db
    .selectFrom('users as u')
    .leftJoin('memberships as m', (join) =>
      join.onRef('m.user_id', '=', 'u.id').on('m.organization_id', '=', project.organizationId),
    )
    .select(['u.email', 'm.role'])
    .where('u.id', '=', policy.created_by)
    .executeTakeFirst();
  const remedy = `an admin of the project makes a new policy (POST /v1/projects/${policy.project_id}/trust-policies) and removes this one (DELETE /v1/projects/${policy.project_id}/trust-policies/${policy.id})`;
  const who = author?.email ?? policy.created_by;
  if (!author?.role) {
    throw ApiError.forbidden(
      `The trust policy of project ${project.name} that accepts this job was made by ${who}, who is no longer a member of its organization, and its tokens act as them: ${remedy}`,
    );
  }
  if (!roleAtLeast(author.role, policy.role)) {
    throw ApiError.forbidden(
      `The trust policy of project ${project.name} that accepts this job was made by ${who}, who is now ${author.role}, below the policy's role ${policy.role}: ${remedy}`,
    );
  }
}
