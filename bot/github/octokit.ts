import type { ProbotOctokit } from 'probot';

/** An Octokit authenticated as the App's installation on a repository. */
export type Octokit = InstanceType<typeof ProbotOctokit>;

/** A repository by owner and name. */
export interface RepoRef {
  owner: string;
  repo: string;
}

/** A repository and the Octokit that may act on it. */
export interface GitHubRepo extends RepoRef {
  octokit: Octokit;
}

/** The HTTP status of an Octokit error, if it carries one. */
export function statusOf(err: unknown): number | undefined {
  const status = (err as { status?: unknown } | null)?.status;
  return typeof status === 'number' ? status : undefined;
}
