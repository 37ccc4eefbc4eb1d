import { sql } from 'kysely';
import type { Deps } from '../../platform/deps/deps.ts';
import { openAlert, resolveAlert } from './alerts.ts';

const FAILED_PRODUCTION = sql<boolean>`status = 'failed' and target = 'production'`;

/** Failures older than this are not looked for again; an alert they opened stays until resolved. */
export const FAILURE_LOOKBACK_MS = 24 * 3_600_000;

/**
 * `deployment_failed` is active while a project's latest failed production deployment failed
 * after its current production deployment went live (or there is none): it opens when a
 * production deployment fails and resolves when a later one goes live (a build, a rollback or
 * a promotion). Being derived from the deployments, the rule is the same whichever process
 * evaluates it and however late.
 */
export async function evaluateDeploymentFailures(deps: Pick<Deps, 'db' | 'clock'>): Promise<void> {
  const now = deps.clock.now();
  // The predicates are written literally: they are those of the partial indexes
  // deployments_failed_production (migration 016) and alerts_one_active, which bound parameters
  // would not match.
  const recent = await deps.db
    .selectFrom('deployments')
    // No DISTINCT: the Set below dedupes the few rows of a day.
    .select('project_id')
    .where(FAILED_PRODUCTION)
    .where('updated_at', '>=', new Date(now.getTime() - FAILURE_LOOKBACK_MS).toISOString())
    .execute();
  const active = await deps.db
    .selectFrom('alerts')
    .select('project_id')
    .where('type', '=', 'deployment_failed')
    .where(sql<boolean>`status = 'active'`)
    .execute();
  const projects = new Set([...recent, ...active].map((r) => r.project_id));
  for (const projectId of projects) {
    const failed = await deps.db
      .selectFrom('deployments')
      .select(['id', 'error_message', 'updated_at'])
      .where('project_id', '=', projectId)
      .where(FAILED_PRODUCTION)
      .orderBy('updated_at', 'desc')
      .limit(1)
      .executeTakeFirst();
    const production = await deps.db
      .selectFrom('projects as p')
      .innerJoin('deployments as d', 'd.id', 'p.production_deployment_id')
      .select(['d.ready_at', 'd.promoted_at'])
      .where('p.id', '=', projectId)
      .executeTakeFirst();
    // A promoted preview went live earlier, as a preview: it became production when promoted.
    const switchedAt = [production?.ready_at, production?.promoted_at]
      .filter((t): t is string => !!t)
      .sort()
      .pop();
    if (failed && (!switchedAt || failed.updated_at > switchedAt)) {
      const why = failed.error_message ? `: ${failed.error_message.slice(0, 300)}` : '';
      await openAlert(
        deps,
        projectId,
        'deployment_failed',
        `Production deployment ${failed.id} failed${why}`,
      );
    } else {
      await resolveAlert(deps, projectId, 'deployment_failed');
    }
  }
}
