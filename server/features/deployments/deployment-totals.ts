import type { ListDeploymentsQuery } from '../../../api/schemas/deployments.ts';
import type { PageShortcuts } from '../../platform/http/pagination.ts';
import type { Deps } from '../../platform/deps/deps.ts';

/**
 * The deployments list's total and page starts without reading the rows before them
 * (docs/performance.md#exact-totals-and-deep-pages): `deployment_counts` holds the count of every
 * combination of `status`, `target` and `branch` (`''` for "any"), and `list_seq` each
 * deployment's place from the oldest, both kept by triggers (migration 026). A commit prefix is
 * not counted ahead: its few matches are counted on the `deployments_commit` range.
 */
export function deploymentShortcuts(
  deps: Pick<Deps, 'db'>,
  projectId: string,
  q: Pick<ListDeploymentsQuery, 'status' | 'target' | 'branch' | 'commitHash'>,
): PageShortcuts {
  if (q.commitHash) return {};
  const filtered = Boolean(q.status || q.target || q.branch);
  return {
    async total() {
      const row = await deps.db
        .selectFrom('deployment_counts')
        .select('n')
        .where('project_id', '=', projectId)
        .where('status', '=', q.status ?? '')
        .where('target', '=', q.target ?? '')
        .where('branch', '=', q.branch ?? '')
        .executeTakeFirst();
      return Number(row?.n ?? 0);
    },
    // Places are kept for the whole list only: a filtered page reads from its nearer end.
    ...(filtered
      ? {}
      : {
          async locate(rank: number, total: number) {
            const row = await deps.db
              .selectFrom('deployments')
              .select(['created_at', 'id'])
              .where('project_id', '=', projectId)
              .where('list_seq', '=', total - rank)
              .executeTakeFirst();
            return row ? [row.created_at, row.id] : undefined;
          },
        }),
  };
}
