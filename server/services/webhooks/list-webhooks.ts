import type { PageQuery } from '../../../api/schemas/common.ts';
import type { Webhook } from '../../../api/schemas/webhooks.ts';
import { requireProject } from '../access.ts';
import type { Actor, Deps } from '../deps.ts';
import { toWebhook } from './to-webhook.ts';

/** The project's webhooks, newest first (any member). */
export async function listWebhooks(
  deps: Deps,
  actor: Actor,
  projectId: string,
  q: PageQuery,
): Promise<{ items: Webhook[]; total: number }> {
  const { project } = await requireProject(deps, actor, projectId, 'viewer');
  const base = deps.db.selectFrom('webhooks').where('project_id', '=', project.id);
  const [rows, count] = await Promise.all([
    base
      .selectAll()
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .limit(q.limit)
      .offset((q.page - 1) * q.limit)
      .execute(),
    base.select((eb) => eb.fn.countAll<string | number>().as('n')).executeTakeFirstOrThrow(),
  ]);
  return { items: rows.map(toWebhook), total: Number(count.n) };
}
