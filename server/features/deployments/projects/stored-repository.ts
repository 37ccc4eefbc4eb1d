import { ApiError } from '../../../../api/errors.ts';
import type { Deps } from '../../../platform/deps/deps.ts';
import { MASK, sealCredentials, splitRepositoryCredentials } from '../../github/index.ts';

/**
 * What `repository_url` holds for a project without a repository (it deploys uploaded files
 * only): the column is NOT NULL on every database made so far, and no git URL is empty.
 */
export const NO_REPOSITORY = '';

/**
 * The repository URL as stored: credentials split off and encrypted. `***` in place of
 * credentials means "keep the stored ones" (what a client read back from the API); there must be
 * some to keep.
 */
export function storedRepository(
  deps: Pick<Deps, 'cipher'>,
  url: string,
  current: string | null,
): { repository_url: string; repository_credentials: string | null } {
  const split = splitRepositoryCredentials(url);
  if (split.credentials !== MASK) {
    return {
      repository_url: split.url,
      repository_credentials: sealCredentials(deps.cipher, split.credentials),
    };
  }
  if (current === null) {
    throw ApiError.validation([
      {
        path: 'repositoryUrl',
        message: `${MASK} stands for the credentials stored with the project, and it has none: give the URL with its credentials, or without any`,
      },
    ]);
  }
  return { repository_url: split.url, repository_credentials: current };
}
