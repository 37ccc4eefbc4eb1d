import type { Deps } from '../services/deps.ts';
import { openAlert, resolveAlert } from '../services/monitoring/alerts.ts';

/** Consecutive failed probes that open `health_check_failed`: one blip does not page anyone. */
export const FAILURES_TO_ALERT = 3;

/**
 * After a probe: opens `health_check_failed` when the last {@link FAILURES_TO_ALERT} probes all
 * failed, resolves it as soon as one succeeds; in between the alert stays as it is.
 */
export async function evaluateHealthAlert(
  deps: Pick<Deps, 'db' | 'clock'>,
  projectId: string,
): Promise<void> {
  const last = await deps.db
    .selectFrom('health_checks')
    .select(['ok', 'status_code', 'error'])
    .where('project_id', '=', projectId)
    .orderBy('at', 'desc')
    .orderBy('id', 'desc')
    .limit(FAILURES_TO_ALERT)
    .execute();
  const latest = last[0];
  if (!latest) return;
  if (latest.ok === 1) {
    await resolveAlert(deps, projectId, 'health_check_failed');
    return;
  }
  if (last.length === FAILURES_TO_ALERT && last.every((p) => p.ok === 0)) {
    const why = latest.error ?? (latest.status_code ? `answered ${latest.status_code}` : 'no answer');
    await openAlert(
      deps,
      projectId,
      'health_check_failed',
      `The production URL failed ${FAILURES_TO_ALERT} health checks in a row (last: ${why})`,
    );
  }
}
