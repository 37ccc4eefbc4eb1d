import type { CreateWebhookBody, Webhook } from '../../../api/schemas/webhooks.ts';
import { newId } from '../../core/ids.ts';
import { requireProject } from '../identity/index.ts';
import type { Actor, Deps } from '../../platform/deps/deps.ts';
import { toWebhook } from './to-webhook.ts';

/** Registers a webhook (developer and up). The secret is stored encrypted and never returned. */
export async function createWebhook(
  deps: Deps,
  actor: Actor,
  projectId: string,
  body: CreateWebhookBody,
): Promise<Webhook> {
  const { project } = await requireProject(deps, actor, projectId, 'developer');
  const now = deps.clock.now().toISOString();
  const row = {
    id: newId('whk'),
    project_id: project.id,
    url: body.url,
    events: JSON.stringify([...new Set(body.events)]),
    secret_ciphertext: deps.cipher.encrypt(body.secret),
    active: 1,
    created_at: now,
    updated_at: now,
  };
  await deps.db.insertInto('webhooks').values(row).execute();
  return toWebhook(row);
}
