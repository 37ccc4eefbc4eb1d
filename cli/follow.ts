import type { Deployment } from '../api/schemas/deployments.ts';
import type { Io } from './io.ts';
import type { Session } from './session.ts';

/**
 * Follows a deployment until it is live or failed, passing each build log line to `onLine`,
 * and returns it as it ended. Ctrl-C stops following; the deployment goes on.
 */
export async function followToEnd(
  session: Session,
  io: Io,
  deployment: Deployment,
  onLine?: (line: string) => void,
): Promise<Deployment> {
  if (deployment.status === 'live' || deployment.status === 'failed') return deployment;
  await io.interruptible(async (signal) => {
    try {
      for await (const event of session.client.deployments.followLogEvents(deployment.id, { signal })) {
        if (event.kind === 'line') onLine?.(event.line);
      }
    } catch (err) {
      if (signal.aborted) throw stoppedFollowing(deployment.id);
      throw err;
    }
  });
  return session.client.deployments.get(deployment.id);
}

/** `12.3s`, `850ms`. */
export const seconds = (ms: number) => (ms < 1000 ? `${Math.round(ms)}ms` : `${(ms / 1000).toFixed(1)}s`);

/** What Ctrl-C while following says. */
export const stoppedFollowing = (id: string) =>
  new Error(`Stopped following; ${id} goes on. \`slipway logs ${id} -f\` follows it again.`);
