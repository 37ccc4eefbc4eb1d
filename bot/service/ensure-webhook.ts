import type { SlipwayClient } from '../../api/client/index.ts';
import type { WebhookEvent } from '../../api/schemas/webhooks.ts';

/** The path of the bot's receiver of the service's webhooks. */
export const SERVICE_WEBHOOK_PATH = '/slipway/webhooks';

/** The events the bot needs: every change of a deployment's state. */
export const DEPLOYMENT_EVENTS: WebhookEvent[] = [
  'deployment.created',
  'deployment.building',
  'deployment.deploying',
  'deployment.success',
  'deployment.failed',
  'deployment.promoted',
];

/** Makes sure each project the bot deploys tells the bot about its deployments. */
export interface WebhookRegistrar {
  ensure(projectId: string): Promise<void>;
}

/**
 * Registers the project's webhook to `<botUrl>/slipway/webhooks` once: it looks first and creates
 * only when no active webhook points there, and it remembers the projects it has seen, so each
 * project costs one look-up per bot process. Concurrent calls for one project share the work.
 */
export function createWebhookRegistrar(
  client: SlipwayClient,
  settings: {
    botUrl: string;
    serviceWebhookSecret: string;
    previousServiceWebhookSecret?: string | undefined;
  },
): WebhookRegistrar {
  const url = `${settings.botUrl}${SERVICE_WEBHOOK_PATH}`;
  const done = new Map<string, Promise<void>>();
  async function register(projectId: string) {
    const ours: string[] = [];
    for await (const hook of client.iterate.webhooks(projectId, { limit: 100 })) {
      if (hook.url !== url) continue;
      // Not rotating: one active registration is all it takes.
      if (hook.active && !settings.previousServiceWebhookSecret) return;
      ours.push(hook.id);
    }
    await client.webhooks.create(projectId, {
      url,
      events: DEPLOYMENT_EVENTS,
      secret: settings.serviceWebhookSecret,
    });
    // Rotating the secret: the new registration first, then the old ones go (both secrets are
    // accepted meanwhile, and a delivery that arrives twice changes nothing twice).
    for (const id of ours) await client.webhooks.remove(projectId, id);
  }
  return {
    ensure(projectId) {
      let pending = done.get(projectId);
      if (!pending) {
        pending = register(projectId);
        done.set(projectId, pending);
        // A failure is forgotten so the next pull request tries again.
        pending.catch(() => done.delete(projectId));
      }
      return pending;
    },
  };
}
