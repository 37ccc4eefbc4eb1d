import type { Health, HealthStatus } from '../../../api/schemas/monitoring.ts';
import { requireProject } from '../identity/index.ts';
import type { Actor, Deps } from '../../platform/deps/deps.ts';

/** Uptime and the probes considered look back this far. */
export const HEALTH_WINDOW_MS = 24 * 3_600_000;
/** A failed probe this recent makes a project that answers again `degraded` rather than `healthy`. */
export const DEGRADED_WINDOW_MS = 15 * 60_000;

const round2 = (n: number) => Math.round(n * 100) / 100;

/**
 * The production URL's health from the probes of the last 24 hours:
 * - `unknown`: no probe in that window;
 * - `down`: the last probe failed;
 * - `degraded`: the last probe succeeded but another failed within the last 15 minutes;
 * - `healthy`: the last probe succeeded and none failed within the last 15 minutes.
 */
export async function getHealth(deps: Deps, actor: Actor, projectId: string): Promise<Health> {
  const { project } = await requireProject(deps, actor, projectId, 'viewer');
  const now = deps.clock.now();
  const probes = deps.db
    .selectFrom('health_checks')
    .where('project_id', '=', project.id)
    .where('at', '>=', new Date(now.getTime() - HEALTH_WINDOW_MS).toISOString())
    .where('at', '<=', now.toISOString());

  const last = await probes
    .select(['at', 'ok', 'response_time_ms'])
    .orderBy('at', 'desc')
    .orderBy('id', 'desc')
    .limit(1)
    .executeTakeFirst();
  if (!last) return { status: 'unknown', uptime: null, lastCheck: null, responseTime: null };

  const counts = await probes
    .select((eb) => [
      eb.fn.countAll<string | number>().as('total'),
      eb.fn.sum<string | number>('ok').as('ok'),
    ])
    .executeTakeFirstOrThrow();
  let status: HealthStatus = 'down';
  if (last.ok === 1) {
    const recentFailure = await probes
      .select('id')
      .where('ok', '=', 0)
      .where('at', '>=', new Date(now.getTime() - DEGRADED_WINDOW_MS).toISOString())
      .limit(1)
      .executeTakeFirst();
    status = recentFailure ? 'degraded' : 'healthy';
  }
  return {
    status,
    uptime: round2((Number(counts.ok) / Number(counts.total)) * 100),
    lastCheck: last.at,
    responseTime: last.response_time_ms,
  };
}
