import type { Deps } from '../../platform/deps/deps.ts';
import { openAlert, resolveAlert } from './alerts.ts';

/** The window `high_error_rate` looks at. */
export const ERROR_RATE_WINDOW_MS = 5 * 60_000;
/** Fewer requests than this never open the alert: 1 failure of 3 requests is not a trend. */
export const ERROR_RATE_MIN_REQUESTS = 20;
/** More than this share of 5xx answers opens it. */
export const ERROR_RATE_THRESHOLD = 0.05;

export interface ErrorRateWindow {
  requests: number;
  /** Answers with a status from 500 to 599. */
  serverErrors: number;
}

/** The rule of CONTRACT.md: more than 5% of at least 20 requests answered 5xx. */
export const errorRateBreached = (w: ErrorRateWindow): boolean =>
  w.requests >= ERROR_RATE_MIN_REQUESTS && w.serverErrors / w.requests > ERROR_RATE_THRESHOLD;

/**
 * Opens `high_error_rate` for every project whose rollup minutes that started within the last
 * 5 minutes breach the rule, and resolves it where they no longer do (less traffic counts as
 * recovery: the rule needs at least 20 requests).
 */
export async function evaluateErrorRates(deps: Pick<Deps, 'db' | 'clock'>): Promise<void> {
  const now = deps.clock.now();
  const rows = await deps.db
    .selectFrom('traffic_rollups')
    .select(['project_id', 'requests', 'server_errors'])
    .where('span', '=', 'minute')
    .where('bucket_start', '>=', new Date(now.getTime() - ERROR_RATE_WINDOW_MS).toISOString())
    .where('bucket_start', '<=', now.toISOString())
    .execute();
  const windows = new Map<string, ErrorRateWindow>();
  for (const r of rows) {
    const w = windows.get(r.project_id) ?? { requests: 0, serverErrors: 0 };
    w.requests += Number(r.requests);
    w.serverErrors += Number(r.server_errors);
    windows.set(r.project_id, w);
  }
  const active = await deps.db
    .selectFrom('alerts')
    .select('project_id')
    .where('type', '=', 'high_error_rate')
    .where('status', '=', 'active')
    .execute();
  const projects = new Set([...windows.keys(), ...active.map((a) => a.project_id)]);
  for (const projectId of projects) {
    const w = windows.get(projectId) ?? { requests: 0, serverErrors: 0 };
    if (errorRateBreached(w)) {
      const pct = Math.round((w.serverErrors / w.requests) * 1000) / 10;
      await openAlert(
        deps,
        projectId,
        'high_error_rate',
        `${pct}% of ${w.requests} requests answered 5xx over the last 5 minutes`,
      );
    } else {
      await resolveAlert(deps, projectId, 'high_error_rate');
    }
  }
}
