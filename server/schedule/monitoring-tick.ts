import { deleteExpiredSessions, pruneUsedOidcTokens } from '../features/identity/index.ts';
import { deleteExpiredClaims } from '../features/serving/index.ts';
import { pruneProtection } from '../features/serving/roles.ts';
import type { Deps } from '../platform/deps/deps.ts';
import { pruneGitHubEvents } from '../features/github/index.ts';
import { cleanUploads } from '../features/uploads/roles.ts';
import { collectStorageNow } from '../features/builds/roles.ts';
import {
  evaluateDeploymentFailures,
  evaluateErrorRates,
  probeProductionUrls,
  pruneMonitoringData,
} from '../features/monitoring/roles.ts';
import { isStale, type PeriodicJob } from '../platform/jobs/periodic-jobs.ts';
import { pruneFinishedJobs } from './prune-jobs.ts';
import { pruneRateLimits } from '../platform/http/rate-limit.ts';

/** The periodic monitoring run: probes, alert rules, pruning (expired domain claims, unused uploads, artifacts of deleted projects and unused build caches, dashboard sessions, finished jobs, ended rate-limit windows and the marks of expired OIDC tokens too). */
export const MONITORING_TICK_JOB = 'monitoring.tick';

type TickDeps = Pick<Deps, 'db' | 'clock' | 'config' | 'urls' | 'log' | 'cipher' | 'metrics' | 'ops'>;

/**
 * One monitoring run. Every step runs even when an earlier one failed (a database hiccup while
 * probing must not stop the alert rules); the first error is thrown at the end so the run is
 * recorded as failed.
 */
export async function runMonitoringTick(
  deps: TickDeps,
  signal?: AbortSignal,
  periodicKinds: readonly string[] = [MONITORING_TICK_JOB],
): Promise<void> {
  const steps: [string, () => Promise<unknown>][] = [
    ['probes', () => probeProductionUrls(deps, signal)],
    ['high_error_rate', () => evaluateErrorRates(deps)],
    ['deployment_failed', () => evaluateDeploymentFailures(deps)],
    ['pruning', () => pruneMonitoringData(deps, periodicKinds)],
    ['expired_domain_claims', () => deleteExpiredClaims(deps.db, deps.clock, deps.config.domainClaimTtlMs)],
    ['unused_uploads', () => cleanUploads(deps)],
    ['unused_artifacts_and_caches', () => collectStorageNow(deps)],
    ['expired_sessions', () => deleteExpiredSessions(deps)],
    ['expired_protection_codes_and_links', () => pruneProtection(deps)],
    ['finished_github_events', () => pruneGitHubEvents(deps)],
    ['finished_jobs', () => pruneFinishedJobs(deps)],
    ['ended_rate_limit_windows', () => pruneRateLimits(deps)],
    ['expired_oidc_token_marks', () => pruneUsedOidcTokens(deps)],
  ];
  let first: Error | undefined;
  for (const [name, step] of steps) {
    if (signal?.aborted) break;
    try {
      await step();
    } catch (err) {
      deps.log.error({ err, step: name }, 'monitoring step failed');
      first ??= err instanceof Error ? err : new Error(`${name}: ${String(err)}`);
    }
  }
  if (first) throw first;
}

/** The `monitoring.tick` job, once per SLIPWAY_HEALTH_INTERVAL across all workers. */
export function createMonitoringTickJob(deps: TickDeps, periodicKinds?: readonly string[]): PeriodicJob {
  const intervalMs = deps.config.healthIntervalMs;
  return {
    kind: MONITORING_TICK_JOB,
    intervalMs,
    concurrency: 1,
    async handle(job, signal) {
      if (isStale(job.payload, intervalMs, deps.clock.now())) return;
      const began = deps.clock.now().getTime();
      const seconds = () => Math.max(0, deps.clock.now().getTime() - began) / 1000;
      try {
        await runMonitoringTick(deps, signal, periodicKinds);
      } catch (err) {
        deps.ops.monitoringRun(seconds(), false);
        throw err;
      }
      deps.ops.monitoringRun(seconds(), true);
    },
  };
}
