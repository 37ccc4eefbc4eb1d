import { z } from 'zod';
import { ApiError } from '../../../../api/errors.ts';
import { BuildCancelledError, BuildError, BuildTimeoutError } from '../../../platform/sandbox/build-error.ts';
import { buildCacheStoreOf } from '../open-build-cache.ts';
import { decodeJson } from '../../../core/json-column.ts';
import type { BuildOutcome } from '../../../platform/ops-metrics/ops-metrics.ts';
import type { Fairness } from '../../../platform/queue/fair-claim.ts';
import { BUILD_JOB } from '../../deployments/index.ts';
import type { Deps } from '../../../platform/deps/deps.ts';
import { runBuildAttempt } from './build-attempt.ts';
import type { BuildJobOptions } from './build-context.ts';
import { failedLine, failQuietly, shown } from './build-failure.ts';
import { createLogBuffer } from './log-buffer.ts';
import type { JobHandler } from '../../../platform/jobs/worker.ts';

/** A build job's payload (queue-deployment.ts writes it). */
const BuildPayload = z.object({ deploymentId: z.string() });

const FINAL = new Set(['live', 'failed']);

/**
 * The `deployment.build` job: checkout, build and store an artifact (or reuse the build a
 * rollback points at), then bring the deployment up through the edge and make it live. A
 * failure the user can fix fails the deployment at once; anything else is retried by the queue.
 */
export function createBuildJob(deps: Deps, opts: BuildJobOptions): JobHandler {
  const cacheStore = buildCacheStoreOf(deps.config);
  return {
    kind: BUILD_JOB,
    concurrency: deps.config.buildConcurrency,
    // A build can take minutes: the lease is renewed while it runs, so a short one is fine.
    leaseMs: deps.config.jobLeaseMs,
    retryDelayMs: () => 2000,
    fairness: buildsPerOrganization(deps.config.plans),

    async handle(job, signal) {
      const { deploymentId } = decodeJson(BuildPayload, job.payload, `Job ${job.id}'s payload`);
      const deployment = await deps.db
        .selectFrom('deployments')
        .selectAll()
        .where('id', '=', deploymentId)
        .executeTakeFirst();
      if (!deployment || FINAL.has(deployment.status)) return;
      const logs = await createLogBuffer(deps, deploymentId, { limitBytes: deps.config.buildLogLimitBytes });
      const began = deps.clock.now().getTime();
      const ended = (outcome: BuildOutcome) =>
        deps.ops.buildEnded(outcome, Math.max(0, deps.clock.now().getTime() - began) / 1000);
      try {
        ended(await runBuildAttempt(deps, opts, cacheStore, deployment, logs, signal));
      } catch (err) {
        ended(outcomeOf(err, signal));
        if (err instanceof BuildError && err.limit) deps.ops.limitHit(err.limit, 'build');
        if (err instanceof BuildTimeoutError) deps.ops.limitHit('time', 'build');
        if (signal.aborted) {
          // Shutdown or a lost lease: the job goes back to the queue (or is another worker's
          // already), so the deployment is not this attempt's to fail.
          logs.note('==> Interrupted: this worker stopped; the build will run again');
          throw err;
        }
        if (err instanceof BuildError) {
          // The reason is in the error log already; the build log ends saying it failed, and why.
          logs.note(failedLine(deps, deploymentId, err.message));
          await logs.end();
          await failQuietly(deps, deploymentId, err.message);
          return;
        }
        await logs.end();
        // The state machine's CONFLICTs mean someone else moved the deployment on.
        if (err instanceof ApiError) return;
        logs.push('error', `Internal error: ${shown(deps, deploymentId, (err as Error).message)}`);
        await logs.flush();
        throw err;
      } finally {
        await logs.end();
      }
    },

    async onExhausted(job, reason) {
      const { deploymentId } = decodeJson(BuildPayload, job.payload, `Job ${job.id}'s payload`);
      const message = `The build could not complete: ${reason}`;
      const logs = await createLogBuffer(deps, deploymentId, { limitBytes: deps.config.buildLogLimitBytes });
      logs.note(failedLine(deps, deploymentId, message));
      await logs.end();
      await failQuietly(deps, deploymentId, message);
    },
  };
}

/** How a build attempt that threw ended, for the operator's metrics. */
function outcomeOf(err: unknown, signal: AbortSignal): BuildOutcome {
  if (signal.aborted) return 'interrupted';
  if (err instanceof BuildCancelledError) return 'cancelled';
  if (err instanceof BuildTimeoutError) return 'timed_out';
  if (err instanceof BuildError) return 'failed';
  // The state machine's CONFLICT: someone else (a cancel) moved the deployment on.
  if (err instanceof ApiError) return 'cancelled';
  return 'error';
}

/**
 * Builds take turns by organization, each organization within its plan's `builds` limit
 * (docs/operating.md#plan-limits), counted across every worker process.
 */
export function buildsPerOrganization(plans: Deps['config']['plans']): Fairness {
  return {
    async limits(db, keys) {
      const orgs = await db
        .selectFrom('organizations')
        .select(['id', 'plan'])
        .where('id', 'in', keys)
        .execute();
      return new Map(orgs.map((o) => [o.id, plans[o.plan].builds]));
    },
  };
}
