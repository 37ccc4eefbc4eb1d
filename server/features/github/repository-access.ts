import { BuildError } from '../../platform/sandbox/build-error.ts';
import { githubRepositoryOf, mintInstallationToken } from './installation-token.ts';
import type { Deps } from '../../platform/deps/deps.ts';
import { cloneUrl, openCredentials } from './repository-credentials.ts';

export interface RepositoryAccess {
  /** The URL git clones, credentials included: never logged or stored (checkout masks them). */
  url: string;
  /** Advice for a clone that fails, when the usual one (check the URL, is it public) would mislead. */
  unreachableHint?: string;
}

/**
 * How a build reaches the project's repository: with the credentials stored with the project,
 * else, for a repository on the GitHub App's GitHub, with an installation token minted now for
 * that repository alone (read-only, expires within the hour, never stored), else anonymously.
 */
export async function repositoryAccess(
  deps: Pick<Deps, 'cipher' | 'config'>,
  project: { repository_url: string; repository_credentials: string | null },
  note: (line: string) => void,
): Promise<RepositoryAccess> {
  const stored = openCredentials(deps.cipher, project.repository_credentials);
  const app = deps.config.githubApp;
  const target = app && !stored ? githubRepositoryOf(app, project.repository_url) : null;
  if (!app || !target) return { url: cloneUrl(project.repository_url, stored) };
  const name = `${target.owner}/${target.repo}`;
  let minted;
  try {
    minted = await mintInstallationToken(app, target);
  } catch (err) {
    throw new BuildError(
      `Could not get a GitHub App installation token for ${name}: ${(err as Error).message}. Check APP_ID, PRIVATE_KEY and GITHUB_API_URL on the workers.`,
    );
  }
  if (minted.kind === 'not-installed') {
    note(`==> The Slipway GitHub App is not installed on ${name}: cloning without credentials`);
    return {
      url: project.repository_url,
      unreachableHint: `If ${name} is private, install the Slipway GitHub App on it (or give the project credentials) and deploy again.`,
    };
  }
  note(`==> Cloning ${name} with a GitHub App installation token (read-only, this repository only)`);
  return { url: cloneUrl(project.repository_url, `x-access-token:${minted.token}`) };
}
