import type { SlipwayClient } from '../../api/client/index.ts';
import type { Deployment } from '../../api/schemas/deployments.ts';

/** The newest live preview of exactly this commit, or null. */
export async function findLivePreview(
  client: SlipwayClient,
  projectId: string,
  sha: string,
): Promise<Deployment | null> {
  const page = await client.deployments.list(projectId, {
    commitHash: sha,
    target: 'preview',
    status: 'live',
    limit: 1,
  });
  return page.data[0] ?? null;
}
