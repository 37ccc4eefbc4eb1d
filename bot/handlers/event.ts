import type { Octokit } from '../github/octokit.ts';

/** What a handler needs of a Probot context: the delivery id, the raw payload and the Octokit. */
export interface GitHubEvent {
  /** `X-GitHub-Delivery`: the same on a redelivery. */
  id: string;
  payload: unknown;
  octokit: Octokit;
}
