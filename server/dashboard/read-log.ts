import type { LogType } from '../../api/schemas/deployments.ts';
import { tailLines, type LogLine } from '../features/deployments/index.ts';
import type { Deps } from '../platform/deps/deps.ts';

/** The last `limit` lines of a log with the number of the first (lines count from 1). */
export async function readLog(
  deps: Pick<Deps, 'db'>,
  deploymentId: string,
  type: LogType,
  limit: number,
): Promise<{ lines: LogLine[]; first: number; total: number }> {
  const [lines, count] = await Promise.all([
    tailLines(deps, deploymentId, type, limit),
    deps.db
      .selectFrom('deployment_logs')
      .select((eb) => eb.fn.countAll().as('n'))
      .where('deployment_id', '=', deploymentId)
      .where('type', '=', type)
      .executeTakeFirstOrThrow(),
  ]);
  const total = Number(count.n);
  return { lines, first: total - lines.length + 1, total };
}
