/**
 * The public entry of the webhooks feature: outgoing webhooks and their deliveries.
 * The rest of the service imports these (and roles.ts), never another file of the folder
 * (docs/architecture.md#features).
 */
export { createWebhook } from './create-webhook.ts';
export { deleteWebhook } from './delete-webhook.ts';
export { DELIVERY_JOB } from './delivery-job.ts';
export { listDeliveries } from './list-deliveries.ts';
export { listWebhooks } from './list-webhooks.ts';
export { recordEvent } from './outbox.ts';
export { redeliver } from './redeliver.ts';
export { webhookRoutes } from './routes.ts';
