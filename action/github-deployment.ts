import type { DeploymentTarget } from '../api/schemas/deployments.ts';
import type { Octokit, Repo } from './github.ts';

/** GitHub caps a status description at 140 characters. */
const MAX_DESCRIPTION = 140;
const clip = (text: string) =>
  text.length <= MAX_DESCRIPTION ? text : `${text.slice(0, MAX_DESCRIPTION - 3)}...`;

/** The GitHub environment of a deployment and how GitHub should treat it. */
export interface GitHubEnvironment {
  /** `production`, `preview/pr-<n>` or `preview/<branch>`. */
  name: string;
  /** Previews go away: GitHub marks them inactive when a newer one succeeds. */
  transient: boolean;
  production: boolean;
}

/** production for production; for previews, one environment per pull request, else per branch. */
export function environmentFor(
  target: DeploymentTarget,
  pr: number | null,
  branch: string | null | undefined,
): GitHubEnvironment {
  if (target === 'production') return { name: 'production', transient: false, production: true };
  const name =
    pr !== null ? `preview/pr-${pr}` : `preview/${(branch ?? 'unknown').replace(/^refs\/heads\//, '')}`;
  return { name, transient: true, production: false };
}

/**
 * Creates a GitHub Deployment of `ref` (a commit). `required_contexts: []` because the checks of
 * the very workflow doing the deploying are still running: GitHub would otherwise refuse it.
 */
export async function createGitHubDeployment(
  octokit: Octokit,
  repo: Repo,
  ref: string,
  env: GitHubEnvironment,
  description: string,
): Promise<number> {
  const res = await octokit.rest.repos.createDeployment({
    ...repo,
    ref,
    environment: env.name,
    transient_environment: env.transient,
    production_environment: env.production,
    auto_merge: false,
    required_contexts: [],
    description: clip(description),
  });
  // 202 answers carry only a message (an auto-merge happened); with auto_merge off it is 201.
  if (!('id' in res.data))
    throw new Error(`GitHub did not create the deployment: ${res.data.message ?? res.status}`);
  return res.data.id;
}

/** One status of a GitHub Deployment: in_progress, then success or failure. */
export async function setGitHubDeploymentStatus(
  octokit: Octokit,
  repo: Repo,
  deploymentId: number,
  status: {
    state: 'in_progress' | 'success' | 'failure';
    description: string;
    environmentUrl?: string | null;
    logUrl?: string | null;
  },
): Promise<void> {
  await octokit.rest.repos.createDeploymentStatus({
    ...repo,
    deployment_id: deploymentId,
    state: status.state,
    description: clip(status.description),
    ...(status.environmentUrl ? { environment_url: status.environmentUrl } : {}),
    ...(status.logUrl ? { log_url: status.logUrl } : {}),
  });
}
