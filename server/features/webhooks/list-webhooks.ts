import type { PageQuery } from '../../../api/schemas/common.ts';
import type { Webhook } from '../../../api/schemas/webhooks.ts';
import { requireProject } from '../identity/index.ts';
import { readPage, type ListPage } from '../../platform/http/pagination.ts';
import type { Actor, Deps } from '../../platform/deps/deps.ts';
import { toWebhook } from './to-webhook.ts';

/** The project's webhooks, newest first (any member). */
export async function listWebhooks(
  deps: Deps,
  actor: Actor,
  projectId: string,
  q: PageQuery,
): Promise<ListPage<Webhook>> {
  const { project } = await requireProject(deps, actor, projectId, 'viewer');
  const base = deps.db.selectFrom('webhooks').where('project_id', '=', project.id);
  const page = await readPage(base.selectAll(), base, q, {
    time: 'created_at',
    id: 'id',
    key: (r) => [r.created_at, r.id],
  });
  return { ...page, items: page.items.map(toWebhook) };
}
