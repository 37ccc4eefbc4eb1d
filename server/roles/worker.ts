import { createArtifactStore, createBuildJob } from '../features/builds/roles.ts';
import { blobStoreOf } from '../platform/storage/open-blob-store.ts';
import { rescueBlobs } from '../platform/storage/condemned-blobs.ts';
import { probeTokens, probeDeployment } from '../features/monitoring/roles.ts';
import { startWorker, type JobHandler } from '../platform/jobs/worker.ts';
import type { Sandbox } from '../platform/sandbox/index.ts';
import type { Deps } from '../platform/deps/deps.ts';
import { startDeliveryWorker } from '../features/webhooks/roles.ts';
import type { LookupAll } from '../core/ssrf.ts';
import { createCertificateJob, createRenewalJob } from '../features/serving/roles.ts';
import { createMonitoringTickJob, MONITORING_TICK_JOB } from '../schedule/monitoring-tick.ts';
import { startPeriodicScheduler } from '../platform/jobs/periodic-jobs.ts';

export interface WorkerRole {
  stop(): Promise<void>;
}

/** The worker role: builds deployments (and, as they land, the other background jobs). */
export async function startWorkerRole(
  deps: Deps,
  sandbox: Sandbox,
  extra: JobHandler[] = [],
  opts: { lookup?: LookupAll } = {},
): Promise<WorkerRole> {
  const { config } = deps;
  const artifacts = createArtifactStore(blobStoreOf(config), {
    beforeBlobs: (keys) => rescueBlobs(deps.db, keys),
  });
  const probeToken = probeTokens(deps);
  const build = createBuildJob(deps, {
    artifacts,
    probe: async (d, signal) => {
      await probeDeployment({
        edgeUrl: config.edgeInternalUrl,
        host: new URL(deps.urls.forHost(d.host)).hostname,
        deploymentId: d.id,
        timeoutMs: 60_000,
        signal,
        probeToken,
      });
    },
    lookup: opts.lookup,
    sandbox,
  });
  // Health probes and alert rules every SLIPWAY_HEALTH_INTERVAL, certificate renewal daily:
  // once per interval across all workers, whichever claims the run.
  const renewal = createRenewalJob(deps);
  const tick = createMonitoringTickJob(deps, [MONITORING_TICK_JOB, renewal.kind]);
  const worker = startWorker(deps, [build, tick, renewal, createCertificateJob(deps), ...extra]);
  const scheduler = startPeriodicScheduler(deps, [tick, renewal]);
  const deliveries = startDeliveryWorker(deps);
  return {
    async stop() {
      await Promise.all([scheduler.stop(), worker.stop(config.shutdownGraceMs), deliveries.stop()]);
    },
  };
}
