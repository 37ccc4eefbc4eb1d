import { z } from 'zod';
import type { GitHubRepo } from './octokit.ts';

/** The GitHub environment of a pull request's previews. */
export const previewEnvironment = (pull: number) => `preview/pr-${pull}`;

export type DeploymentState = 'in_progress' | 'success' | 'failure' | 'inactive';

const GitHubDeployment = z.object({
  id: z.number().int(),
  payload: z.union([z.record(z.string(), z.unknown()), z.string()]).nullish(),
});

/**
 * Records a preview as a GitHub Deployment: transient (it goes away with the pull request), not
 * production, never merging the base branch in, and not waiting for other checks. The Slipway
 * deployment's id travels in `payload` so the status updates find it again.
 */
export async function createPreviewDeployment(
  gh: GitHubRepo,
  input: { sha: string; pull: number; slipwayDeploymentId: string; description: string },
): Promise<number> {
  const { data } = await gh.octokit.rest.repos.createDeployment({
    owner: gh.owner,
    repo: gh.repo,
    ref: input.sha,
    environment: previewEnvironment(input.pull),
    description: input.description.slice(0, 140),
    transient_environment: true,
    production_environment: false,
    auto_merge: false,
    required_contexts: [],
    payload: { slipwayDeploymentId: input.slipwayDeploymentId },
  });
  return GitHubDeployment.parse(data).id;
}

export async function setDeploymentStatus(
  gh: GitHubRepo,
  deploymentId: number,
  status: { state: DeploymentState; environmentUrl?: string; logUrl?: string; description?: string },
): Promise<void> {
  await gh.octokit.rest.repos.createDeploymentStatus({
    owner: gh.owner,
    repo: gh.repo,
    deployment_id: deploymentId,
    state: status.state,
    ...(status.environmentUrl ? { environment_url: status.environmentUrl } : {}),
    ...(status.logUrl ? { log_url: status.logUrl } : {}),
    ...(status.description ? { description: status.description.slice(0, 140) } : {}),
  });
}

const slipwayIdOf = (payload: unknown): string | undefined => {
  const value: unknown = typeof payload === 'string' ? safeJson(payload) : payload;
  const id = (value as { slipwayDeploymentId?: unknown } | null)?.slipwayDeploymentId;
  return typeof id === 'string' ? id : undefined;
};

const safeJson = (s: string): unknown => {
  try {
    return JSON.parse(s);
  } catch {
    return undefined;
  }
};

/** The GitHub Deployments of a pull request's preview environment, newest first. */
export async function listPreviewDeployments(
  gh: GitHubRepo,
  pull: number,
  sha?: string,
): Promise<{ id: number; slipwayDeploymentId: string | undefined }[]> {
  const found = await gh.octokit.paginate(gh.octokit.rest.repos.listDeployments, {
    owner: gh.owner,
    repo: gh.repo,
    environment: previewEnvironment(pull),
    ...(sha ? { sha } : {}),
    per_page: 100,
  });
  return z
    .array(GitHubDeployment)
    .parse(found)
    .map((d) => ({ id: d.id, slipwayDeploymentId: slipwayIdOf(d.payload) }));
}
