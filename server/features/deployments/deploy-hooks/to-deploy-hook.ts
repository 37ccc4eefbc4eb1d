import type { Selectable } from 'kysely';
import type { DeployHook } from '../../../../api/schemas/deploy-hooks.ts';
import type { DeployHooksTable } from '../../../platform/store/schema.ts';
import type { Urls } from '../../../platform/deps/urls.ts';
import { hookUrlPrefix } from './hook-secret.ts';

export type DeployHookRow = Selectable<DeployHooksTable>;

/** The wire shape of a hook: never its secret, nor anything it could be rebuilt from. */
export function toDeployHook(
  urls: Pick<Urls, 'api'>,
  row: Pick<DeployHookRow, 'id' | 'name' | 'branch' | 'created_at' | 'last_used_at'>,
  createdBy: string,
): DeployHook {
  return {
    id: row.id,
    name: row.name,
    branch: row.branch,
    urlPrefix: hookUrlPrefix(urls.api, row.id),
    createdBy,
    createdAt: row.created_at,
    lastUsedAt: row.last_used_at,
  };
}
