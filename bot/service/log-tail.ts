import type { SlipwayClient } from '../../api/client/index.ts';

/** The last lines of a deployment's build log, or undefined when they cannot be read. */
export async function readLogTail(
  client: SlipwayClient,
  deploymentId: string,
  lines = 40,
): Promise<string | undefined> {
  try {
    const { logs } = await client.deployments.logs(deploymentId, { type: 'build', tail: lines });
    return logs.trim() ? logs : undefined;
  } catch {
    // The log only adds detail to a failure the check reports anyway.
    return undefined;
  }
}
