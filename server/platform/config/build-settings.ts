import { resolve } from 'node:path';
import type { PlanLimits, PlanName } from '../../core/plan-limits.ts';
import type { Env } from './env-schema.ts';

/** Builds: time, concurrency, plans' limits, output, uploads and caches. */
export function buildSettings(env: Env, dataDir: string) {
  return {
    buildTimeoutMs: env.SLIPWAY_BUILD_TIMEOUT,
    buildConcurrency: env.SLIPWAY_BUILD_CONCURRENCY,
    /** What each plan may use: builds at once, sandbox memory and CPU, stored bytes (core/plan-limits.ts). */
    plans: {
      free: env.SLIPWAY_FREE_LIMITS,
      pro: env.SLIPWAY_PRO_LIMITS,
      enterprise: env.SLIPWAY_ENTERPRISE_LIMITS,
    } satisfies Record<PlanName, PlanLimits>,
    maxOutputBytes: env.SLIPWAY_MAX_OUTPUT_SIZE,
    maxOutputFiles: env.SLIPWAY_MAX_OUTPUT_FILES,
    /** Deploys of uploaded files: the most bytes and files one deployment may list, how long unused uploads are kept. */
    uploads: {
      maxBytes: env.SLIPWAY_MAX_UPLOAD_SIZE,
      maxFiles: env.SLIPWAY_MAX_UPLOAD_FILES,
      ttlMs: env.SLIPWAY_UPLOAD_TTL,
      dir: resolve(env.SLIPWAY_ARTIFACTS_DIR ?? `${dataDir}/artifacts`, 'uploads'),
    },
    /** Build caches (dependencies and framework caches), kept per project and branch, shared through the artifacts directory. */
    buildCache: {
      maxBytesPerProject: env.SLIPWAY_BUILD_CACHE_SIZE,
      /** Caches neither saved nor restored for this long are removed by the monitoring run. */
      ttlMs: env.SLIPWAY_BUILD_CACHE_TTL,
      /**
       * With object storage: the bytes of the copies this machine keeps of the caches its builds
       * used, the least recently used removed first (never one a build is using).
       */
      localMaxBytes: env.SLIPWAY_BUILD_CACHE_LOCAL_MAX,
      dir: resolve(env.SLIPWAY_ARTIFACTS_DIR ?? `${dataDir}/artifacts`, 'build-cache'),
    },
    /** How long the artifacts of a deleted project are kept before the monitoring run removes them. */
    artifactRetentionMs: env.SLIPWAY_ARTIFACT_RETENTION,
    workspacesDir: `${dataDir}/workspaces`,
  };
}
