import { ApiError } from '../../../api/errors.ts';
import type { Role } from '../../../api/schemas/organizations.ts';
import { requireProject } from '../identity/index.ts';
import type { ProjectRow } from '../../platform/deps/project-with-role.ts';
import type { Actor, Deps } from '../../platform/deps/deps.ts';
import type { WebhookRow } from './to-webhook.ts';

/** Loads a webhook of the project after checking the caller's role; another project's webhook is NOT_FOUND. */
export async function requireWebhook(
  deps: Deps,
  actor: Actor,
  projectId: string,
  webhookId: string,
  min: Role,
): Promise<{ project: ProjectRow; webhook: WebhookRow }> {
  const { project } = await requireProject(deps, actor, projectId, min);
  const webhook = await deps.db
    .selectFrom('webhooks')
    .selectAll()
    .where('id', '=', webhookId)
    .where('project_id', '=', project.id)
    .executeTakeFirst();
  if (!webhook) throw ApiError.notFound(`Webhook ${webhookId}`);
  return { project, webhook };
}
