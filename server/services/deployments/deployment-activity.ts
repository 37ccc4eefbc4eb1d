import { EventEmitter } from 'node:events';

/**
 * In-process signal "something happened to deployment <id>" (a log line was appended or its
 * state changed). Log followers in this process wake at once instead of waiting for their next
 * poll; followers in other processes still see the change by polling the database.
 */
const activity = new EventEmitter();
// One listener per open log stream: there is no meaningful upper bound to warn about.
activity.setMaxListeners(0);

/** Call after the change has committed, so a woken reader sees it. */
export function signalDeployment(deploymentId: string): void {
  activity.emit(deploymentId);
}

/** Calls `listener` on every signal for the deployment; returns the unsubscribe function. */
export function onDeploymentActivity(deploymentId: string, listener: () => void): () => void {
  activity.on(deploymentId, listener);
  return () => activity.off(deploymentId, listener);
}
