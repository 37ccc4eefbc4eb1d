import { ApiError } from '../../../../api/errors.ts';
import { staticRepositoryRefusal, repositorySettings } from '../../github/index.ts';
import type { Deps } from '../../../platform/deps/deps.ts';

/**
 * The repository rules that need no DNS (local paths, addresses written out), as a
 * VALIDATION_ERROR on `repositoryUrl`. Every build checks again, in full, before its checkout.
 */
export async function checkRepositoryUrl(deps: Pick<Deps, 'config'>, url: string): Promise<void> {
  const refusal = await staticRepositoryRefusal(url, repositorySettings(deps.config));
  if (refusal) throw ApiError.validation([{ path: 'repositoryUrl', message: refusal }]);
}
