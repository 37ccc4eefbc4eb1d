import type { getOctokit } from '@actions/github';

/** The Octokit of @actions/github: REST methods and pagination. */
export type Octokit = ReturnType<typeof getOctokit>;

/** owner/repo of the calls. */
export interface Repo {
  owner: string;
  repo: string;
}

/**
 * An Octokit for `baseUrl` (the runner's GITHUB_API_URL: api.github.com, a GitHub Enterprise
 * Server, or a local stand-in in tests). @actions/github is loaded only here, when a GitHub call
 * is due: it is most of the bundle, and the first request to Slipway should not wait for it.
 */
export async function createOctokit(token: string, baseUrl: string): Promise<Octokit> {
  const { getOctokit } = await import('@actions/github');
  return getOctokit(token, { baseUrl, userAgent: 'slipway-action' });
}
