import { sql } from 'kysely';
import type { Deps } from '../../platform/deps/deps.ts';
import { openAlert, resolveAlert } from './alerts.ts';
import type { ProbeResult } from './probe-result.ts';

/** Consecutive failed probes that open `health_check_failed`: one blip does not page anyone. */
export const FAILURES_TO_ALERT = 3;

/** One project's probe of this run, already stored in health_checks. */
export interface ProbedProject {
  projectId: string;
  /** When it was probed, ISO. */
  at: string;
  result: ProbeResult;
}

/**
 * After a run's probes are stored: opens `health_check_failed` where the last
 * {@link FAILURES_TO_ALERT} probes all failed, resolves it as soon as one succeeds; in between the
 * alert stays as it is. Only changes cost queries: one read of the active alerts, then a success
 * touches the database only where an alert is active, and a failure only where none is.
 */
export async function evaluateHealthAlerts(
  deps: Pick<Deps, 'db' | 'clock'>,
  probed: readonly ProbedProject[],
): Promise<void> {
  if (probed.length === 0) return;
  // `status = 'active'` written literally: it is the predicate of the partial index alerts_one_active.
  const active = new Set(
    (
      await deps.db
        .selectFrom('alerts')
        .select('project_id')
        .where('type', '=', 'health_check_failed')
        .where(sql<boolean>`status = 'active'`)
        .execute()
    ).map((a) => a.project_id),
  );
  for (const { projectId, result } of probed) {
    if (result.ok) {
      if (active.has(projectId)) await resolveAlert(deps, projectId, 'health_check_failed');
      continue;
    }
    if (active.has(projectId)) continue;
    const last = await deps.db
      .selectFrom('health_checks')
      .select(['ok', 'status_code', 'error'])
      .where('project_id', '=', projectId)
      .orderBy('at', 'desc')
      .orderBy('id', 'desc')
      .limit(FAILURES_TO_ALERT)
      .execute();
    if (last.length === FAILURES_TO_ALERT && last.every((p) => p.ok === 0)) {
      const latest = last[0]!;
      const why = latest.error ?? (latest.status_code ? `answered ${latest.status_code}` : 'no answer');
      await openAlert(
        deps,
        projectId,
        'health_check_failed',
        `The production URL failed ${FAILURES_TO_ALERT} health checks in a row (last: ${why})`,
      );
    }
  }
}
