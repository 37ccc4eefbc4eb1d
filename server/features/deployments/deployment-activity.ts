import type { Deps } from '../../platform/deps/deps.ts';

/** Notifier channel of "something happened to deployment <id>"; the payload is the id. */
export const DEPLOYMENTS_CHANNEL = 'slipway_deployments';

/**
 * Says "something happened to deployment <id>" (a log line was appended or its state changed),
 * so its log followers wake at once instead of waiting for their next poll: in this process, and
 * in the others through LISTEN/NOTIFY on PostgreSQL. A lost signal costs a poll, never a line.
 * Call after the change has committed, so a woken reader sees it.
 */
export function signalDeployment(deps: Pick<Deps, 'store'>, deploymentId: string): void {
  deps.store.notifier.publish(DEPLOYMENTS_CHANNEL, deploymentId);
}

/** Calls `listener` on every signal for the deployment (and after a reconnect); returns the unsubscribe function. */
export function onDeploymentActivity(
  deps: Pick<Deps, 'store'>,
  deploymentId: string,
  listener: () => void,
): () => void {
  return deps.store.notifier.subscribe(DEPLOYMENTS_CHANNEL, (id) => {
    if (id === null || id === deploymentId) listener();
  });
}
