import { sql } from 'kysely';
import { MIN_LINE_COST } from '../../log-cost.ts';
import type { Deps } from '../../../../platform/deps/deps.ts';

/**
 * What earlier attempts of the deployment stored of its build log, in `lineCost`s: it counts
 * against the limit, so retries cannot multiply it.
 */
export async function storedBuildLogBytes(deps: Pick<Deps, 'db'>, deploymentId: string): Promise<number> {
  const already = await deps.db
    .selectFrom('deployment_logs')
    // octet_length: the limit is in bytes, and length() counts characters on both databases.
    .select(
      sql<
        number | string | null
      >`sum(case when octet_length(line) + 1 < ${MIN_LINE_COST} then ${MIN_LINE_COST} else octet_length(line) + 1 end)`.as(
        'bytes',
      ),
    )
    .where('deployment_id', '=', deploymentId)
    .where('type', '=', 'build')
    .executeTakeFirst();
  return Number(already?.bytes ?? 0);
}
