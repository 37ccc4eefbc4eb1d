import { createAppAuth } from '@octokit/auth-app';
import { request as octokitRequest } from '@octokit/request';
import type { Config } from '../../platform/config.ts';

export type GitHubAppSettings = NonNullable<Config['githubApp']>;

/** A repository on the App's GitHub (github.com, or the Enterprise Server host of GITHUB_API_URL). */
export interface GitHubRepository {
  owner: string;
  repo: string;
}

/**
 * The host that serves git for the API at `apiUrl`: github.com for api.github.com, the same
 * host (and port) for GitHub Enterprise Server (`https://ghe.example.com/api/v3`).
 */
export function gitHostOf(apiUrl: string): string {
  const { host } = new URL(apiUrl);
  return host === 'api.github.com' ? 'github.com' : host;
}

/** `owner/repo` of an http(s) repository URL on the App's GitHub; null for any other URL. */
export function githubRepositoryOf(
  settings: GitHubAppSettings,
  repositoryUrl: string,
): GitHubRepository | null {
  let url: URL;
  try {
    url = new URL(repositoryUrl);
  } catch {
    return null;
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return null;
  if (url.host.toLowerCase() !== gitHostOf(settings.apiUrl).toLowerCase()) return null;
  const m = /^\/([A-Za-z0-9-]+)\/([A-Za-z0-9._-]+?)(?:\.git)?\/?$/.exec(url.pathname);
  return m ? { owner: m[1]!, repo: m[2]! } : null;
}

export type InstallationToken =
  | { kind: 'token'; token: string; expiresAt: string }
  /** The App is not installed on the repository (or cannot see it). */
  | { kind: 'not-installed' };

/**
 * Mints an installation access token for exactly one repository, with `contents: read` only:
 * the App's JWT finds the repository's installation, which then issues a token scoped to it.
 * Nothing is cached: each clone gets a fresh token that expires within the hour (GitHub's limit).
 */
export async function mintInstallationToken(
  settings: GitHubAppSettings,
  target: GitHubRepository,
  fetchImpl: typeof fetch = fetch,
): Promise<InstallationToken> {
  const request = octokitRequest.defaults({
    baseUrl: settings.apiUrl,
    headers: { 'user-agent': 'slipway-worker' },
    request: { fetch: fetchImpl },
  });
  const auth = createAppAuth({ appId: settings.appId, privateKey: settings.privateKey, request });
  const { token: jwt } = await auth({ type: 'app' });
  let installationId: number;
  try {
    const { data } = await request('GET /repos/{owner}/{repo}/installation', {
      ...target,
      headers: { authorization: `bearer ${jwt}` },
    });
    installationId = data.id;
  } catch (err) {
    if ((err as { status?: number }).status === 404) return { kind: 'not-installed' };
    throw err;
  }
  const { data } = await request('POST /app/installations/{installation_id}/access_tokens', {
    installation_id: installationId,
    repositories: [target.repo],
    permissions: { contents: 'read' },
    headers: { authorization: `bearer ${jwt}` },
  });
  return { kind: 'token', token: data.token, expiresAt: data.expires_at };
}
